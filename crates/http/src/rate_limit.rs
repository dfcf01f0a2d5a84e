//! Per-tier rate limits with GCRA (`governor`), keyed by caller, counted per instance.

use std::collections::{BTreeMap, HashMap};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};

use governor::clock::{Clock as _, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use crate::client_ip::IpKey;

/// The window quotas are expressed in.
pub const WINDOW_SECONDS: u64 = 60;
/// The tier whose quota partner tiers without one of their own use.
const PARTNER_TIER: &str = "partner";
/// How often (in checks) idle keys are dropped, so the key maps stay as small as the set of
/// recently active callers.
const RETAIN_EVERY: u64 = 4096;

type KeyedLimiter = RateLimiter<
    LimitKey,
    DefaultKeyedStateStore<LimitKey>,
    DefaultClock,
    StateInformationMiddleware,
>;

/// Whom a request is counted against: a caller with credentials by its name
/// (`Caller::caller`), anyone else by the client's address ([`IpKey`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum LimitKey {
    Caller(String),
    Client(IpKey),
}

/// The outcome of one check, with what the `RateLimit-*` headers report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Limits are off.
    Unlimited,
    Allowed {
        limit: u32,
        remaining: u32,
        reset_seconds: u64,
    },
    Limited {
        limit: u32,
        retry_after_seconds: u64,
        reset_seconds: u64,
    },
}

pub struct RateLimits {
    tiers: HashMap<String, (u32, KeyedLimiter)>,
    clock: DefaultClock,
    checks: AtomicU64,
}

impl RateLimits {
    /// Quotas per minute by tier; `None` turns limits off.
    pub fn new(quotas: Option<&BTreeMap<String, u32>>) -> Self {
        let tiers = quotas
            .into_iter()
            .flatten()
            .filter_map(|(tier, quota)| {
                let limit = NonZeroU32::new(*quota)?;
                let limiter = RateLimiter::keyed(Quota::per_minute(limit))
                    .with_middleware::<StateInformationMiddleware>();
                Some((tier.clone(), (*quota, limiter)))
            })
            .collect();
        Self {
            tiers,
            clock: DefaultClock::default(),
            checks: AtomicU64::new(0),
        }
    }

    /// Counts one request of `key` in `tier`. A tier without a quota of its own (a partner's
    /// custom tier) uses the `partner` quota; with no quota at all the request is unlimited.
    pub(crate) fn check(&self, tier: &str, key: &LimitKey) -> Decision {
        let Some((limit, limiter)) = self
            .tiers
            .get(tier)
            .or_else(|| self.tiers.get(PARTNER_TIER))
        else {
            return Decision::Unlimited;
        };
        if self.checks.fetch_add(1, Ordering::Relaxed) % RETAIN_EVERY == RETAIN_EVERY - 1 {
            for (_, limiter) in self.tiers.values() {
                limiter.retain_recent();
            }
        }
        let limit = *limit;
        // One request's worth of refill: the bucket refills evenly over the window.
        let per_request = WINDOW_SECONDS as f64 / f64::from(limit);
        match limiter.check_key(key) {
            Ok(snapshot) => {
                let remaining = snapshot.remaining_burst_capacity();
                Decision::Allowed {
                    limit,
                    remaining,
                    reset_seconds: ceil_seconds(f64::from(limit - remaining) * per_request),
                }
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.clock.now()).as_secs_f64();
                Decision::Limited {
                    limit,
                    retry_after_seconds: ceil_seconds(wait).max(1),
                    reset_seconds: ceil_seconds(wait + f64::from(limit - 1) * per_request),
                }
            }
        }
    }
}

fn ceil_seconds(seconds: f64) -> u64 {
    // Non-negative and at most a window long, so the conversion cannot truncate.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let whole = seconds.max(0.0).ceil() as u64;
    whole
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(last: u8) -> LimitKey {
        LimitKey::Client(IpKey::v4(192, 0, 2, last))
    }

    fn quotas(pairs: &[(&str, u32)]) -> BTreeMap<String, u32> {
        pairs.iter().map(|(t, q)| ((*t).to_owned(), *q)).collect()
    }

    #[test]
    fn a_burst_of_the_quota_passes_then_the_key_is_limited() {
        let limits = RateLimits::new(Some(&quotas(&[("anonymous", 3), ("partner", 10)])));
        for remaining in [2, 1, 0] {
            let Decision::Allowed {
                limit,
                remaining: r,
                ..
            } = limits.check("anonymous", &client(1))
            else {
                panic!("within the quota");
            };
            assert_eq!((limit, r), (3, remaining));
        }
        let Decision::Limited {
            retry_after_seconds,
            reset_seconds,
            ..
        } = limits.check("anonymous", &client(1))
        else {
            panic!("past the quota");
        };
        assert!(
            (1..=20).contains(&retry_after_seconds),
            "{retry_after_seconds}"
        );
        assert!((40..=60).contains(&reset_seconds), "{reset_seconds}");
        // Other keys have their own bucket.
        assert!(matches!(
            limits.check("anonymous", &client(2)),
            Decision::Allowed { .. }
        ));
    }

    #[test]
    fn unknown_tiers_use_the_partner_quota_and_off_is_unlimited() {
        let limits = RateLimits::new(Some(&quotas(&[("partner", 10)])));
        assert!(matches!(
            limits.check("gold", &LimitKey::Caller("partner:acme".to_owned())),
            Decision::Allowed { limit: 10, .. }
        ));
        assert_eq!(
            RateLimits::new(None).check("user", &LimitKey::Caller("user:x".to_owned())),
            Decision::Unlimited
        );
    }
}
