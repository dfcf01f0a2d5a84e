//! Conditional reads: an `ETag` on every answer that has one, and `304 Not Modified` without a
//! body when `If-None-Match` already names it, so a syncing partner re-reads only what changed.
//! Single resources carry a strong tag derived from what versions them; list pages carry a
//! weak tag over the page's bytes.

use actix_web::http::header::{ETag, EntityTag, Header as _, IfNoneMatch};
use actix_web::{HttpRequest, HttpResponse};
use serde::Serialize;
use utoipa::IntoParams;

use crate::error::ApiError;

/// The `If-None-Match` request header, as the OpenAPI document describes it.
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(
    dead_code,
    reason = "read by `not_modified` from the request, never deserialised"
)]
pub(crate) struct IfNoneMatchHeader {
    /// The `ETag` of an earlier answer: `304 Not Modified` without a body while it is current.
    #[param(rename = "If-None-Match")]
    if_none_match: Option<String>,
}

/// Whether `If-None-Match` names `etag`, by the weak comparison RFC 9110 asks for (`*` names
/// any). A header that cannot be parsed names nothing.
fn not_modified(request: &HttpRequest, etag: &EntityTag) -> bool {
    match IfNoneMatch::parse(request) {
        Ok(IfNoneMatch::Any) => true,
        Ok(IfNoneMatch::Items(tags)) => tags.iter().any(|tag| tag.weak_eq(etag)),
        Err(_) => false,
    }
}

/// `200 OK` with `body` as JSON and `etag`, or a bodiless 304 with the same tag when the
/// caller already has it.
pub(crate) fn json_tagged<T: Serialize>(
    request: &HttpRequest,
    etag: EntityTag,
    body: &T,
) -> Result<HttpResponse, ApiError> {
    if not_modified(request, &etag) {
        return Ok(not_modified_answer(etag));
    }
    Ok(HttpResponse::Ok().insert_header(ETag(etag)).json(body))
}

/// A list page with a weak tag over its JSON (the page is the representation, and equal
/// bytes are all a weak tag promises), or a bodiless 304.
pub(crate) fn json_page<T: Serialize>(
    request: &HttpRequest,
    body: &T,
) -> Result<HttpResponse, ApiError> {
    json_digest_tagged(request, body, EntityTag::new_weak)
}

/// A single resource with no version of its own to tag (a sideboard guide's detail also
/// shows its decks' names, what the caller may see of them and its counters): a strong tag
/// over its JSON bytes, which is exactly what a strong tag promises (byte-for-byte equal
/// representations), or a bodiless 304.
pub(crate) fn json_strong<T: Serialize>(
    request: &HttpRequest,
    body: &T,
) -> Result<HttpResponse, ApiError> {
    json_digest_tagged(request, body, EntityTag::new_strong)
}

/// `body` as JSON with the tag `make_tag` makes of a digest of those bytes, or a 304.
fn json_digest_tagged<T: Serialize>(
    request: &HttpRequest,
    body: &T,
    make_tag: fn(String) -> EntityTag,
) -> Result<HttpResponse, ApiError> {
    let bytes = serde_json::to_vec(body).map_err(|error| ApiError::unexpected(error.into()))?;
    let tag = make_tag(digest_hex(&bytes));
    if not_modified(request, &tag) {
        return Ok(not_modified_answer(tag));
    }
    Ok(HttpResponse::Ok()
        .insert_header(ETag(tag))
        .content_type(mime::APPLICATION_JSON)
        .body(bytes))
}

/// The 32 hex digits of a 128-bit XXH3 digest of `bytes`. A validator needs equal bytes to give
/// equal tags and changed bytes to give another tag, not a digest that resists forgery: the
/// most a forged collision could win is that a cache keeps an older copy of a page. SHA-256
/// took 3.5% of the server's CPU on a list page (docs/benchmarks.md, "The HTTP layer on the
/// in-memory store").
fn digest_hex(bytes: &[u8]) -> String {
    let digest = xxhash_rust::xxh3::xxh3_128(bytes);
    data_encoding::HEXLOWER.encode(&digest.to_be_bytes())
}

/// `304 Not Modified`: no body, the tag the caller already has.
fn not_modified_answer(etag: EntityTag) -> HttpResponse {
    HttpResponse::NotModified()
        .insert_header(ETag(etag))
        .finish()
}

#[cfg(test)]
mod tests {
    use actix_web::http::StatusCode;
    use actix_web::test::TestRequest;

    use super::*;

    fn tagged(if_none_match: Option<&str>) -> HttpResponse {
        let mut request = TestRequest::default();
        if let Some(value) = if_none_match {
            request = request.insert_header(("If-None-Match", value));
        }
        json_tagged(
            &request.to_http_request(),
            EntityTag::new_strong("7".into()),
            &"body",
        )
        .unwrap()
    }

    #[test]
    fn a_digest_tag_is_32_hex_digits_that_any_changed_byte_changes() {
        let page = br#"{"data":[{"name":"Mono-Red Elves","views":413}]}"#;
        let tag = digest_hex(page);
        assert_eq!(tag.len(), 32);
        assert!(
            tag.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_eq!(digest_hex(page), tag, "equal bytes, equal tags");
        let mut one_more_view = page.to_vec();
        let at = one_more_view.len() - 4;
        one_more_view[at] = b'4';
        assert_ne!(digest_hex(&one_more_view), tag);
        assert_ne!(digest_hex(&page[..page.len() - 1]), tag);
    }

    #[test]
    fn a_matching_tag_is_not_modified_and_others_get_the_body() {
        assert_eq!(tagged(None).status(), StatusCode::OK);
        assert_eq!(tagged(Some("\"6\"")).status(), StatusCode::OK);
        assert_eq!(
            tagged(Some("\"6\", \"7\"")).status(),
            StatusCode::NOT_MODIFIED
        );
        assert_eq!(tagged(Some("W/\"7\"")).status(), StatusCode::NOT_MODIFIED);
        assert_eq!(tagged(Some("*")).status(), StatusCode::NOT_MODIFIED);
        assert_eq!(tagged(Some("not a tag")).status(), StatusCode::OK);
        assert_eq!(
            tagged(Some("\"7\""))
                .headers()
                .get("etag")
                .map(|v| v.as_bytes()),
            Some(&b"\"7\""[..])
        );
    }
}
