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

/// Each problem of a format check's report: its rule, and the name of the card it names.
pub fn problem_rules(report: &Value) -> Vec<(String, Option<String>)> {
    report["problems"]
        .as_array()
        .expect("problems")
        .iter()
        .map(|problem| {
            (
                problem["rule"].as_str().unwrap().to_owned(),
                problem["card"]["name"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

/// The (type, subject id) of each event of a feed page.
pub fn event_subjects(page: &Value) -> Vec<(&str, &str)> {
    page["data"]
        .as_array()
        .expect("a page of events")
        .iter()
        .map(|event| {
            (
                event["type"].as_str().unwrap(),
                event["subject"]["id"].as_str().unwrap(),
            )
        })
        .collect()
}
