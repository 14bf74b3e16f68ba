//! Every way a game can end, classified in one place.

use serde::{Deserialize, Serialize};

/// Why a game ended. Each kind has one PGN `Termination` string and one JSON string.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Termination {
    Checkmate,
    Stalemate,
    Threefold,
    FiftyMove,
    InsufficientMaterial,
    AdjudicationDraw,
    AdjudicationResign,
    /// The Syzygy tables know the result (`--tb`).
    AdjudicationTablebase,
    MaxMoves,
    TimeForfeit,
    IllegalMove,
    Crash,
    Stall,
    Disconnect,
    /// A line longer than the runner reads (1 MiB without a newline).
    GarbageOutput,
}

impl Termination {
    /// All kinds, in display order.
    pub const ALL: [Termination; 15] = [
        Termination::Checkmate,
        Termination::Stalemate,
        Termination::Threefold,
        Termination::FiftyMove,
        Termination::InsufficientMaterial,
        Termination::AdjudicationDraw,
        Termination::AdjudicationResign,
        Termination::AdjudicationTablebase,
        Termination::MaxMoves,
        Termination::TimeForfeit,
        Termination::IllegalMove,
        Termination::Crash,
        Termination::Stall,
        Termination::Disconnect,
        Termination::GarbageOutput,
    ];

    /// The key used in games.jsonl and summary.json (serde's name).
    pub fn json_str(self) -> &'static str {
        self.into()
    }

    /// The PGN `Termination` tag value (standard values where the PGN spec has one).
    pub fn pgn_str(self) -> &'static str {
        match self {
            Termination::Checkmate
            | Termination::Stalemate
            | Termination::Threefold
            | Termination::FiftyMove
            | Termination::InsufficientMaterial => "normal",
            Termination::AdjudicationDraw
            | Termination::AdjudicationResign
            | Termination::AdjudicationTablebase
            | Termination::MaxMoves => "adjudication",
            Termination::TimeForfeit => "time forfeit",
            Termination::IllegalMove => "illegal move",
            Termination::Crash
            | Termination::Stall
            | Termination::Disconnect
            | Termination::GarbageOutput => "rules infraction",
        }
    }

    /// A human sentence for the PGN result comment, e.g. "White mates".
    pub fn describe(self) -> &'static str {
        match self {
            Termination::Checkmate => "checkmate",
            Termination::Stalemate => "stalemate",
            Termination::Threefold => "draw by threefold repetition",
            Termination::FiftyMove => "draw by fifty-move rule",
            Termination::InsufficientMaterial => "draw by insufficient material",
            Termination::AdjudicationDraw => "draw by adjudication",
            Termination::AdjudicationResign => "loss by resign adjudication",
            Termination::AdjudicationTablebase => "adjudication by tablebase (SyzygyTB)",
            Termination::MaxMoves => "draw by move limit",
            Termination::TimeForfeit => "loss on time",
            Termination::IllegalMove => "loss by illegal move",
            Termination::Crash => "loss by engine crash",
            Termination::Stall => "loss by engine stall",
            Termination::Disconnect => "loss by engine disconnect",
            Termination::GarbageOutput => "loss by garbage output",
        }
    }

    /// True when the rules of chess decide the ending (the final position shows it).
    pub fn is_rules(self) -> bool {
        matches!(
            self,
            Termination::Checkmate
                | Termination::Stalemate
                | Termination::Threefold
                | Termination::FiftyMove
                | Termination::InsufficientMaterial
        )
    }

    /// True when the ending is an engine's fault (the engine is restarted afterwards).
    pub fn is_fault(self) -> bool {
        matches!(
            self,
            Termination::TimeForfeit
                | Termination::IllegalMove
                | Termination::Crash
                | Termination::Stall
                | Termination::Disconnect
                | Termination::GarbageOutput
        )
    }

    /// Parses the JSON string form.
    pub fn from_json_str(s: &str) -> Option<Termination> {
        s.parse().ok()
    }
}

impl std::fmt::Display for Termination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.json_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_round_trip_through_serde_and_lookup() {
        for t in Termination::ALL {
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(json, format!("\"{}\"", t.json_str()));
            assert_eq!(serde_json::from_str::<Termination>(&json).unwrap(), t);
            assert_eq!(Termination::from_json_str(t.json_str()), Some(t));
        }
        assert_eq!(Termination::from_json_str("nope"), None);
    }

    #[test]
    fn faults_are_the_engine_failures() {
        let faults: Vec<_> = Termination::ALL.into_iter().filter(|t| t.is_fault()).collect();
        assert_eq!(faults.len(), 6);
        assert!(!Termination::Checkmate.is_fault());
        assert_eq!(Termination::TimeForfeit.pgn_str(), "time forfeit");
    }
}
