//! `admin sign`: a partner's signed request by hand, printed as headers, its canonical string
//! and a curl line.

use anyhow::Context as _;
use deckhand_auth::CanonicalRequest;
use deckhand_domain::identity::PartnerSlug;
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::cli::SignArgs;

/// `admin sign`: the headers of a signed request, computed exactly as the server checks them.
pub fn sign(args: SignArgs, now: OffsetDateTime) -> anyhow::Result<Value> {
    let body = match (&args.body, &args.body_file) {
        (Some(text), _) => text.clone().into_bytes(),
        (None, Some(path)) => std::fs::read(path)
            .with_context(|| format!("cannot read the body file {}", path.display()))?,
        (None, None) => Vec::new(),
    };
    let slug = PartnerSlug::parse(&args.partner)?;
    let method = args.method.to_ascii_uppercase();
    let body_sha256 = deckhand_auth::sha256(&body);
    let request = CanonicalRequest {
        timestamp: args.timestamp.unwrap_or_else(|| now.unix_timestamp()),
        method: &method,
        path: &args.path,
        query: &args.query,
        partner_slug: slug.as_str(),
        body_sha256: &body_sha256,
    };
    let signature = request.sign(args.secret.as_bytes()).render();
    let mut headers = serde_json::Map::new();
    headers.insert("X-Partner-Id".into(), json!(slug.as_str()));
    headers.insert("X-Signature".into(), json!(signature));
    if let Some(pat) = &args.pat {
        headers.insert("Authorization".into(), json!(format!("Bearer {pat}")));
    }
    let url = if args.query.is_empty() {
        format!("{}{}", args.base_url, args.path)
    } else {
        format!("{}{}?{}", args.base_url, args.path, args.query)
    };
    let mut curl = format!("curl -sS -X {method} '{url}'");
    for (name, value) in &headers {
        curl.push_str(&format!(
            " -H '{name}: {}'",
            value.as_str().unwrap_or_default()
        ));
    }
    if let Some(path) = &args.body_file {
        curl.push_str(&format!(" --data-binary @'{}'", path.display()));
    } else if let Some(text) = &args.body {
        curl.push_str(&format!(" --data-binary '{}'", text.replace('\'', "'\\''")));
    }
    Ok(json!({
        "headers": headers,
        "canonical": request.canonical_string(),
        "curl": curl,
    }))
}
