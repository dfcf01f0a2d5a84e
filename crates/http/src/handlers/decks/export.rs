use actix_web::http::header::{self, HeaderName, HeaderValue};
use actix_web::{HttpRequest, HttpResponse, post, web};
use deckhand_domain::decks::DeckId;
use deckhand_domain::decks::export::{ExportPayload, PayloadContent};
use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::CardLineDto;
use crate::access::{GamePath, PathAccess, ReadDecks, ReplicaMayServe};
use crate::body::{Body, json_or_text};
use crate::dto::envelope::{ErrorEnvelope, ServiceFailures};
use crate::error::{ApiError, FieldError};
use crate::state::HttpState;

/// Carries the warnings of a payload render (contract "Export").
pub const EXPORT_WARNINGS: HeaderName = HeaderName::from_static("x-service-export-warnings");
/// At most this many warnings are listed in the header...
pub const MAX_HEADER_WARNINGS: usize = 100;
/// ...and the header stays within this many bytes, so that it passes proxies whose response
/// header buffers are 4 to 8 KiB (nginx's default `proxy_buffer_size`).
pub const MAX_HEADER_BYTES: usize = 4096;

/// Exactly one of `deck_id` and `deck_payload`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"deck_id": "01a1fd80-0fe6-7089-a9ee-9e24acd337e6", "version": 2}))]
pub struct ExportBody {
    /// A deck of this game the caller may see.
    #[serde(default)]
    deck_id: Option<Uuid>,
    /// With `deck_id`: export this past version (1-based, as in the versions list) instead
    /// of the deck as it is; a number outside the history is 404.
    #[serde(default)]
    version: Option<i64>,
    /// An inline deck; JSON text in form and multipart bodies.
    #[serde(default, deserialize_with = "json_or_text")]
    #[schema(nullable = false)]
    #[schema(value_type = Option<DeckPayloadDto>)]
    deck_payload: Option<DeckPayloadDto>,
}

/// An inline deck: exactly one of `cards` and `text`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeckPayloadDto {
    /// At most 255 characters; not written (the format has no name line).
    name: Option<String>,
    /// Deck card entries, as a deck write takes them (at most 500).
    cards: Option<Vec<CardLineDto>>,
    /// A deck list in any form `docs/deck-text-format.md` reads.
    text: Option<String>,
}

/// What the body asks to export, checked for "exactly one of".
enum Request {
    /// A stored deck, as it is or at a past version.
    Deck(DeckId, Option<i32>),
    Payload(ExportPayload),
}

fn one_of(field: &str, message: &str) -> ApiError {
    ApiError::validation(vec![FieldError {
        field: field.into(),
        code: "one_of".into(),
        message: message.into(),
    }])
}

impl ExportBody {
    fn try_into_request(self) -> Result<Request, ApiError> {
        match (self.deck_id, self.deck_payload) {
            // A number no version can have is simply out of range: 0 is 404 too.
            (Some(id), None) => Ok(Request::Deck(
                DeckId(id),
                self.version
                    .map(|number| i32::try_from(number).unwrap_or(0)),
            )),
            (None, Some(_)) if self.version.is_some() => {
                Err(ApiError::validation(vec![FieldError {
                    field: "version".into(),
                    code: "invalid".into(),
                    message: "version goes with deck_id, not with deck_payload".into(),
                }]))
            }
            (None, Some(payload)) => {
                let content = match (payload.cards, payload.text) {
                    (Some(cards), None) => {
                        PayloadContent::Cards(cards.into_iter().map(Into::into).collect())
                    }
                    (None, Some(text)) => PayloadContent::Text(text),
                    _ => {
                        return Err(one_of(
                            "deck_payload",
                            "send exactly one of deck_payload.cards and deck_payload.text",
                        ));
                    }
                };
                Ok(Request::Payload(ExportPayload {
                    name: payload.name,
                    content,
                }))
            }
            _ => Err(one_of(
                "body",
                "send exactly one of deck_id and deck_payload",
            )),
        }
    }
}

/// Export a deck as a deck list (text format: `docs/deck-text-format.md`).
///
/// The answer is a JSON string unless `Accept` prefers `text/plain` (or `text/*`) over
/// `application/json`; ties, `*/*`, no `Accept` and anything else get JSON. Payload renders
/// carry `X-Service-Export-Warnings`, a JSON array of ASCII strings (`[]` when clean), at most
/// 100 entries and 4 KiB, the last one `… and N more` when cut. Stored decks are cached for
/// 24 hours per instance, keyed by id, `updated_at` and version.
#[utoipa::path(
    tag = "decks",
    params(GamePath),
    request_body = ExportBody,
    responses(
        (status = 200, description = "The deck list",
            headers(
                ("X-Service-Export-Warnings" = String,
                    description = "Payload renders only: a JSON array of ASCII strings, one per skipped or unresolved entry"),
                ("Vary" = String, description = "`Accept`"),
            ),
            content((String = "application/json"), (String = "text/plain"))),
        (status = 400, description = "Both or neither of deck_id and deck_payload, or an invalid payload", body = ErrorEnvelope),
        (status = 403, description = "An authenticated caller without decks:read", body = ErrorEnvelope),
        (status = 404, description = "Unknown game, or a deck that does not exist or is hidden from the caller", body = ErrorEnvelope),
        ServiceFailures,
    ),
    security((), ("OAuth2" = ["decks:read"]))
)]
#[post("/games/{game}/decks/export/text")]
#[tracing::instrument(level = "debug", skip_all, fields(game = %game.slug))]
pub async fn export_text(
    state: web::Data<HttpState>,
    PathAccess {
        principal,
        game,
        database,
        ..
    }: PathAccess<ReadDecks, GamePath, ReplicaMayServe>,
    request: HttpRequest,
    Body(body): Body<ExportBody>,
) -> Result<HttpResponse, ApiError> {
    let export = &state.services_on(database).export;
    let (text, warnings) = match body.try_into_request()? {
        Request::Deck(id, version) => {
            let text = export
                .deck(&principal, &game, id, version, &state.export_cache)
                .await?;
            (text.to_string(), None)
        }
        Request::Payload(payload) => {
            let rendered = export.payload(&game, payload).await?;
            (rendered.text, Some(rendered.warnings))
        }
    };
    let mut response = HttpResponse::Ok();
    response.insert_header((header::VARY, "Accept"));
    if let Some(warnings) = warnings {
        response.insert_header((EXPORT_WARNINGS, warnings_header(&warnings)));
    }
    Ok(if prefers_text(&request) {
        response
            .content_type("text/plain; charset=utf-8")
            .body(text)
    } else {
        response.json(text)
    })
}

/// Whether `Accept` ranks `text/plain` above `application/json`. Each media range counts with
/// its `q` (default 1); `text/*` counts for text, `application/*` and `*/*` for JSON, so a tie
/// (or no `Accept` at all) keeps the reference form, JSON. Unparsable ranges are ignored.
pub(crate) fn prefers_text(request: &HttpRequest) -> bool {
    let mut text = 0.0_f32;
    let mut json = 0.0_f32;
    let mut any = false;
    for value in request.headers().get_all(header::ACCEPT) {
        for range in value.to_str().unwrap_or_default().split(',') {
            let Ok(mime) = range.trim().parse::<mime::Mime>() else {
                continue;
            };
            any = true;
            let q = mime
                .get_param("q")
                .and_then(|q| q.as_str().parse::<f32>().ok())
                .unwrap_or(1.0);
            match (mime.type_().as_str(), mime.subtype().as_str()) {
                ("text", "plain" | "*") => text = text.max(q),
                ("application", "json" | "*") | ("*", "*") => json = json.max(q),
                _ => {}
            }
        }
    }
    any && text > json
}

/// The warnings as a JSON array in visible ASCII: everything else in the JSON text (which can
/// only sit inside strings) is written as `\uXXXX`, so the value is a valid header and still
/// valid JSON. Cut at [`MAX_HEADER_WARNINGS`] entries and [`MAX_HEADER_BYTES`], in order, with a
/// last entry saying how many were left out.
fn warnings_header(warnings: &[String]) -> HeaderValue {
    // Room for the closing entry, whatever the count.
    const TAIL: usize = r#","\u2026 and 18446744073709551615 more"]"#.len();
    let mut kept: Vec<String> = Vec::new();
    let mut size = 1; // `[`
    for warning in warnings.iter().take(MAX_HEADER_WARNINGS) {
        let entry = ascii_json(&serde_json::Value::from(warning.as_str())).len() + 1;
        if size + entry + TAIL > MAX_HEADER_BYTES {
            break;
        }
        size += entry;
        kept.push(warning.clone());
    }
    let left_out = warnings.len() - kept.len();
    if left_out > 0 {
        kept.push(format!("… and {left_out} more"));
    }
    HeaderValue::from_str(&ascii_json(&serde_json::Value::from(kept)))
        .unwrap_or_else(|_| HeaderValue::from_static("[]"))
}

fn ascii_json(value: &serde_json::Value) -> String {
    let mut out = String::new();
    for c in value.to_string().chars() {
        if (' '..='~').contains(&c) {
            out.push(c);
        } else {
            for unit in c.encode_utf16(&mut [0; 2]) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(warnings: &[String]) -> String {
        warnings_header(warnings).to_str().unwrap().to_owned()
    }

    #[test]
    fn warnings_are_ascii_json_with_non_ascii_escaped() {
        let warnings = vec![
            r#"line 1: no card named "Jötun Grunt""#.to_owned(),
            "line 2: no card named \"🂡\u{7f}\"".to_owned(),
        ];
        let value = header(&warnings);
        assert_eq!(
            value,
            r#"["line 1: no card named \"J\u00f6tun Grunt\"","line 2: no card named \"\ud83c\udca1\u007f\""]"#
        );
        let back: Vec<String> = serde_json::from_str(&value).unwrap();
        assert_eq!(back, warnings);
        assert_eq!(header(&[]), "[]");
    }

    #[test]
    fn the_header_keeps_100_warnings_and_says_how_many_more() {
        let warnings: Vec<String> = (1..=150).map(|n| format!("line {n}: x")).collect();
        let back: Vec<String> = serde_json::from_str(&header(&warnings)).unwrap();
        assert_eq!(back.len(), 101);
        assert_eq!(back[99], "line 100: x");
        assert_eq!(back[100], "… and 50 more");
    }

    #[test]
    fn the_header_stays_within_its_byte_budget() {
        let long = format!("line 1: no card named \"{}\"", "é".repeat(60));
        let warnings = vec![long; 100];
        let value = header(&warnings);
        assert!(value.len() <= MAX_HEADER_BYTES, "{}", value.len());
        let back: Vec<String> = serde_json::from_str(&value).unwrap();
        let left_out = 100 - (back.len() - 1);
        assert_eq!(back.last().unwrap(), &format!("… and {left_out} more"));
    }

    fn accept(value: Option<&str>) -> bool {
        let mut request = actix_web::test::TestRequest::default();
        if let Some(value) = value {
            request = request.insert_header((header::ACCEPT, value));
        }
        prefers_text(&request.to_http_request())
    }

    #[test]
    fn accept_chooses_text_only_when_it_ranks_above_json() {
        assert!(accept(Some("text/plain")));
        assert!(accept(Some("text/*")));
        assert!(accept(Some("application/json;q=0.5, text/plain")));
        assert!(accept(Some("text/plain; charset=utf-8, */*;q=0.1")));
        assert!(!accept(None));
        assert!(!accept(Some("*/*")));
        assert!(!accept(Some("application/json")));
        assert!(!accept(Some("text/plain, application/json")));
        assert!(!accept(Some("text/html")));
        assert!(!accept(Some("nonsense")));
    }
}
