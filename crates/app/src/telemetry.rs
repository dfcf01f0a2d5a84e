//! Logging: `tracing` to stderr (stdout is for command output), pretty or JSON, filtered by
//! `RUST_LOG` (default `info`).

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::FmtSpan;

use crate::settings::LogFormat;

pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    // Spans are at debug level: with `RUST_LOG=info,deckhand_http=debug,...` each one logs
    // its busy and idle time when it closes, which shows where a slow request spent it.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_span_events(FmtSpan::CLOSE)
        .with_writer(std::io::stderr);
    // A second initialisation (tests that run several servers) keeps the first subscriber.
    let _ = match format {
        LogFormat::Pretty => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}
