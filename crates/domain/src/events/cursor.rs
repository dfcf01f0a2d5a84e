use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// A place in the feed: every event up to `sequence` has been handed out. Opaque on the wire
/// (`next_cursor`), so its form can change without breaking a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cursor {
    pub sequence: i64,
}

/// A cursor this service did not hand out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the cursor is not one this feed handed out")]
pub struct MalformedCursor;

const PREFIX: &str = "e1:";

impl Cursor {
    /// Before every event.
    pub const START: Self = Self { sequence: 0 };

    pub fn encode(self) -> String {
        URL_SAFE_NO_PAD.encode(format!("{PREFIX}{}", self.sequence))
    }

    pub fn parse(text: &str) -> Result<Self, MalformedCursor> {
        let bytes = URL_SAFE_NO_PAD.decode(text).map_err(|_| MalformedCursor)?;
        let text = std::str::from_utf8(&bytes).map_err(|_| MalformedCursor)?;
        let digits = text.strip_prefix(PREFIX).ok_or(MalformedCursor)?;
        if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
            return Err(MalformedCursor);
        }
        let sequence = digits.parse().map_err(|_| MalformedCursor)?;
        Ok(Self { sequence })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_reads_back_as_itself() {
        for sequence in [0, 1, 42, i64::MAX] {
            let cursor = Cursor { sequence };
            assert_eq!(Cursor::parse(&cursor.encode()), Ok(cursor));
        }
    }

    #[test]
    fn anything_else_is_malformed() {
        let negative = URL_SAFE_NO_PAD.encode("e1:-1");
        let other_prefix = URL_SAFE_NO_PAD.encode("x1:5");
        let overflow = URL_SAFE_NO_PAD.encode("e1:99999999999999999999");
        for text in ["", "5", "!!", &negative, &other_prefix, &overflow] {
            assert_eq!(Cursor::parse(text), Err(MalformedCursor), "{text:?}");
        }
    }
}
