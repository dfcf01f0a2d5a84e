//! The API reference page: `GET /docs`, the served OpenAPI document rendered in the browser by
//! Redoc, whose standalone bundle is embedded in the binary (`crates/http/assets/redoc/`, with
//! its licence) and served beside the page. Nothing comes from a CDN, so the page works
//! offline, and its policy allows nothing else.

use actix_web::HttpResponse;
use actix_web::http::header;

use crate::OPENAPI_PATH;

/// The embedded Redoc release (npm `redoc`); see `crates/http/assets/redoc/README.md`.
macro_rules! redoc_version {
    () => {
        "3.0.1"
    };
}

/// The bundle's path carries its version, so browsers may keep it for a year.
pub(crate) const REDOC_PATH: &str = concat!("/docs/redoc-", redoc_version!(), ".standalone.js");

/// Where the page is served.
pub(crate) const DOCS_PATH: &str = "/docs";

static REDOC: &[u8] = include_bytes!("../../assets/redoc/redoc.standalone.js");

/// What the page may load: its script and the document from this origin; Redoc's styles are
/// injected `<style>` elements, its icons fonts in `data:` URLs, and its search index runs in a
/// worker made from a blob. Redoc 3 would also report usage to Redocly (off by
/// `disable-telemetry`) and show its attribution logo from its CDN: the policy refuses both, so
/// the page sends nothing elsewhere even if an update turned them back on.
const PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; \
    img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src blob:; \
    base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

fn page() -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>Deckhand public API reference</title>\n</head>\n<body>\n\
         <redoc spec-url=\"{OPENAPI_PATH}\" disable-telemetry=\"true\"></redoc>\n\
         <script type=\"module\" src=\"{REDOC_PATH}\"></script>\n</body>\n</html>\n"
    )
}

/// The page; Redoc's bundle (an ES module) finds the `<redoc spec-url>` element and renders
/// the document.
#[tracing::instrument(level = "debug", skip_all)]
pub async fn reference_page() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header((header::CONTENT_SECURITY_POLICY, PAGE_POLICY))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(page())
}

/// Redoc's standalone bundle.
#[tracing::instrument(level = "debug", skip_all)]
pub async fn redoc_bundle() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/javascript; charset=utf-8")
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::CACHE_CONTROL, "public, max-age=31536000, immutable"))
        .body(REDOC)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_loads_the_embedded_bundle_and_the_served_document() {
        let page = page();
        assert!(page.contains(r#"<script type="module" src="/docs/redoc-3.0.1.standalone.js">"#));
        assert!(page.contains(r#"spec-url="/api/public/v1/openapi.json""#));
        assert!(page.contains(r#"disable-telemetry="true""#));
        assert!(!page.contains("http"), "nothing from another origin");
        assert!(REDOC.len() > 1_000_000);
    }
}
