//! The OpenAPI 3.1 document, generated from the handlers' annotations, then completed by
//! [`complete`] with what every operation shares (the error statuses any of them can answer,
//! and the links between them), so that an operation added later is covered without a word.

use std::collections::BTreeMap;

use deckhand_domain::identity::Scope;
use utoipa::openapi::path::{Operation, PathItem};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, AuthorizationCode, Flow, HttpAuthScheme, HttpBuilder, OAuth2, Scopes,
    SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::{ContentBuilder, HeaderBuilder, OpenApi, Ref, RefOr, Response, Schema};
use utoipa::{Modify, OpenApi as _};

use crate::OAUTH_BASE;

/// `info.version` is the interface version (contract part 9): a minor version for every
/// addition, a patch version for a correction of the description alone, a new path prefix for
/// anything removed or changed; `docs/changelog.md` says what each version changed.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "Deckhand public API",
        version = "1.4.0",
        description = "Decks, sideboard guides and cards for partners, OAuth clients and players. \
            Versioning: additions are minor versions and clients must ignore unknown fields; \
            anything removed or changed gets a new path prefix (`/api/public/v2`). Deprecated \
            operations are marked `deprecated` here and answer `Deprecation`, `Sunset` and \
            `Link: <...>; rel=\"deprecation\"` headers."
    ),
    components(schemas(crate::dto::envelope::ErrorEnvelope, crate::handlers::decks::detail::Expand)),
    modifiers(&SecuritySchemes)
)]
struct ApiDoc;

/// The security schemes' names, as operations name them in `security(...)`.
mod scheme {
    pub(super) const PAT: &str = "PersonalAccessToken";
    pub(super) const OAUTH2: &str = "OAuth2";
    pub(super) const DPOP: &str = "DPoP";
    pub(super) const API_KEY: &str = "ApiKey";
    pub(super) const SIGNATURE: &str = "PartnerSignature";
    pub(super) const PARTNER_ID: &str = "PartnerId";
}

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, document: &mut OpenApi) {
        let components = document.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            scheme::PAT,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("dh_pat_...")
                    .description(Some(
                        "Authorization: Bearer <personal access token>; a PAT holds the scopes it was made with (see docs/api.md)",
                    ))
                    .build(),
            ),
        );
        let scopes =
            Scopes::from_iter(Scope::ALL.map(|scope| (scope.as_str(), scope_description(scope))));
        components.add_security_scheme(
            scheme::OAUTH2,
            SecurityScheme::OAuth2(OAuth2::with_description(
                [Flow::AuthorizationCode(AuthorizationCode::new(
                    crate::routes::AUTHORIZE_PATH,
                    format!("{OAUTH_BASE}/token"),
                    scopes,
                ))],
                "An OAuth 2.0 access token (authorization code with PKCE S256), sent as Authorization: Bearer <access token>; \
                 a DPoP-bound token is sent as Authorization: DPoP <access token> with the DPoP scheme's proof (see docs/oauth.md). \
                 The server's metadata is at /.well-known/oauth-authorization-server.",
            )),
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
            scheme::DPOP,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "DPoP",
                "A DPoP proof JWT (RFC 9449: typ dpop+jwt, alg ES256 or EdDSA, a public jwk, htm, htu, iat, jti and ath), sent with Authorization: DPoP <access token> for a token bound to the proof's key (see docs/oauth.md)",
            ))),
        );
        components.add_security_scheme(
            scheme::API_KEY,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-Api-Key",
                "A partner API key (dh_key_...)",
            ))),
        );
        components.add_security_scheme(
            scheme::SIGNATURE,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-Signature",
                "v1.<unix_seconds>.<hex HMAC-SHA256> of the canonical request, sent with X-Partner-Id (see docs/partners.md)",
            ))),
        );
        components.add_security_scheme(
            scheme::PARTNER_ID,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-Partner-Id",
                "The partner's slug, sent with X-Signature",
            ))),
        );
    }
}

fn scope_description(scope: Scope) -> &'static str {
    match scope {
        Scope::CollectionRead => {
            "Read the caller's card collection, its export, and what a deck needs from it"
        }
        Scope::CollectionWrite => "Change, import into and replace the caller's card collection",
        Scope::DecksRead => "Read decks (and the caller's own unlisted and private ones)",
        Scope::DecksWrite => "Create, edit, roll back and like decks; write strategy guides",
        Scope::SideboardsRead => "Read sideboard guides",
        Scope::SideboardsWrite => "Create and edit sideboard guides, their decks and matchups",
    }
}

/// An operation that declares only `{}` and `OAuth2` requirements (`security((), ("OAuth2" =
/// [scope]))`) accepts every lane with that scope, as `Principal::authorize` does: the OAuth
/// token (Bearer or DPoP-bound), a PAT, a partner API key, a partner signature alone or with a
/// PAT. An operation that names other schemes (user lanes only, the probes, the OAuth server)
/// keeps exactly what it names.
fn expand_lanes(operation: &mut Operation) {
    let Some(security) = &operation.security else {
        return;
    };
    let Ok(declared) = serde_json::to_value(security).map(|value| {
        serde_json::from_value::<Vec<BTreeMap<String, Vec<String>>>>(value).unwrap_or_default()
    }) else {
        return;
    };
    let expandable = declared
        .iter()
        .all(|requirement| requirement.keys().all(|name| name == scheme::OAUTH2));
    if !expandable {
        return;
    }
    let mut expanded = Vec::new();
    for requirement in declared {
        let Some(scopes) = requirement.get(scheme::OAUTH2) else {
            expanded.push(SecurityRequirement::default());
            continue;
        };
        let scopes = scopes.as_slice();
        let none: [&str; 0] = [];
        expanded.extend([
            SecurityRequirement::new(scheme::OAUTH2, scopes),
            SecurityRequirement::new(scheme::OAUTH2, scopes).add(scheme::DPOP, none),
            SecurityRequirement::new(scheme::PAT, scopes),
            SecurityRequirement::new(scheme::API_KEY, scopes),
            SecurityRequirement::new(scheme::SIGNATURE, scopes).add(scheme::PARTNER_ID, none),
            SecurityRequirement::new(scheme::SIGNATURE, scopes)
                .add(scheme::PARTNER_ID, none)
                .add(scheme::PAT, scopes),
        ]);
    }
    operation.security = Some(expanded);
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

/// A request body one DTO decodes for both a create and a PATCH, which take different fields:
/// the operation documents a schema of its own, the DTO's narrowed to what it takes and with
/// what it requires (the server checks both; a schema-driven client or fuzzer should know).
struct NarrowedBody {
    operation_id: &'static str,
    /// The DTO's schema.
    schema: &'static str,
    /// The operation's own.
    name: &'static str,
    /// The DTO's fields this operation refuses.
    refused: &'static [&'static str],
    required: &'static [&'static str],
    /// A PATCH: a body without any field is refused (`body: empty`).
    at_least_one_field: bool,
}

const NARROWED_BODIES: [NarrowedBody; 5] = [
    NarrowedBody {
        operation_id: "create_guide",
        schema: "SideboardGuideBody",
        name: "NewSideboardGuideBody",
        refused: &["is_archived"],
        required: &["deck_id", "name"],
        at_least_one_field: false,
    },
    NarrowedBody {
        operation_id: "update_guide",
        schema: "SideboardGuideBody",
        name: "SideboardGuidePatchBody",
        refused: &["deck_id", "matchups"],
        required: &[],
        at_least_one_field: true,
    },
    NarrowedBody {
        operation_id: "create_matchup",
        schema: "MatchupBody",
        name: "NewMatchupBody",
        refused: &[],
        required: &["opponent_deck_name"],
        at_least_one_field: false,
    },
    NarrowedBody {
        operation_id: "update_matchup",
        schema: "MatchupBody",
        name: "MatchupPatchBody",
        refused: &[],
        required: &[],
        at_least_one_field: true,
    },
    NarrowedBody {
        operation_id: "update_deck",
        schema: "DeckBody",
        name: "DeckPatchBody",
        refused: &[],
        required: &[],
        at_least_one_field: true,
    },
];

/// The DTO an operation's body schema `name` was narrowed from, or `name` itself.
#[cfg(test)]
fn decoded_schema(name: &str) -> &str {
    NARROWED_BODIES
        .iter()
        .find(|narrowed| narrowed.name == name)
        .map_or(name, |narrowed| narrowed.schema)
}

fn narrow_bodies(document: &mut OpenApi) {
    let Some(components) = document.components.as_mut() else {
        return;
    };
    for narrowed in &NARROWED_BODIES {
        let Some(RefOr::T(Schema::Object(object))) = components.schemas.get(narrowed.schema) else {
            continue;
        };
        let mut object = object.clone();
        for field in narrowed.refused {
            object.properties.remove(*field);
        }
        object.required = narrowed
            .required
            .iter()
            .map(|field| (*field).to_owned())
            .collect();
        if narrowed.at_least_one_field {
            object.min_properties = Some(1);
        }
        if let Some(example) = object
            .example
            .as_mut()
            .and_then(|example| example.as_object_mut())
        {
            example.retain(|field, _| !narrowed.refused.contains(&field.as_str()));
        }
        components
            .schemas
            .insert(narrowed.name.to_owned(), RefOr::T(Schema::Object(object)));
        for item in document.paths.paths.values_mut() {
            for (_, operation) in operations_mut(item) {
                if operation.operation_id.as_deref() != Some(narrowed.operation_id) {
                    continue;
                }
                for content in operation
                    .request_body
                    .iter_mut()
                    .flat_map(|body| body.content.values_mut())
                {
                    content.schema = Some(Ref::from_schema_name(narrowed.name).into());
                }
            }
        }
    }
}

/// Completes a document generated from the handlers (see the module comment).
pub(crate) fn complete(document: &mut OpenApi) {
    narrow_bodies(document);
    let links = links(document);
    for (path, item) in document.paths.paths.iter_mut() {
        let resource_server = !path.starts_with(OAUTH_BASE);
        for (method, operation) in operations_mut(item) {
            expand_lanes(operation);
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

/// A link out of a response: its name, the operation it leads to, the parameters it fills and
/// the request body fields it fills (`requestBody`, merged into a body the client makes).
struct LinkTo {
    name: String,
    operation_id: String,
    parameters: Vec<(String, String)>,
    body: Vec<(String, String)>,
}

/// What a link fills: (name, runtime expression) pairs, of path parameters or body fields.
type Fills = Vec<(String, String)>;

/// One operation of the document, as the links see it.
struct Linkable {
    path: String,
    method: &'static str,
    id: String,
    /// The status of its success answer: 201 for a create.
    success: Option<&'static str>,
    /// The properties of its JSON request body.
    body: Vec<String>,
}

/// The links a client (or a fuzzer) follows to use what it just made, keyed by the source's
/// path and method:
/// - from the game list to every operation of a game;
/// - from a `POST` that answers 201 to every operation on what it created (`POST .../decks` to
///   `.../decks/{id}...`, `POST .../matchups` to `.../matchups/{matchup_id}`), with the other
///   parameters that can be had from it ([`member_parameter`]);
/// - from a `POST` that answers 201 to every operation whose body names what it created
///   (`POST .../decks` to a body's `deck_id`), when that operation's path needs nothing more;
/// - from the delivery a ping queues to its retry.
fn links(document: &OpenApi) -> BTreeMap<(String, &'static str), Vec<LinkTo>> {
    let json = serde_json::to_value(document).unwrap_or_default();
    let mut operations: Vec<Linkable> = Vec::new();
    for (path, item) in &document.paths.paths {
        let mut item = item.clone();
        for (method, operation) in operations_mut(&mut item) {
            if let Some(id) = &operation.operation_id {
                let success = ["201", "202", "200"]
                    .into_iter()
                    .find(|status| operation.responses.responses.contains_key(*status));
                operations.push(Linkable {
                    path: path.clone(),
                    method,
                    id: id.clone(),
                    success,
                    body: body_properties(&json, path, method),
                });
            }
        }
    }
    let mut links: BTreeMap<(String, &'static str), Vec<LinkTo>> = BTreeMap::new();
    for source in &operations {
        for target in &operations {
            let link = match (source.method, source.success) {
                ("get", _) => game_list_link(&source.path, &target.path)
                    .map(|parameters| (parameters, Vec::new())),
                ("post", Some("201")) => created_resource_link(&source.path, &target.path)
                    .map(|parameters| (parameters, Vec::new()))
                    .or_else(|| named_in_body_link(&source.path, target)),
                ("post", Some("202")) => queued_delivery_link(&source.path, &target.path)
                    .map(|parameters| (parameters, Vec::new())),
                _ => None,
            };
            if let Some((parameters, body)) = link {
                links
                    .entry((source.path.clone(), source.method))
                    .or_default()
                    .push(LinkTo {
                        name: target.id.clone(),
                        operation_id: target.id.clone(),
                        parameters,
                        body,
                    });
            }
        }
    }
    links
}

/// The properties of the JSON request body of `method path` in the document, `$ref` followed.
fn body_properties(document: &serde_json::Value, path: &str, method: &str) -> Vec<String> {
    let schema =
        &document["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"];
    let schema = match schema["$ref"].as_str() {
        Some(reference) => {
            let name = reference.rsplit('/').next().unwrap_or_default();
            &document["components"]["schemas"][name]
        }
        None => schema,
    };
    schema["properties"]
        .as_object()
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}

/// `GET /games` to an operation whose only path parameter is `{game}`.
fn game_list_link(source: &str, target: &str) -> Option<Vec<(String, String)>> {
    let rest = target.strip_prefix(source)?.strip_prefix("/{game}")?;
    (!rest.contains('{')).then(|| vec![("game".to_owned(), "$response.body#/0/slug".to_owned())])
}

/// A collection's `POST` to an operation on one of its members: `source/{member}...`, the
/// member from the created resource's `id`, the parameters of the source's path as the request
/// had them, and the others from the created resource when [`member_parameter`] knows how; an
/// operation needing a parameter it cannot fill gets no link.
fn created_resource_link(source: &str, target: &str) -> Option<Vec<(String, String)>> {
    let rest = target.strip_prefix(source)?.strip_prefix("/{")?;
    let (member, _) = rest.split_once('}')?;
    let mut parameters = vec![(member.to_owned(), "$response.body#/id".to_owned())];
    let known = path_parameters(source);
    for name in path_parameters(target) {
        if name == member {
            continue;
        }
        let value = if known.contains(&name) {
            format!("$request.path.{name}")
        } else {
            member_parameter(&name)?.to_owned()
        };
        parameters.push((name, value));
    }
    Some(parameters)
}

/// A path parameter of an operation on a created resource that the resource itself fills: a
/// deck compared with itself, a diff of its current version with itself.
fn member_parameter(name: &str) -> Option<&'static str> {
    match name {
        "other_id" => Some("$response.body#/id"),
        "from" | "to" => Some("$response.body#/version"),
        _ => None,
    }
}

/// A collection's `POST` (`.../decks`) to an operation whose JSON body has a field naming one
/// of its members (`deck_id`) and whose path parameters all come from the source's path.
fn named_in_body_link(source: &str, target: &Linkable) -> Option<(Fills, Fills)> {
    let collection = source.rsplit('/').next()?;
    let field = format!("{}_id", collection.strip_suffix('s')?.replace('-', "_"));
    if !target.body.contains(&field) || target.path == source {
        return None;
    }
    let known = path_parameters(source);
    let parameters = path_parameters(&target.path)
        .into_iter()
        .map(|name| {
            known.contains(&name).then(|| {
                let value = format!("$request.path.{name}");
                (name, value)
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some((parameters, vec![(field, "$response.body#/id".to_owned())]))
}

/// `POST .../{id}/ping`, which answers the delivery it queued, to that delivery's retry.
fn queued_delivery_link(source: &str, target: &str) -> Option<Vec<(String, String)>> {
    let endpoint = source.strip_suffix("/ping")?;
    (target == format!("{endpoint}/deliveries/{{delivery_id}}/retry")).then(|| {
        let mut parameters: Vec<(String, String)> = path_parameters(endpoint)
            .into_iter()
            .map(|name| {
                let value = format!("$request.path.{name}");
                (name, value)
            })
            .collect();
        parameters.push(("delivery_id".to_owned(), "$response.body#/id".to_owned()));
        parameters
    })
}

fn path_parameters(path: &str) -> Vec<String> {
    path.split('{')
        .skip(1)
        .filter_map(|part| part.split_once('}').map(|(name, _)| name.to_owned()))
        .collect()
}

fn add_links(operation: &mut Operation, links: &[LinkTo]) {
    let Some(status) = ["201", "202", "200"]
        .into_iter()
        .find(|status| operation.responses.responses.contains_key(*status))
    else {
        return;
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
            let mut link_object = serde_json::json!({
                "operationId": link.operation_id,
                "parameters": parameters,
            });
            if !link.body.is_empty() {
                let body: serde_json::Map<String, serde_json::Value> = link
                    .body
                    .iter()
                    .map(|(name, value)| (name.clone(), serde_json::Value::from(value.clone())))
                    .collect();
                link_object["requestBody"] = serde_json::Value::Object(body);
            }
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
    use std::path::Path;

    use actix_web::dev::HttpServiceFactory;
    use serde_json::Value;
    use utoipa::openapi::schema::Schema;
    use utoipa_actix_web::OpenApiFactory;

    use super::*;
    use crate::routes::{self, Operations};

    /// Every schema each operation registers, before the document keeps one per name.
    #[derive(Default)]
    struct Registered(Vec<(String, RefOr<Schema>)>);

    impl Operations for Registered {
        fn service<F: HttpServiceFactory + OpenApiFactory + 'static>(
            &mut self,
            factory: F,
        ) -> &mut Self {
            factory.schemas(&mut self.0);
            self
        }
    }

    /// utoipa keeps the last of two schemas with one name, so a second type named like a
    /// first silently documents one of them wrongly (two `GuideBody`s once did).
    #[test]
    fn no_two_schemas_share_a_name() {
        let mut registered = Registered::default();
        routes::operations(&mut registered);
        let base = base();
        let declared = base
            .components
            .iter()
            .flat_map(|components| components.schemas.clone());
        let mut by_name: BTreeMap<String, Value> = BTreeMap::new();
        for (name, schema) in declared.chain(registered.0) {
            let schema = serde_json::to_value(&schema).unwrap();
            if let Some(first) = by_name.get(&name) {
                assert_eq!(
                    first, &schema,
                    "two different schemas are named {name}: give one `#[schema(as = ...)]` or another name"
                );
            } else {
                by_name.insert(name, schema);
            }
        }
        assert!(by_name.contains_key("DeckPage") && by_name.contains_key("Error"));
    }

    /// One handler of a handler file: its name (the operation id), its `#[utoipa::path]`
    /// attribute and its signature.
    struct Handler {
        file: String,
        name: String,
        signature: String,
    }

    fn handlers() -> Vec<Handler> {
        fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, out);
                } else if path.extension().is_some_and(|ext| ext == "rs") {
                    out.push(path);
                }
            }
        }
        let mut files = Vec::new();
        walk(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/handlers"),
            &mut files,
        );
        let mut handlers = Vec::new();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let mut rest = text.as_str();
            while let Some(start) = rest.find("#[utoipa::path(") {
                rest = &rest[start..];
                let fn_at = rest.find("pub async fn ").unwrap() + "pub async fn ".len();
                let after = &rest[fn_at..];
                let name_end = after.find(['(', '<']).unwrap();
                let returns = after.find(") -> ").unwrap();
                let signature_end = returns + after[returns..].find("{\n").unwrap();
                handlers.push(Handler {
                    file: file.display().to_string(),
                    name: after[..name_end].to_owned(),
                    signature: after[..signature_end].to_owned(),
                });
                rest = &after[signature_end..];
            }
        }
        handlers
    }

    fn operations(document: &OpenApi) -> BTreeMap<String, Value> {
        let mut operations = BTreeMap::new();
        for item in document.paths.paths.values() {
            let mut item = item.clone();
            for (_, operation) in operations_mut(&mut item) {
                let id = operation.operation_id.clone().unwrap();
                operations.insert(id, serde_json::to_value(&*operation).unwrap());
            }
        }
        operations
    }

    /// The type inside `Body<...>` of a signature.
    fn decoded_body(signature: &str) -> Option<String> {
        let (_, rest) = signature.split_once("Body<")?;
        Some(rest.split('>').next()?.trim().to_owned())
    }

    /// Bodies parsed by hand rather than through `Body<T>`: the OAuth server's forms.
    const FORMS_PARSED_BY_HAND: [&str; 4] = ["token", "introspect", "revoke", "import_collection"];

    /// The document says what each handler reads: the body schema is the type its `Body<T>`
    /// decodes (with names unique, that name is that type), and an operation documents a
    /// body exactly when its handler reads one.
    #[test]
    fn every_documented_body_is_what_its_handler_decodes() {
        let operations = operations(&crate::document());
        let handlers = handlers();
        assert_eq!(
            handlers.len(),
            operations.len(),
            "one handler per operation"
        );
        for handler in handlers {
            let operation = &operations[&handler.name];
            let documented: Vec<String> = operation["requestBody"]["content"]
                .as_object()
                .into_iter()
                .flat_map(|content| content.values())
                .map(|media| {
                    let reference = media["schema"]["$ref"].as_str().unwrap_or_else(|| {
                        panic!(
                            "{}: the body of {} is not a named schema",
                            handler.file, handler.name
                        )
                    });
                    decoded_schema(reference.trim_start_matches("#/components/schemas/")).to_owned()
                })
                .collect();
            match decoded_body(&handler.signature) {
                Some(decoded) => {
                    assert!(
                        !documented.is_empty() && documented.iter().all(|name| *name == decoded),
                        "{}: {} decodes Body<{decoded}> but documents {documented:?}",
                        handler.file,
                        handler.name
                    );
                }
                None if FORMS_PARSED_BY_HAND.contains(&handler.name.as_str()) => {}
                None => assert!(
                    documented.is_empty(),
                    "{}: {} documents a body {documented:?} it never reads",
                    handler.file,
                    handler.name
                ),
            }
        }
    }

    /// Every operation says which credentials it takes, and an operation behind a
    /// `PathAccess<Rule, _>` says what that rule admits: anonymous callers for reads of
    /// decks only, and the rule's scope.
    #[test]
    fn every_operation_declares_the_security_its_access_rule_admits() {
        let operations = operations(&crate::document());
        for handler in handlers() {
            let security = operations[&handler.name]["security"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            assert!(
                !security.is_empty(),
                "{} declares no security",
                handler.name
            );
            let Some((_, rest)) = handler.signature.split_once("PathAccess<") else {
                continue;
            };
            let rule = rest.split(',').next().unwrap();
            let (anonymous, scopes) = match rule {
                "ReadDecks" => (true, serde_json::json!(["decks:read"])),
                "WriteDecks" => (false, serde_json::json!(["decks:write"])),
                "ReadSideboards" => (false, serde_json::json!(["sideboards:read"])),
                "WriteSideboards" => (false, serde_json::json!(["sideboards:write"])),
                "ReadEvents" => (false, serde_json::json!([])),
                "ReadCollection" => (false, serde_json::json!(["collection:read"])),
                "WriteCollection" => (false, serde_json::json!(["collection:write"])),
                "DeckNeeds" => (false, serde_json::json!(["collection:read", "decks:read"])),
                other => panic!("{}: unknown rule {other}", handler.file),
            };
            let has_anonymous = security
                .iter()
                .any(|requirement| requirement.as_object().unwrap().is_empty());
            assert_eq!(
                has_anonymous, anonymous,
                "{}: anonymous callers",
                handler.name
            );
            let scopes_wanted = scopes;
            for requirement in security.iter().filter_map(Value::as_object) {
                for (name, scopes) in requirement {
                    if [
                        scheme::OAUTH2,
                        scheme::PAT,
                        scheme::API_KEY,
                        scheme::SIGNATURE,
                    ]
                    .contains(&name.as_str())
                    {
                        assert_eq!(scopes, &scopes_wanted, "{}: {name}", handler.name);
                    }
                }
            }
            assert!(
                security.iter().any(|requirement| requirement
                    .as_object()
                    .unwrap()
                    .contains_key(scheme::OAUTH2)),
                "{}: no OAuth lane",
                handler.name
            );
        }
    }

    /// Webhooks are managed by a partner alone (contract "Webhooks"), as the handlers check
    /// with `Principal::require_lane`: the document names those two lanes and no other.
    #[test]
    fn webhook_operations_take_a_partner_alone() {
        let operations = operations(&crate::document());
        let webhooks: Vec<Handler> = handlers()
            .into_iter()
            .filter(|handler| handler.file.contains("handlers/webhooks/"))
            .collect();
        assert_eq!(webhooks.len(), 9);
        for handler in webhooks {
            let mut lanes: Vec<Vec<String>> = operations[&handler.name]["security"]
                .as_array()
                .unwrap()
                .iter()
                .map(|requirement| requirement.as_object().unwrap().keys().cloned().collect())
                .collect();
            lanes.sort();
            assert_eq!(
                lanes,
                [
                    vec!["ApiKey".to_owned()],
                    vec!["PartnerId".to_owned(), "PartnerSignature".to_owned()],
                ],
                "{}",
                handler.name
            );
            assert!(
                handler.signature.contains("Caller(principal): Caller"),
                "{}: the lane is checked on the caller",
                handler.name
            );
        }
    }

    #[test]
    fn rule_scoped_operations_take_every_lane() {
        let operations = operations(&crate::document());
        let lanes: Vec<Vec<String>> = operations["list_decks"]["security"]
            .as_array()
            .unwrap()
            .iter()
            .map(|requirement| requirement.as_object().unwrap().keys().cloned().collect())
            .collect();
        assert_eq!(
            lanes,
            [
                vec![],
                vec!["OAuth2".to_owned()],
                vec!["DPoP".to_owned(), "OAuth2".to_owned()],
                vec!["PersonalAccessToken".to_owned()],
                vec!["ApiKey".to_owned()],
                vec!["PartnerId".to_owned(), "PartnerSignature".to_owned()],
                vec![
                    "PartnerId".to_owned(),
                    "PartnerSignature".to_owned(),
                    "PersonalAccessToken".to_owned()
                ],
            ]
        );
    }

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
            created_resource_link(decks, &format!("{decks}/{{id}}/compare/{{other_id}}")),
            Some(vec![
                ("id".to_owned(), "$response.body#/id".to_owned()),
                ("game".to_owned(), "$request.path.game".to_owned()),
                ("other_id".to_owned(), "$response.body#/id".to_owned()),
            ])
        );
        // A parameter the created resource cannot fill: no link.
        let guides = "/api/public/v1/games/{game}/sideboard-guides";
        assert_eq!(
            created_resource_link(guides, &format!("{guides}/{{id}}/decks/{{deck_id}}")),
            None
        );
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
    fn a_created_resource_links_to_bodies_that_name_it() {
        let decks = "/api/public/v1/games/{game}/decks";
        let target = |path: &str, body: &[&str]| Linkable {
            path: path.to_owned(),
            method: "post",
            id: "target".to_owned(),
            success: Some("201"),
            body: body.iter().map(|field| (*field).to_owned()).collect(),
        };
        let guides = "/api/public/v1/games/{game}/sideboard-guides";
        assert_eq!(
            named_in_body_link(decks, &target(guides, &["deck_id", "name"])),
            Some((
                vec![("game".to_owned(), "$request.path.game".to_owned())],
                vec![("deck_id".to_owned(), "$response.body#/id".to_owned())]
            ))
        );
        // Its path needs a guide the deck cannot give.
        assert_eq!(
            named_in_body_link(
                decks,
                &target(&format!("{guides}/{{id}}/decks"), &["deck_id"])
            ),
            None
        );
        assert_eq!(named_in_body_link(decks, &target(guides, &["name"])), None);
    }

    #[test]
    fn a_ping_links_to_the_retry_of_its_delivery() {
        let webhook = "/api/public/v1/webhooks/{id}";
        assert_eq!(
            queued_delivery_link(
                &format!("{webhook}/ping"),
                &format!("{webhook}/deliveries/{{delivery_id}}/retry")
            ),
            Some(vec![
                ("id".to_owned(), "$request.path.id".to_owned()),
                ("delivery_id".to_owned(), "$response.body#/id".to_owned()),
            ])
        );
        assert_eq!(
            queued_delivery_link(&format!("{webhook}/ping"), webhook),
            None
        );
    }

    /// The changelog's entries, newest first: each version with the `METHOD /path` code spans
    /// (paths under the API base) its entry names.
    fn changelog_entries(changelog: &str) -> Vec<(String, Vec<String>)> {
        let mut entries: Vec<(String, Vec<String>)> = Vec::new();
        for line in changelog.lines() {
            if let Some(version) = line.strip_prefix("## ") {
                entries.push((version.trim().to_owned(), Vec::new()));
                continue;
            }
            let Some((_, named)) = entries.last_mut() else {
                continue;
            };
            // Code spans are the odd pieces between backticks (none spans two lines here).
            for span in line.split('`').skip(1).step_by(2) {
                if let Some((method, path)) = span.split_once(' ')
                    && ["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&method)
                    && path.starts_with('/')
                {
                    named.push(span.to_owned());
                }
            }
        }
        entries
    }

    /// Each change to the interface has its entry in the version that brought it: the newest
    /// entry is the document's version, and every operation is named, by method and path, in
    /// the entry of some version (the format checks once shipped without one).
    #[test]
    fn every_operation_is_named_in_the_changelog() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/changelog.md");
        let changelog = std::fs::read_to_string(&path).unwrap();
        let entries = changelog_entries(&changelog);
        let document = crate::document();
        assert_eq!(
            entries.first().map(|(version, _)| version.as_str()),
            Some(document.info.version.as_str()),
            "docs/changelog.md opens with the entry of info.version"
        );
        let named: Vec<&String> = entries.iter().flat_map(|(_, named)| named).collect();
        let mut missing = Vec::new();
        for (path, item) in &document.paths.paths {
            let operations = [
                ("GET", item.get.is_some()),
                ("POST", item.post.is_some()),
                ("PUT", item.put.is_some()),
                ("PATCH", item.patch.is_some()),
                ("DELETE", item.delete.is_some()),
            ];
            for (method, _) in operations.into_iter().filter(|(_, present)| *present) {
                let operation = format!(
                    "{method} {}",
                    path.strip_prefix(crate::API_BASE).unwrap_or(path)
                );
                if !named.iter().any(|span| **span == operation) {
                    missing.push(operation);
                }
            }
        }
        assert!(
            missing.is_empty(),
            "operations no entry of docs/changelog.md names (as `METHOD /path`): {missing:?}"
        );
    }

    #[test]
    fn the_changelog_reader_finds_operations_per_version() {
        let entries = changelog_entries(
            "# Changelog\n\n## 1.1.0\n\n- `GET /games` and `POST /games/{game}/decks`;\n\
             - `GET` alone, `decks:read`, `/games`.\n\n## 1.0.0\n\nText, `DELETE /x/{id}`.\n",
        );
        assert_eq!(
            entries,
            vec![
                (
                    "1.1.0".to_owned(),
                    vec![
                        "GET /games".to_owned(),
                        "POST /games/{game}/decks".to_owned()
                    ]
                ),
                ("1.0.0".to_owned(), vec!["DELETE /x/{id}".to_owned()]),
            ]
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
