use clap::Parser as _;

#[actix_web::main]
async fn main() -> std::process::ExitCode {
    let cli = deckhand::cli::Cli::parse();
    deckhand::telemetry::init(cli.log_format);
    match deckhand::run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
