//! Hand-written SQL that each connection prepares once. diesel's `sql_query` marks itself unsafe
//! to cache, so every run of it was parsed and planned anew: under list load half of
//! PostgreSQL's CPU went to planning (docs/benchmarks.md). A [`Statement`] is cached by its
//! text, like diesel's own queries, and its binds are typed values, never text spliced in.

use diesel::QueryResult;
use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{
    Array, Bool, Bytea, Float8, Int8, Nullable, Text, Timestamptz, Untyped, Uuid as SqlUuid,
};
use time::OffsetDateTime;
use uuid::Uuid;

/// One bind parameter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Bind {
    Text(String),
    Uuid(Uuid),
    OptionalUuid(Option<Uuid>),
    Time(OffsetDateTime),
    Bool(bool),
    Int(i64),
    Float(Float),
    Bytes(Vec<u8>),
    /// `uuid[]`, `text[]` and `text[]` with NULLs: keys looked up together (`= ANY($n)`,
    /// `unnest($n)`), so a statement's text does not depend on how many there are.
    Uuids(Vec<Uuid>),
    Texts(Vec<String>),
    OptionalTexts(Vec<Option<String>>),
    Bools(Vec<bool>),
    OptionalInts(Vec<Option<i64>>),
}

/// An `f64` compared and hashed by its bits, so that binds can key a cache.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Float(pub f64);

impl PartialEq for Float {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for Float {}

impl std::hash::Hash for Float {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

/// SQL with `$1`, `$2`, ... placeholders (each may appear more than once) and their binds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Statement {
    sql: String,
    binds: Vec<Bind>,
}

impl Statement {
    pub(crate) fn new(sql: impl Into<String>, binds: Vec<Bind>) -> Self {
        Self {
            sql: sql.into(),
            binds,
        }
    }
}

impl QueryId for Statement {
    type QueryId = ();
    // Cached by its SQL text instead.
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl Query for Statement {
    type SqlType = Untyped;
}

impl QueryFragment<Pg> for Statement {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        let invalid = |message: &str| diesel::result::Error::QueryBuilderError(message.into());
        let mut rest = self.sql.as_str();
        // diesel numbers the parameters itself, so each placeholder becomes the next parameter
        // (a repeated `$1` is bound again).
        while let Some(at) = rest.find('$') {
            out.push_sql(&rest[..at]);
            let after = &rest[at + 1..];
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            let number: usize = after[..digits]
                .parse()
                .map_err(|_| invalid("a `$` without a parameter number"))?;
            let bind = number
                .checked_sub(1)
                .and_then(|index| self.binds.get(index))
                .ok_or_else(|| invalid("a placeholder without a bind"))?;
            match bind {
                Bind::Text(value) => out.push_bind_param::<Text, _>(value)?,
                Bind::Uuid(value) => out.push_bind_param::<SqlUuid, _>(value)?,
                Bind::OptionalUuid(value) => out.push_bind_param::<Nullable<SqlUuid>, _>(value)?,
                Bind::Time(value) => out.push_bind_param::<Timestamptz, _>(value)?,
                Bind::Bool(value) => out.push_bind_param::<Bool, _>(value)?,
                Bind::Int(value) => out.push_bind_param::<Int8, _>(value)?,
                Bind::Float(value) => out.push_bind_param::<Float8, _>(&value.0)?,
                Bind::Bytes(value) => out.push_bind_param::<Bytea, _>(value)?,
                Bind::Uuids(values) => out.push_bind_param::<Array<SqlUuid>, _>(values)?,
                Bind::Texts(values) => out.push_bind_param::<Array<Text>, _>(values)?,
                Bind::OptionalTexts(values) => {
                    out.push_bind_param::<Array<Nullable<Text>>, _>(values)?;
                }
                Bind::Bools(values) => out.push_bind_param::<Array<Bool>, _>(values)?,
                Bind::OptionalInts(values) => {
                    out.push_bind_param::<Array<Nullable<Int8>>, _>(values)?;
                }
            }
            rest = &after[digits..];
        }
        out.push_sql(rest);
        Ok(())
    }
}
