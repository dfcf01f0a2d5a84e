//! The repository contract over the in-memory store.

deckhand_testkit::repository_contract_suite!(deckhand_memory::repositories());
