//! The consent page in a real headless Chromium, driven through chromedriver by fantoccini:
//! sign in and approve, deny, and a wrong password. A browser that cannot be started fails the
//! test with a message saying what to install; it is never skipped.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use deckhand_testkit::app::TestApp;
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::json;

use crate::oauth_support::{CHALLENGE, PASSWORD, admin, world};

/// The whole browser session, startup included, stays well under a minute.
const BROWSER_BUDGET: Duration = Duration::from_secs(45);

/// chromedriver, stopped when dropped.
pub(crate) struct Driver {
    child: Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn chromium_binary() -> std::path::PathBuf {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find_map(|name| which::which(name).ok())
        .unwrap_or_else(|| {
            panic!(
                "no Chromium found: install Debian's `chromium` and `chromium-driver` packages \
                 (`.ci/run` installs them when missing)"
            )
        })
}

pub(crate) async fn start_driver() -> Driver {
    let binary = which::which("chromedriver").unwrap_or_else(|_| {
        panic!(
            "chromedriver not found on PATH: install Debian's `chromium-driver` package \
             (`.ci/run` installs it when missing)"
        )
    });
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port for chromedriver")
        .port();
    let child = Command::new(&binary)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {}: {error}", binary.display()));
    let driver = Driver {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    let status = format!("{}/status", driver.url);
    for _ in 0..100 {
        if reqwest::get(&status)
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            return driver;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("chromedriver did not answer on {status} within 10 s");
}

async fn browser(driver: &Driver) -> Client {
    browser_of_size(driver, "720,1000").await
}

/// A headless Chromium session whose window is `size` ("width,height") CSS pixels.
pub(crate) async fn browser_of_size(driver: &Driver, size: &str) -> Client {
    let mut capabilities = serde_json::Map::new();
    capabilities.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chromium_binary(),
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                &format!("--window-size={size}"), "--hide-scrollbars",
            ],
        }),
    );
    ClientBuilder::new(HttpConnector::new())
        .capabilities(capabilities)
        .connect(&driver.url)
        .await
        .unwrap_or_else(|error| {
            panic!("Chromium could not be started through chromedriver: {error}")
        })
}

fn authorize_url(app: &TestApp, client_id: &str, redirect: &str, state: &str) -> String {
    let query = [
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", redirect),
        ("scope", "decks:read decks:write"),
        ("state", state),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ];
    reqwest::Url::parse_with_params(&app.api("/oauth/authorize"), query)
        .unwrap()
        .to_string()
}

async fn sign_in(browser: &Client, password: &str) {
    browser
        .find(Locator::Id("username"))
        .await
        .unwrap()
        .send_keys("alice")
        .await
        .unwrap();
    browser
        .find(Locator::Id("password"))
        .await
        .unwrap()
        .send_keys(password)
        .await
        .unwrap();
}

async fn click(browser: &Client, decision: &str) {
    browser
        .find(Locator::Css(&format!(
            "button[name=decision][value={decision}]"
        )))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// Waits for the browser to land on `redirect` and returns the landing URL.
async fn landed(browser: &Client, redirect: &str) -> reqwest::Url {
    for _ in 0..50 {
        let url = browser.current_url().await.unwrap();
        if url.as_str().starts_with(redirect) {
            return reqwest::Url::parse(url.as_str()).unwrap();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the browser never reached {redirect}");
}

fn query_param(url: &reqwest::Url, name: &str) -> Option<String> {
    url.query_pairs()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.into_owned())
}

#[tokio::test]
async fn a_person_signs_in_approves_denies_and_mistypes_in_chromium() {
    let app = TestApp::memory().await;
    world(&app).await;
    // The redirect lands on this server, so the browser has somewhere real to go.
    let redirect = app.url("/healthz");
    let client = admin(
        &app,
        &[
            "oauth-client",
            "create",
            "--partner",
            "acme",
            "--name",
            "Deck Tracker",
            "--redirect-uri",
            &redirect,
            "--scopes",
            "decks:read decks:write",
        ],
    )
    .await;
    let client_id = client["client_id"].as_str().unwrap().to_owned();
    let driver = start_driver().await;
    let session = async {
        // A wrong password shows the error on the page and goes nowhere.
        let browser = browser(&driver).await;
        browser
            .goto(&authorize_url(&app, &client_id, &redirect, "one"))
            .await
            .unwrap();
        let heading = browser
            .find(Locator::Css("h1"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(
            heading,
            "Deck Tracker wants access to your Deckhand account"
        );
        let scopes = browser
            .find(Locator::Css("ul.scopes"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(scopes.contains("See your decks"), "{scopes}");
        assert!(scopes.contains("Create and change your decks"), "{scopes}");
        sign_in(&browser, "not the password").await;
        let screenshot_page = browser.current_url().await.unwrap();
        click(&browser, "approve").await;
        // The click returns once the form is submitted, not once the answer has rendered.
        let error = browser
            .wait()
            .at_most(Duration::from_secs(10))
            .for_element(Locator::Id("error"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(error, "The username or password is wrong.");
        assert!(
            browser
                .current_url()
                .await
                .unwrap()
                .as_str()
                .starts_with(&app.api("/oauth/authorize"))
        );
        assert_eq!(screenshot_page.path(), "/api/public/v1/oauth/authorize");

        // Deny: back to the app with access_denied.
        browser
            .goto(&authorize_url(&app, &client_id, &redirect, "two"))
            .await
            .unwrap();
        click(&browser, "deny").await;
        let url = landed(&browser, &redirect).await;
        assert_eq!(query_param(&url, "error").as_deref(), Some("access_denied"));
        assert_eq!(query_param(&url, "state").as_deref(), Some("two"));

        // Sign in and approve: back to the app with a code, state and iss.
        browser
            .goto(&authorize_url(&app, &client_id, &redirect, "three"))
            .await
            .unwrap();
        sign_in(&browser, PASSWORD).await;
        let png = browser.screenshot().await.unwrap();
        let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("oauth-consent.png");
        std::fs::write(&path, &png).unwrap();
        click(&browser, "approve").await;
        let url = landed(&browser, &redirect).await;
        let code = query_param(&url, "code").expect("a code");
        assert!(code.starts_with("dh_ac_"), "{code}");
        assert_eq!(query_param(&url, "state").as_deref(), Some("three"));
        assert_eq!(
            query_param(&url, "iss").as_deref(),
            Some(app.base_url.as_str())
        );

        // The session cookie spares the next sign-in.
        browser
            .goto(&authorize_url(&app, &client_id, &redirect, "four"))
            .await
            .unwrap();
        let signed_in = browser
            .find(Locator::Css(".signed-in"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(signed_in, "Signed in as alice.");
        click(&browser, "approve").await;
        let url = landed(&browser, &redirect).await;
        assert!(query_param(&url, "code").is_some());
        browser.close().await.unwrap();
    };
    tokio::time::timeout(BROWSER_BUDGET, session)
        .await
        .expect("the browser session took longer than its budget");
}
