//! Even telemetry: every method an adapter implements for a domain port, and every HTTP handler,
//! opens a `tracing` span, so a slow request can be followed from the handler to the store on
//! either store. Read as text from rustfmt-formatted sources: a port is a trait the domain
//! declares under `#[async_trait]`; an adapter's method is an `async fn` inside a top-level
//! `impl <Port> for <Type>` block of an adapter crate; a handler is a `pub async fn` under
//! `crates/http/src/handlers/` that carries an actix route attribute or that
//! `crates/http/src/routes.rs` names.

/// Where the ports are declared.
const DOMAIN_SOURCES: &str = "crates/domain/src/";
/// The crates whose `impl <Port> for` blocks must open spans.
const ADAPTER_SOURCES: [&str; 3] = [
    "crates/postgres/src/",
    "crates/memory/src/",
    "crates/app/src/",
];
const HANDLER_SOURCES: &str = "crates/http/src/handlers/";
const ROUTES: &str = "crates/http/src/routes.rs";
const ROUTE_ATTRIBUTES: [&str; 6] = [
    "#[get(",
    "#[post(",
    "#[put(",
    "#[patch(",
    "#[delete(",
    "#[route(",
];
/// What the message tells the author to write, in the house's style.
const SPAN: &str = "#[tracing::instrument(level = \"debug\", skip_all)]";

/// Every adapter method and handler without a span, as `path:line: ...`.
pub fn check_spans(sources: &[(String, String)]) -> Vec<String> {
    let ports = port_traits(sources);
    let routes = sources
        .iter()
        .find(|(path, _)| path == ROUTES)
        .map_or("", |(_, text)| text.as_str());
    let mut problems = Vec::new();
    for (path, text) in sources {
        if ADAPTER_SOURCES.iter().any(|root| path.starts_with(root)) {
            problems.extend(unspanned_port_methods(path, text, &ports));
        }
        if let Some(module) = handler_module(path) {
            problems.extend(unspanned_handlers(path, text, &module, routes));
        }
    }
    problems
}

/// The names of the traits the domain declares under `#[async_trait]`.
fn port_traits(sources: &[(String, String)]) -> Vec<String> {
    let mut ports = Vec::new();
    for (path, text) in sources {
        if !path.starts_with(DOMAIN_SOURCES) {
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        for (index, line) in lines.iter().enumerate() {
            let Some(rest) = line.trim_start().strip_prefix("pub trait ") else {
                continue;
            };
            if attributes_above(&lines, index).contains("async_trait") {
                ports.push(identifier(rest).to_owned());
            }
        }
    }
    ports.sort();
    ports.dedup();
    ports
}

fn unspanned_port_methods(path: &str, text: &str, ports: &[String]) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut problems = Vec::new();
    let mut port: Option<&str> = None;
    for (index, line) in lines.iter().enumerate() {
        // rustfmt puts a top-level impl at the margin and closes it with a lone `}`; impls
        // inside `mod tests` are indented and left alone (test doubles).
        if *line == "}" {
            port = None;
        } else if let Some(implemented) = implemented_trait(line) {
            port = ports
                .iter()
                .find(|name| name.as_str() == implemented)
                .map(String::as_str);
        } else if let (Some(trait_name), Some(rest)) = (port, line.strip_prefix("    async fn "))
            && !has_span(&lines, index)
        {
            problems.push(format!(
                "{path}:{}: `{trait_name}::{}` has no span: put `{SPAN}` above it (name the ids it works on in `fields(...)`, as the other adapter does)",
                index + 1,
                identifier(rest),
            ));
        }
    }
    problems
}

/// `Port` for a line `impl Port for Type {` or `impl<'a> path::Port for Type {`.
fn implemented_trait(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("impl")?;
    let rest = if let Some(generic) = rest.strip_prefix('<') {
        &generic[generic.find('>')? + 1..]
    } else {
        rest
    };
    let (trait_path, _) = rest.trim_start().split_once(" for ")?;
    Some(trait_path.rsplit("::").next().unwrap_or(trait_path).trim())
}

/// `handlers::oauth::token` for `crates/http/src/handlers/oauth/token.rs`, `handlers::webhooks`
/// for its `mod.rs`.
fn handler_module(path: &str) -> Option<String> {
    let inner = path.strip_prefix(HANDLER_SOURCES)?.strip_suffix(".rs")?;
    let inner = inner.strip_suffix("/mod").unwrap_or(inner);
    if inner == "mod" {
        return Some("handlers".to_owned());
    }
    Some(format!("handlers::{}", inner.replace('/', "::")))
}

fn unspanned_handlers(path: &str, text: &str, module: &str, routes: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut problems = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("pub async fn ") else {
            continue;
        };
        let name = identifier(rest);
        let attributes = attributes_above(&lines, index);
        let routed = ROUTE_ATTRIBUTES
            .iter()
            .any(|attribute| attributes.contains(attribute))
            || routes.contains(&format!("{module}::{name})"));
        if routed && !mentions_span(&attributes) {
            problems.push(format!(
                "{path}:{}: handler `{name}` has no span: put `{SPAN}` above it (below the route attribute; name the path's ids in `fields(...)`)",
                index + 1
            ));
        }
    }
    problems
}

fn has_span(lines: &[&str], index: usize) -> bool {
    mentions_span(&attributes_above(lines, index))
}

fn mentions_span(attributes: &str) -> bool {
    attributes.contains("#[tracing::instrument") || attributes.contains("#[instrument")
}

/// The attributes and doc comments right above line `index`, joined: every line back to the end
/// of the previous item (a blank line, or one that ends in `{`, `}` or `;` outside a comment).
fn attributes_above(lines: &[&str], index: usize) -> String {
    let mut above = Vec::new();
    for line in lines[..index].iter().rev() {
        let trimmed = line.trim();
        let comment = trimmed.starts_with("//");
        if trimmed.is_empty() || (!comment && trimmed.ends_with(['{', '}', ';'])) {
            break;
        }
        above.push(trimmed);
    }
    above.reverse();
    above.join("\n")
}

fn identifier(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(files: &[(&str, &str)]) -> Vec<(String, String)> {
        files
            .iter()
            .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
            .collect()
    }

    const PORTS: (&str, &str) = (
        "crates/domain/src/decks/ports.rs",
        "#[cfg_attr(feature = \"mock\", mockall::automock)]\n#[async_trait]\npub trait DeckRepository: Send + Sync {\n    async fn find(&self);\n}\n\npub trait Plain {\n    fn value(&self);\n}\n",
    );

    #[test]
    fn port_methods_without_a_span_are_reported_with_what_to_write() {
        let adapter = "#[async_trait]\nimpl DeckRepository for MemoryDecks {\n    #[tracing::instrument(\n        level = \"debug\",\n        skip_all,\n    )]\n    async fn find(&self) {}\n\n    /// Documented, but no span.\n    async fn insert(&self) {}\n}\n\nimpl Plain for MemoryDecks {\n    async fn value(&self) {}\n}\n\nimpl MemoryDecks {\n    async fn helper(&self) {}\n}\n";
        let problems = check_spans(&sources(&[PORTS, ("crates/memory/src/decks.rs", adapter)]));
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert!(
            problems[0].starts_with(
                "crates/memory/src/decks.rs:10: `DeckRepository::insert` has no span: put `#[tracing::instrument(level = \"debug\", skip_all)]` above it"
            ),
            "{problems:#?}"
        );
    }

    #[test]
    fn test_doubles_and_other_crates_are_left_alone() {
        let fake = "impl DeckRepository for Fake {\n    async fn find(&self) {}\n}\n";
        let in_tests = "mod tests {\n    impl DeckRepository for Fake {\n        async fn find(&self) {}\n    }\n}\n";
        let problems = check_spans(&sources(&[
            PORTS,
            ("crates/testkit/src/fakes.rs", fake),
            ("crates/postgres/src/decks.rs", in_tests),
        ]));
        assert_eq!(problems, Vec::<String>::new());
    }

    #[test]
    fn handlers_are_found_by_their_route_attribute_or_in_the_route_list() {
        let token = "/// Doc.\n#[utoipa::path(\n    tag = \"oauth\",\n)]\n#[post(\"/oauth/token\")]\npub async fn token() {}\n\n#[post(\"/oauth/other\")]\n#[tracing::instrument(level = \"debug\", skip_all)]\npub async fn spanned() {}\n\npub async fn helper() {}\n";
        let page = "pub async fn authorize_page() {}\n";
        let routes = ".route(web::get().to(handlers::oauth::authorize::authorize_page))";
        let problems = check_spans(&sources(&[
            ("crates/http/src/handlers/oauth/token.rs", token),
            ("crates/http/src/handlers/oauth/authorize.rs", page),
            ("crates/http/src/handlers/oauth/mod.rs", page),
            (ROUTES, routes),
        ]));
        assert_eq!(
            problems
                .iter()
                .map(|problem| problem.split(" has no span").next().unwrap_or_default())
                .collect::<Vec<_>>(),
            [
                "crates/http/src/handlers/oauth/token.rs:6: handler `token`",
                "crates/http/src/handlers/oauth/authorize.rs:1: handler `authorize_page`",
            ]
        );
    }

    #[test]
    fn handler_modules_follow_the_file_tree() {
        assert_eq!(
            handler_module("crates/http/src/handlers/oauth/token.rs").as_deref(),
            Some("handlers::oauth::token")
        );
        assert_eq!(
            handler_module("crates/http/src/handlers/webhooks/mod.rs").as_deref(),
            Some("handlers::webhooks")
        );
        assert_eq!(
            handler_module("crates/http/src/handlers/mod.rs").as_deref(),
            Some("handlers")
        );
        assert_eq!(handler_module("crates/http/src/routes.rs"), None);
    }

    #[test]
    fn implemented_traits_are_read_through_paths_and_generics() {
        assert_eq!(
            implemented_trait("impl<'a> ports::DeckRepository for Decks<'a> {"),
            Some("DeckRepository")
        );
        assert_eq!(implemented_trait("impl Decks {"), None);
        assert_eq!(implemented_trait("impl From<A> for B {"), Some("From<A>"));
    }
}
