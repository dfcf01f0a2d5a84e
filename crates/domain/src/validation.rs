//! Field-level validation errors, collected so a client learns every problem at once.

use serde::Serialize;
use uuid::Uuid;

use crate::patch::Patch;

/// One invalid field: its name as the client wrote it, a stable code, and a sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldViolation {
    pub field: String,
    pub code: &'static str,
    pub message: String,
}

impl FieldViolation {
    pub fn new(field: impl Into<String>, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            code,
            message: message.into(),
        }
    }
}

/// Every violation of one request.
#[derive(Debug, Clone, Default, PartialEq, Eq, thiserror::Error)]
#[error("{} invalid field(s)", .0.len())]
pub struct Violations(pub Vec<FieldViolation>);

impl From<FieldViolation> for Violations {
    fn from(violation: FieldViolation) -> Self {
        Self(vec![violation])
    }
}

impl Violations {
    pub fn push(&mut self, violation: FieldViolation) {
        self.0.push(violation);
    }

    /// Keeps the value when it parsed, records the violation when not.
    pub fn check<T>(&mut self, result: Result<T, FieldViolation>) -> Option<T> {
        result.map_err(|violation| self.push(violation)).ok()
    }

    /// A field the client sent, checked with `check`: the value when it passed, `None` when it
    /// was not sent or its violation was recorded.
    pub fn check_sent<T: ?Sized, U>(
        &mut self,
        value: Option<&T>,
        check: impl FnOnce(&T) -> Result<U, FieldViolation>,
    ) -> Option<U> {
        value.and_then(|value| self.check(check(value)))
    }

    /// What every create asks of a resource (`noun`): a name, and no `is_archived` (nothing is
    /// archived when it is made).
    pub(crate) fn check_create(&mut self, noun: &str, has_name: bool, has_is_archived: bool) {
        if !has_name {
            self.push(FieldViolation::new(
                "name",
                "required",
                format!("a {noun} needs a name"),
            ));
        }
        if has_is_archived {
            self.push(FieldViolation::new(
                "is_archived",
                "unknown_field",
                format!("a new {noun} cannot be archived"),
            ));
        }
    }

    /// A PATCH that names no field is refused rather than answered as a no-op.
    pub(crate) fn check_patch_not_empty(&mut self, is_empty: bool) {
        if is_empty {
            self.push(FieldViolation::new(
                "body",
                "empty",
                "a PATCH needs at least one field",
            ));
        }
    }

    /// `(field, code)` of every violation, in order: what tests compare.
    #[cfg(test)]
    pub(crate) fn codes(self) -> Vec<(String, &'static str)> {
        self.0
            .into_iter()
            .map(|violation| (violation.field, violation.code))
            .collect()
    }

    pub fn into_result<T>(self, value: T) -> Result<T, Violations> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

/// A string of `min..=max` Unicode scalar values (what clients count as characters).
pub fn bounded_text(
    field: &str,
    value: &str,
    min: usize,
    max: usize,
) -> Result<String, FieldViolation> {
    let length = value.chars().count();
    if length < min || length > max {
        let message = if min == 0 {
            format!("must be at most {max} characters")
        } else {
            format!("must be {min} to {max} characters")
        };
        return Err(FieldViolation::new(field, "length", message));
    }
    Ok(value.to_owned())
}

/// A name: 1 to `max` characters, and not only white space.
pub(crate) fn name(field: &str, value: &str, max: usize) -> Result<String, FieldViolation> {
    let checked = bounded_text(field, value, 1, max)?;
    if checked.trim().is_empty() {
        return Err(FieldViolation::new(
            field,
            "blank",
            "must not be only white space",
        ));
    }
    Ok(checked)
}

/// An id in its text form; `invalid` with `message` (which says what the id names) otherwise.
pub fn uuid(field: &str, value: &str, message: &str) -> Result<Uuid, FieldViolation> {
    Uuid::parse_str(value).map_err(|_| FieldViolation::new(field, "invalid", message))
}

/// A nullable text field within `max` characters; `Keep` when it is out of bounds, the
/// violation being recorded.
pub(crate) fn optional_text(
    violations: &mut Violations,
    field: &str,
    value: &Patch<String>,
    max: usize,
) -> Patch<String> {
    let checked = value
        .as_ref()
        .try_map(|text| bounded_text(field, text, 0, max));
    violations.check(checked).unwrap_or_default()
}

/// Whether `slug` has a game slug's shape: 1 to 40 characters of a-z, 0-9 and '-' (the games
/// table asks for at least 2). Such a slug needs no quoting anywhere.
pub fn is_game_slug(slug: &str) -> bool {
    (1..=40).contains(&slug.len())
        && slug
            .bytes()
            .all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_count_characters_not_bytes() {
        assert!(bounded_text("name", "ééé", 1, 3).is_ok());
        assert_eq!(bounded_text("name", "", 1, 3).unwrap_err().code, "length");
        assert!(
            bounded_text("name", "abcd", 0, 3)
                .unwrap_err()
                .message
                .contains("at most 3")
        );
    }

    #[test]
    fn violations_collect_every_problem() {
        let mut violations = Violations::default();
        assert_eq!(violations.check(bounded_text("a", "", 1, 2)), None);
        assert_eq!(
            violations.check(bounded_text("b", "ok", 1, 2)),
            Some("ok".into())
        );
        assert_eq!(violations.check(bounded_text("c", "toolong", 1, 2)), None);
        let fields: Vec<_> = violations.clone().0.into_iter().map(|v| v.field).collect();
        assert_eq!(fields, ["a", "c"]);
        assert!(violations.into_result(()).is_err());
    }
}
