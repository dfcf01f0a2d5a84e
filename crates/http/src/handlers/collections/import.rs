use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest, HttpResponse, post, web};
use deckhand_domain::collections::{
    CsvStream, ImportOutcome, ImportRequest, ImportSource, WriteMode,
};
use deckhand_domain::validation::{FieldViolation, Violations};
use futures_util::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::CollectionTotalsDto;
use crate::access::{GamePath, PathAccess, WriteCollection};
use crate::body::read_chunks;
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

#[derive(Debug, Deserialize, IntoParams)]
pub struct ImportQuery {
    /// `add` (default) adds the counts to what is held; `replace` makes them the whole
    /// collection.
    #[param(inline)]
    mode: Option<ImportMode>,
    /// Write the rows that name a card even when others do not (default false: then nothing is
    /// written while any row is unresolved).
    skip_unresolved: Option<bool>,
}

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ImportMode {
    Add,
    Replace,
}

/// A row that names no card.
#[derive(Debug, Serialize, ToSchema)]
pub struct UnresolvedRowDto {
    /// 1-based, the header line included.
    line: usize,
    text: String,
    /// `empty`, `not_found`, `ambiguous`, `invalid_count` or `malformed`.
    reason: String,
}

/// What an import did.
#[derive(Debug, Serialize, ToSchema)]
pub struct ImportOutcomeDto {
    #[serde(flatten)]
    totals: CollectionTotalsDto,
    /// Rows written; 0 when nothing was.
    rows: u64,
    unresolved: Vec<UnresolvedRowDto>,
}

impl From<ImportOutcome> for ImportOutcomeDto {
    fn from(outcome: ImportOutcome) -> Self {
        Self {
            totals: outcome.totals.into(),
            rows: outcome.rows,
            unresolved: outcome
                .unresolved
                .into_iter()
                .map(|row| UnresolvedRowDto {
                    line: row.line,
                    text: row.text,
                    reason: row.reason,
                })
                .collect(),
        }
    }
}

/// The text of an import: a CSV collection export, or a deck list.
#[derive(Debug, ToSchema)]
pub struct CollectionImportText(#[allow(dead_code)] String);

/// An import body: CSV (`text/csv`), read as it arrives, or a deck list (`text/plain`); UTF-8,
/// within the body limit.
pub struct ImportBody(ImportSource);

impl FromRequest for ImportBody {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(request: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let request = request.clone();
        let mut payload = payload.take();
        Box::pin(async move {
            let mime = request
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.parse::<mime::Mime>().ok());
            match mime
                .as_ref()
                .map(|mime| (mime.type_(), mime.subtype().as_str()))
            {
                Some((mime::TEXT, "csv")) => {
                    // A header in no layout is known at the first chunk; the rest is still read
                    // (not parsed), so a client sending a large file reads the answer rather
                    // than a reset connection.
                    let mut csv = CsvStream::default();
                    let mut refused = None;
                    read_chunks(&request, &mut payload, |chunk| {
                        if refused.is_none() {
                            refused = csv.feed(chunk).err();
                        }
                        Ok(())
                    })
                    .await?;
                    match refused {
                        Some(violations) => Err(violations.into()),
                        None => Ok(Self(ImportSource::Csv(csv.finish()?))),
                    }
                }
                Some((mime::TEXT, "plain")) => {
                    let bytes = crate::body::read_bytes(&request, &mut payload).await?;
                    let text = String::from_utf8(bytes.into()).map_err(|_| {
                        ApiError::from(Violations(vec![FieldViolation::new(
                            "body",
                            "encoding",
                            "must be UTF-8",
                        )]))
                    })?;
                    Ok(Self(ImportSource::Text(text)))
                }
                _ => Err(ApiError::unsupported_media_type()),
            }
        })
    }
}

/// Imports a collection export of another site: CSV in Moxfield's or Deckbox's collection
/// layout (told from the header line), or a deck list (`text/plain`, the deck text format,
/// every card line counting as owned copies). `mode=add` adds the counts, `mode=replace` makes
/// them the whole collection. Rows that name no card are listed by line (the header is line 1)
/// and nothing is written, unless `skip_unresolved=true`; the answer is 200 either way.
#[utoipa::path(
    tag = "collections",
    params(GamePath, ImportQuery),
    request_body(content(
        (CollectionImportText = "text/csv", example = "\"Count\",\"Tradelist Count\",\"Name\",\"Edition\",\"Condition\",\"Language\",\"Foil\",\"Tags\",\"Last Modified\",\"Collector Number\",\"Alter\",\"Proxy\",\"Purchase Price\"\n\"4\",\"0\",\"Llanowar Elves\",\"m19\",\"Near Mint\",\"English\",\"\",\"\",\"\",\"314\",\"False\",\"False\",\"\"\n"),
        (CollectionImportText = "text/plain", example = "4 Llanowar Elves\n2 Siege Wurm\n"),
    )),
    responses(
        (status = 200, body = ImportOutcomeDto, example = json!({"entries": 2, "cards": 6, "version": 5, "rows": 2, "unresolved": []})),
        (status = 400, description = "A header in no known layout, or a bad query parameter", body = ErrorEnvelope),
        (status = 401, description = "No user identity (a partner alone has no collection)", body = ErrorEnvelope),
        (status = 403, body = ErrorEnvelope),
        (status = 404, description = "Unknown game", body = ErrorEnvelope),
        (status = 413, description = "A body over 4 MiB", body = ErrorEnvelope),
        (status = 415, description = "Neither text/csv nor text/plain", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security(("OAuth2" = ["collection:write"]))
)]
#[post("/games/{game}/collection/import")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
pub async fn import_collection(
    state: web::Data<HttpState>,
    PathAccess {
        principal, game, ..
    }: PathAccess<WriteCollection, GamePath>,
    query: crate::query::Query<ImportQuery>,
    body: ImportBody,
) -> Result<HttpResponse, ApiError> {
    let request = ImportRequest {
        source: body.0,
        mode: match query.mode {
            Some(ImportMode::Replace) => WriteMode::Replace,
            Some(ImportMode::Add) | None => WriteMode::Add,
        },
        skip_unresolved: query.skip_unresolved.unwrap_or(false),
    };
    let outcome = state
        .services
        .collections
        .import(&principal, &game, request)
        .await?;
    Ok(HttpResponse::Ok().json(ImportOutcomeDto::from(outcome)))
}
