//! Time as the domain sees it: UTC instants at microsecond precision, so that a value read back
//! from PostgreSQL equals the value written.

use time::OffsetDateTime;

/// `instant` in UTC with the nanoseconds below a microsecond dropped.
pub fn truncate_to_micros(instant: OffsetDateTime) -> OffsetDateTime {
    let utc = instant.to_offset(time::UtcOffset::UTC);
    let nanos = utc.nanosecond();
    utc.replace_nanosecond(nanos - nanos % 1_000).unwrap_or(utc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn drops_sub_microsecond_digits_and_normalises_to_utc() {
        let instant = datetime!(2026-01-02 03:04:05.123_456_789 +02:00);
        assert_eq!(
            truncate_to_micros(instant),
            datetime!(2026-01-02 01:04:05.123_456 UTC)
        );
    }
}
