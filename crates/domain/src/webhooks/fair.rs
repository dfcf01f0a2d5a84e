//! Fair share between endpoints (contract "Webhooks"): one partner's slow, hanging or flooded
//! endpoint never delays another endpoint's deliveries by more than one attempt's time.
//!
//! Two rules, stated here once: an endpoint has at most [`MAX_IN_FLIGHT_PER_ENDPOINT`]
//! deliveries leased at a time (in flight, across every instance), and a claim goes round the
//! endpoints, each one's oldest due delivery before any one's second. The memory store runs
//! these functions; the PostgreSQL store states the same in its claim (`crates/postgres/src/
//! webhooks.rs`), and the contract suite holds both to the same answers.

use std::collections::HashMap;

use time::OffsetDateTime;

use super::model::{DeliveryId, WebhookId};

/// At most this many attempts of one endpoint run at once, all instances together: a
/// receiver that hangs holds this many of an instance's attempt slots, never more.
pub const MAX_IN_FLIGHT_PER_ENDPOINT: usize = 2;

/// A pending delivery as a claim sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueuedDelivery {
    pub id: DeliveryId,
    pub endpoint: WebhookId,
    /// When it falls due.
    pub due: OffsetDateTime,
    /// While set and after `now`, an attempt holds it (in flight).
    pub lease_until: Option<OffsetDateTime>,
}

impl QueuedDelivery {
    fn in_flight(&self, now: OffsetDateTime) -> bool {
        self.lease_until.is_some_and(|until| until > now)
    }
}

/// What a claim at `now` takes of `queued` (the claimable pending deliveries, any order), at
/// most `limit`, in the order taken: each endpoint's due deliveries not in flight, oldest
/// first, as many as it has room for beside those in flight, go round by round: every
/// endpoint's first attempt in flight before any endpoint's second (an endpoint with one in
/// flight already starts in the second round), by due time within a round and the endpoint's
/// id on a tie.
pub fn fair_claim(queued: &[QueuedDelivery], now: OffsetDateTime, limit: usize) -> Vec<DeliveryId> {
    let mut in_flight: HashMap<WebhookId, usize> = HashMap::new();
    for delivery in queued.iter().filter(|delivery| delivery.in_flight(now)) {
        *in_flight.entry(delivery.endpoint).or_default() += 1;
    }
    let mut due: Vec<&QueuedDelivery> = queued
        .iter()
        .filter(|delivery| delivery.due <= now && !delivery.in_flight(now))
        .collect();
    due.sort_by_key(|delivery| (delivery.endpoint, delivery.due, delivery.id));
    let mut ranked = Vec::new();
    let mut position = 0;
    let mut previous = None;
    for delivery in due {
        position = if previous == Some(delivery.endpoint) {
            position + 1
        } else {
            1
        };
        previous = Some(delivery.endpoint);
        let round = in_flight.get(&delivery.endpoint).copied().unwrap_or(0) + position;
        if round <= MAX_IN_FLIGHT_PER_ENDPOINT {
            ranked.push((round, delivery.due, delivery.endpoint, delivery.id));
        }
    }
    ranked.sort();
    ranked
        .into_iter()
        .take(limit)
        .map(|(_, _, _, id)| id)
        .collect()
}

/// When a claim at `now` or later may next take something of `queued`, if ever: per endpoint,
/// the soonest a lease of it ends, or, while it has room beside those in flight, its soonest
/// due delivery if sooner. (A lease ended by a recorded attempt wakes the worker anyway.)
pub fn next_claimable(queued: &[QueuedDelivery], now: OffsetDateTime) -> Option<OffsetDateTime> {
    #[derive(Default)]
    struct Endpoint {
        in_flight: usize,
        first_lease_end: Option<OffsetDateTime>,
        first_due: Option<OffsetDateTime>,
    }
    let mut endpoints: HashMap<WebhookId, Endpoint> = HashMap::new();
    for delivery in queued {
        let endpoint = endpoints.entry(delivery.endpoint).or_default();
        if delivery.in_flight(now) {
            endpoint.in_flight += 1;
            endpoint.first_lease_end = earliest(endpoint.first_lease_end, delivery.lease_until);
        } else {
            // A lease that ran out still counts: the due time is never before it.
            let due = delivery
                .lease_until
                .map_or(delivery.due, |until| until.max(delivery.due));
            endpoint.first_due = earliest(endpoint.first_due, Some(due));
        }
    }
    endpoints
        .into_values()
        .filter_map(|endpoint| {
            if endpoint.in_flight >= MAX_IN_FLIGHT_PER_ENDPOINT {
                endpoint.first_lease_end
            } else {
                earliest(endpoint.first_due, endpoint.first_lease_end)
            }
        })
        .min()
}

fn earliest(a: Option<OffsetDateTime>, b: Option<OffsetDateTime>) -> Option<OffsetDateTime> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;
    use uuid::Uuid;

    use super::*;

    const NOW: OffsetDateTime = datetime!(2026-11-27 12:00 UTC);

    fn queued(endpoint: u128, id: u128, due_seconds_ago: i64) -> QueuedDelivery {
        QueuedDelivery {
            id: DeliveryId(Uuid::from_u128(id)),
            endpoint: WebhookId(Uuid::from_u128(endpoint)),
            due: NOW - time::Duration::seconds(due_seconds_ago),
            lease_until: None,
        }
    }

    fn leased(mut delivery: QueuedDelivery, seconds_left: i64) -> QueuedDelivery {
        delivery.lease_until = Some(NOW + time::Duration::seconds(seconds_left));
        delivery
    }

    fn ids(taken: &[DeliveryId]) -> Vec<u128> {
        taken.iter().map(|id| id.0.as_u128()).collect()
    }

    #[test]
    fn a_claim_takes_each_endpoints_oldest_first_and_at_most_two_of_one() {
        // Endpoint 1 is flooded with 100 deliveries, older than endpoint 2's three.
        let mut queue: Vec<QueuedDelivery> = (0..100)
            .map(|n| queued(1, 100 + n, 1000 - n as i64))
            .collect();
        queue.extend([queued(2, 1, 10), queued(2, 2, 5), queued(2, 3, 1)]);
        assert_eq!(ids(&fair_claim(&queue, NOW, 32)), [100, 1, 101, 2]);
        // One slot: the endpoint whose oldest delivery waited longest.
        assert_eq!(ids(&fair_claim(&queue, NOW, 1)), [100]);
        assert_eq!(ids(&fair_claim(&queue, NOW, 3)), [100, 1, 101]);
    }

    #[test]
    fn deliveries_in_flight_count_against_their_endpoint_and_expired_leases_do_not() {
        let queue = [
            leased(queued(1, 1, 100), 30),
            leased(queued(1, 2, 90), 30),
            queued(1, 3, 80),
            leased(queued(2, 4, 70), 30),
            queued(2, 5, 60),
            queued(2, 6, 50),
            // A lease that ran out (its worker died): due again, and not in flight.
            leased(queued(3, 7, 40), -1),
            queued(3, 8, 30),
            // Not due yet.
            queued(4, 9, -10),
        ];
        // Endpoint 3 starts in the first round, endpoint 2 (one in flight) in the second.
        assert_eq!(ids(&fair_claim(&queue, NOW, 32)), [7, 5, 8]);
    }

    #[test]
    fn the_next_claim_waits_for_a_lease_of_an_endpoint_that_has_no_room() {
        let full = [
            leased(queued(1, 1, 100), 30),
            leased(queued(1, 2, 90), 20),
            queued(1, 3, 80),
        ];
        assert_eq!(
            next_claimable(&full, NOW),
            Some(NOW + time::Duration::seconds(20))
        );
        let mut with_room = full.to_vec();
        with_room.push(queued(2, 4, -5));
        assert_eq!(
            next_claimable(&with_room, NOW),
            Some(NOW + time::Duration::seconds(5))
        );
        with_room.push(queued(2, 5, 7));
        assert_eq!(
            next_claimable(&with_room, NOW),
            Some(NOW - time::Duration::seconds(7))
        );
        assert_eq!(next_claimable(&[], NOW), None);
        // One in flight leaves room: the endpoint's own next delivery counts.
        let one = [leased(queued(1, 1, 100), 30), queued(1, 2, -3)];
        assert_eq!(
            next_claimable(&one, NOW),
            Some(NOW + time::Duration::seconds(3))
        );
    }
}
