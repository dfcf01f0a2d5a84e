//! The trending score: a count of counted views that halves every 24 hours.
//!
//! Decaying every score on every read would be costly, so scores are kept in log space against
//! a fixed epoch: a view at time `t` adds `w(t) = ln(2) * (t - epoch) / half_life` in the sense
//! `score' = ln(exp(score) + exp(w))`. All scores decay by the same factor, so their order at
//! any moment is the order of the decayed counts, and a view updates one row in one statement.
//! `exp(score - w(now))` is the decayed count now. The stores apply [`add_view`]'s formula
//! (PostgreSQL in SQL, in the same statement that counts the view).

use time::OffsetDateTime;

pub const HALF_LIFE_SECONDS: f64 = 24.0 * 3600.0;

/// The log-space weight of a view at `now`.
pub fn view_weight(now: OffsetDateTime) -> f64 {
    std::f64::consts::LN_2 * (now.unix_timestamp_nanos() as f64 / 1e9) / HALF_LIFE_SECONDS
}

/// The score of a deck nobody has viewed.
pub const UNVIEWED: f64 = f64::NEG_INFINITY;

/// The score after adding a view of weight `weight` (log-sum-exp, stable for any magnitude).
pub fn add_view(score: f64, weight: f64) -> f64 {
    if score == UNVIEWED {
        weight
    } else {
        score.max(weight) + (-(score - weight).abs()).exp().ln_1p()
    }
}

/// The decayed count a score stands for at `now`.
pub fn decayed_count(score: f64, now: OffsetDateTime) -> f64 {
    (score - view_weight(now)).exp()
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn a_view_a_day_old_counts_half() {
        let then = datetime!(2026-01-01 0:00 UTC);
        let now = datetime!(2026-01-02 0:00 UTC);
        let score = add_view(UNVIEWED, view_weight(then));
        assert!((decayed_count(score, now) - 0.5).abs() < 1e-9);
        let score = add_view(score, view_weight(now));
        assert!((decayed_count(score, now) - 1.5).abs() < 1e-9);
    }

    #[test]
    fn recent_views_outrank_many_old_ones() {
        let old = datetime!(2026-01-01 0:00 UTC);
        let now = datetime!(2026-01-05 0:00 UTC);
        let mut stale = UNVIEWED;
        for _ in 0..10 {
            stale = add_view(stale, view_weight(old));
        }
        let fresh = add_view(add_view(UNVIEWED, view_weight(now)), view_weight(now));
        // 10 views four days ago are worth 10/16; two views now are worth 2.
        assert!(fresh > stale);
    }
}
