//! The cache of deck-list exports of stored decks (contract "Export"): 24 hours, bounded, one
//! per instance. Per instance is enough because the key carries the deck's `updated_at` and
//! version: an edit on any instance makes every older entry unreachable, so instances never
//! serve each other's stale renders; they only recompute.

use std::sync::Arc;
use std::time::Duration;

use deckhand_domain::decks::export::{ExportCache, ExportKey};

/// How long a render is kept (the spec's text export cache: 24 hours).
pub const EXPORT_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// At most this many renders are kept; a deck list is a few kilobytes, so this stays in the
/// tens of megabytes at worst. Least recently used entries go first.
pub const EXPORT_CAPACITY: u64 = 10_000;

/// [`ExportCache`] over moka's concurrent, bounded, expiring map.
#[derive(Clone)]
pub struct MokaExportCache(moka::sync::Cache<ExportKey, Arc<str>>);

impl MokaExportCache {
    pub fn new(capacity: u64, ttl: Duration) -> Self {
        Self(
            moka::sync::Cache::builder()
                .max_capacity(capacity)
                .time_to_live(ttl)
                .build(),
        )
    }
}

impl Default for MokaExportCache {
    fn default() -> Self {
        Self::new(EXPORT_CAPACITY, EXPORT_TTL)
    }
}

impl ExportCache for MokaExportCache {
    fn get(&self, key: &ExportKey) -> Option<Arc<str>> {
        self.0.get(key)
    }

    fn insert(&self, key: ExportKey, text: Arc<str>) {
        self.0.insert(key, text);
    }
}

#[cfg(test)]
mod tests {
    use deckhand_domain::decks::DeckId;
    use time::OffsetDateTime;

    use super::*;

    fn key(version: i32, updated_at: OffsetDateTime) -> ExportKey {
        ExportKey {
            deck: DeckId(uuid::Uuid::nil()),
            updated_at,
            version,
        }
    }

    #[test]
    fn a_render_is_found_under_its_key_only() {
        let cache = MokaExportCache::default();
        let then = OffsetDateTime::UNIX_EPOCH;
        cache.insert(key(1, then), "Deck\n1 Opt\n".into());
        assert_eq!(cache.get(&key(1, then)).as_deref(), Some("Deck\n1 Opt\n"));
        // An edit changes updated_at and the version: the old render is unreachable.
        assert_eq!(cache.get(&key(2, then + time::Duration::SECOND)), None);
        assert_eq!(cache.get(&key(2, then)), None, "same tick, newer version");
    }

    #[test]
    fn renders_expire_after_their_time_to_live() {
        let cache = MokaExportCache::new(10, Duration::from_millis(50));
        let at = OffsetDateTime::UNIX_EPOCH;
        cache.insert(key(1, at), "Deck\n1 Opt\n".into());
        assert!(cache.get(&key(1, at)).is_some());
        std::thread::sleep(Duration::from_millis(120));
        assert_eq!(cache.get(&key(1, at)), None);
    }

    #[test]
    fn the_cache_stays_within_its_capacity() {
        let cache = MokaExportCache::new(5, EXPORT_TTL);
        for version in 0..100 {
            cache.insert(key(version, OffsetDateTime::UNIX_EPOCH), "x".into());
        }
        cache.0.run_pending_tasks();
        assert!(cache.0.entry_count() <= 5, "{}", cache.0.entry_count());
    }
}
