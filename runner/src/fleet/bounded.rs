//! Text a person sends, bounded: user and key names (short, a fixed alphabet, so a name is safe
//! in a log line, a page and a URL as it is) and free text such as a reason (capped in length,
//! no control characters). Each is a type whose only way in is the check, for serde bodies and
//! command lines alike.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

/// Longest user or key name.
pub const NAME_MAX: usize = 64;
/// Longest free text (a reason, a note).
pub const TEXT_MAX: usize = 500;

/// A user's or a worker key's name: 1 to [`NAME_MAX`] letters, digits, `.`, `_`, `@`, `-`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct Name(String);

impl Name {
    pub fn new(s: &str) -> Result<Name, String> {
        if s.is_empty() || s.len() > NAME_MAX {
            return Err(format!("a name has 1 to {NAME_MAX} characters, not {}", s.len()));
        }
        if let Some(c) = s.chars().find(|c| !(c.is_ascii_alphanumeric() || "._@-".contains(*c))) {
            return Err(format!(
                "a name has letters, digits and . _ @ - only, not {:?}",
                c.escape_default().to_string()
            ));
        }
        Ok(Name(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
        let s = String::deserialize(d)?;
        Name::new(&s).map_err(serde::de::Error::custom)
    }
}

/// A name in the API's document: its length and alphabet, from [`NAME_MAX`] and [`Name::new`].
impl utoipa::PartialSchema for Name {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::Type::String)
            .description(Some("A user's or a worker key's name: letters, digits, . _ @ -"))
            .min_length(Some(1))
            .max_length(Some(NAME_MAX))
            .pattern(Some("^[A-Za-z0-9._@-]+$"))
            .into()
    }
}

impl utoipa::ToSchema for Name {}

impl std::str::FromStr for Name {
    type Err = String;
    fn from_str(s: &str) -> Result<Name, String> {
        Name::new(s)
    }
}

/// Free text: at most [`TEXT_MAX`] characters, no control characters (a newline or an escape
/// sequence would forge a log line or a table row).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Text(String);

impl Text {
    pub fn new(s: &str) -> Result<Text, String> {
        if s.chars().count() > TEXT_MAX {
            return Err(format!("a text has at most {TEXT_MAX} characters"));
        }
        if s.chars().any(char::is_control) {
            return Err("a text has no control characters (newlines, tabs, escapes)".into());
        }
        Ok(Text(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        let s = String::deserialize(d)?;
        Text::new(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_short_and_plain() {
        assert!(Name::new("alice").is_ok());
        assert!(Name::new("a.b_c@d-e9").is_ok());
        assert!(Name::new("").is_err());
        assert!(Name::new(&"a".repeat(NAME_MAX)).is_ok());
        assert!(Name::new(&"a".repeat(NAME_MAX + 1)).is_err());
        for bad in ["<script>", "a b", "a\nb", "é", "a/b", "a;b"] {
            assert!(Name::new(bad).is_err(), "{bad:?}");
        }
        let n: Result<Name, _> = serde_json::from_str("\"<b>x</b>\"");
        assert!(n.is_err());
        let n: Name = serde_json::from_str("\"bob\"").unwrap();
        assert_eq!(n.as_str(), "bob");
    }

    #[test]
    fn texts_are_bounded_and_without_control_characters() {
        assert!(Text::new("flagged: residual 4.1 sigma <b>").is_ok());
        assert!(Text::new(&"é".repeat(TEXT_MAX)).is_ok());
        assert!(Text::new(&"é".repeat(TEXT_MAX + 1)).is_err());
        for bad in ["a\nb", "a\tb", "\u{1b}[31m", "a\u{7f}"] {
            assert!(Text::new(bad).is_err(), "{bad:?}");
        }
        let t: Result<Text, _> = serde_json::from_str("\"a\\u0000b\"");
        assert!(t.is_err());
    }
}
