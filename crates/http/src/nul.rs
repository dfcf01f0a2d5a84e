//! NUL bytes (U+0000) are refused where text enters: PostgreSQL cannot store them in `text`,
//! and no name, note, guide or query of this API has a use for one. Each input kind checks here
//! once: the URL in the API gate, bodies in [`crate::body`], the OAuth parameters in their
//! parser, so no handler (and no handler added later) needs to think of it.

use serde_json::Value;

use crate::error::{ApiError, FieldError};

const NUL: char = '\0';

/// The name of the first pair whose name or value holds a NUL, for query strings and form
/// bodies decoded by `form_urlencoded`.
pub(crate) fn field_with_nul<K: AsRef<str>, V: AsRef<str>>(
    pairs: impl IntoIterator<Item = (K, V)>,
) -> Option<String> {
    pairs
        .into_iter()
        .find(|(name, value)| name.as_ref().contains(NUL) || value.as_ref().contains(NUL))
        .map(|(name, _)| name.as_ref().replace(NUL, "\\u0000"))
}

/// The path (`cards[2].name`, in the style of the body decoder's field names) of the first
/// string, key or value, in `value` that holds a NUL.
pub(crate) fn json_path_with_nul(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => text.contains(NUL).then(String::new),
        Value::Array(items) => items.iter().enumerate().find_map(|(index, item)| {
            json_path_with_nul(item).map(|rest| join(&format!("[{index}]"), &rest))
        }),
        Value::Object(fields) => fields.iter().find_map(|(name, field)| {
            if name.contains(NUL) {
                return Some(name.replace(NUL, "\\u0000"));
            }
            json_path_with_nul(field).map(|rest| join(name, &rest))
        }),
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

fn join(head: &str, rest: &str) -> String {
    match rest.chars().next() {
        None => head.to_owned(),
        Some('[') => format!("{head}{rest}"),
        Some(_) => format!("{head}.{rest}"),
    }
}

/// Whether JSON text may hold a NUL: only through the `\u0000` escape, as raw control
/// characters are not valid JSON. A cheap test before looking for where.
pub(crate) fn json_may_hold_nul(bytes: &[u8]) -> bool {
    bytes.windows(6).any(|window| window == b"\\u0000")
}

/// 400 naming the field that holds a NUL.
pub(crate) fn refused(field: impl Into<String>) -> ApiError {
    ApiError::validation(vec![FieldError {
        field: field.into(),
        code: "nul_byte".into(),
        message: "must not contain a NUL character (U+0000)".into(),
    }])
}

/// Whether the percent-decoded path holds a NUL: no route has one, so it is a 404.
pub(crate) fn path_has_nul(path: &str) -> bool {
    percent_encoding::percent_decode_str(path).any(|byte| byte == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pairs_name_the_first_field_holding_a_nul() {
        let query = b"q=ok&sort=x%00y&page=1";
        assert_eq!(
            field_with_nul(form_urlencoded::parse(query)),
            Some("sort".to_owned())
        );
        assert_eq!(field_with_nul(form_urlencoded::parse(b"q=ok&page=1")), None);
        assert_eq!(
            field_with_nul(form_urlencoded::parse(b"a%00b=1")),
            Some("a\\u0000b".to_owned())
        );
    }

    #[test]
    fn json_paths_follow_arrays_and_objects() {
        let body = json!({"name": "ok", "cards": [{"name": "a"}, {"name": "b\u{0}"}]});
        assert_eq!(json_path_with_nul(&body), Some("cards[1].name".to_owned()));
        assert_eq!(
            json_path_with_nul(&json!({"tags": ["x", "\u{0}"]})),
            Some("tags[1]".to_owned())
        );
        assert_eq!(json_path_with_nul(&json!({"a": [1, null, true]})), None);
        assert_eq!(
            json_path_with_nul(&json!({"k\u{0}": 1})),
            Some("k\\u0000".to_owned())
        );
    }

    #[test]
    fn only_the_escape_can_carry_a_nul_in_json() {
        assert!(json_may_hold_nul(br#"{"a":"x\u0000"}"#));
        assert!(!json_may_hold_nul(br#"{"a":"x\u0001"}"#));
    }

    #[test]
    fn encoded_nuls_in_paths_are_found() {
        assert!(path_has_nul("/api/public/v1/games/mt%00g/decks"));
        assert!(!path_has_nul("/api/public/v1/games/mtg/decks%20"));
    }
}
