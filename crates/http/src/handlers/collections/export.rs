use actix_web::http::header;
use actix_web::{HttpResponse, get, web};
use deckhand_domain::collections::export_csv;

use crate::access::{GamePath, PathAccess, ReadCollection};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::ApiError;
use crate::state::HttpState;

/// The caller's collection as CSV in the layout of Moxfield's collection export (every field
/// quoted, LF line endings), in the listing's order; the import reads it back to the same
/// collection.
#[utoipa::path(
    tag = "collections",
    params(GamePath),
    responses(
        (status = 200, content((String = "text/csv", example = "\"Count\",\"Tradelist Count\",\"Name\",\"Edition\",\"Condition\",\"Language\",\"Foil\",\"Tags\",\"Last Modified\",\"Collector Number\",\"Alter\",\"Proxy\",\"Purchase Price\"\n\"4\",\"1\",\"Llanowar Elves\",\"m19\",\"Near Mint\",\"English\",\"\",\"\",\"\",\"314\",\"False\",\"False\",\"\"\n"))),
        (status = 401, description = "No user identity (a partner alone has no collection)", body = ErrorEnvelope),
        (status = 403, body = ErrorEnvelope),
        (status = 404, description = "Unknown game", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security(("OAuth2" = ["collection:read"]))
)]
#[get("/games/{game}/collection/export")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
pub async fn export_collection(
    state: web::Data<HttpState>,
    PathAccess {
        principal, game, ..
    }: PathAccess<ReadCollection, GamePath>,
) -> Result<HttpResponse, ApiError> {
    let entries = state.services.collections.all(&principal, &game).await?;
    let csv = export_csv(&entries)?;
    Ok(HttpResponse::Ok()
        .content_type("text/csv; charset=utf-8")
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{}-collection.csv\"", game.slug),
        ))
        .body(csv))
}
