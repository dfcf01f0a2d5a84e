//! Which paths and methods the API serves, read from the OpenAPI document the router was
//! built from, to answer requests no route took: 405 with `Allow` when the path exists, else
//! 404.

use std::collections::HashSet;

use actix_web::dev::ResourceDef;
use actix_web::{HttpRequest, HttpResponse, web};
use utoipa::openapi::OpenApi;

use crate::error::ApiError;

/// Paths and their methods, to tell "no such path" (404) from "no such method" (405).
pub(crate) struct RouteIndex {
    routes: Vec<(ResourceDef, Vec<&'static str>)>,
    /// By position in the path, the fixed segments that a `{parameter}` of another route with
    /// as many segments would match too (`check` in `/games/{game}/decks/check` beside
    /// `/games/{game}/decks/{id}`). Only a path holding one of them at its place can be handed
    /// by the router to the wrong route, so only such a path is looked up before routing
    /// (`refuses`): matching every route's pattern on every request cost a fifth of the
    /// server's time on a deck detail (docs/benchmarks.md).
    shadowed: Vec<HashSet<String>>,
}

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
        let shadowed = shadowed_segments(routes.iter().filter_map(|(route, _)| route.pattern()));
        Self { routes, shadowed }
    }

    /// The `Allow` header value for `path`, or `None` when no route has that path.
    pub(crate) fn allowed_methods(&self, path: &str) -> Option<String> {
        let matching: Vec<&(ResourceDef, Vec<&'static str>)> = self
            .routes
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
        let may_be_shadowed = path.split('/').enumerate().any(|(place, segment)| {
            self.shadowed
                .get(place)
                .is_some_and(|fixed| fixed.contains(segment))
        });
        if !may_be_shadowed {
            return None;
        }
        let allowed = self.allowed_methods(path)?;
        (!allowed.split(", ").any(|taken| taken == method)).then_some(allowed)
    }
}

/// The fixed segments of `patterns` that a `{parameter}` of another pattern with as many
/// segments, alike elsewhere, would match too, by position ([`RouteIndex::shadowed`]).
fn shadowed_segments<'a>(patterns: impl Iterator<Item = &'a str> + Clone) -> Vec<HashSet<String>> {
    let is_parameter = |segment: &str| segment.starts_with('{');
    let mut shadowed: Vec<HashSet<String>> = Vec::new();
    for fixed in patterns.clone() {
        let fixed: Vec<&str> = fixed.split('/').collect();
        for other in patterns.clone() {
            let other: Vec<&str> = other.split('/').collect();
            let alike = other.len() == fixed.len()
                && fixed.iter().zip(&other).all(|(mine, theirs)| {
                    mine == theirs || is_parameter(mine) || is_parameter(theirs)
                });
            if !alike {
                continue;
            }
            for (place, (mine, theirs)) in fixed.iter().zip(&other).enumerate() {
                if !is_parameter(mine) && is_parameter(theirs) {
                    if shadowed.len() <= place {
                        shadowed.resize_with(place + 1, HashSet::new);
                    }
                    shadowed[place].insert((*mine).to_owned());
                }
            }
        }
    }
    shadowed
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

    #[test]
    fn only_fixed_segments_a_parameter_beside_them_would_match_are_looked_up_before_routing() {
        let routes = index(&[
            ("/games/{game}/decks", &["GET", "POST"]),
            ("/games/{game}/decks/check", &["POST"]),
            ("/games/{game}/decks/{id}", &["GET", "PATCH"]),
            ("/games/{game}/decks/{id}/versions", &["GET"]),
        ]);
        let shadowed: Vec<Vec<&str>> = routes
            .shadowed
            .iter()
            .map(|fixed| fixed.iter().map(String::as_str).collect())
            .collect();
        // `decks` and `games` have no parameter beside them; `check` has `{id}`.
        assert_eq!(shadowed, [vec![], vec![], vec![], vec![], vec!["check"]]);
        assert_eq!(
            routes.refuses("/games/mtg/decks/check", "GET").as_deref(),
            Some("POST")
        );
        // A deck detail is never looked up: nothing in it is a shadowed fixed segment.
        assert_eq!(routes.refuses("/games/mtg/decks/0190", "POST"), None);
    }
}
