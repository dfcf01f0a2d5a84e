//! The API reference page, `GET /docs`, in a real headless Chromium (the driver of
//! `oauth_browser`): Redoc, embedded in the binary, renders the served OpenAPI document with
//! every tag and operation, under a policy that lets it load nothing from elsewhere.

use std::time::Duration;

use deckhand_testkit::app::TestApp;
use serde_json::Value;

use crate::oauth_browser::{browser_of_size, start_driver};

/// Startup, rendering and the screenshot stay well under a minute.
const BROWSER_BUDGET: Duration = Duration::from_secs(50);

#[tokio::test]
async fn the_reference_page_renders_every_tag_and_operation_in_chromium() {
    let app = TestApp::memory().await;

    let page = app.client.get(app.url("/docs")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let header = |name: &str| page.headers()[name].to_str().unwrap().to_owned();
    assert_eq!(header("content-type"), "text/html; charset=utf-8");
    let policy = header("content-security-policy");
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "connect-src 'self'",
        "worker-src blob:",
        "frame-ancestors 'none'",
    ] {
        assert!(policy.contains(directive), "{policy}");
    }
    let html = page.text().await.unwrap();
    let script = html
        .split("<script type=\"module\" src=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_owned();
    assert!(script.starts_with("/docs/redoc-"), "{script}");
    let bundle = app.client.get(app.url(&script)).send().await.unwrap();
    assert_eq!(bundle.status(), 200);
    assert_eq!(
        bundle.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    assert_eq!(
        bundle.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );

    let document: Value = app
        .client
        .get(app.api("/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut tags: Vec<String> = Vec::new();
    for item in document["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            for tag in operation["tags"].as_array().into_iter().flatten() {
                let tag = tag.as_str().unwrap().to_owned();
                if !tags.contains(&tag) {
                    tags.push(tag);
                }
            }
        }
    }
    assert!(tags.len() >= 6, "{tags:?}");
    let list_decks = document["paths"]["/api/public/v1/games/{game}/decks"]["get"]["summary"]
        .as_str()
        .unwrap()
        .to_owned();

    let driver = start_driver().await;
    let session = async {
        let browser = browser_of_size(&driver, "1280,900").await;
        browser.goto(&app.url("/docs")).await.unwrap();
        // Redoc fetches the document and renders it: wait for the last tag's section.
        let mut text = String::new();
        for _ in 0..200 {
            text = browser
                .execute("return document.body.innerText", vec![])
                .await
                .unwrap()
                .as_str()
                .unwrap_or_default()
                .to_lowercase();
            if tags.iter().all(|tag| text.contains(&tag.to_lowercase())) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // Redoc renders a tag's operations when it is opened: open `decks`, then the deck list.
        let list_decks = list_decks.split(':').next().unwrap().to_lowercase();
        let click_menu_item = |prefix: String| {
            let browser = browser.clone();
            async move {
                for _ in 0..100 {
                    let clicked = browser
                        .execute(
                            "const wanted = arguments[0]; \
                             const item = Array.from(document.querySelectorAll('.menu-content *')) \
                               .find(e => e.childElementCount === 0 \
                                 && e.textContent.trim().toLowerCase().startsWith(wanted)); \
                             if (item) { item.click(); return true; } return false;",
                            vec![Value::String(prefix.clone())],
                        )
                        .await
                        .unwrap();
                    if clicked == Value::Bool(true) {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                panic!("no menu item {prefix}");
            }
        };
        click_menu_item("decks".to_owned()).await;
        click_menu_item(list_decks.clone()).await;
        let mut shown = String::new();
        for _ in 0..100 {
            shown = browser
                .execute("return document.body.innerText", vec![])
                .await
                .unwrap()
                .as_str()
                .unwrap_or_default()
                .to_lowercase();
            if shown.contains("/games/{game}/decks") && shown.contains("deckpage") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            shown.contains(&list_decks) && shown.contains("/games/{game}/decks"),
            "the deck list operation is not shown: {}",
            shown.chars().take(3000).collect::<String>()
        );
        assert!(text.contains("deckhand public api"));

        // Everything the page loaded came from this server (or a blob it made). Redoc asks for
        // its attribution logo on its CDN: the policy refuses it before any request is made,
        // which leaves an entry with no response and nothing transferred.
        let loaded = browser
            .execute(
                "return performance.getEntriesByType('resource') \
                   .map(entry => [entry.name, entry.responseStatus || 0, entry.transferSize || 0])",
                vec![],
            )
            .await
            .unwrap();
        let origin = app.url("");
        for entry in loaded.as_array().unwrap() {
            let url = entry[0].as_str().unwrap();
            let reached = entry[1] != 0 || entry[2] != 0;
            assert!(
                url.starts_with(&origin) || url.starts_with("blob:") || !reached,
                "the page loaded {url} from another origin: {entry}"
            );
        }
        // Redoc's styles applied (an inline style refused by the policy would leave none).
        let styled = browser
            .execute(
                "return document.querySelectorAll('style').length > 0 \
                 && getComputedStyle(document.querySelector('.menu-content')).position !== 'static'",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(styled, Value::Bool(true));

        let png = browser.screenshot().await.unwrap();
        let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("api-reference.png");
        std::fs::write(&path, &png).unwrap();
        browser.close().await.unwrap();
    };
    tokio::time::timeout(BROWSER_BUDGET, session)
        .await
        .expect("the browser session took longer than its budget");
}
