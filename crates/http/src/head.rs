//! HEAD: the GET of the same resource without its content (RFC 9110 §9.3.2, which every
//! general-purpose server supports). The outermost middleware routes a HEAD as that GET, so it is
//! authorized, rate limited and answered as the GET, with the same status and header fields;
//! actix-http leaves the body out of a response to a request that came as HEAD. What the client
//! signed, or named in a DPoP proof (`htm`), stays the method it sent ([`sent_method`]).

use actix_web::dev::ServiceRequest;
use actix_web::http::Method;
use actix_web::{HttpMessage as _, HttpRequest};

/// Marks a request the client sent as HEAD.
#[derive(Clone, Copy)]
struct SentAsHead;

/// Routes a HEAD `request` as the GET of the same resource.
pub(crate) fn answer_as_get(request: &mut ServiceRequest) {
    if request.method() == Method::HEAD {
        request.head_mut().method = Method::GET;
        request.extensions_mut().insert(SentAsHead);
    }
}

/// The method the client sent `request` with: HEAD for one answered as its GET.
pub(crate) fn sent_method(request: &HttpRequest) -> &str {
    if request.extensions().contains::<SentAsHead>() {
        Method::HEAD.as_str()
    } else {
        request.method().as_str()
    }
}
