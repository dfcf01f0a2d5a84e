//! The map cannot drift: every backticked path in `docs/architecture.md` must exist, and every
//! backticked module name (`domain::events`, `deckhand_http::pagination::Pagination`,
//! `postgres::error::query`) must resolve in the tree. Pictures in fenced blocks are left alone.
//!
//! A name resolves when its first segment names a crate (`deckhand_http` or `http`, `crate` for
//! any crate) or a top-level module of one, every lower-case segment after it is a module (a
//! `name.rs`, a `name/mod.rs` or a `mod name` declaration in its parent), and a last segment
//! that is not a module is an item defined (or re-exported) in the module before it. Anything
//! after a type (`OAuthService::token`) is a method and is not checked, and names in a few
//! third-party crates (`anyhow::Error`) are left to their authors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The document this check reads.
pub const MAP: &str = "docs/architecture.md";

/// The crates a name may start with: (full name, short name, source root).
const CRATES: [(&str, &str, &str); 8] = [
    ("deckhand_domain", "domain", "crates/domain/src"),
    ("deckhand_auth", "auth", "crates/auth/src"),
    ("deckhand_postgres", "postgres", "crates/postgres/src"),
    ("deckhand_memory", "memory", "crates/memory/src"),
    ("deckhand_http", "http", "crates/http/src"),
    ("deckhand", "app", "crates/app/src"),
    ("deckhand_testkit", "testkit", "crates/testkit/src"),
    ("xtask", "xtask", "xtask/src"),
];

/// Third-party crates the map may name (`anyhow::Error`); their names are not ours to check.
const THIRD_PARTY: [&str; 10] = [
    "std",
    "anyhow",
    "actix_web",
    "diesel",
    "diesel_async",
    "tokio",
    "tracing",
    "utoipa",
    "serde",
    "mockall",
];

/// What the check needs of the tree, so tests can hand it a few files.
pub trait Tree {
    /// A file or a directory at `path` (relative to the workspace root, `/`-separated).
    fn exists(&self, path: &str) -> bool;
    fn read(&self, path: &str) -> Option<String>;
    /// Every `.rs` file under `dir`, at any depth.
    fn rust_files_under(&self, dir: &str) -> Vec<String>;
}

pub struct Disk(pub PathBuf);

impl Tree for Disk {
    fn exists(&self, path: &str) -> bool {
        self.0.join(path).exists()
    }

    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.0.join(path)).ok()
    }

    fn rust_files_under(&self, dir: &str) -> Vec<String> {
        fn walk(root: &Path, dir: &Path, found: &mut Vec<String>) {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                return;
            };
            for entry in entries.flatten() {
                let path = dir.join(entry.file_name());
                if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    walk(root, &path, found);
                } else if path.extension().is_some_and(|ext| ext == "rs") {
                    found.push(path.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        let mut found = Vec::new();
        walk(&self.0, Path::new(dir), &mut found);
        found.sort();
        found
    }
}

/// Files held in memory, for tests.
impl Tree for BTreeMap<&str, &str> {
    fn exists(&self, path: &str) -> bool {
        let dir = format!("{}/", path.trim_end_matches('/'));
        self.contains_key(path) || self.keys().any(|file| file.starts_with(&dir))
    }

    fn read(&self, path: &str) -> Option<String> {
        self.get(path).map(|text| (*text).to_owned())
    }

    fn rust_files_under(&self, dir: &str) -> Vec<String> {
        let dir = format!("{}/", dir.trim_end_matches('/'));
        self.keys()
            .filter(|file| file.starts_with(&dir) && file.ends_with(".rs"))
            .map(|file| (*file).to_owned())
            .collect()
    }
}

/// Every backticked path or module name of `text` that does not resolve, as
/// `docs/architecture.md:line: ...`.
pub fn check_doc_map(text: &str, tree: &dyn Tree) -> Vec<String> {
    let mut problems = Vec::new();
    let mut fenced = false;
    for (index, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        for span in line.split('`').skip(1).step_by(2) {
            let problem = if looks_like_path(span, tree) {
                (!tree.exists(span.trim_end_matches('/')))
                    .then(|| format!("`{span}` names a path that does not exist"))
            } else if looks_like_module_name(span)
                && !THIRD_PARTY.contains(&span.split("::").next().unwrap_or_default())
            {
                resolve(span, tree).err()
            } else {
                None
            };
            if let Some(problem) = problem {
                problems.push(format!("{MAP}:{}: {problem}", index + 1));
            }
        }
    }
    problems
}

/// Where the domain's modules and error enums live.
const DOMAIN_SOURCES: &str = "crates/domain/src/";

/// What the map must name, so a new room cannot go unmapped: every top-level module of the
/// domain (as `domain::<module>`) and every error enum the domain declares (as `` `NameError` ``,
/// in "Errors: where each type lives").
pub fn check_map_covers(text: &str, sources: &[(String, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut modules: Vec<&str> = sources
        .iter()
        .filter_map(|(path, _)| {
            let inner = path.strip_prefix(DOMAIN_SOURCES)?;
            let first = inner.split('/').next()?;
            let module = first.strip_suffix(".rs").unwrap_or(first);
            (!matches!(module, "lib" | "main") && (inner.contains('/') || first.ends_with(".rs")))
                .then_some(module)
        })
        .collect();
    modules.sort_unstable();
    modules.dedup();
    for module in modules {
        let named = [
            format!("`domain::{module}`"),
            format!("`domain::{module}::"),
        ];
        if !named.iter().any(|name| text.contains(name.as_str())) {
            problems.push(format!(
                "{MAP}: the domain module `{module}` is not on the map: add `domain::{module}` to \"Domain modules\" (what it owns, what it may not know) and to the picture"
            ));
        }
    }
    for (path, source) in sources {
        if !path.starts_with(DOMAIN_SOURCES) {
            continue;
        }
        for (index, line) in source.lines().enumerate() {
            let Some(rest) = line.strip_prefix("pub enum ") else {
                continue;
            };
            let name = &rest[..rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len())];
            if name.ends_with("Error") && !text.contains(&format!("`{name}`")) {
                problems.push(format!(
                    "{path}:{}: the error enum `{name}` is not on the map: name it in {MAP}, \"Errors: where each type lives\" (per operation, per service, or a port's)",
                    index + 1
                ));
            }
        }
    }
    problems
}

/// `crates/http/src/query.rs`, `docs/api.md`, `migrations/<dir>/`: no blank, not a URL path, and
/// either under a top-level entry of the tree or ending in a file extension.
fn looks_like_path(span: &str, tree: &dyn Tree) -> bool {
    if span.is_empty() || span.starts_with('/') || span.contains(char::is_whitespace) {
        return false;
    }
    if span.contains("::") || span.contains('<') || span.contains('(') {
        return false;
    }
    let first = span.split('/').next().unwrap_or_default();
    let has_extension = [
        ".rs", ".md", ".sql", ".toml", ".json", ".yml", ".py", ".html",
    ]
    .iter()
    .any(|extension| span.ends_with(extension));
    (span.contains('/') && tree.exists(first)) || (has_extension && span.contains('/'))
}

/// `a::b` made only of identifiers, starting with a lower-case one.
fn looks_like_module_name(span: &str) -> bool {
    let segments: Vec<&str> = span.split("::").collect();
    segments.len() > 1
        && segments[0].starts_with(|c: char| c.is_ascii_lowercase())
        && segments.iter().all(|segment| {
            !segment.is_empty() && segment.chars().all(|c| c.is_alphanumeric() || c == '_')
        })
}

/// A module: the file that holds it and the directory its children live in.
#[derive(Clone)]
struct Module {
    file: String,
    dir: String,
}

impl Module {
    fn root(src: &str, tree: &dyn Tree) -> Self {
        let file = ["lib.rs", "main.rs"]
            .iter()
            .map(|name| format!("{src}/{name}"))
            .find(|file| tree.exists(file))
            .unwrap_or_else(|| format!("{src}/lib.rs"));
        Self {
            file,
            dir: src.to_owned(),
        }
    }

    /// The child module `name`, if the tree has it.
    fn child(&self, name: &str, tree: &dyn Tree) -> Option<Self> {
        let flat = format!("{}/{name}.rs", self.dir);
        let nested = format!("{}/{name}/mod.rs", self.dir);
        let dir = format!("{}/{name}", self.dir);
        if tree.exists(&flat) {
            return Some(Self { file: flat, dir });
        }
        if tree.exists(&nested) {
            return Some(Self { file: nested, dir });
        }
        // An inline `mod name { ... }` (or one with a `#[path]`) lives in its parent's file.
        let text = tree.read(&self.file)?;
        declares(&text, &["mod"], name).then(|| Self {
            file: self.file.clone(),
            dir,
        })
    }

    /// Whether `name` is defined or re-exported here (or, for a module with a directory, in a
    /// file under it that a glob re-export may hand on).
    fn has_item(&self, name: &str, tree: &dyn Tree) -> bool {
        const ITEMS: [&str; 9] = [
            "fn",
            "struct",
            "enum",
            "trait",
            "type",
            "const",
            "static",
            "mod",
            "macro_rules!",
        ];
        let here = tree.read(&self.file).unwrap_or_default();
        if declares(&here, &ITEMS, name) || reexports(&here, name) {
            return true;
        }
        tree.rust_files_under(&self.dir).iter().any(|file| {
            tree.read(file)
                .is_some_and(|text| declares(&text, &ITEMS, name))
        })
    }
}

/// `keyword name` as whole words in `text`, for any of `keywords`.
fn declares(text: &str, keywords: &[&str], name: &str) -> bool {
    keywords.iter().any(|keyword| {
        let needle = format!("{keyword} {name}");
        text.match_indices(&needle).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + needle.len()..].chars().next();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    })
}

/// `name` handed on by a `pub use` (or `pub(crate) use`) statement in `text`.
fn reexports(text: &str, name: &str) -> bool {
    let mut in_use = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("pub use ") || line.starts_with("pub(crate) use ") {
            in_use = true;
        }
        if in_use
            && line
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|word| word == name)
        {
            return true;
        }
        if line.ends_with(';') {
            in_use = false;
        }
    }
    false
}

/// Where a name's first segment starts: one crate, or every crate for `crate` and for a name
/// that starts with a module instead of a crate.
fn starts(first: &str, tree: &dyn Tree) -> Vec<(Module, bool)> {
    if let Some((_, _, src)) = CRATES
        .iter()
        .find(|(full, short, _)| *full == first || *short == first)
    {
        return vec![(Module::root(src, tree), true)];
    }
    CRATES
        .iter()
        .map(|(_, _, src)| (Module::root(src, tree), first == "crate"))
        .collect()
}

fn resolve(name: &str, tree: &dyn Tree) -> Result<(), String> {
    let segments: Vec<&str> = name.split("::").collect();
    // The attempt that got furthest names the crate the author meant.
    let mut best: Option<(usize, String)> = None;
    let mut from_a_crate = false;
    for (root, first_consumed) in starts(segments[0], tree) {
        from_a_crate |= first_consumed;
        let rest = if first_consumed {
            &segments[1..]
        } else {
            &segments[..]
        };
        match resolve_from(root, rest, tree) {
            Ok(()) => return Ok(()),
            Err((depth, problem)) => {
                if best.as_ref().is_none_or(|(furthest, _)| depth > *furthest) {
                    best = Some((depth, problem));
                }
            }
        }
    }
    let why = match best {
        Some((0, _)) if segments[0] == "crate" => {
            format!("`{}` is a top-level module of no crate", segments[1])
        }
        Some((depth, problem)) if depth > 0 || from_a_crate => problem,
        _ => format!(
            "`{}` is neither a crate (`deckhand_http` or `http`, ...) nor a top-level module of one",
            segments[0]
        ),
    };
    Err(format!("`{name}` does not resolve: {why}"))
}

/// Walks `segments` down from `module`; on failure, how many segments resolved and why not.
fn resolve_from(module: Module, segments: &[&str], tree: &dyn Tree) -> Result<(), (usize, String)> {
    let mut module = module;
    for (depth, segment) in segments.iter().enumerate() {
        let last = depth + 1 == segments.len();
        let is_type = segment.starts_with(|c: char| c.is_ascii_uppercase());
        if !is_type && let Some(child) = module.child(segment, tree) {
            module = child;
            continue;
        }
        if (last || is_type) && module.has_item(segment, tree) {
            return Ok(());
        }
        let why = if is_type {
            format!(
                "`{segment}` is not defined or re-exported in `{}`",
                module.file
            )
        } else if last {
            format!(
                "no module or item `{segment}` in `{}` (no {segment}.rs, {segment}/mod.rs, `mod {segment}` or definition there)",
                module.file
            )
        } else {
            format!(
                "`{segment}` is not a module of `{}` (no {segment}.rs, {segment}/mod.rs or `mod {segment}` there)",
                module.file
            )
        };
        return Err((depth, why));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> BTreeMap<&'static str, &'static str> {
        BTreeMap::from([
            ("docs/api.md", "# API"),
            (
                "crates/http/src/lib.rs",
                "mod pagination;\npub use error::ApiError;",
            ),
            (
                "crates/http/src/pagination.rs",
                "pub struct Pagination;\nmod tests {}",
            ),
            ("crates/http/src/error.rs", "pub struct ApiError;"),
            (
                "crates/domain/src/lib.rs",
                "pub mod events;\npub use patch::Patch;",
            ),
            ("crates/domain/src/events/mod.rs", "pub use model::*;"),
            (
                "crates/domain/src/events/model.rs",
                "pub struct EventRecord;",
            ),
            ("crates/domain/src/patch.rs", "pub enum Patch {}"),
            ("crates/postgres/src/lib.rs", "mod decks;"),
            (
                "crates/postgres/src/decks.rs",
                "pub(crate) fn save_revision() {}",
            ),
            (
                "crates/postgres/src/decks/list_query.rs",
                "fn page_window() {}",
            ),
        ])
    }

    fn problems(doc: &str) -> Vec<String> {
        check_doc_map(doc, &tree())
    }

    #[test]
    fn paths_and_names_that_resolve_pass() {
        let doc = "See `docs/api.md`, `crates/http/src/pagination.rs` and `crates/postgres/src/decks/`.\n\
                   `http::pagination::Pagination`, `deckhand_http::ApiError`, `domain::events`,\n\
                   `domain::events::EventRecord` (a glob re-export), `domain::Patch`,\n\
                   `postgres::decks::save_revision`, `postgres::decks::list_query::page_window`,\n\
                   `crate::pagination`, `events::model`, `http::pagination::tests`,\n\
                   `ApiError::unexpected` (a type's method), `http::error::ApiError::unexpected`,\n\
                   `Result<T, E>`, `anyhow::Error`, `/api/public/v1/decks`, `cargo xtask tidy`, `a/b testing`.\n";
        assert_eq!(problems(doc), Vec::<String>::new());
    }

    #[test]
    fn a_missing_path_is_reported_with_its_line() {
        assert_eq!(
            problems("one\nsee `docs/missing.md` and `crates/http/src/query.rs`\n"),
            [
                "docs/architecture.md:2: `docs/missing.md` names a path that does not exist",
                "docs/architecture.md:2: `crates/http/src/query.rs` names a path that does not exist",
            ]
        );
    }

    #[test]
    fn a_name_that_does_not_resolve_says_where_it_looked() {
        assert_eq!(
            problems(
                "`http::pagination::Paginated`\n`domain::formats::CardFacts`\n`nowhere::thing`\n`crate::nowhere`\n"
            ),
            [
                "docs/architecture.md:1: `http::pagination::Paginated` does not resolve: `Paginated` is not defined or re-exported in `crates/http/src/pagination.rs`",
                "docs/architecture.md:2: `domain::formats::CardFacts` does not resolve: `formats` is not a module of `crates/domain/src/lib.rs` (no formats.rs, formats/mod.rs or `mod formats` there)",
                "docs/architecture.md:3: `nowhere::thing` does not resolve: `nowhere` is neither a crate (`deckhand_http` or `http`, ...) nor a top-level module of one",
                "docs/architecture.md:4: `crate::nowhere` does not resolve: `nowhere` is a top-level module of no crate",
            ]
        );
    }

    #[test]
    fn pictures_in_fenced_blocks_are_not_read() {
        assert_eq!(
            problems("```\n`http::nothing` crates/none.rs\n```\n`docs/api.md`\n"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn an_unmapped_domain_module_or_error_enum_is_reported() {
        let sources: Vec<(String, String)> = [
            ("crates/domain/src/lib.rs", "pub mod decks;"),
            (
                "crates/domain/src/decks/mod.rs",
                "pub enum FindDeckError {}",
            ),
            (
                "crates/domain/src/likes.rs",
                "pub enum LikeError {}\npub enum Visibility {}",
            ),
            (
                "crates/domain/src/collections/errors.rs",
                "pub enum ImportError {}",
            ),
            ("crates/http/src/error.rs", "pub enum HttpError {}"),
        ]
        .iter()
        .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
        .collect();
        let map = "`domain::decks::errors` has `FindDeckError`; `domain::likes`: `LikeError`.";
        assert_eq!(
            check_map_covers(map, &sources),
            [
                "docs/architecture.md: the domain module `collections` is not on the map: add `domain::collections` to \"Domain modules\" (what it owns, what it may not know) and to the picture",
                "crates/domain/src/collections/errors.rs:1: the error enum `ImportError` is not on the map: name it in docs/architecture.md, \"Errors: where each type lives\" (per operation, per service, or a port's)",
            ]
        );
    }

    #[test]
    fn the_real_map_resolves() {
        let root = crate::process::workspace_root();
        let text = std::fs::read_to_string(root.join(MAP)).unwrap_or_default();
        assert_eq!(check_doc_map(&text, &Disk(root)), Vec::<String>::new());
    }
}
