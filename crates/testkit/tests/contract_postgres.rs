//! The repository contract over PostgreSQL, each test in a schema of its own.

deckhand_testkit::repository_contract_suite!(deckhand_testkit::db::TestDb::new().await);
