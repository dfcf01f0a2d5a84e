/// mimalloc: a list page or a detail costs the server 7 to 27% less CPU than with glibc's
/// allocator (docs/benchmarks/history.md, sixth pass).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[actix_web::main]
async fn main() -> std::process::ExitCode {
    let cli = deckhand::cli::Cli::parse_from_args(std::env::args_os())
        .unwrap_or_else(|error| error.exit());
    deckhand::telemetry::init(cli.log_format);
    match deckhand::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
