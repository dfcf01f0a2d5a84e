//! The architecture rules of the workspace, checked from `cargo metadata` the way rust-analyzer's
//! tidy does, plus a little source hygiene. The checks are pure functions over parsed metadata and
//! file text so that each rule can be shown to fire on a small synthetic workspace.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::Path;
use std::{fs, io};

use anyhow::{Context, Result, bail};
use serde_json::Value;

const DOMAIN: &str = "deckhand_domain";
const AUTH: &str = "deckhand_auth";
const ADAPTERS: [&str; 3] = ["deckhand_postgres", "deckhand_memory", "deckhand_http"];
const FRAMEWORKS: [&str; 8] = [
    "actix-web",
    "actix-http",
    "actix-rt",
    "diesel",
    "diesel-async",
    "tokio",
    "deadpool",
    "tokio-postgres",
];

// Spelled in pieces so that this file does not trip its own check.
const BANNED_TEXT: [(&str, &str); 5] = [
    (concat!("dbg", "!("), "debug output"),
    (concat!("todo", "!("), "unfinished code"),
    (concat!("unimplemented", "!("), "unfinished code"),
    (concat!("#[", "ignore]"), "a skipped test"),
    (concat!("#[", "ignore ="), "a skipped test"),
];

/// Runs every check on the workspace at `root` and fails listing all problems found.
pub fn run(root: &Path) -> Result<()> {
    let output = crate::process::cargo_command(root)
        .args(["metadata", "--format-version", "1"])
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("could not start `cargo metadata`")?;
    if !output.status.success() {
        bail!("`cargo metadata` failed ({})", output.status);
    }
    let metadata: Value =
        serde_json::from_slice(&output.stdout).context("`cargo metadata` printed invalid JSON")?;
    let mut problems = check_architecture(&Graph::from_metadata(&metadata)?);

    let files = rust_files(root)?;
    let mut sources = Vec::with_capacity(files.len());
    for file in &files {
        match fs::read_to_string(root.join(file)) {
            Ok(text) => {
                problems.extend(check_source(file, &text));
                problems.extend(check_stored_json(file, &text));
                sources.push((file.clone(), text));
            }
            // Deleted in the working tree but still in the index.
            Err(err) if err.kind() == io::ErrorKind::NotFound => {}
            Err(err) => return Err(err).with_context(|| format!("reading {file}")),
        }
    }
    problems.extend(check_module_cycles(&sources));
    problems.extend(crate::spans::check_spans(&sources));
    match fs::read_to_string(root.join(crate::doc_map::MAP)) {
        Ok(map) => {
            problems.extend(crate::doc_map::check_doc_map(
                &map,
                &crate::doc_map::Disk(root.to_path_buf()),
            ));
            problems.extend(crate::doc_map::check_map_covers(&map, &sources));
        }
        Err(err) => problems.push(format!("{}: {err}", crate::doc_map::MAP)),
    }

    if !problems.is_empty() {
        bail!(
            "tidy found {} problem(s):\n  {}",
            problems.len(),
            problems.join("\n  ")
        );
    }
    println!(
        "tidy: dependency rules hold; {} Rust files are clean",
        files.len()
    );
    Ok(())
}

/// Tracked files plus new ones not yet added (but not ignored ones), so a check that would fail
/// once the lead commits fails now.
fn rust_files(root: &Path) -> Result<Vec<String>> {
    let output = std::process::Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            "*.rs",
            // Patched third-party crates keep their own code (vendor/README.md).
            ":!vendor/",
        ])
        .current_dir(root)
        .output()
        .context("tidy lists source files with git, which could not be started")?;
    if !output.status.success() {
        bail!(
            "`git ls-files` failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let mut files: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .split('\0')
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect();
    // A file both in the index and modified is listed once per source.
    files.sort();
    files.dedup();
    Ok(files)
}

/// The normal (linked) dependency graph from `cargo metadata`. Dev and build dependencies are
/// left out: they never end up in the crate's code.
pub struct Graph {
    names: HashMap<String, String>,
    deps: HashMap<String, Vec<String>>,
    members: Vec<String>,
}

impl Graph {
    pub fn from_metadata(metadata: &Value) -> Result<Self> {
        let mut names = HashMap::new();
        for package in array(metadata, "packages")? {
            names.insert(
                string(package, "id")?.to_owned(),
                string(package, "name")?.to_owned(),
            );
        }
        let members = array(metadata, "workspace_members")?
            .iter()
            .map(|id| {
                id.as_str()
                    .map(str::to_owned)
                    .context("a workspace member id is not a string")
            })
            .collect::<Result<_>>()?;
        let resolve = metadata
            .get("resolve")
            .filter(|resolve| !resolve.is_null())
            .context("metadata has no dependency graph (was it made with --no-deps?)")?;

        let mut deps = HashMap::new();
        for node in array(resolve, "nodes")? {
            let mut normal = Vec::new();
            for dep in array(node, "deps")? {
                // `kind` is null for a normal dependency, "dev" or "build" otherwise.
                if array(dep, "dep_kinds")?
                    .iter()
                    .any(|kind| kind["kind"].is_null())
                {
                    normal.push(string(dep, "pkg")?.to_owned());
                }
            }
            // Sorted so that the reported path is the same from run to run.
            normal.sort_by(|a, b| names.get(a).cmp(&names.get(b)).then(a.cmp(b)));
            deps.insert(string(node, "id")?.to_owned(), normal);
        }
        Ok(Self {
            names,
            deps,
            members,
        })
    }

    fn name<'a>(&'a self, id: &'a str) -> &'a str {
        self.names.get(id).map_or(id, String::as_str)
    }

    fn member(&self, name: &str) -> Option<&str> {
        self.members
            .iter()
            .map(String::as_str)
            .find(|id| self.name(id) == name)
    }

    /// The shortest path from `root` to each package `forbidden` accepts, as `a -> b -> c`. It does
    /// not search past a forbidden package: the first offender on a path is the one to remove.
    fn paths_to(&self, root: &str, forbidden: impl Fn(&str) -> bool) -> Vec<String> {
        let mut parent: HashMap<&str, &str> = HashMap::new();
        let mut queue = VecDeque::from([root]);
        let mut found = Vec::new();
        while let Some(id) = queue.pop_front() {
            for dep in self.deps.get(id).into_iter().flatten() {
                if dep == root || parent.contains_key(dep.as_str()) {
                    continue;
                }
                parent.insert(dep, id);
                if forbidden(dep) {
                    let mut path = vec![self.name(dep)];
                    let mut at = dep.as_str();
                    while let Some(&up) = parent.get(at) {
                        path.push(self.name(up));
                        at = up;
                    }
                    path.reverse();
                    found.push(path.join(" -> "));
                } else {
                    queue.push_back(dep);
                }
            }
        }
        found
    }
}

/// Every broken dependency rule, each as "rule: offending path".
pub fn check_architecture(graph: &Graph) -> Vec<String> {
    let mut problems: Vec<String> = [DOMAIN, AUTH]
        .into_iter()
        .chain(ADAPTERS)
        .filter(|name| graph.member(name).is_none())
        .map(|name| {
            format!("{name} is not a workspace member: if it was renamed, update xtask/src/tidy.rs")
        })
        .collect();

    if let Some(domain) = graph.member(DOMAIN) {
        for path in graph.paths_to(domain, |id| FRAMEWORKS.contains(&graph.name(id))) {
            problems.push(format!(
                "the domain depends on no framework (actix, diesel, tokio, deadpool): {path}"
            ));
        }
    }
    for adapter in ADAPTERS.into_iter().filter_map(|name| graph.member(name)) {
        for path in graph.paths_to(adapter, |id| ADAPTERS.contains(&graph.name(id))) {
            problems.push(format!("adapters never depend on each other: {path}"));
        }
    }
    if let Some(auth) = graph.member(AUTH) {
        for path in graph.paths_to(auth, |id| graph.members.iter().any(|member| member == id)) {
            problems.push(format!("{AUTH} depends on no workspace crate: {path}"));
        }
    }
    problems
}

/// Leftovers that must not be committed, as `path:line: ...`.
pub fn check_source(path: &str, text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (index, line) in text.lines().enumerate() {
        for (pattern, what) in BANNED_TEXT {
            if line.contains(pattern) {
                problems.push(format!("{path}:{}: `{pattern}` is {what}", index + 1));
            }
        }
    }
    problems
}

/// Where the PostgreSQL adapter's sources live: every JSON column it reads or writes goes
/// through its own stored types (`postgres::stored`, named `Stored...`), never through a
/// domain type's serde derives, so a refactor of the domain cannot change stored data.
const POSTGRES_SOURCES: &str = "crates/postgres/src/";

/// `Json<T>` and `StoredJson<T>` in the PostgreSQL adapter whose `T` (inside any `Vec` or
/// `Option`) is not one of its `Stored...` types, as `path:line: ...`.
pub fn check_stored_json(path: &str, text: &str) -> Vec<String> {
    if !path.starts_with(POSTGRES_SOURCES) {
        return Vec::new();
    }
    let mut problems = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        for (start, _) in code.match_indices("Json<") {
            let before = code[..start].trim_end_matches("Stored");
            if before.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue; // another type whose name ends in `Json`
            }
            let mut inner = &code[start + "Json<".len()..];
            while let Some(rest) = inner
                .strip_prefix("Vec<")
                .or_else(|| inner.strip_prefix("Option<"))
            {
                inner = rest;
            }
            let name: String = inner
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            // A one-letter name is a type parameter: the wrappers' own impls.
            if name.len() > 1 && !name.starts_with("Stored") {
                problems.push(format!(
                    "{path}:{}: stored JSON of `{name}`: give it a `Stored...` type in postgres::stored",
                    index + 1
                ));
            }
        }
    }
    problems
}

/// Where the crates' sources live: every crate's top-level modules must import each other in
/// one direction only.
const CRATE_ROOTS: [&str; 2] = ["crates/", "xtask"];

/// Pairs of top-level modules of one crate that import each other, directly or through others,
/// read from `crate::<module>` paths in code (comments are skipped). The crate root is left out:
/// it declares every module.
pub fn check_module_cycles(sources: &[(String, String)]) -> Vec<String> {
    let mut imports: BTreeMap<(&str, &str), BTreeSet<&str>> = BTreeMap::new();
    for (path, text) in sources {
        let Some((krate, module)) = top_level_module(path) else {
            continue;
        };
        let imported = imports.entry((krate, module)).or_default();
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or_default();
            for (_, rest) in code
                .match_indices("crate::")
                .map(|(at, _)| code.split_at(at + 7))
            {
                let name: &str = &rest[..rest
                    .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
                    .unwrap_or(rest.len())];
                if !name.is_empty() && name != module {
                    imported.insert(name);
                }
            }
        }
    }
    let mut pairs = BTreeSet::new();
    for (&(krate, module), imported) in &imports {
        for &other in imported {
            if reaches(&imports, krate, other, module) {
                pairs.insert((krate, module.min(other), module.max(other)));
            }
        }
    }
    pairs
        .into_iter()
        .map(|(krate, a, b)| {
            format!("{krate}/src: modules `{a}` and `{b}` import each other (directly or through others)")
        })
        .collect()
}

/// `("crates/http", "handlers")` for `crates/http/src/handlers/decks/list.rs`; `None` for the
/// crate root (`lib.rs`, `main.rs`) and for files outside a crate's `src/` (tests, benches).
fn top_level_module(path: &str) -> Option<(&str, &str)> {
    let (krate, inner) = path.split_once("/src/")?;
    let in_a_crate = CRATE_ROOTS.into_iter().any(|root| {
        krate == root.trim_end_matches('/')
            || krate
                .strip_prefix(root)
                .is_some_and(|name| !name.is_empty() && !name.contains('/'))
    });
    if !in_a_crate {
        return None;
    }
    let first = inner.split('/').next()?;
    let module = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(module, "lib" | "main")).then_some((krate, module))
}

fn reaches(
    imports: &BTreeMap<(&str, &str), BTreeSet<&str>>,
    krate: &str,
    from: &str,
    to: &str,
) -> bool {
    let mut seen = BTreeSet::from([from]);
    let mut queue = VecDeque::from([from]);
    while let Some(module) = queue.pop_front() {
        for &next in imports.get(&(krate, module)).into_iter().flatten() {
            if next == to {
                return true;
            }
            if seen.insert(next) {
                queue.push_back(next);
            }
        }
    }
    false
}

fn array<'a>(value: &'a Value, key: &str) -> Result<&'a Vec<Value>> {
    value[key]
        .as_array()
        .with_context(|| format!("metadata: `{key}` is not an array"))
}

fn string<'a>(value: &'a Value, key: &str) -> Result<&'a str> {
    value[key]
        .as_str()
        .with_context(|| format!("metadata: `{key}` is not a string"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const APP: &str = "deckhand";

    #[test]
    fn the_real_workspace_is_tidy() {
        if let Err(err) = run(&crate::process::workspace_root()) {
            panic!("{err:#}");
        }
    }

    /// Metadata in the shape of `cargo metadata`: the workspace's crates wired as documented, plus
    /// `extra` edges as (from, to, kind) where kind is None for a normal dependency.
    fn metadata_with(members: &[&str], extra: &[(&str, &str, Option<&str>)]) -> Value {
        let mut edges = vec![
            (DOMAIN, AUTH, None),
            (DOMAIN, "uuid", None),
            (DOMAIN, DOMAIN, Some("dev")),
            (AUTH, "ring", None),
            ("deckhand_postgres", DOMAIN, None),
            ("deckhand_postgres", "diesel-async", None),
            ("diesel-async", "tokio", None),
            ("deckhand_memory", DOMAIN, None),
            ("deckhand_http", DOMAIN, None),
            ("deckhand_http", "actix-web", None),
            ("deckhand_http", "deckhand_memory", Some("dev")),
        ];
        edges.extend(ADAPTERS.map(|adapter| (APP, adapter, None)));
        edges.extend_from_slice(extra);
        edges.retain(|(from, to, _)| {
            let dropped = |name: &&str| name.starts_with("deckhand") && !members.contains(name);
            !dropped(from) && !dropped(to)
        });

        let id = |name: &str| format!("registry+https://example.invalid#{name}@1.0.0");
        let mut names: Vec<&str> = members.to_vec();
        names.extend(edges.iter().flat_map(|(from, to, _)| [*from, *to]));
        names.sort();
        names.dedup();
        let nodes: Vec<Value> = names
            .iter()
            .map(|name| {
                let deps: Vec<Value> = edges
                    .iter()
                    .filter(|(from, _, _)| from == name)
                    .map(|(_, to, kind)| {
                        json!({"name": to.replace('-', "_"), "pkg": id(to), "dep_kinds": [{"kind": kind, "target": null}]})
                    })
                    .collect();
                json!({"id": id(name), "deps": deps})
            })
            .collect();
        json!({
            "packages": names.iter().map(|name| json!({"id": id(name), "name": name})).collect::<Vec<_>>(),
            "workspace_members": members.iter().map(|name| id(name)).collect::<Vec<_>>(),
            "resolve": {"nodes": nodes},
        })
    }

    fn problems_with(extra: &[(&str, &str, Option<&str>)]) -> Vec<String> {
        let members = [
            DOMAIN,
            AUTH,
            "deckhand_postgres",
            "deckhand_memory",
            "deckhand_http",
            APP,
        ];
        match Graph::from_metadata(&metadata_with(&members, extra)) {
            Ok(graph) => check_architecture(&graph),
            Err(err) => panic!("synthetic metadata does not parse: {err:#}"),
        }
    }

    #[test]
    fn the_documented_layout_passes() {
        assert_eq!(problems_with(&[]), Vec::<String>::new());
    }

    #[test]
    fn a_framework_reached_by_the_domain_is_reported_with_its_path() {
        assert_eq!(
            problems_with(&[(DOMAIN, "helper", None), ("helper", "tokio", None)]),
            [
                "the domain depends on no framework (actix, diesel, tokio, deadpool): deckhand_domain -> helper -> tokio"
            ]
        );
        assert_eq!(
            problems_with(&[(DOMAIN, "actix-web", None)]),
            [
                "the domain depends on no framework (actix, diesel, tokio, deadpool): deckhand_domain -> actix-web"
            ]
        );
    }

    #[test]
    fn the_domain_reaching_a_framework_through_an_adapter_names_the_first_offender() {
        let problems = problems_with(&[(DOMAIN, "deckhand_postgres", None)]);
        assert!(
            problems.contains(
                &"the domain depends on no framework (actix, diesel, tokio, deadpool): deckhand_domain -> deckhand_postgres -> diesel-async"
                    .to_owned()
            ),
            "{problems:#?}"
        );
    }

    #[test]
    fn the_domain_may_use_a_framework_in_tests_and_build_scripts() {
        assert_eq!(
            problems_with(&[
                (DOMAIN, "tokio", Some("dev")),
                (DOMAIN, "diesel", Some("build"))
            ]),
            Vec::<String>::new()
        );
    }

    #[test]
    fn an_adapter_depending_on_another_is_reported() {
        assert_eq!(
            problems_with(&[("deckhand_postgres", "deckhand_memory", None)]),
            ["adapters never depend on each other: deckhand_postgres -> deckhand_memory"]
        );
        assert_eq!(
            problems_with(&[
                ("deckhand_memory", "shim", None),
                ("shim", "deckhand_http", None)
            ]),
            ["adapters never depend on each other: deckhand_memory -> shim -> deckhand_http"]
        );
    }

    #[test]
    fn auth_depending_on_a_workspace_crate_is_reported() {
        assert_eq!(
            problems_with(&[(AUTH, DOMAIN, None)]),
            ["deckhand_auth depends on no workspace crate: deckhand_auth -> deckhand_domain"]
        );
    }

    #[test]
    fn a_missing_crate_is_reported_instead_of_passing_silently() -> Result<()> {
        let members = [DOMAIN, AUTH, "deckhand_postgres", "deckhand_http", APP];
        let graph = Graph::from_metadata(&metadata_with(&members, &[]))?;
        assert_eq!(
            check_architecture(&graph),
            [
                "deckhand_memory is not a workspace member: if it was renamed, update xtask/src/tidy.rs"
            ]
        );
        Ok(())
    }

    #[test]
    fn metadata_without_a_dependency_graph_is_an_error() {
        let mut metadata = metadata_with(&[DOMAIN], &[]);
        metadata["resolve"] = Value::Null;
        let Err(err) = Graph::from_metadata(&metadata) else {
            panic!("parsed without a graph")
        };
        assert!(err.to_string().contains("--no-deps"), "{err}");
    }

    #[test]
    fn leftovers_are_reported_with_their_line() {
        let text = [
            "fn main() {",
            concat!("    dbg", "!(1);"),
            concat!("    todo", "!()"),
            concat!("    unimplemented", "!(\"later\")"),
            concat!("#[", "ignore]"),
            concat!("#[", "ignore = \"slow\"]"),
            "}",
        ]
        .join("\n");
        let problems = check_source("src/lib.rs", &text);
        let lines: Vec<&str> = problems
            .iter()
            .filter_map(|p| p.split(": ").next())
            .collect();
        assert_eq!(
            lines,
            [
                "src/lib.rs:2",
                "src/lib.rs:3",
                "src/lib.rs:4",
                "src/lib.rs:5",
                "src/lib.rs:6"
            ]
        );
        assert!(problems[0].contains(concat!("dbg", "!(")), "{problems:#?}");
    }

    #[test]
    fn ordinary_code_is_clean() {
        let text =
            "#[test]\n#[should_panic]\nfn ignores_todos_list() { let todo = 1; debug(todo); }\n";
        assert_eq!(check_source("src/lib.rs", text), Vec::<String>::new());
    }

    #[test]
    fn stored_json_of_a_domain_type_is_reported() {
        let text = "struct Row {\n    a: Json<Vec<StoredCard>>,\n    b: Option<StoredJson<Vec<StoredOverride>>>,\n    c: Json<DeckContent>,\n    d: StoredJson<Option<Provenance>>,\n    e: RawJson<Value>,\n}\nimpl<T> ToSql for Json<T> {}\n";
        assert_eq!(
            check_stored_json("crates/postgres/src/decks.rs", text),
            [
                "crates/postgres/src/decks.rs:4: stored JSON of `DeckContent`: give it a `Stored...` type in postgres::stored",
                "crates/postgres/src/decks.rs:5: stored JSON of `Provenance`: give it a `Stored...` type in postgres::stored",
            ]
        );
        assert_eq!(
            check_stored_json("crates/http/src/body.rs", text),
            Vec::<String>::new()
        );
    }

    fn sources(files: &[(&str, &str)]) -> Vec<(String, String)> {
        files
            .iter()
            .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
            .collect()
    }

    #[test]
    fn modules_that_import_each_other_are_found() {
        let problems = check_module_cycles(&sources(&[
            (
                "crates/http/src/lib.rs",
                "pub mod state;\nuse crate::state::X;",
            ),
            ("crates/http/src/state.rs", "use crate::routes::RouteIndex;"),
            ("crates/http/src/routes.rs", "use crate::handlers;"),
            (
                "crates/http/src/handlers/decks/list.rs",
                "use crate::state::HttpState;",
            ),
        ]));
        assert_eq!(
            problems,
            [
                "crates/http/src: modules `handlers` and `routes` import each other (directly or through others)",
                "crates/http/src: modules `handlers` and `state` import each other (directly or through others)",
                "crates/http/src: modules `routes` and `state` import each other (directly or through others)",
            ]
        );
    }

    #[test]
    fn every_crate_and_xtask_is_checked() {
        let problems = check_module_cycles(&sources(&[
            ("crates/domain/src/a.rs", "use crate::b;"),
            ("crates/domain/src/b/mod.rs", "use crate::a;"),
            ("xtask/src/fuzz.rs", "use crate::pg;"),
            ("xtask/src/pg.rs", "use crate::fuzz::run;"),
        ]));
        assert_eq!(
            problems,
            [
                "crates/domain/src: modules `a` and `b` import each other (directly or through others)",
                "xtask/src: modules `fuzz` and `pg` import each other (directly or through others)",
            ]
        );
    }

    #[test]
    fn one_way_imports_comments_tests_and_same_names_in_other_crates_pass() {
        let problems = check_module_cycles(&sources(&[
            ("crates/http/src/access.rs", "use crate::state::HttpState;"),
            (
                "crates/http/src/state.rs",
                "/// Unlike [`crate::access`], ...\nuse crate::metrics;",
            ),
            ("crates/domain/src/a.rs", "use crate::b;"),
            ("crates/memory/src/b.rs", "use crate::a;"),
            ("crates/testkit/tests/a.rs", "use crate::b;"),
            ("crates/testkit/tests/b.rs", "use crate::a;"),
        ]));
        assert_eq!(problems, Vec::<String>::new());
    }
}
