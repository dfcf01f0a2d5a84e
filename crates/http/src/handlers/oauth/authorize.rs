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
use super::page::{
    CSRF_COOKIE, ConsentPage, SESSION_COOKIE, cookie, error_page, html, redirect_back,
    redirect_error, secured,
};
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

fn is_https(state: &HttpState) -> bool {
    state.config.public_url.starts_with("https://")
}

/// The signed-in user of the request's session cookie, if any.
async fn session_user(request: &HttpRequest, state: &HttpState) -> Option<User> {
    let cookie = request.cookie(SESSION_COOKIE)?;
    match state.services.oauth.session_user(cookie.value()).await {
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
/// one when it has none).
async fn consent_page(
    http: &HttpRequest,
    state: &HttpState,
    request: &AuthorizationRequest,
    status: StatusCode,
    error: Option<(&str, Option<String>)>,
) -> HttpResponse {
    let oauth = &state.services.oauth;
    let existing = http
        .cookie(CSRF_COOKIE)
        .map(|cookie| cookie.value().to_owned())
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
    let mut page = ConsentPage::new(request, oauth.csrf_token(&csrf_cookie))
        .signed_in_as(signed_in.map(|user| user.username.as_str().to_owned()));
    if let Some((message, username)) = error {
        page = page.with_error(message, username);
    }
    let mut builder = secured(status);
    if is_new {
        // As long as a sign-in session: a form left open that long still posts.
        let max_age = oauth.policy().session_ttl.whole_seconds();
        builder.cookie(cookie(CSRF_COOKIE, csrf_cookie, is_https(state), max_age));
    }
    html(builder, &page)
}

/// Shows the sign-in and consent page for a valid authorization request.
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
    let page_again = |status, error: (&'static str, Option<String>)| {
        consent_page(&request, &state, &authorization, status, Some(error))
    };
    let csrf_ok = match (request.cookie(CSRF_COOKIE), params.get("csrf_token")) {
        (Some(cookie), Some(token)) => oauth.csrf_matches(cookie.value(), &token),
        _ => false,
    };
    if !csrf_ok {
        let message = "This form expired or did not come from this page. Please try again.";
        return page_again(StatusCode::BAD_REQUEST, (message, None)).await;
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
            return page_again(StatusCode::BAD_REQUEST, (message, None)).await;
        }
    }
    let (user, new_session) = match session_user(&request, &state).await {
        Some(user) => (user, None),
        None => {
            let username = params.get("username").unwrap_or_default();
            let password = params.get("password").unwrap_or_default();
            match oauth.sign_in(&username, &password).await {
                Ok((user, session)) => (user, Some(session)),
                Err(SignInError::InvalidCredentials) => {
                    let message = "The username or password is wrong.";
                    return page_again(StatusCode::UNAUTHORIZED, (message, Some(username))).await;
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
        response.cookie(cookie(SESSION_COOKIE, session, is_https(&state), max_age));
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
