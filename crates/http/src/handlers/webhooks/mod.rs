//! Webhook endpoints of a partner (extension, contract "Webhooks"): registration, changes,
//! secret rotation, pings, the delivery log and manual retries. A partner manages them on a
//! partner lane without a user (signature alone or API key), as `/_probe/partner` is reached.

pub(crate) mod create;
pub(crate) mod delete;
pub(crate) mod deliveries;
pub(crate) mod detail;
pub(crate) mod list;
pub(crate) mod ping;
pub(crate) mod retry;
pub(crate) mod rotate_secret;
pub(crate) mod update;

use deckhand_domain::identity::{PartnerRef, Principal};
use deckhand_domain::webhooks::{Delivery, Endpoint, EndpointDraft};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use crate::body::{nullable, present};
use crate::error::ApiError;

/// The partner behind a request, when it came on a partner lane without a user.
fn partner(principal: &Principal) -> Result<&PartnerRef, ApiError> {
    crate::auth::partner_alone(principal)
}

/// The path of one endpoint.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct WebhookPath {
    /// Webhook endpoint id.
    pub(crate) id: Uuid,
}

/// The path of one delivery of an endpoint.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct DeliveryPath {
    /// Webhook endpoint id.
    pub(crate) id: Uuid,
    /// Delivery id.
    pub(crate) delivery_id: Uuid,
}

/// A body of an endpoint's create or PATCH: the fields both take, declared here once, then
/// `$name`'s own; and the [`EndpointDraft`] it asks for, whose `enabled` is `$enabled` of the
/// body `$body`.
macro_rules! webhook_body {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($(#[$field_meta:meta])* $field:ident: $ty:ty,)*
        }
        enabled: |$body:ident| $enabled:expr
    ) => {
        $(#[$meta])*
        pub struct $name {
            /// `https://` URL resolving only to public addresses. Required on create.
            #[serde(default, deserialize_with = "present")]
            #[schema(nullable = false)]
            url: Option<String>,
            /// Event types, exact (`deck.updated`) or by prefix (`deck.*`); `["*"]` or absent
            /// on create: every type.
            #[serde(default, deserialize_with = "present")]
            #[schema(nullable = false)]
            types: Option<Vec<String>>,
            /// Game slugs within the partner's game scopes; absent on create or `["*"]`: the
            /// partner's game scopes.
            #[serde(default, deserialize_with = "present")]
            #[schema(nullable = false)]
            games: Option<Vec<String>>,
            /// At most 500 characters, or null.
            #[serde(default, deserialize_with = "nullable")]
            #[schema(value_type = Option<String>)]
            description: Option<Option<String>>,
            $($(#[$field_meta])* $field: $ty,)*
        }

        impl From<$name> for EndpointDraft {
            fn from($body: $name) -> Self {
                Self {
                    enabled: $enabled,
                    url: $body.url,
                    types: $body.types,
                    games: $body.games,
                    description: $body.description,
                }
            }
        }
    };
}

webhook_body! {
    /// An endpoint to register.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    #[serde(deny_unknown_fields)]
    #[schema(example = json!({
        "url": "https://hooks.example.com/deckhand", "types": ["deck.*"], "games": ["mtg"],
        "description": "Mirror of our decks"
    }))]
    pub struct NewWebhookBody {}
    enabled: |body| None
}

webhook_body! {
    /// Changes to an endpoint; absent fields stay as they are.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    #[serde(deny_unknown_fields)]
    #[schema(example = json!({"enabled": true}))]
    pub struct WebhookPatchBody {
        /// `true` enables a disabled endpoint again (its failure count starts over).
        #[serde(default, deserialize_with = "present")]
        #[schema(nullable = false)]
        enabled: Option<bool>,
    }
    enabled: |body| body.enabled
}

/// A webhook endpoint (its secret is shown only when it is made or rotated).
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookDto {
    id: Uuid,
    url: String,
    types: Vec<String>,
    games: Vec<String>,
    description: Option<String>,
    enabled: bool,
    /// `failing` when the service disabled the endpoint after 50 failed deliveries in a row
    /// (a PATCH with `enabled: true` enables it again); `operator` when an operator disabled it
    /// (nothing reaches it, pings included, and it cannot be enabled again).
    disabled_reason: Option<&'static str>,
    #[serde(with = "time::serde::rfc3339")]
    created_at: OffsetDateTime,
}

impl From<&Endpoint> for WebhookDto {
    fn from(endpoint: &Endpoint) -> Self {
        Self {
            id: endpoint.id.0,
            url: endpoint.url.clone(),
            types: endpoint.types.names(),
            games: endpoint.games.names(),
            description: endpoint.description.clone(),
            enabled: endpoint.enabled,
            disabled_reason: endpoint.disabled_reason.map(|reason| reason.as_str()),
            created_at: endpoint.created_at,
        }
    }
}

/// A webhook endpoint with its signing secret, shown this once.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookWithSecret {
    #[serde(flatten)]
    endpoint: WebhookDto,
    /// `whsec_` + base64 of 32 random bytes: the key of the Standard Webhooks signatures.
    secret: String,
}

impl WebhookWithSecret {
    fn new(endpoint: &Endpoint, secret: String) -> Self {
        Self {
            endpoint: endpoint.into(),
            secret,
        }
    }
}

/// The partner's endpoints.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookList {
    data: Vec<WebhookDto>,
}

/// One event on its way to an endpoint.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryDto {
    id: Uuid,
    /// The event's id: the `webhook-id` of every attempt.
    event_id: Uuid,
    event_type: &'static str,
    /// Attempts made so far.
    attempt: i32,
    /// `pending`, `succeeded` or `failed`.
    status: &'static str,
    response_status: Option<i32>,
    duration_ms: Option<i64>,
    error: Option<String>,
    #[serde(with = "time::serde::rfc3339::option")]
    attempted_at: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    next_attempt_at: Option<OffsetDateTime>,
}

impl From<&Delivery> for DeliveryDto {
    fn from(delivery: &Delivery) -> Self {
        Self {
            id: delivery.id.0,
            event_id: delivery.event_id.0,
            event_type: delivery.event_type.as_str(),
            attempt: delivery.attempt,
            status: delivery.status.as_str(),
            response_status: delivery.response_status,
            duration_ms: delivery.duration_ms,
            error: delivery.error.clone(),
            attempted_at: delivery.attempted_at,
            next_attempt_at: delivery.next_attempt_at,
        }
    }
}

/// A page of the delivery log, newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryPage {
    data: Vec<DeliveryDto>,
    /// Whether older deliveries follow: pass the last `id` as `after` for them.
    has_more: bool,
}
