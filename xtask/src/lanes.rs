//! Real credentials of every lane, made on a running `deckhand serve` the way an operator and a
//! partner's app make them: a user with a password and a PAT, a partner with an API key, a
//! confidential and a public OAuth client (through `deckhand admin`), and an OAuth access and
//! refresh token from a walk through the real consent page (authorization code with PKCE).
//! `cargo xtask fuzz` and `cargo xtask soak` use them.

use anyhow::{Context as _, Result, bail};
use serde_json::Value;

/// Where tokens made here may be sent back to: never followed, only the code is read from it.
const REDIRECT: &str = "http://127.0.0.1:9/cb";
/// The PKCE pair of RFC 7636 appendix B: the walk is a harness, not a secret.
const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
const PASSWORD: &str = "a long harness password";
const OAUTH: &str = "/api/public/v1/oauth";

/// The credentials of one user, `fuzzer` or the like, on every lane.
pub struct Lanes {
    pub pat: String,
    pub api_key: String,
    /// A confidential client (HTTP Basic on the token, revocation and introspection endpoints).
    pub client_id: String,
    pub client_secret: String,
    /// A public client (`client_id` in the form, no secret).
    pub public_client_id: String,
    /// An OAuth access token of the public client.
    pub access_token: String,
    /// The refresh token issued with it.
    pub refresh_token: String,
}

/// What the token endpoint issued: an access token and the refresh token that replaces it.
pub struct Tokens {
    pub access: String,
    pub refresh: String,
}

/// Makes user `username` holding `scopes` (space-separated) on every lane. `admin` runs
/// `deckhand admin <args>` on the server's database and returns what it printed; `address` is
/// where the server listens.
pub fn make(
    admin: &dyn Fn(&[&str]) -> Result<String>,
    address: &str,
    username: &str,
    scopes: &str,
) -> Result<Lanes> {
    let json = |args: &[&str]| -> Result<Value> {
        let printed = admin(args)?;
        serde_json::from_str(&printed)
            .with_context(|| format!("`deckhand admin {}` printed {printed:?}", args.join(" ")))
    };
    let text = |value: &Value, key: &str| -> Result<String> {
        value[key]
            .as_str()
            .map(str::to_owned)
            .with_context(|| format!("no {key} in {value}"))
    };
    json(&[
        "user",
        "create",
        "--username",
        username,
        "--password",
        PASSWORD,
        "--premium",
    ])?;
    let pat = json(&[
        "pat", "create", "--user", username, "--scopes", scopes, "--name", "harness",
    ])?;
    let partner = format!("{username}-app");
    json(&[
        "partner",
        "create",
        "--slug",
        &partner,
        "--owner",
        username,
        "--scopes",
        scopes,
        "--game-scopes",
        "*",
    ])?;
    let api_key = json(&["api-key", "create", "--partner", &partner])?;
    let client = |public: bool| {
        let mut args = vec![
            "oauth-client",
            "create",
            "--partner",
            &partner,
            "--name",
            "Harness",
            "--redirect-uri",
            REDIRECT,
            "--scopes",
            scopes,
        ];
        if public {
            args.push("--public");
        }
        json(&args)
    };
    let confidential = client(false)?;
    let public = client(true)?;
    let public_client_id = text(&public, "client_id")?;
    let tokens = authorize(address, &public_client_id, username, scopes)?;
    Ok(Lanes {
        pat: text(&pat, "token")?,
        api_key: text(&api_key, "key")?,
        client_id: text(&confidential, "client_id")?,
        client_secret: text(&confidential, "client_secret")?,
        public_client_id,
        access_token: tokens.access,
        refresh_token: tokens.refresh,
    })
}

fn agent() -> ureq::Agent {
    // The consent page answers 303 to the redirect URI, which is read, not followed.
    ureq::AgentBuilder::new().redirects(0).build()
}

/// Signs in on the consent page as `username`, approves `scopes` for public client
/// `client_id`, and redeems the code.
fn authorize(address: &str, client_id: &str, username: &str, scopes: &str) -> Result<Tokens> {
    let agent = agent();
    let url = format!("http://{address}{OAUTH}/authorize");
    let request = [
        ("response_type", "code"),
        ("client_id", client_id),
        ("redirect_uri", REDIRECT),
        ("scope", scopes),
        ("state", "harness"),
        ("code_challenge", CHALLENGE),
        ("code_challenge_method", "S256"),
    ];
    let mut page = agent.get(&url);
    for (name, value) in request {
        page = page.query(name, value);
    }
    let page = page.call().context("opening the consent page")?;
    // `deckhand_csrf`, or `__Host-deckhand_csrf` on an https public URL.
    let cookie = page
        .all("set-cookie")
        .into_iter()
        .find(|cookie| cookie.contains("deckhand_csrf="))
        .and_then(|cookie| cookie.split(';').next())
        .map(str::to_owned)
        .context("the consent page set no CSRF cookie")?;
    let html = page.into_string()?;
    let csrf = hidden_input(&html, "csrf_token")?;
    let mut form: Vec<(&str, &str)> = request.to_vec();
    form.extend([
        ("csrf_token", csrf.as_str()),
        ("username", username),
        ("password", PASSWORD),
        ("decision", "approve"),
    ]);
    let approved = agent
        .post(&url)
        .set("Cookie", &cookie)
        .send_form(&form)
        .context("approving on the consent page")?;
    let location = approved
        .header("location")
        .filter(|_| approved.status() == 303)
        .with_context(|| format!("the consent page answered {}", approved.status()))?;
    let code = location
        .split(['?', '&'])
        .find_map(|pair| pair.strip_prefix("code="))
        .with_context(|| format!("no code in {location}"))?;
    token(
        address,
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("client_id", client_id),
            ("code_verifier", VERIFIER),
        ],
    )
}

/// Spends `refresh_token` of public client `client_id` for new tokens, as an app does when
/// its access token expires.
pub fn refresh(address: &str, client_id: &str, refresh_token: &str) -> Result<Tokens> {
    token(
        address,
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", client_id),
        ],
    )
}

fn token(address: &str, form: &[(&str, &str)]) -> Result<Tokens> {
    let answer = agent()
        .post(&format!("http://{address}{OAUTH}/token"))
        .send_form(form);
    let body: Value = match answer {
        Ok(response) => serde_json::from_str(&response.into_string()?)?,
        Err(ureq::Error::Status(status, response)) => {
            bail!(
                "the token endpoint answered {status}: {}",
                response.into_string()?
            )
        }
        Err(err) => return Err(err).context("calling the token endpoint"),
    };
    let field = |key: &str| {
        body[key]
            .as_str()
            .map(str::to_owned)
            .with_context(|| format!("no {key} from the token endpoint"))
    };
    Ok(Tokens {
        access: field("access_token")?,
        refresh: field("refresh_token")?,
    })
}

/// The value of the hidden input `name` in a page the server rendered.
fn hidden_input(page: &str, name: &str) -> Result<String> {
    let marker = format!("name=\"{name}\" value=\"");
    page.split_once(&marker)
        .and_then(|(_, rest)| rest.split('"').next())
        .map(str::to_owned)
        .with_context(|| format!("no {name} in the consent page"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hidden_input_is_read_by_name() -> Result<()> {
        let page = r#"<input type="hidden" name="state" value="s"><input type="hidden" name="csrf_token" value="abc.def">"#;
        assert_eq!(hidden_input(page, "csrf_token")?, "abc.def");
        assert!(hidden_input(page, "missing").is_err());
        Ok(())
    }
}
