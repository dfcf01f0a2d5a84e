//! Outside bytes through the whole stack, generated: the query strings of the list endpoints
//! and the credential headers (`Authorization`, the partner signature) get a page, a 400 or a
//! 401 in the envelope, never a 5xx (a panic is answered 500 by the stack, so this catches
//! panics too).

use std::collections::BTreeMap;
use std::sync::Mutex;

use deckhand_testkit::app::{Store, TestApp};
use proptest::prelude::*;
use reqwest::StatusCode;
use serde_json::Value;

use crate::support::assert_envelope;

const LISTS: [&str; 3] = [
    "/games/mtg/decks",
    "/games/mtg/sideboard-guides",
    "/games/mtg/sideboard-guides/my",
];

const LIST_PARAMETERS: [&str; 20] = [
    "q",
    "authorId",
    "createdAfter",
    "createdBefore",
    "editedAfter",
    "editedBefore",
    "formatId",
    "format",
    "deckId",
    "opponentArchetype",
    "hasGuide",
    "hasSideboardGuide",
    "hasVideo",
    "isLegal",
    "include",
    "limit",
    "order",
    "page",
    "sort",
    "expand",
];

/// Everything outside `A-Z a-z 0-9 - . _ ~` percent-encoded, so the URL is sent as generated.
fn encoded(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|byte| match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(*byte).to_string()
            }
            _ => format!("%{byte:02X}"),
        })
        .collect()
}

/// Values near what each parameter takes, and far from it.
fn parameter_value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("true".to_owned()),
        Just("TRUE".to_owned()),
        Just("1".to_owned()),
        any::<i64>().prop_map(|n| n.to_string()),
        (0i64..200).prop_map(|n| n.to_string()),
        Just("99999999999999999999999".to_owned()),
        Just("2026-01-31T12:00:00Z".to_owned()),
        Just("2026-13-45T99:00:00+25:00".to_owned()),
        Just("+999999-01-01T00:00:00Z".to_owned()),
        Just("0f7c1f4d-5f38-4bd3-9c1e-0d6b0e4f8b7a".to_owned()),
        prop_oneof![
            Just("views"),
            Just("likes"),
            Just("trending"),
            Just("createdAt"),
            Just("editedAt"),
            Just("asc"),
            Just("desc"),
            Just("summary"),
            Just("cards"),
        ]
        .prop_map(str::to_owned),
        "\\PC{0,20}".prop_map(|text| encoded(text.as_bytes())),
        any::<Vec<u8>>().prop_map(|bytes| encoded(&bytes)),
        // Raw: broken escapes, stray separators and plus signs as sent.
        "[a-z0-9%&=+,;]{0,12}",
    ]
}

/// Whole query strings: known and unknown parameters (repeated, empty, without `=`) with any
/// value.
fn list_query() -> impl Strategy<Value = String> {
    let name = prop_oneof![
        4 => (0..LIST_PARAMETERS.len()).prop_map(|at| LIST_PARAMETERS[at].to_owned()),
        1 => "[a-zA-Z%0-9\\[\\]]{0,8}",
    ];
    let pair =
        (name, proptest::option::of(parameter_value())).prop_map(|(name, value)| match value {
            Some(value) => format!("{name}={value}"),
            None => name,
        });
    proptest::collection::vec(pair, 0..6).prop_map(|pairs| pairs.join("&"))
}

/// Header values as a client may send them: visible ASCII, spaces and tabs inside, and bytes
/// above 0x7F (obs-text), which HTTP allows and Rust strings do not hold as such.
fn header_bytes() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        8 => 0x21u8..0x7f,
        1 => Just(b' '),
        1 => Just(b'\t'),
        1 => 0x80u8..=0xff,
    ];
    proptest::collection::vec(byte, 0..80).prop_map(|mut bytes| {
        // No leading or trailing whitespace: a header value cannot carry it.
        while bytes.first().is_some_and(|b| b.is_ascii_whitespace()) {
            bytes.remove(0);
        }
        while bytes.last().is_some_and(|b| b.is_ascii_whitespace()) {
            bytes.pop();
        }
        bytes
    })
}

fn authorization(pat: String) -> impl Strategy<Value = Vec<u8>> {
    let whole = pat.clone();
    let scheme = prop_oneof![
        Just("Bearer"),
        Just("bearer"),
        Just("BEARER"),
        Just("DPoP"),
        Just("Basic"),
        Just(""),
    ];
    let credentials = prop_oneof![
        header_bytes(),
        "[A-Za-z0-9_-]{0,60}".prop_map(|token| format!("dh_pat_{token}").into_bytes()),
        "[A-Za-z0-9_-]{0,60}".prop_map(|token| format!("dh_at_{token}").into_bytes()),
        (0..=pat.len()).prop_map(move |cut| pat.as_bytes()[..cut].to_vec()),
    ];
    prop_oneof![
        1 => Just(format!("Bearer {whole}").into_bytes()),
        4 => header_bytes(),
        4 => (scheme, "[ \t]{1,3}", credentials).prop_map(|(scheme, gap, credentials)| [
            scheme.as_bytes(),
            gap.as_bytes(),
            &credentials
        ]
        .concat()),
    ]
}

/// Whether an `Authorization` value presents `pat` on the Bearer lane: the scheme is
/// case-insensitive (RFC 9110 section 11.1), one space ends it, and spaces and tabs around the
/// credentials are not part of them.
fn names_the_pat(value: &[u8], pat: &str) -> bool {
    let Some((scheme, credentials)) = std::str::from_utf8(value)
        .ok()
        .filter(|value| value.is_ascii())
        .and_then(|value| value.split_once(' '))
    else {
        return false;
    };
    scheme.eq_ignore_ascii_case("bearer") && credentials.trim_matches([' ', '\t']) == pat
}

/// `X-Signature` values: the `v1.<seconds>.<hex>` shape with each part bent, or anything.
fn signature(now: i64) -> impl Strategy<Value = Vec<u8>> {
    let timestamp = prop_oneof![
        (now - 600..now + 600).prop_map(|t| t.to_string()),
        "[0-9]{0,14}",
        "-[0-9]{1,5}",
    ];
    let mac = prop_oneof!["[0-9a-f]{64}", "[0-9a-fA-F]{60,68}", "\\PC{0,10}"];
    prop_oneof![
        (
            prop_oneof![
                Just("v1".to_owned()),
                Just("v2".to_owned()),
                "[a-z0-9]{0,3}"
            ],
            timestamp,
            mac
        )
            .prop_map(
                |(version, timestamp, mac)| format!("{version}.{timestamp}.{mac}").into_bytes()
            ),
        header_bytes(),
    ]
}

/// Answers by status, for the figures in docs/reliability.md.
#[derive(Default)]
struct Tally(Mutex<BTreeMap<u16, usize>>);

impl Tally {
    fn count(&self, status: StatusCode) {
        *self.0.lock().unwrap().entry(status.as_u16()).or_default() += 1;
    }

    fn report(&self, what: &str) {
        eprintln!(
            "properties: {what}: answers by status {:?}",
            self.0.lock().unwrap()
        );
    }
}

/// A status a client can act on, and the envelope with it.
fn assert_actionable(status: StatusCode, body: &Value, allowed: &[StatusCode], what: &str) {
    assert!(
        allowed.contains(&status),
        "{what}: answered {status}: {body}"
    );
    if status.is_client_error() {
        assert!(body["error"].is_string(), "{what}: {body}");
        assert!(body["message"].is_string(), "{what}: {body}");
    }
}

/// The app on the memory store with rate limits off, on a runtime of its own that the
/// synchronous proptest runner drives; a PAT with every read scope.
fn app() -> (tokio::runtime::Runtime, TestApp, String) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (app, token) = runtime.block_on(async {
        let app = TestApp::builder(Store::Memory)
            .rate_limits(None)
            .start()
            .await;
        let (_, token) = app
            .user_with_token("prober", "decks:read decks:write sideboards:read")
            .await;
        // Something to list, and to sort.
        for name in ["Alpha", "Beta", "Gamma"] {
            let created = app
                .client
                .post(app.api("/games/mtg/decks"))
                .bearer_auth(&token)
                .json(&serde_json::json!({"name": name, "visibility": ["public"]}))
                .send()
                .await
                .unwrap();
            assert_eq!(created.status(), StatusCode::CREATED);
        }
        (app, token)
    });
    (runtime, app, token)
}

async fn answer(request: reqwest::RequestBuilder) -> (StatusCode, Value) {
    let response = request.send().await.unwrap();
    let status = response.status();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, body)
}

#[test]
fn list_query_strings_get_a_page_or_a_400() {
    let (runtime, app, token) = app();
    let tally = Tally::default();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(256));
    runner
        .run(&list_query(), |query| {
            for list in LISTS {
                let url = format!("{}?{query}", app.api(list));
                let (status, body) =
                    runtime.block_on(answer(app.client.get(&url).bearer_auth(&token)));
                tally.count(status);
                assert_actionable(
                    status,
                    &body,
                    &[StatusCode::OK, StatusCode::BAD_REQUEST],
                    &url,
                );
                if status == StatusCode::BAD_REQUEST {
                    assert_envelope(&body, "SERVICE_VALIDATION_ERROR");
                }
            }
            Ok(())
        })
        .unwrap();
    tally.report("list query strings");
}

#[test]
fn any_authorization_header_is_accepted_or_refused_in_the_envelope() {
    let (runtime, app, token) = app();
    let probe = app.api("/_probe/user");
    let tally = Tally::default();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(512));
    runner
        .run(&authorization(token.clone()), |value| {
            let (status, body) = runtime.block_on(answer(
                app.client
                    .get(&probe)
                    .header("authorization", value.as_slice()),
            ));
            tally.count(status);
            let what = String::from_utf8_lossy(&value).into_owned();
            let allowed: &[StatusCode] = if names_the_pat(&value, &token) {
                &[StatusCode::OK]
            } else {
                &[StatusCode::BAD_REQUEST, StatusCode::UNAUTHORIZED]
            };
            assert_actionable(status, &body, allowed, &what);
            Ok(())
        })
        .unwrap();
    tally.report("Authorization headers");
}

#[test]
fn any_partner_signature_is_refused_in_the_envelope() {
    let (runtime, app, _) = app();
    runtime.block_on(async {
        app.user_with_token("owner", "decks:read").await;
        app.admin(&[
            "partner",
            "create",
            "--slug",
            "acme",
            "--owner",
            "owner",
            "--scopes",
            "decks:read",
            "--game-scopes",
            "mtg",
        ])
        .await
        .unwrap();
    });
    let now = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap();
    let partner = prop_oneof![
        3 => Just(b"acme".to_vec()),
        1 => header_bytes(),
    ];
    let probe = app.api("/_probe/partner");
    let tally = Tally::default();
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(512));
    runner
        .run(&(partner, signature(now)), |(partner, signature)| {
            let (status, body) = runtime.block_on(answer(
                app.client
                    .get(&probe)
                    .header("x-partner-id", partner.as_slice())
                    .header("x-signature", signature.as_slice()),
            ));
            tally.count(status);
            let what = format!(
                "{} / {}",
                String::from_utf8_lossy(&partner),
                String::from_utf8_lossy(&signature)
            );
            assert_actionable(
                status,
                &body,
                &[StatusCode::BAD_REQUEST, StatusCode::UNAUTHORIZED],
                &what,
            );
            Ok(())
        })
        .unwrap();
    tally.report("partner signatures");
}
