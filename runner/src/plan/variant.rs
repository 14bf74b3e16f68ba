//! The chess variant a run plays: standard chess, or Chess960 (Fischer random chess), where the
//! back rank is shuffled and castling is written king-takes-rook (`e1h1`) on the UCI pipe.

use serde::{Deserialize, Serialize};
use shakmaty::CastlingMode;

/// `--variant`: the names cutechess-cli and fastchess use.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// Standard chess.
    #[default]
    Standard,
    /// Chess960: Shredder-FEN or X-FEN castling rights in books, `UCI_Chess960` sent to every
    /// engine (an engine that does not declare it is refused), castling as king takes rook.
    #[value(alias = "chess960")]
    #[serde(alias = "chess960")]
    Fischerandom,
}

impl Variant {
    pub fn is_standard(&self) -> bool {
        *self == Variant::Standard
    }

    pub fn is_chess960(self) -> bool {
        self == Variant::Fischerandom
    }

    /// How positions are read and castling moves written for this variant.
    pub fn castling_mode(self) -> CastlingMode {
        match self {
            Variant::Standard => CastlingMode::Standard,
            Variant::Fischerandom => CastlingMode::Chess960,
        }
    }

    /// The value of the PGN `Variant` tag (none for standard chess).
    pub fn pgn_tag(self) -> Option<&'static str> {
        match self {
            Variant::Standard => None,
            Variant::Fischerandom => Some("Chess960"),
        }
    }

    /// Reads a PGN `Variant` tag value (case and spaces ignored).
    pub fn from_pgn_tag(value: &str) -> Option<Variant> {
        let v: String =
            value.chars().filter(|c| !c.is_whitespace() && *c != '-').collect::<String>();
        match v.to_ascii_lowercase().as_str() {
            "" | "standard" | "chess" | "normal" => Some(Variant::Standard),
            "chess960" | "960" | "fischerandom" | "fischerrandom" | "frc" => {
                Some(Variant::Fischerandom)
            }
            _ => None,
        }
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Variant::Standard => "standard",
            Variant::Fischerandom => "fischerandom",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_tags() {
        assert_eq!(Variant::from_pgn_tag("Chess960"), Some(Variant::Fischerandom));
        assert_eq!(Variant::from_pgn_tag("Fischer Random"), Some(Variant::Fischerandom));
        assert_eq!(Variant::from_pgn_tag("Standard"), Some(Variant::Standard));
        assert_eq!(Variant::from_pgn_tag("atomic"), None);
        assert_eq!(Variant::Fischerandom.pgn_tag(), Some("Chess960"));
        assert_eq!(serde_json::to_string(&Variant::Fischerandom).unwrap(), "\"fischerandom\"");
        let v: Variant = serde_json::from_str("\"chess960\"").unwrap();
        assert_eq!(v, Variant::Fischerandom);
        use clap::ValueEnum;
        assert_eq!(Variant::from_str("chess960", true), Ok(Variant::Fischerandom));
    }
}
