//! Test schemas are recycled within a test process: emptying one costs the server a few
//! milliseconds, creating and migrating a new one a quarter of a second (the server creating
//! some 25 tables and their indexes; see `docs/benchmarks.md`, "Test schemas").
//!
//! A schema whose test passed goes back to the process's shelf. The next test takes it, ends
//! whatever connections the last one left, deletes the rows of every table that was empty when
//! the schema was migrated, and then compares the schema with its state right after migrating:
//! the content of every table (the reference data the migrations insert, and the migrations
//! table itself) and every trigger and whether it is enabled. Only an identical schema is used
//! again; any other is dropped and a new one migrated. A test that failed drops its schema, so
//! nothing of a failure is carried into another test.

use std::sync::Mutex;

use anyhow::Context as _;
use diesel::QueryableByName;
use diesel::sql_types::Text;
use diesel_async::{AsyncPgConnection, SimpleAsyncConnection as _};
use tokio::sync::OnceCell;

/// Finished, passed schemas of this process, not yet emptied.
static SHELF: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// A migrated schema's state, the same in every freshly migrated schema.
static MIGRATED: OnceCell<Vec<TableState>> = OnceCell::const_new();

#[derive(QueryableByName, PartialEq, Eq, Debug)]
struct TableState {
    #[diesel(sql_type = Text)]
    name: String,
    /// An MD5 of the table's rows in a stable order (the MD5 of nothing when it is empty).
    #[diesel(sql_type = Text)]
    content: String,
    /// Each trigger's enabled flag, with the name of those the user made (the server names its
    /// own foreign-key triggers after their OIDs, which differ from schema to schema).
    #[diesel(sql_type = Text)]
    triggers: String,
}

/// The MD5 of an empty string: the content of an empty table.
const EMPTY: &str = "d41d8cd98f00b204e9800998ecf8427e";

/// One statement for the state of every table of schema `$1`.
const STATE: &str = "\
    SELECT c.relname::text AS name, \
           (xpath('/row/h/text()', query_to_xml(format( \
               'SELECT md5(coalesce(string_agg(t::text, '','' ORDER BY t::text), '''')) AS h \
                FROM %I.%I t', n.nspname, c.relname), false, true, '')))[1]::text AS content, \
           coalesce((SELECT string_agg(tgenabled::text \
                         || CASE WHEN tgisinternal THEN '' ELSE tgname::text END, \
                         ',' ORDER BY tgisinternal, tgname) \
                     FROM pg_trigger WHERE tgrelid = c.oid), '') AS triggers \
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
    WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') \
    ORDER BY c.relname";

async fn state(admin: &mut AsyncPgConnection, schema: &str) -> anyhow::Result<Vec<TableState>> {
    diesel_async::RunQueryDsl::load(diesel::sql_query(STATE).bind::<Text, _>(schema), admin)
        .await
        .context("reading a test schema's state")
}

/// Records the state of a freshly migrated schema, once per process.
pub(super) async fn remember_migrated(
    admin: &mut AsyncPgConnection,
    schema: &str,
) -> anyhow::Result<()> {
    MIGRATED
        .get_or_try_init(|| state(admin, schema))
        .await
        .map(|_| ())
}

/// Puts a finished schema on the shelf for the next test of this process.
pub(super) fn give_back(schema: String) {
    if let Ok(mut shelf) = SHELF.lock() {
        shelf.push(schema);
    }
}

/// The schema put on the shelf last, the lock released at once.
fn off_the_shelf() -> Option<String> {
    SHELF.lock().ok()?.pop()
}

/// An emptied schema from the shelf, as it was right after migrating, or `None` when the shelf
/// holds none. Schemas that cannot be made so are dropped.
pub(super) async fn take(admin: &mut AsyncPgConnection) -> Option<String> {
    let migrated = MIGRATED.get()?;
    while let Some(schema) = off_the_shelf() {
        match empty(admin, &schema, migrated).await {
            Ok(true) => return Some(schema),
            Ok(false) => {}
            Err(error) => {
                eprintln!("could not empty test schema {schema}: {error:#}");
                // Leave the failed transaction, if one is open, so the drop below can run.
                let _ = admin.batch_execute("ROLLBACK").await;
            }
        }
        let drop = format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE");
        if let Err(error) = admin.batch_execute(&drop).await {
            eprintln!("could not drop test schema {schema}: {error:#}");
        }
    }
    None
}

/// Empties `schema` and says whether it is now as it was right after migrating.
async fn empty(
    admin: &mut AsyncPgConnection,
    schema: &str,
    migrated: &[TableState],
) -> anyhow::Result<bool> {
    // Every connection of a test schema names it as its `application_name`; ending them first
    // means nothing the last test left running writes into the next one.
    let mut reset = format!(
        "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity \
         WHERE application_name = '{schema}' AND pid <> pg_backend_pid(); \
         BEGIN; SET LOCAL session_replication_role = replica;"
    );
    for table in migrated.iter().filter(|table| table.content == EMPTY) {
        reset.push_str(&format!(" DELETE FROM \"{schema}\".\"{}\";", table.name));
    }
    reset.push_str(" COMMIT;");
    admin
        .batch_execute(&reset)
        .await
        .context("deleting the rows")?;
    Ok(state(admin, schema).await? == migrated)
}
