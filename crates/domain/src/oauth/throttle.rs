//! Sign-in throttling of the consent page (contract §5): failed passwords are counted per
//! username and per client IP (an IPv6 /64), in the store so that every instance sees them; a
//! username that failed too often is refused for a delay that doubles with each further failure,
//! an IP for a fixed time. The rules are here, pure, with `now` as a parameter; the store only
//! counts.

use time::{Duration, OffsetDateTime};

use crate::identity::Username;

/// What the failures are counted under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThrottleKey {
    /// A username as parsed (lower-cased), whether or not such a user exists: an attacker
    /// learns nothing from which names are throttled.
    Username(String),
    /// The client's address key (`IpKey`: IPv4 alone, IPv6 by its /64).
    Ip(String),
}

impl ThrottleKey {
    pub fn username(username: &Username) -> Self {
        Self::Username(username.as_str().to_owned())
    }

    /// The stored form: `user:<name>` or `ip:<key>`.
    pub fn stored(&self) -> String {
        match self {
            Self::Username(name) => format!("user:{name}"),
            Self::Ip(ip) => format!("ip:{ip}"),
        }
    }
}

/// The failures counted under one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailureCount {
    pub failures: u32,
    pub last_failure_at: OffsetDateTime,
}

/// The throttling rules (contract §5): after `free_failures` failures of one username within
/// `window` of each other, `first_delay`, doubling with each further failure up to `max_delay`;
/// `ip_failures` failures from one IP within `window`: `ip_block`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignInThrottle {
    pub free_failures: u32,
    pub first_delay: Duration,
    pub max_delay: Duration,
    pub ip_failures: u32,
    pub ip_block: Duration,
    /// A count whose last failure is older than this starts again from zero.
    pub window: Duration,
}

impl Default for SignInThrottle {
    fn default() -> Self {
        Self {
            free_failures: 5,
            first_delay: Duration::seconds(30),
            max_delay: Duration::minutes(15),
            ip_failures: 50,
            ip_block: Duration::minutes(15),
            window: Duration::minutes(15),
        }
    }
}

impl SignInThrottle {
    /// Failures last counted at or before this instant no longer count: the store starts such
    /// a count again at one.
    pub fn counts_restart_before(&self, now: OffsetDateTime) -> OffsetDateTime {
        now - self.window
    }

    /// Until when sign-ins under `key` are refused, given its count; `None` when they are not.
    pub fn refused_until(
        &self,
        key: &ThrottleKey,
        count: &FailureCount,
        now: OffsetDateTime,
    ) -> Option<OffsetDateTime> {
        if count.last_failure_at <= self.counts_restart_before(now) {
            return None;
        }
        let delay = match key {
            ThrottleKey::Username(_) => {
                let beyond = count.failures.checked_sub(self.free_failures)?;
                // 2^beyond, saturating long before it could overflow the cap.
                let factor = 1_i32.checked_shl(beyond.min(30)).unwrap_or(i32::MAX);
                self.first_delay
                    .checked_mul(factor)
                    .unwrap_or(self.max_delay)
                    .min(self.max_delay)
            }
            ThrottleKey::Ip(_) if count.failures >= self.ip_failures => self.ip_block,
            ThrottleKey::Ip(_) => return None,
        };
        Some(count.last_failure_at + delay).filter(|until| *until > now)
    }

    /// The latest instant any of `counts` refuses sign-ins until.
    pub fn refused_until_any<'a>(
        &self,
        counts: impl IntoIterator<Item = &'a (ThrottleKey, FailureCount)>,
        now: OffsetDateTime,
    ) -> Option<OffsetDateTime> {
        counts
            .into_iter()
            .filter_map(|(key, count)| self.refused_until(key, count, now))
            .max()
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    const NOW: OffsetDateTime = datetime!(2026-03-01 12:00 UTC);

    fn user() -> ThrottleKey {
        ThrottleKey::Username("alice".into())
    }

    fn count(failures: u32, seconds_ago: i64) -> FailureCount {
        FailureCount {
            failures,
            last_failure_at: NOW - Duration::seconds(seconds_ago),
        }
    }

    #[test]
    fn a_username_is_refused_from_the_fifth_failure_for_a_doubling_delay() {
        let throttle = SignInThrottle::default();
        assert_eq!(throttle.refused_until(&user(), &count(4, 0), NOW), None);
        for (failures, delay) in [(5, 30), (6, 60), (7, 120), (9, 480), (10, 900), (40, 900)] {
            assert_eq!(
                throttle.refused_until(&user(), &count(failures, 0), NOW),
                Some(NOW + Duration::seconds(delay)),
                "{failures}"
            );
        }
        assert_eq!(throttle.refused_until(&user(), &count(5, 30), NOW), None);
        assert_eq!(
            throttle.refused_until(&user(), &count(6, 30), NOW),
            Some(NOW + Duration::seconds(30))
        );
    }

    #[test]
    fn an_ip_is_refused_for_fifteen_minutes_from_its_fiftieth_failure() {
        let throttle = SignInThrottle::default();
        let ip = ThrottleKey::Ip("2001:db8::/64".into());
        assert_eq!(throttle.refused_until(&ip, &count(49, 0), NOW), None);
        assert_eq!(
            throttle.refused_until(&ip, &count(50, 60), NOW),
            Some(NOW + Duration::minutes(14))
        );
    }

    #[test]
    fn old_failures_no_longer_count() {
        let throttle = SignInThrottle::default();
        assert_eq!(throttle.refused_until(&user(), &count(40, 900), NOW), None);
        assert_eq!(
            throttle.counts_restart_before(NOW),
            NOW - Duration::minutes(15)
        );
    }

    #[test]
    fn the_latest_refusal_wins() {
        let throttle = SignInThrottle::default();
        let counts = [
            (user(), count(5, 0)),
            (ThrottleKey::Ip("192.0.2.1".into()), count(50, 0)),
        ];
        assert_eq!(
            throttle.refused_until_any(&counts, NOW),
            Some(NOW + Duration::minutes(15))
        );
    }
}
