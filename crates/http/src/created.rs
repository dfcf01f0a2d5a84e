//! `201 Created` answers name the new resource in `Location` (RFC 9110 §10.2.2): its absolute
//! URL under `DECKHAND_PUBLIC_URL`, as the pagination links are built. The idempotency layer
//! keeps the header, so a replayed create names the same resource.

use actix_web::http::header;
use actix_web::{HttpResponse, HttpResponseBuilder};

use crate::API_BASE;
use crate::state::HttpState;

/// A 201 whose `Location` is `path` (relative to the API base) on the public URL.
pub(crate) fn created(state: &HttpState, path: &str) -> HttpResponseBuilder {
    let mut response = HttpResponse::Created();
    response.insert_header((
        header::LOCATION,
        format!("{}{API_BASE}{path}", state.config.public_url),
    ));
    response
}
