//! What `cargo xtask fuzz` makes over HTTP, on the owners' lanes, before schemathesis runs: a
//! deck with two versions and a strategy guide, more decks, a sideboard guide with matchups and
//! an attached deck, webhook endpoints and a delivery. Each operation on an existing resource
//! is given the ids it may use, so that it is reached whatever the random sequences of the
//! stateful phase do; an operation that deletes or reshapes what it is given gets a resource of
//! its own, so that it starves no other. The hook (`xtask/schemathesis_hooks.py`) puts these
//! ids into a share of the generated requests, on a lane of the owner; bodies stay generated,
//! but for the collection PATCH's changes, which must name a card of the catalog.

use std::collections::BTreeMap;

use anyhow::{Context as _, Result, bail};
use serde_json::{Value, json};

use crate::lanes::Lanes;

const API: &str = "/api/public/v1";
/// The game every fixture is made in.
const GAME: &str = "mtg";
/// A format of [`GAME`] with rules, so that a stored deck's check has something to check.
const FORMAT: &str = "modern";
/// A card of the bundled mtg catalog the fuzzer imports (Chromium, the Mutable's `cardId`), whose
/// statistics the fuzzer reads.
const CARD: &str = "58d8ff36-4a4d-40e0-b812-3d23b2c7606a";
/// Where the fixture endpoints deliver: a closed port, so that a delivery fails at once and
/// may be retried.
const WEBHOOK_URL: &str = "http://127.0.0.1:9/deckhand-fuzz-fixture";

/// Operation (`METHOD /path` as the document writes it) -> what its requests may use:
/// `{"path": {parameter: value}, "body": {field: value}}`. A body field is replaced only where
/// the generated body has it.
pub type Fixtures = BTreeMap<String, Value>;

/// Makes the fixtures on the server at `address` with the credentials of `lanes`: the user's
/// PAT for decks and guides, the partner's API key for webhook endpoints.
pub fn make(address: &str, lanes: &Lanes) -> Result<Fixtures> {
    let user = Caller {
        address,
        header: ("Authorization", format!("Bearer {}", lanes.pat)),
    };
    let partner = Caller {
        address,
        header: ("X-Api-Key", lanes.api_key.clone()),
    };
    let game = format!("/games/{GAME}");
    let formats = user.call("GET", &format!("{game}/formats"), None)?;
    let format = formats
        .as_array()
        .and_then(|formats| formats.iter().find(|format| format["slug"] == FORMAT))
        .and_then(|format| format["id"].as_str())
        .with_context(|| format!("no format {FORMAT} of {GAME} in {formats}"))?
        .to_owned();
    let deck = |name: &str| -> Result<String> {
        let body = json!({
            "name": name,
            "visibility": ["public"],
            "format": format,
            "cards": [
                {"section": "mainboard", "quantity": 4, "name": "Island"},
                {"section": "sideboard", "quantity": 1, "name": "Island"},
            ],
        });
        id(&user.call("POST", &format!("{game}/decks"), Some(body))?)
    };
    let strategy_guide =
        json!({"content_type": "markdown", "content": "Mulligan hands without Islands."});
    // The deck most operations use: two versions, a strategy guide.
    let main = deck("Fuzz fixture")?;
    user.call(
        "PATCH",
        &format!("{game}/decks/{main}"),
        Some(json!({"name": "Fuzz fixture, version 2"})),
    )?;
    user.call(
        "PUT",
        &format!("{game}/decks/{main}/guide"),
        Some(strategy_guide.clone()),
    )?;
    let other = deck("Fuzz fixture to compare")?;
    let patched = deck("Fuzz fixture to patch")?;
    let unguided = deck("Fuzz fixture whose strategy guide is deleted")?;
    user.call(
        "PUT",
        &format!("{game}/decks/{unguided}/guide"),
        Some(strategy_guide),
    )?;
    let detached = deck("Fuzz fixture to detach")?;
    let attachable = deck("Fuzz fixture to attach")?;

    let guide = user.call(
        "POST",
        &format!("{game}/sideboard-guides"),
        Some(json!({
            "deck_id": main,
            "name": "Fuzz fixture guide",
            "visibility": ["public"],
            "matchups": [
                {"opponent_deck_name": "Matchup to patch"},
                {"opponent_deck_name": "Matchup to delete"},
            ],
        })),
    )?;
    let guide_id = id(&guide)?;
    let matchup = |name: &str| -> Result<String> {
        guide["matchups"]
            .as_array()
            .and_then(|matchups| {
                matchups
                    .iter()
                    .find(|matchup| matchup["opponent_deck_name"] == name)
            })
            .map(id)
            .with_context(|| format!("no matchup {name} in {guide}"))?
    };
    let (patched_matchup, deleted_matchup) =
        (matchup("Matchup to patch")?, matchup("Matchup to delete")?);
    user.call(
        "POST",
        &format!("{game}/sideboard-guides/{guide_id}/decks"),
        Some(json!({"deck_id": detached})),
    )?;

    let endpoint = || -> Result<String> {
        id(&partner.call("POST", "/webhooks", Some(json!({"url": WEBHOOK_URL})))?)
    };
    let (webhook, patched_webhook, deleted_webhook) = (endpoint()?, endpoint()?, endpoint()?);
    let delivery = id(&partner.call("POST", &format!("/webhooks/{webhook}/ping"), None)?)?;

    Ok(by_operation(&Ids {
        main,
        other,
        patched,
        unguided,
        detached,
        attachable,
        guide: guide_id,
        patched_matchup,
        deleted_matchup,
        webhook,
        patched_webhook,
        deleted_webhook,
        delivery,
    }))
}

/// What [`make`] made.
struct Ids {
    /// A public deck of [`FORMAT`] with two versions and a strategy guide; the primary deck of
    /// `guide`.
    main: String,
    /// A second deck, to compare with.
    other: String,
    /// A deck of its own for the PATCH, which may change its format, cards or visibility.
    patched: String,
    /// A deck whose strategy guide the DELETE removes.
    unguided: String,
    /// A deck attached to `guide`, for the detach.
    detached: String,
    /// A deck not attached to `guide`, for the attach.
    attachable: String,
    /// A public sideboard guide with two matchups.
    guide: String,
    patched_matchup: String,
    deleted_matchup: String,
    /// The partner's endpoint with one (failed) delivery, `delivery`.
    webhook: String,
    patched_webhook: String,
    deleted_webhook: String,
    delivery: String,
}

/// Which operation uses which fixture.
fn by_operation(ids: &Ids) -> Fixtures {
    let on_deck = |deck: &str| json!({"path": {"game": GAME, "id": deck}});
    let on_guide = || json!({"path": {"game": GAME, "id": ids.guide}});
    let naming_deck = |deck: &str| json!({"path": {"game": GAME}, "body": {"deck_id": deck}});
    let on_webhook = |id: &str| json!({"path": {"id": id}});
    let decks = "/games/{game}/decks";
    let guides = "/games/{game}/sideboard-guides";
    let main = &ids.main;
    let fixtures = [
        (
            "GET",
            "/games/{game}/cards/{card_id}/stats".to_owned(),
            json!({"path": {"game": GAME, "card_id": CARD}}),
        ),
        // No generated change names a card of the catalog, so a share of the collection's
        // PATCHes add one Island, which the other changes' refusals are measured beside.
        (
            "PATCH",
            "/games/{game}/collection".to_owned(),
            json!({"path": {"game": GAME}, "body": {"changes": [{"name": "Island", "quantity": 1}]}}),
        ),
        ("GET", format!("{decks}/{{id}}"), on_deck(main)),
        ("PATCH", format!("{decks}/{{id}}"), on_deck(&ids.patched)),
        ("GET", format!("{decks}/{{id}}/check"), on_deck(main)),
        ("GET", format!("{decks}/{{id}}/needs"), on_deck(main)),
        (
            "GET",
            format!("{decks}/{{id}}/compare/{{other_id}}"),
            json!({"path": {"game": GAME, "id": main, "other_id": ids.other}}),
        ),
        ("POST", format!("{decks}/{{id}}/fork"), on_deck(main)),
        ("GET", format!("{decks}/{{id}}/guide"), on_deck(main)),
        ("PUT", format!("{decks}/{{id}}/guide"), on_deck(main)),
        (
            "DELETE",
            format!("{decks}/{{id}}/guide"),
            on_deck(&ids.unguided),
        ),
        ("PUT", format!("{decks}/{{id}}/like"), on_deck(main)),
        ("DELETE", format!("{decks}/{{id}}/like"), on_deck(main)),
        ("POST", format!("{decks}/{{id}}/rollback"), on_deck(main)),
        ("GET", format!("{decks}/{{id}}/versions"), on_deck(main)),
        (
            "GET",
            format!("{decks}/{{id}}/versions/{{from}}/diff/{{to}}"),
            json!({"path": {"game": GAME, "id": main, "from": 1, "to": 2}}),
        ),
        ("POST", format!("{decks}/{{id}}/views"), on_deck(main)),
        ("POST", format!("{decks}/export/text"), naming_deck(main)),
        ("POST", guides.to_owned(), naming_deck(main)),
        ("GET", format!("{guides}/{{id}}"), on_guide()),
        ("PATCH", format!("{guides}/{{id}}"), on_guide()),
        ("POST", format!("{guides}/{{id}}/decks"), {
            let mut fixture = on_guide();
            fixture["body"] = json!({"deck_id": ids.attachable});
            fixture
        }),
        (
            "DELETE",
            format!("{guides}/{{id}}/decks/{{deck_id}}"),
            json!({"path": {"game": GAME, "id": ids.guide, "deck_id": ids.detached}}),
        ),
        ("PUT", format!("{guides}/{{id}}/like"), on_guide()),
        ("DELETE", format!("{guides}/{{id}}/like"), on_guide()),
        ("POST", format!("{guides}/{{id}}/matchups"), on_guide()),
        (
            "PATCH",
            format!("{guides}/{{id}}/matchups/{{matchup_id}}"),
            json!({"path": {"game": GAME, "id": ids.guide, "matchup_id": ids.patched_matchup}}),
        ),
        (
            "DELETE",
            format!("{guides}/{{id}}/matchups/{{matchup_id}}"),
            json!({"path": {"game": GAME, "id": ids.guide, "matchup_id": ids.deleted_matchup}}),
        ),
        ("GET", "/webhooks/{id}".to_owned(), on_webhook(&ids.webhook)),
        (
            "PATCH",
            "/webhooks/{id}".to_owned(),
            on_webhook(&ids.patched_webhook),
        ),
        (
            "DELETE",
            "/webhooks/{id}".to_owned(),
            on_webhook(&ids.deleted_webhook),
        ),
        (
            "GET",
            "/webhooks/{id}/deliveries".to_owned(),
            on_webhook(&ids.webhook),
        ),
        (
            "POST",
            "/webhooks/{id}/ping".to_owned(),
            on_webhook(&ids.webhook),
        ),
        (
            "POST",
            "/webhooks/{id}/secret".to_owned(),
            on_webhook(&ids.webhook),
        ),
        (
            "POST",
            "/webhooks/{id}/deliveries/{delivery_id}/retry".to_owned(),
            json!({"path": {"id": ids.webhook, "delivery_id": ids.delivery}}),
        ),
    ];
    fixtures
        .into_iter()
        .map(|(method, path, fixture)| (format!("{method} {API}{path}"), fixture))
        .collect()
}

/// One lane's credential, sent with every request.
struct Caller<'a> {
    address: &'a str,
    header: (&'static str, String),
}

impl Caller<'_> {
    /// `method path` (under the API's base) with a JSON body, expecting a 2xx; its JSON body
    /// (`null` when empty).
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value> {
        let request = ureq::request(method, &format!("http://{}{API}{path}", self.address))
            .set(self.header.0, &self.header.1);
        let answer = match body {
            // ureq is built without its `json` feature: the body is sent as text.
            Some(body) => request
                .set("Content-Type", "application/json")
                .send_string(&body.to_string()),
            None => request.call(),
        };
        let text = match answer {
            Ok(response) => response.into_string()?,
            Err(ureq::Error::Status(status, response)) => bail!(
                "making the fuzz fixtures: {method} {path} answered {status}: {}",
                response.into_string()?
            ),
            Err(err) => return Err(err).with_context(|| format!("{method} {path}")),
        };
        if text.is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_str(&text).with_context(|| format!("{method} {path} answered {text:?}"))
    }
}

fn id(resource: &Value) -> Result<String> {
    resource["id"]
        .as_str()
        .map(str::to_owned)
        .with_context(|| format!("no id in {resource}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation of the document whose path names a resource has a fixture that fills
    /// each of its path parameters, and no fixture names an operation the document lacks.
    #[test]
    fn every_operation_on_a_resource_has_a_fixture_for_each_path_parameter() -> Result<()> {
        let document: Value = serde_json::from_str(include_str!("../../docs/openapi.json"))?;
        let ids = Ids {
            main: "d1".into(),
            other: "d2".into(),
            patched: "d3".into(),
            unguided: "d4".into(),
            detached: "d5".into(),
            attachable: "d6".into(),
            guide: "g".into(),
            patched_matchup: "m1".into(),
            deleted_matchup: "m2".into(),
            webhook: "w1".into(),
            patched_webhook: "w2".into(),
            deleted_webhook: "w3".into(),
            delivery: "v".into(),
        };
        let fixtures = by_operation(&ids);
        let paths = document["paths"].as_object().context("no paths")?;
        let mut operations = Vec::new();
        for (path, item) in paths {
            for method in ["get", "put", "post", "delete", "patch"] {
                if item.get(method).is_some() {
                    operations.push(format!("{} {path}", method.to_ascii_uppercase()));
                }
            }
        }
        for key in fixtures.keys() {
            assert!(operations.contains(key), "{key} is not an operation");
        }
        for operation in &operations {
            let (_, path) = operation.split_once(' ').context("no path")?;
            let parameters: Vec<&str> = path
                .split('{')
                .skip(1)
                .filter_map(|rest| rest.split('}').next())
                .filter(|name| *name != "game")
                .collect();
            if parameters.is_empty() {
                continue;
            }
            let fixture = fixtures
                .get(operation)
                .with_context(|| format!("{operation} has no fixture"))?;
            for parameter in parameters {
                assert!(
                    fixture["path"].get(parameter).is_some(),
                    "{operation}: no {parameter}"
                );
            }
        }
        Ok(())
    }
}
