//! Which paths and methods the API serves, read from the OpenAPI document the router was
//! built from, to answer requests no route took: 405 with `Allow` when the path exists, else
//! 404.

use actix_web::dev::ResourceDef;
use actix_web::{HttpRequest, HttpResponse, web};
use utoipa::openapi::OpenApi;

use crate::error::ApiError;

/// Paths and their methods, to tell "no such path" (404) from "no such method" (405).
pub(crate) struct RouteIndex(Vec<(ResourceDef, Vec<&'static str>)>);

/// How many `{parameter}` segments a pattern has: of several patterns matching one path, the
/// one with fewest is the path's own (`/sideboard-guides/my` over `/sideboard-guides/{id}`,
/// which the router tries after it).
fn parameters(resource: &ResourceDef) -> usize {
    resource
        .pattern()
        .map_or(0, |pattern| pattern.matches('{').count())
}

impl RouteIndex {
    /// The document's operations plus `operational`, extra paths (with their methods)
    /// outside it.
    pub(crate) fn new(document: &OpenApi, operational: &[(&str, &[&'static str])]) -> Self {
        let mut routes: Vec<(ResourceDef, Vec<&'static str>)> = document
            .paths
            .paths
            .iter()
            .map(|(path, item)| {
                let operations = [
                    ("GET", item.get.is_some()),
                    ("POST", item.post.is_some()),
                    ("PUT", item.put.is_some()),
                    ("PATCH", item.patch.is_some()),
                    ("DELETE", item.delete.is_some()),
                ];
                let methods = operations
                    .into_iter()
                    .filter_map(|(method, present)| present.then_some(method))
                    .collect();
                (ResourceDef::new(path.as_str()), methods)
            })
            .collect();
        routes.extend(
            operational
                .iter()
                .map(|(path, methods)| (ResourceDef::new(*path), methods.to_vec())),
        );
        Self(routes)
    }

    /// The `Allow` header value for `path`, or `None` when no route has that path.
    pub(crate) fn allowed_methods(&self, path: &str) -> Option<String> {
        let matching: Vec<&(ResourceDef, Vec<&'static str>)> = self
            .0
            .iter()
            .filter(|(resource, _)| resource.is_match(path))
            .collect();
        let fewest = matching
            .iter()
            .map(|(resource, _)| parameters(resource))
            .min()?;
        let mut methods: Vec<&str> = matching
            .into_iter()
            .filter(|(resource, _)| parameters(resource) == fewest)
            .flat_map(|(_, methods)| methods.iter().copied())
            .collect();
        if methods.is_empty() {
            return None;
        }
        if methods.contains(&"GET") {
            methods.push("HEAD");
        }
        methods.sort_unstable();
        methods.dedup();
        Some(methods.join(", "))
    }

    /// The `Allow` value when `path` exists but does not take `method`; `None` when it takes
    /// it or when no route has the path. Asked before routing, because the router would give a
    /// method a fixed segment lacks to the `{parameter}` beside it (`GET /decks/check` to the
    /// deck detail, which finds no deck "check": a 404 where the path exists).
    pub(crate) fn refuses(&self, path: &str, method: &str) -> Option<String> {
        let allowed = self.allowed_methods(path)?;
        (!allowed.split(", ").any(|taken| taken == method)).then_some(allowed)
    }
}

/// Every request no route took: 405 with `Allow` when the path exists, else 404 (also where
/// no index is registered, as in tests that mount their own routes). Also the default service
/// of resources that list their methods themselves, so their 405 carries `Allow` too (RFC 9110
/// §15.5.6). The path is the one the router matched, percent-encoding decoded as it decodes it.
pub(crate) async fn fallback(request: HttpRequest) -> Result<HttpResponse, ApiError> {
    let allowed = request
        .app_data::<web::Data<RouteIndex>>()
        .and_then(|routes| routes.allowed_methods(request.match_info().as_str()));
    Err(match allowed {
        Some(allowed) => ApiError::method_not_allowed(&allowed),
        None => ApiError::not_found(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(paths: &[(&str, &[&'static str])]) -> RouteIndex {
        RouteIndex::new(&OpenApi::default(), paths)
    }

    #[test]
    fn a_fixed_segment_answers_for_its_own_path_not_the_parameter_beside_it() {
        let routes = index(&[
            ("/guides/my", &["GET"]),
            ("/guides/{id}", &["GET", "PATCH"]),
        ]);
        assert_eq!(
            routes.allowed_methods("/guides/my").as_deref(),
            Some("GET, HEAD")
        );
        assert_eq!(
            routes.allowed_methods("/guides/0190").as_deref(),
            Some("GET, HEAD, PATCH")
        );
        assert_eq!(routes.allowed_methods("/nowhere"), None);
    }

    #[test]
    fn a_method_the_fixed_segment_lacks_is_refused_though_the_parameter_takes_it() {
        let routes = index(&[
            ("/guides/my", &["GET"]),
            ("/guides/{id}", &["GET", "PATCH"]),
        ]);
        assert_eq!(
            routes.refuses("/guides/my", "PATCH").as_deref(),
            Some("GET, HEAD")
        );
        assert_eq!(routes.refuses("/guides/my", "GET"), None);
        assert_eq!(routes.refuses("/guides/my", "HEAD"), None);
        assert_eq!(routes.refuses("/guides/0190", "PATCH"), None);
        assert_eq!(routes.refuses("/nowhere", "PATCH"), None);
    }
}
