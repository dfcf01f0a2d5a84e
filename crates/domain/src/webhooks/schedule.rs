//! When a failed delivery is tried again: `DECKHAND_WEBHOOK_RETRY_SCHEDULE`, each delay
//! jittered by up to 10% either way so that many deliveries failing together do not return
//! together.

use std::time::Duration;

/// The delays after the first, second, ... failed attempt. After the last, a delivery is
/// `failed`. So a schedule of seven delays gives eight attempts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetrySchedule(Vec<Duration>);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a retry schedule is a comma-separated list of delays such as 5s,5m,30m,2h (units s, m, h), \
     at most 20 of them, each at most 24h"
)]
pub struct InvalidRetrySchedule;

/// How much a delay may move either way.
pub const JITTER: f64 = 0.1;

impl Default for RetrySchedule {
    fn default() -> Self {
        let minutes = |m: u64| Duration::from_secs(m * 60);
        Self(vec![
            Duration::from_secs(5),
            minutes(5),
            minutes(30),
            minutes(120),
            minutes(300),
            minutes(600),
            minutes(600),
        ])
    }
}

impl RetrySchedule {
    pub const DEFAULT_TEXT: &'static str = "5s,5m,30m,2h,5h,10h,10h";

    pub fn new(delays: Vec<Duration>) -> Self {
        Self(delays)
    }

    /// `5s,5m,30m,2h`; milliseconds (`500ms`) too, for tests. An empty list means no retries.
    pub fn parse(text: &str) -> Result<Self, InvalidRetrySchedule> {
        let mut delays = Vec::new();
        for entry in text
            .split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
        {
            let (digits, unit) = entry
                .find(|c: char| !c.is_ascii_digit())
                .map(|at| entry.split_at(at))
                .ok_or(InvalidRetrySchedule)?;
            let amount: u64 = digits.parse().map_err(|_| InvalidRetrySchedule)?;
            let millis = match unit {
                "ms" => Some(amount),
                "s" => amount.checked_mul(1000),
                "m" => amount.checked_mul(60_000),
                "h" => amount.checked_mul(3_600_000),
                _ => None,
            }
            .ok_or(InvalidRetrySchedule)?;
            if millis > 24 * 3_600_000 {
                return Err(InvalidRetrySchedule);
            }
            delays.push(Duration::from_millis(millis));
        }
        if delays.len() > 20 {
            return Err(InvalidRetrySchedule);
        }
        Ok(Self(delays))
    }

    /// How many retries follow the first attempt.
    pub fn retries(&self) -> usize {
        self.0.len()
    }

    /// The delay before retry `step` (0 for the first retry), moved by `unit` ∈ [-1, 1]
    /// times [`JITTER`]; `None` when the schedule is over.
    pub fn delay(&self, step: usize, unit: f64) -> Option<Duration> {
        let base = *self.0.get(step)?;
        let factor = 1.0 + JITTER * unit.clamp(-1.0, 1.0);
        Some(base.mul_f64(factor))
    }
}

/// A number in [-1, 1] from random bytes: the jitter of one retry.
pub fn jitter_unit(bytes: [u8; 8]) -> f64 {
    let fraction = (u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64;
    fraction * 2.0 - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_the_contracts() {
        assert_eq!(
            RetrySchedule::parse(RetrySchedule::DEFAULT_TEXT),
            Ok(RetrySchedule::default())
        );
        assert_eq!(RetrySchedule::default().retries(), 7);
    }

    #[test]
    fn parses_units_and_refuses_the_rest() {
        let schedule = RetrySchedule::parse("250ms, 2s,1m").unwrap();
        assert_eq!(
            schedule,
            RetrySchedule::new(vec![
                Duration::from_millis(250),
                Duration::from_secs(2),
                Duration::from_secs(60)
            ])
        );
        assert_eq!(RetrySchedule::parse(""), Ok(RetrySchedule::new(vec![])));
        for bad in [
            "5",
            "s",
            "5d",
            "-5s",
            "5 s",
            "25h",
            "1.5s",
            "99999999999999999999h",
        ] {
            assert_eq!(
                RetrySchedule::parse(bad),
                Err(InvalidRetrySchedule),
                "{bad}"
            );
        }
        assert!(RetrySchedule::parse(&vec!["1s"; 21].join(",")).is_err());
    }

    #[test]
    fn delays_are_jittered_by_at_most_ten_percent() {
        let schedule = RetrySchedule::default();
        assert_eq!(schedule.delay(0, 0.0), Some(Duration::from_secs(5)));
        assert_eq!(schedule.delay(0, 1.0), Some(Duration::from_millis(5500)));
        assert_eq!(schedule.delay(0, -1.0), Some(Duration::from_millis(4500)));
        assert_eq!(schedule.delay(0, 7.0), Some(Duration::from_millis(5500)));
        assert_eq!(schedule.delay(7, 0.0), None);
        for seed in 0..1000u64 {
            let unit = jitter_unit(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).to_le_bytes());
            assert!((-1.0..=1.0).contains(&unit), "{unit}");
        }
        assert_eq!(jitter_unit([0; 8]), -1.0);
        assert!(jitter_unit([0xff; 8]) > 0.999);
    }
}
