use reqwest::{RequestBuilder, Response, StatusCode};
use serde_json::Value;

/// Sends a request and returns its status, headers and JSON body.
pub async fn send(request: RequestBuilder) -> (StatusCode, reqwest::header::HeaderMap, Value) {
    let response: Response = request
        .send()
        .await
        .expect("the request reaches the server");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response.json().await.expect("a JSON body");
    (status, headers, body)
}

/// Asserts the error envelope with `code` and returns its details.
pub fn assert_envelope(body: &Value, code: &str) -> Value {
    assert_eq!(body["error"], code, "{body}");
    assert!(body["message"].is_string(), "{body}");
    assert!(body["details"].is_object(), "{body}");
    body["details"].clone()
}
