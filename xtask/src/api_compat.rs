//! The versioning promise kept by a machine (contract §9): within `/api/public/v1` a new
//! version only adds. `docs/openapi.json` is compared with the document of the last released
//! version, kept in `docs/openapi/releases/<version>.json`, by `jsoncompat` (a maintained
//! OpenAPI 3.1 compatibility checker: requests must still accept what they accepted, responses
//! must still be what clients accept), and the check fails when
//!
//! - a released version's document changed without a new `info.version`;
//! - anything breaks for clients while the major version is the same (a break is a new path
//!   prefix, `/api/public/v2`, served beside v1);
//! - the version has no section in `docs/changelog.md`.
//!
//! `cargo xtask api-release` records the current document as released (docs/changelog.md,
//! "Releasing a version").

use std::cmp::Ordering;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use jsoncompat::{OpenApiCompatibilityIssueKind, check_openapi_compat};
use jsoncompat_openapi::OpenApiDocument;
use serde_json::Value;

const CURRENT: &str = "docs/openapi.json";
const RELEASES: &str = "docs/openapi/releases";
const CHANGELOG: &str = "docs/changelog.md";

/// A semantic version, `major.minor.patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Version(u64, u64, u64);

impl Version {
    fn parse(text: &str) -> Result<Self> {
        let parts: Vec<u64> = text
            .split('.')
            .map(str::parse)
            .collect::<Result<_, _>>()
            .with_context(|| format!("`{text}` is not a version like 1.4.0"))?;
        match parts[..] {
            [major, minor, patch] => Ok(Self(major, minor, patch)),
            _ => bail!("`{text}` is not a version like 1.4.0"),
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// The check of `cargo xtask ci`.
pub fn check(root: &Path) -> Result<()> {
    let current = read(&root.join(CURRENT))?;
    let version = version_of(&current)?;
    let changelog = fs::read_to_string(root.join(CHANGELOG)).context(CHANGELOG)?;
    if !changelog
        .lines()
        .any(|line| line.trim_end() == format!("## {version}"))
    {
        bail!("{CHANGELOG} has no `## {version}` section for the interface version {version}");
    }
    let Some((released, path)) = last_release(root, version)? else {
        bail!("no released document in {RELEASES}: record one with `cargo xtask api-release`");
    };
    let previous = read(&path)?;
    let findings = compare(&previous, released, &current, version)?;
    if !findings.is_empty() {
        bail!(
            "{CURRENT} ({version}) against the released {released} ({}):\n- {}",
            path.display(),
            findings.join("\n- ")
        );
    }
    println!("{CURRENT} {version} keeps every promise of the released {released}");
    Ok(())
}

/// Records the current document as the release of its version.
pub fn release(root: &Path) -> Result<()> {
    let current = read(&root.join(CURRENT))?;
    let version = version_of(&current)?;
    let path = root.join(RELEASES).join(format!("{version}.json"));
    if path.exists() {
        bail!("{version} is already released ({})", path.display());
    }
    check(root)?;
    fs::create_dir_all(root.join(RELEASES)).context(RELEASES)?;
    fs::copy(root.join(CURRENT), &path).with_context(|| format!("writing {}", path.display()))?;
    println!("released {version}: {}", path.display());
    Ok(())
}

/// What breaks the promise between the `released` document and the `current` one.
fn compare(
    previous: &Value,
    released: Version,
    current: &Value,
    version: Version,
) -> Result<Vec<String>> {
    match version.cmp(&released) {
        Ordering::Less => {
            return Ok(vec![format!(
                "the version {version} is older than the released {released}"
            )]);
        }
        Ordering::Equal if previous != current => {
            return Ok(vec![format!(
                "{released} is released and its document may not change: give the change a \
                 new info.version (crates/http/src/openapi.rs) and a changelog section"
            )]);
        }
        Ordering::Equal => return Ok(Vec::new()),
        Ordering::Greater if version.0 > released.0 => return Ok(Vec::new()),
        Ordering::Greater => {}
    }
    let report = check_openapi_compat(&document(previous)?, &document(current)?)
        .context("comparing the OpenAPI documents")?;
    Ok(report
        .issues()
        .iter()
        .map(|issue| {
            let certainty = match issue.kind {
                OpenApiCompatibilityIssueKind::Unknown { .. } => "may break",
                _ => "breaks",
            };
            format!(
                "{} {} {certainty} clients of {released} ({:?}): {}; within a major version \
                 only additions are allowed (contract §9: a break is a new path prefix)",
                issue.method, issue.path, issue.surface, issue.message
            )
        })
        .collect())
}

/// `raw` as jsoncompat reads it, with two readings of the contract made explicit first:
///
/// - Response `links` are dropped: jsoncompat does not compare them yet, and they document
///   follow-up requests without changing what a client sends or receives.
/// - Responses are open objects: clients must ignore fields they do not know (contract §9), so
///   a new response field is an addition, even where the schema is shared with a request body
///   that refuses unknown fields (`additionalProperties: false`). Each schema a response refers
///   to is read through a copy without that refusal; request bodies keep it, so a request field
///   removed is still a break.
fn document(raw: &Value) -> Result<OpenApiDocument> {
    let mut raw = raw.clone();
    drop_links(&mut raw);
    open_responses(&mut raw);
    OpenApiDocument::from_json(&raw).context("reading an OpenAPI 3.1 document")
}

const SCHEMAS: &str = "#/components/schemas/";
const OPEN: &str = "__response";

/// Points every schema reference under `responses` at an open copy of the schema (see
/// [`document`]), adding the copies, and the copies of what they refer to, to the components.
fn open_responses(document: &mut Value) {
    let Some(schemas) = document["components"]["schemas"].as_object().cloned() else {
        return;
    };
    let mut wanted = Vec::new();
    if let Some(Value::Object(paths)) = document.get_mut("paths") {
        for item in paths.values_mut() {
            for operation in item
                .as_object_mut()
                .into_iter()
                .flat_map(|item| item.values_mut())
            {
                if let Some(responses) = operation.get_mut("responses") {
                    reopen(responses, &mut wanted);
                }
            }
        }
    }
    let mut copies = serde_json::Map::new();
    while let Some(name) = wanted.pop() {
        let key = format!("{name}{OPEN}");
        if copies.contains_key(&key) {
            continue;
        }
        let Some(schema) = schemas.get(&name) else {
            continue;
        };
        let mut copy = schema.clone();
        reopen(&mut copy, &mut wanted);
        copies.insert(key, copy);
    }
    if let Some(Value::Object(schemas)) = document["components"].get_mut("schemas") {
        schemas.extend(copies);
    }
}

/// Rewrites the references in `value` to open copies (naming each in `wanted`) and drops every
/// `additionalProperties: false`.
fn reopen(value: &mut Value, wanted: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            if object.get("additionalProperties") == Some(&Value::Bool(false)) {
                object.remove("additionalProperties");
            }
            if let Some(Value::String(reference)) = object.get_mut("$ref")
                && let Some(name) = reference.strip_prefix(SCHEMAS)
            {
                wanted.push(name.to_owned());
                *reference = format!("{reference}{OPEN}");
            }
            object.values_mut().for_each(|value| reopen(value, wanted));
        }
        Value::Array(items) => items.iter_mut().for_each(|value| reopen(value, wanted)),
        _ => {}
    }
}

fn drop_links(value: &mut Value) {
    match value {
        Value::Object(object) => {
            if let Some(Value::Object(responses)) = object.get_mut("responses") {
                for response in responses.values_mut() {
                    if let Value::Object(response) = response {
                        response.remove("links");
                    }
                }
            }
            object.values_mut().for_each(drop_links);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_links),
        _ => {}
    }
}

/// The newest release not newer than `version`, with its path.
fn last_release(root: &Path, version: Version) -> Result<Option<(Version, PathBuf)>> {
    let dir = root.join(RELEASES);
    let mut releases = Vec::new();
    for entry in fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        let Some(stem) = path.file_stem().and_then(|stem| stem.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|ext| ext == "json") {
            releases.push((Version::parse(stem)?, path));
        }
    }
    Ok(releases
        .into_iter()
        .filter(|(released, _)| *released <= version)
        .max_by_key(|(released, _)| *released))
}

fn read(path: &Path) -> Result<Value> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

fn version_of(document: &Value) -> Result<Version> {
    let text = document["info"]["version"]
        .as_str()
        .context("the document has no info.version")?;
    Version::parse(text)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn api(version: &str, body_required: &[&str], extra_path: bool) -> Value {
        let mut paths = json!({
            "/decks": {"post": {
                "operationId": "createDeck",
                "requestBody": {"required": true, "content": {"application/json": {"schema": {
                    "type": "object", "required": body_required,
                    "properties": {"name": {"type": "string"}, "notes": {"type": "string"}}
                }}}},
                "responses": {"201": {"description": "created", "content": {"application/json":
                    {"schema": {"type": "object", "required": ["id"],
                                "properties": {"id": {"type": "string"}}}}}}}
            }}
        });
        if extra_path {
            paths["/decks/{id}"] = json!({"get": {
                "operationId": "getDeck",
                "parameters": [{"name": "id", "in": "path", "required": true,
                                "schema": {"type": "string"}}],
                "responses": {"200": {"description": "the deck"}}
            }});
        }
        json!({"openapi": "3.1.0", "info": {"title": "t", "version": version}, "paths": paths})
    }

    fn findings(previous: &Value, current: &Value) -> Vec<String> {
        compare(
            previous,
            version_of(previous).unwrap(),
            current,
            version_of(current).unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn an_addition_in_a_minor_version_keeps_the_promise() {
        let released = api("1.3.0", &["name"], false);
        assert_eq!(
            findings(&released, &api("1.4.0", &["name"], true)),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_removed_operation_or_a_new_required_field_breaks_it() {
        let released = api("1.3.0", &["name"], true);
        let removed = findings(&released, &api("1.4.0", &["name"], false));
        assert!(
            removed
                .iter()
                .any(|finding| finding.contains("GET /decks/{id}")),
            "{removed:?}"
        );
        let stricter = findings(&released, &api("1.4.0", &["name", "notes"], true));
        assert!(
            stricter
                .iter()
                .any(|finding| finding.contains("POST /decks")),
            "{stricter:?}"
        );
        // A new major version is a new path prefix: v1 is served beside it.
        assert!(findings(&released, &api("2.0.0", &["name"], false)).is_empty());
    }

    #[test]
    fn a_released_document_does_not_change_under_its_version() {
        let released = api("1.3.0", &["name"], false);
        let changed = findings(&released, &api("1.3.0", &["name"], true));
        assert_eq!(changed.len(), 1, "{changed:?}");
        assert!(findings(&released, &released).is_empty());
        assert_eq!(
            findings(&released, &api("1.2.9", &["name"], false)).len(),
            1
        );
    }

    #[test]
    fn a_new_field_of_a_closed_response_object_is_an_addition_but_a_request_field_removed_breaks() {
        let closed = |version: &str, fields: &[&str]| {
            let properties: serde_json::Map<String, Value> = fields
                .iter()
                .map(|field| ((*field).to_owned(), json!({"type": "string"})))
                .collect();
            json!({
                "openapi": "3.1.0", "info": {"title": "t", "version": version},
                "paths": {"/cards/resolve": {"post": {
                    "requestBody": {"required": true, "content": {"application/json": {"schema":
                        {"$ref": "#/components/schemas/Identifier"}}}},
                    "responses": {"200": {"description": "echoed", "content": {"application/json":
                        {"schema": {"type": "object", "required": ["input"], "properties":
                            {"input": {"$ref": "#/components/schemas/Identifier"}}}}}}}
                }}},
                "components": {"schemas": {"Identifier": {
                    "type": "object", "additionalProperties": false, "properties": properties
                }}}
            })
        };
        let released = closed("1.3.0", &["name", "set"]);
        assert_eq!(
            findings(&released, &closed("1.4.0", &["name", "set", "print"])),
            Vec::<String>::new()
        );
        let removed = findings(&released, &closed("1.4.0", &["name"]));
        assert!(
            removed.iter().any(|finding| finding.contains("(Request)")),
            "{removed:?}"
        );
    }

    #[test]
    fn links_are_left_out_of_the_comparison() {
        let mut with_links = api("1.3.0", &["name"], false);
        with_links["paths"]["/decks"]["post"]["responses"]["201"]["links"] =
            json!({"get": {"operationId": "getDeck"}});
        drop_links(&mut with_links);
        assert_eq!(with_links, api("1.3.0", &["name"], false));
    }
}
