//! Logging: `tracing` to stderr (stdout is for command output), pretty or JSON, filtered by
//! `RUST_LOG` (default `info`). Pretty logs are coloured only on a terminal: in a file, a pipe
//! or a log collector the escape codes are noise around every level.

use std::io::IsTerminal as _;

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
        .with_ansi(colour(
            std::io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
        ))
        .with_writer(std::io::stderr);
    // A second initialisation (tests that run several servers) keeps the first subscriber.
    let _ = match format {
        LogFormat::Pretty => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

/// Whether pretty logs are coloured: on a terminal, unless `NO_COLOR` is set to something
/// (<https://no-color.org>).
fn colour(stderr_is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    stderr_is_terminal && no_color.is_none_or(std::ffi::OsStr::is_empty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(colour(true, None));
        assert!(colour(true, Some("".as_ref())));
        assert!(!colour(true, Some("1".as_ref())));
        assert!(!colour(false, None));
    }
}
