//! The OpenAPI 3.1 document, generated from the handlers' annotations, then completed by
//! [`complete`] with what every operation shares (the error statuses any of them can answer,
//! and the links between them), so that an operation added later is covered without a word.

use std::collections::BTreeMap;

use utoipa::openapi::path::{Operation, PathItem};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, HeaderBuilder, OpenApi, Ref, RefOr, Response};
use utoipa::{Modify, OpenApi as _, ToSchema};

use crate::OAUTH_BASE;

#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "Deckhand public API",
        version = "1.0.0",
        description = "Decks, sideboard guides and cards for partners, OAuth clients and players."
    ),
    components(schemas(ErrorEnvelope, crate::handlers::decks::detail::Expand)),
    modifiers(&SecuritySchemes)
)]
struct ApiDoc;

/// The envelope of every error of the resource server.
#[derive(ToSchema)]
#[schema(as = Error)]
#[allow(dead_code)] // Only its schema is used: errors are rendered by `ApiError`.
struct ErrorEnvelope {
    /// A stable code, e.g. `SERVICE_VALIDATION_ERROR`.
    error: String,
    /// For people; never parsed.
    message: String,
    /// `{}` when empty; `fields` for validation errors.
    #[schema(value_type = Object)]
    details: serde_json::Value,
}

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, document: &mut OpenApi) {
        let components = document.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "PersonalAccessToken",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("dh_pat_...")
                    .description(Some("Authorization: Bearer <personal access token>"))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "OAuthClientBasic",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Basic)
                    .description(Some(
                        "A confidential OAuth client: HTTP Basic with client_id and client_secret; public clients send client_id in the form instead",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "DPoP",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "DPoP",
                "A DPoP proof JWT (RFC 9449: typ dpop+jwt, alg ES256 or EdDSA, a public jwk, htm, htu, iat, jti and ath), sent with Authorization: DPoP <access token> for a token bound to the proof's key (see docs/oauth.md)",
            ))),
        );
        components.add_security_scheme(
            "ApiKey",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-Api-Key",
                "A partner API key (dh_key_...)",
            ))),
        );
        components.add_security_scheme(
            "PartnerSignature",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-Signature",
                "v1.<unix_seconds>.<hex HMAC-SHA256>, sent with X-Partner-Id (see docs/partners.md)",
            ))),
        );
    }
}

/// The document's title, version, description and security schemes; the paths come from
/// the route list (see [`crate::document`]).
pub(crate) fn base() -> OpenApi {
    ApiDoc::openapi()
}

/// Statuses any operation can answer, whatever its handler does: refusals of the HTTP layer,
/// of the API gate and of the store.
const SHARED_ERRORS: [(u16, &str); 6] = [
    (
        400,
        "The request is malformed: not valid HTTP, a NUL character, or an invalid parameter or body",
    ),
    (401, "Credentials were sent and not accepted"),
    (
        408,
        "The request did not arrive within the client request timeout",
    ),
    (
        431,
        "The request line and headers are over the server's limit",
    ),
    (500, "An unexpected error; nothing internal is revealed"),
    (
        503,
        "The database cannot be reached; retry after `Retry-After` seconds",
    ),
];

/// Completes a document generated from the handlers (see the module comment).
pub(crate) fn complete(document: &mut OpenApi) {
    let links = links(document);
    for (path, item) in document.paths.paths.iter_mut() {
        let resource_server = !path.starts_with(OAUTH_BASE);
        for (method, operation) in operations_mut(item) {
            document_errors(path, operation, resource_server);
            if let Some(operation_links) = links.get(&(path.clone(), method)) {
                add_links(operation, operation_links);
            }
        }
    }
}

fn operations_mut(item: &mut PathItem) -> Vec<(&'static str, &mut Operation)> {
    [
        ("get", item.get.as_mut()),
        ("post", item.post.as_mut()),
        ("put", item.put.as_mut()),
        ("patch", item.patch.as_mut()),
        ("delete", item.delete.as_mut()),
    ]
    .into_iter()
    .filter_map(|(method, operation)| operation.map(|operation| (method, operation)))
    .collect()
}

/// Every error status `operation` can answer, each with its body: the envelope, unless the
/// handler documented another (the OAuth endpoints' RFC 6749 errors).
fn document_errors(path: &str, operation: &mut Operation, resource_server: bool) {
    let mut statuses: Vec<(u16, &str)> = SHARED_ERRORS.to_vec();
    if path.contains('{') {
        statuses.push((404, "An unknown game, or no such resource"));
    }
    if operation.request_body.is_some() {
        statuses.push((413, "The body is over 4 MiB"));
        statuses.push((
            415,
            "The body is not JSON, a form (application/x-www-form-urlencoded) or multipart/form-data",
        ));
    }
    if resource_server {
        statuses.push((
            429,
            "Over the caller's rate limit; retry after `Retry-After` seconds",
        ));
    }
    let responses = &mut operation.responses.responses;
    for (status, description) in statuses {
        responses
            .entry(status.to_string())
            .or_insert_with(|| RefOr::T(ResponseBuilder::new().description(description).build()));
    }
    for (status, response) in responses.iter_mut() {
        let is_error = status.starts_with('4') || status.starts_with('5');
        if let (true, RefOr::T(response)) = (is_error, response) {
            give_envelope(status, response);
        }
    }
}

fn give_envelope(status: &str, response: &mut Response) {
    if response.content.is_empty() {
        response.content.insert(
            "application/json".to_owned(),
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Error")))
                .build(),
        );
    }
    if response.description.is_empty() {
        response.description = format!("The error envelope ({status})");
    }
    if matches!(status, "429" | "503") {
        response
            .headers
            .entry("Retry-After".to_owned())
            .or_insert_with(|| {
                HeaderBuilder::new()
                    .schema(
                        utoipa::openapi::ObjectBuilder::new()
                            .schema_type(utoipa::openapi::schema::Type::Integer),
                    )
                    .description(Some("Seconds to wait before retrying"))
                    .build()
            });
    }
}

/// A link out of a response: its name, the operation it leads to and the parameters it fills.
struct LinkTo {
    name: String,
    operation_id: String,
    parameters: Vec<(String, String)>,
}

/// The links a client (or a fuzzer) follows to use what it just made: from the game list to
/// every operation of a game, and from a `POST` that answers 201 to every operation on what
/// it created (`POST .../decks` to `.../decks/{id}...`, `POST .../matchups` to
/// `.../matchups/{matchup_id}`), keyed by the source's path and method.
fn links(document: &OpenApi) -> BTreeMap<(String, &'static str), Vec<LinkTo>> {
    // (path, method, operation id, whether it answers 201 Created)
    let mut operations: Vec<(String, &'static str, String, bool)> = Vec::new();
    for (path, item) in &document.paths.paths {
        let mut item = item.clone();
        for (method, operation) in operations_mut(&mut item) {
            if let Some(id) = &operation.operation_id {
                let creates = operation.responses.responses.contains_key("201");
                operations.push((path.clone(), method, id.clone(), creates));
            }
        }
    }
    let mut links: BTreeMap<(String, &'static str), Vec<LinkTo>> = BTreeMap::new();
    for (source_path, source_method, _, creates) in &operations {
        for (target_path, _, target_id, _) in &operations {
            let parameters = match *source_method {
                "get" => game_list_link(source_path, target_path),
                "post" if *creates => created_resource_link(source_path, target_path),
                _ => None,
            };
            if let Some(parameters) = parameters {
                links
                    .entry((source_path.clone(), source_method))
                    .or_default()
                    .push(LinkTo {
                        name: target_id.clone(),
                        operation_id: target_id.clone(),
                        parameters,
                    });
            }
        }
    }
    links
}

/// `GET /games` to an operation whose only path parameter is `{game}`.
fn game_list_link(source: &str, target: &str) -> Option<Vec<(String, String)>> {
    let rest = target.strip_prefix(source)?.strip_prefix("/{game}")?;
    (!rest.contains('{')).then(|| vec![("game".to_owned(), "$response.body#/0/slug".to_owned())])
}

/// A collection's `POST` to an operation on one of its members: `source/{member}...`, the
/// member from the created resource's `id`, the other parameters as the request had them.
fn created_resource_link(source: &str, target: &str) -> Option<Vec<(String, String)>> {
    let rest = target.strip_prefix(source)?.strip_prefix("/{")?;
    let (member, _) = rest.split_once('}')?;
    let mut parameters = vec![(member.to_owned(), "$response.body#/id".to_owned())];
    parameters.extend(path_parameters(source).into_iter().map(|name| {
        let value = format!("$request.path.{name}");
        (name, value)
    }));
    Some(parameters)
}

fn path_parameters(path: &str) -> Vec<String> {
    path.split('{')
        .skip(1)
        .filter_map(|part| part.split_once('}').map(|(name, _)| name.to_owned()))
        .collect()
}

fn add_links(operation: &mut Operation, links: &[LinkTo]) {
    let status = if operation.responses.responses.contains_key("201") {
        "201"
    } else {
        "200"
    };
    let Some(RefOr::T(response)) = operation.responses.responses.get_mut(status) else {
        return;
    };
    // utoipa 5.5 writes a link's `operationId` as `operation_id`, which no client reads, so
    // the links go in as plain JSON under the response's `links` key.
    let links: serde_json::Map<String, serde_json::Value> = links
        .iter()
        .map(|link| {
            let parameters: serde_json::Map<String, serde_json::Value> = link
                .parameters
                .iter()
                .map(|(name, value)| (name.clone(), serde_json::Value::from(value.clone())))
                .collect();
            let link_object = serde_json::json!({
                "operationId": link.operation_id,
                "parameters": parameters,
            });
            (link.name.clone(), link_object)
        })
        .collect();
    response
        .extensions
        .get_or_insert_with(Default::default)
        .insert("links".to_owned(), serde_json::Value::Object(links));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_resources_link_to_their_members() {
        let decks = "/api/public/v1/games/{game}/decks";
        assert_eq!(
            created_resource_link(decks, &format!("{decks}/{{id}}/versions")),
            Some(vec![
                ("id".to_owned(), "$response.body#/id".to_owned()),
                ("game".to_owned(), "$request.path.game".to_owned()),
            ])
        );
        assert_eq!(created_resource_link(decks, decks), None);
        assert_eq!(
            created_resource_link(decks, &format!("{decks}/export/text")),
            None
        );
        let matchups = "/g/{game}/sideboard-guides/{id}/matchups";
        assert_eq!(
            created_resource_link(matchups, &format!("{matchups}/{{matchup_id}}"))
                .unwrap()
                .len(),
            3
        );
    }

    #[test]
    fn the_game_list_links_to_operations_of_one_game() {
        let games = "/api/public/v1/games";
        assert!(game_list_link(games, &format!("{games}/{{game}}/decks")).is_some());
        assert!(game_list_link(games, &format!("{games}/{{game}}/decks/{{id}}")).is_none());
        assert!(game_list_link(games, games).is_none());
    }
}
