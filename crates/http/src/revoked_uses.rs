//! The abuse rule for revoked OAuth tokens: 20 or more uses of revoked tokens from one IP
//! within 10 minutes close the API to that IP for 10 minutes (contract §5). Counted per
//! instance, like the other rate limits, and per [`IpKey`] (an IPv6 client by its /64); off
//! when rate limits are off.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::client_ip::IpKey;

pub const THRESHOLD: usize = 20;
pub const WINDOW: Duration = Duration::from_secs(600);
pub const BLOCK: Duration = Duration::from_secs(600);
/// Past this many tracked addresses, stale ones are dropped on the next use.
const PRUNE_ABOVE: usize = 10_000;

#[derive(Debug, Default)]
struct Record {
    uses: VecDeque<Instant>,
    blocked_until: Option<Instant>,
}

#[derive(Debug)]
pub struct RevokedTokenUses {
    enabled: bool,
    records: Mutex<HashMap<IpKey, Record>>,
}

impl RevokedTokenUses {
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            records: Mutex::new(HashMap::new()),
        }
    }

    fn records(&self) -> std::sync::MutexGuard<'_, HashMap<IpKey, Record>> {
        self.records
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How long `ip` stays blocked, if it is.
    pub fn blocked(&self, ip: IpKey, now: Instant) -> Option<Duration> {
        if !self.enabled {
            return None;
        }
        self.records()
            .get(&ip)
            .and_then(|record| record.blocked_until)
            .and_then(|until| until.checked_duration_since(now))
            .filter(|left| !left.is_zero())
    }

    /// Counts one use of a revoked token from `ip`; returns the block it triggers, if any.
    pub fn record(&self, ip: IpKey, now: Instant) -> Option<Duration> {
        if !self.enabled {
            return None;
        }
        let mut records = self.records();
        if records.len() > PRUNE_ABOVE {
            records.retain(|_, record| {
                record.blocked_until.is_some_and(|until| until > now)
                    || record
                        .uses
                        .back()
                        .is_some_and(|last| now.duration_since(*last) < WINDOW)
            });
        }
        let record = records.entry(ip).or_default();
        while record
            .uses
            .front()
            .is_some_and(|first| now.duration_since(*first) >= WINDOW)
        {
            record.uses.pop_front();
        }
        record.uses.push_back(now);
        if record.uses.len() >= THRESHOLD {
            record.uses.clear();
            record.blocked_until = Some(now + BLOCK);
            return Some(BLOCK);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::net::IpAddr;

    const IP: IpKey = IpKey::v4(192, 0, 2, 1);
    const OTHER: IpKey = IpKey::v4(192, 0, 2, 2);

    fn key(ip: &str) -> IpKey {
        IpKey::of(ip.parse::<IpAddr>().unwrap())
    }

    #[test]
    fn an_ipv6_64_is_one_client() {
        let uses = RevokedTokenUses::new(true);
        let now = Instant::now();
        // Every use from another address of the same /64.
        for i in 1..20 {
            assert_eq!(uses.record(key(&format!("2001:db8:7:7::{i:x}")), now), None);
        }
        assert_eq!(uses.record(key("2001:db8:7:7:abcd::1"), now), Some(BLOCK));
        assert!(uses.blocked(key("2001:db8:7:7:ffff::ffff"), now).is_some());
        assert_eq!(uses.blocked(key("2001:db8:7:8::1"), now), None);
    }

    #[test]
    fn the_twentieth_use_within_ten_minutes_blocks_the_ip_for_ten_minutes() {
        let uses = RevokedTokenUses::new(true);
        let start = Instant::now();
        for i in 0..19 {
            assert_eq!(uses.record(IP, start + Duration::from_secs(i * 30)), None);
        }
        let at = start + Duration::from_secs(590);
        assert_eq!(uses.record(IP, at), Some(BLOCK));
        assert_eq!(
            uses.blocked(IP, at + Duration::from_secs(1)),
            Some(BLOCK - Duration::from_secs(1))
        );
        assert_eq!(uses.blocked(OTHER, at), None);
        assert_eq!(uses.blocked(IP, at + BLOCK), None);
    }

    #[test]
    fn uses_older_than_the_window_do_not_count() {
        let uses = RevokedTokenUses::new(true);
        let start = Instant::now();
        for i in 0..19 {
            uses.record(IP, start + Duration::from_secs(i));
        }
        // Ten minutes after the first use, the first has left the window.
        assert_eq!(uses.record(IP, start + WINDOW), None);
        assert_eq!(uses.blocked(IP, start + WINDOW), None);
    }

    #[test]
    fn off_means_never_blocked() {
        let uses = RevokedTokenUses::new(false);
        let now = Instant::now();
        for _ in 0..50 {
            assert_eq!(uses.record(IP, now), None);
        }
        assert_eq!(uses.blocked(IP, now), None);
    }
}
