use actix_web::{HttpResponse, patch, web};

use super::{GuideDetailDto, SideboardGuideBody};
use crate::access::{GuidePath, PathAccess, WriteSideboards};
use crate::body::Body;
use crate::error::ApiError;
use crate::state::HttpState;

/// Partial update (owner only): absent fields stay; every bound is checked and all violations
/// are reported together. `is_archived` archives and unarchives.
#[utoipa::path(
    tag = "sideboard-guides",
    params(GuidePath),
    request_body = SideboardGuideBody,
    responses(
        (status = 200, body = GuideDetailDto),
        (status = 400, description = "Fields are invalid (`details.fields`, all of them)"),
        (status = 401), (status = 403),
        (status = 404, description = "No such guide, or not the caller's"),
    ),
    security(("OAuth2" = ["sideboards:write"]))
)]
#[patch("/games/{game}/sideboard-guides/{id}")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug, guide = %path.id))]
pub async fn update_guide(
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        path,
        ..
    }: PathAccess<WriteSideboards, GuidePath>,
    Body(body): Body<SideboardGuideBody>,
) -> Result<HttpResponse, ApiError> {
    let detail = state
        .services
        .sideboard_guides
        .update(&principal, &game, path.id, body.into_patch()?)
        .await?;
    Ok(HttpResponse::Ok().json(GuideDetailDto::from(&detail)))
}
