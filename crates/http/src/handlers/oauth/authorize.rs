//! `GET` and `POST /oauth/authorize`: the authorization request, the sign-in and consent page,
//! and the redirect back to the client. Errors before the client and its redirect URI are
//! known are pages (there is nowhere safe to redirect to); later ones are redirects.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use deckhand_domain::identity::User;
use deckhand_domain::oauth::{
    AuthorizationParams, AuthorizationRequest, AuthorizeError, AuthorizeErrorCode, SignInError,
};

use super::form::{Params, read_form_body};
use super::page::{ConsentPage, Cookies, error_page, html, redirect_back, redirect_error, secured};
use crate::client_ip::client_key;
use crate::state::HttpState;

/// The authorization request's parameters, from the query (GET) or the form (POST).
fn authorization_params(params: &Params) -> AuthorizationParams {
    AuthorizationParams {
        response_type: params.get("response_type"),
        client_id: params.get("client_id"),
        redirect_uri: params.get("redirect_uri"),
        scope: params.get("scope"),
        state: params.get("state"),
        code_challenge: params.get("code_challenge"),
        code_challenge_method: params.get("code_challenge_method"),
    }
}

/// The checked request, or the response that refuses it.
async fn checked_request(
    params: Result<Params, super::form::ParamsError>,
    state: &HttpState,
) -> Result<(Params, AuthorizationRequest), HttpResponse> {
    let params = params.map_err(|error| {
        error_page(
            StatusCode::BAD_REQUEST,
            "This sign-in link is not valid",
            error.to_string(),
        )
    })?;
    match state
        .services
        .oauth
        .authorization_request(&authorization_params(&params))
        .await
    {
        Ok(request) => Ok((params, request)),
        Err(AuthorizeError::UnknownClient) => Err(error_page(
            StatusCode::BAD_REQUEST,
            "Unknown app",
            "The app that sent you here is not registered with Deckhand, or has been disabled.",
        )),
        Err(AuthorizeError::InvalidRedirectUri) => Err(error_page(
            StatusCode::BAD_REQUEST,
            "This sign-in link is not valid",
            "The app asked to send you back to an address it has not registered with Deckhand.",
        )),
        Err(AuthorizeError::Redirect {
            redirect_uri,
            error,
            description,
            state: client_state,
        }) => Err(redirect_error(
            &redirect_uri,
            error,
            &description,
            client_state.as_deref(),
            &state.config.public_url,
        )),
        Err(AuthorizeError::Unexpected(error)) => {
            let status = crate::error::ApiError::unexpected(error).status();
            Err(error_page(
                status,
                "Something went wrong",
                "Deckhand could not handle this request just now. Please try again in a moment.",
            ))
        }
    }
}

fn cookies(state: &HttpState) -> Cookies {
    Cookies::for_public_url(&state.config.public_url)
}

/// The value of the request's cookie `name`.
fn cookie_value(request: &HttpRequest, name: &str) -> Option<String> {
    request.cookie(name).map(|cookie| cookie.value().to_owned())
}

/// The signed-in user of the request's session cookie, if any.
async fn session_user(request: &HttpRequest, state: &HttpState) -> Option<User> {
    let cookie = cookie_value(request, cookies(state).session())?;
    match state.services.oauth.session_user(&cookie).await {
        Ok(user) => user,
        Err(error) => {
            tracing::warn!(
                error = format!("{error:#}"),
                "reading a sign-in session failed"
            );
            None
        }
    }
}

/// The consent page for `request`, with a CSRF token bound to the browser's CSRF cookie (a new
/// one when it has none), to its session cookie and to `request`.
async fn consent_page(
    http: &HttpRequest,
    state: &HttpState,
    request: &AuthorizationRequest,
    status: StatusCode,
    error: Option<(String, Option<String>)>,
) -> HttpResponse {
    let oauth = &state.services.oauth;
    let names = cookies(state);
    let existing = cookie_value(http, names.csrf())
        .filter(|value| deckhand_auth::TokenKind::CsrfCookie.is_well_formed(value));
    let (csrf_cookie, is_new) = match existing {
        Some(value) => (value, false),
        None => match oauth.new_csrf_cookie() {
            Ok(value) => (value, true),
            Err(error) => {
                tracing::error!(error = format!("{error:#}"), "minting a CSRF cookie failed");
                return error_page(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Something went wrong",
                    "Deckhand could not show this page just now. Please try again.",
                );
            }
        },
    };
    let signed_in = session_user(http, state).await;
    let session = cookie_value(http, names.session());
    let csrf_token = oauth.csrf_token(&csrf_cookie, session.as_deref(), request);
    let mut page = ConsentPage::new(request, csrf_token)
        .signed_in_as(signed_in.map(|user| user.username.as_str().to_owned()));
    if let Some((message, username)) = error {
        page = page.with_error(&message, username);
    }
    let mut builder = secured(status);
    if is_new {
        // As long as a sign-in session: a form left open that long still posts.
        let max_age = oauth.policy().session_ttl.whole_seconds();
        builder.cookie(names.cookie(names.csrf(), csrf_cookie, max_age));
    }
    html(builder, &page)
}

/// Shows the sign-in and consent page for a valid authorization request.
#[tracing::instrument(level = "debug", skip_all)]
pub async fn authorize_page(request: HttpRequest, state: web::Data<HttpState>) -> HttpResponse {
    let params = Params::parse(request.query_string().as_bytes());
    match checked_request(params, &state).await {
        Ok((_, authorization)) => {
            consent_page(&request, &state, &authorization, StatusCode::OK, None).await
        }
        Err(refused) => refused,
    }
}

/// The form of the consent page: approve (signing in first when there is no session) or deny.
#[tracing::instrument(level = "debug", skip_all)]
pub async fn authorize_decision(
    request: HttpRequest,
    payload: web::Payload,
    state: web::Data<HttpState>,
) -> HttpResponse {
    let body = match read_form_body(&request, payload).await {
        Ok(body) => body,
        Err(error) => {
            return error_page(
                error.status(),
                "This form could not be read",
                format!("{error}. Please go back and try again."),
            );
        }
    };
    let (params, authorization) = match checked_request(Params::form(&request, &body), &state).await
    {
        Ok(checked) => checked,
        Err(refused) => return refused,
    };
    let oauth = &state.services.oauth;
    let issuer = &state.config.public_url;
    // The consent page again, saying what went wrong (and keeping the username typed).
    let page_again = |status, error: (String, Option<String>)| {
        consent_page(&request, &state, &authorization, status, Some(error))
    };
    let names = cookies(&state);
    let session = cookie_value(&request, names.session());
    let csrf_ok = match (
        cookie_value(&request, names.csrf()),
        params.get("csrf_token"),
    ) {
        (Some(cookie), Some(token)) => {
            oauth.csrf_matches(&cookie, session.as_deref(), &authorization, &token)
        }
        _ => false,
    };
    if !csrf_ok {
        let message = "This form expired or did not come from this page. Please try again.";
        return page_again(StatusCode::BAD_REQUEST, (message.to_owned(), None)).await;
    }
    let client_state = authorization.state.as_deref();
    match params.get("decision").as_deref() {
        Some("deny") => {
            return redirect_error(
                &authorization.redirect_uri,
                AuthorizeErrorCode::AccessDenied,
                "the user denied the request",
                client_state,
                issuer,
            );
        }
        Some("approve") => {}
        _ => {
            let message = "Choose Approve or Deny.";
            return page_again(StatusCode::BAD_REQUEST, (message.to_owned(), None)).await;
        }
    }
    let (user, new_session) = match session_user(&request, &state).await {
        Some(user) => (user, None),
        None => {
            let username = params.get("username").unwrap_or_default();
            let password = params.get("password").unwrap_or_default();
            let client = client_key(&request, &state.config.trusted_proxies).to_string();
            match oauth.sign_in(&username, &password, Some(&client)).await {
                Ok((user, session)) => (user, Some(session)),
                Err(SignInError::InvalidCredentials { retry_at }) => {
                    let Some(retry_at) = retry_at else {
                        let message = "The username or password is wrong.".to_owned();
                        return page_again(StatusCode::UNAUTHORIZED, (message, Some(username)))
                            .await;
                    };
                    let wait = retry_after(retry_at, state.services.system.clock.now());
                    let message = format!(
                        "The username or password is wrong. Too many failed sign-ins: try again in {}.",
                        in_words(wait)
                    );
                    let page = page_again(StatusCode::UNAUTHORIZED, (message, Some(username)));
                    return with_retry_after(page.await, wait);
                }
                Err(SignInError::Throttled { retry_at }) => {
                    let wait = retry_after(retry_at, state.services.system.clock.now());
                    let message =
                        format!("Too many failed sign-ins. Try again in {}.", in_words(wait));
                    let page = page_again(StatusCode::TOO_MANY_REQUESTS, (message, Some(username)));
                    return with_retry_after(page.await, wait);
                }
                Err(SignInError::Unexpected(error)) => {
                    return server_error(&authorization, error, issuer);
                }
            }
        }
    };
    let code = match oauth.approve(&authorization, &user).await {
        Ok(code) => code,
        Err(error) => return server_error(&authorization, error, issuer),
    };
    let mut response = redirect_back(
        &authorization.redirect_uri,
        vec![("code", &code)],
        client_state,
        issuer,
    );
    if let Some(session) = new_session {
        let max_age = oauth.policy().session_ttl.whole_seconds();
        response.cookie(names.cookie(names.session(), session, max_age));
    }
    response.finish()
}

/// Back to the client with `server_error` or `temporarily_unavailable` (RFC 6749 §4.1.2.1).
fn server_error(
    authorization: &AuthorizationRequest,
    error: anyhow::Error,
    issuer: &str,
) -> HttpResponse {
    let (code, description) =
        if crate::error::ApiError::unexpected(error).status() == StatusCode::SERVICE_UNAVAILABLE {
            (AuthorizeErrorCode::TemporarilyUnavailable, "retry later")
        } else {
            (AuthorizeErrorCode::ServerError, "internal error")
        };
    redirect_error(
        &authorization.redirect_uri,
        code,
        description,
        authorization.state.as_deref(),
        issuer,
    )
}

/// Whole seconds until `retry_at`, at least one.
fn retry_after(retry_at: time::OffsetDateTime, now: time::OffsetDateTime) -> i64 {
    let wait = retry_at - now;
    let seconds = wait.whole_seconds() + i64::from(wait.subsec_nanoseconds() > 0);
    seconds.max(1)
}

/// "40 seconds", "3 minutes": when to try again, as the page says it.
fn in_words(seconds: i64) -> String {
    match seconds {
        1 => "1 second".to_owned(),
        2..120 => format!("{seconds} seconds"),
        _ => format!("{} minutes", (seconds + 59) / 60),
    }
}

fn with_retry_after(mut response: HttpResponse, seconds: i64) -> HttpResponse {
    response.headers_mut().insert(
        actix_web::http::header::RETRY_AFTER,
        actix_web::http::header::HeaderValue::from(seconds),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wait_is_rounded_up_and_said_in_words() {
        let now = time::macros::datetime!(2026-03-01 12:00 UTC);
        assert_eq!(
            retry_after(now + time::Duration::milliseconds(1500), now),
            2
        );
        assert_eq!(retry_after(now, now), 1);
        assert_eq!(in_words(1), "1 second");
        assert_eq!(in_words(30), "30 seconds");
        assert_eq!(in_words(480), "8 minutes");
        assert_eq!(in_words(61 * 2), "3 minutes");
    }
}
