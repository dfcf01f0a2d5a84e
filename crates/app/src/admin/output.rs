//! How the admin commands print what they return.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// An instant as the admin commands print it (RFC 3339, UTC).
pub(super) fn rfc3339(at: OffsetDateTime) -> anyhow::Result<String> {
    Ok(at.format(&Rfc3339)?)
}
