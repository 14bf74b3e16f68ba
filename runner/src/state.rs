//! A run's state as people read it: one small set of words, the same on the server's list and
//! run pages, in its JSON (`/api/runs`, `/api/run/ID`, the live events), in `/metrics` and in
//! `runner status`. Where a run's files or the fleet's database word it otherwise
//! (summary.json's `stopped_by`, the `runs.state` column), those words are how it is stored and
//! are mapped here, once.

use serde::Serialize;
use stats::Verdict;

/// Where a run is: waiting, playing, or how it ended.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    utoipa::ToSchema,
    strum::IntoStaticStr,
    strum::EnumString,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum State {
    /// Waiting for an approver (the fleet only).
    Pending,
    /// Games are being played (a runner holds the folder, or the fleet hands out pairs).
    #[default]
    Running,
    /// Ended with every SPRT at H1: the change passed.
    Accepted,
    /// Ended with every SPRT at H0: the change failed.
    Rejected,
    /// Ended without one decision: every game played (no SPRT, no bound reached, or pairings
    /// that decided differently).
    Ended,
    /// Stopped before its end (Ctrl-C, killed, a partial tool run): resume it to finish.
    Stopped,
    /// Stopped by `runner cancel`.
    Cancelled,
    /// Refused by the workers (the fleet only).
    Failed,
}

impl State {
    /// Every state, in the order the pages list them.
    pub const ALL: [State; 8] = [
        State::Pending,
        State::Running,
        State::Accepted,
        State::Rejected,
        State::Ended,
        State::Stopped,
        State::Cancelled,
        State::Failed,
    ];

    /// The word, as the JSON, the URLs' filters and the CSS classes (`st-WORD`) have it.
    pub fn name(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<State> {
        s.parse().ok()
    }

    /// The word for people: the SPRT's hypothesis said with its outcome.
    pub fn label(self) -> &'static str {
        match self {
            State::Accepted => "accepted (H1)",
            State::Rejected => "rejected (H0)",
            s => s.name(),
        }
    }

    /// Whether the run has ended (nothing more will be played without a resume).
    pub fn has_ended(self) -> bool {
        !matches!(self, State::Pending | State::Running)
    }

    /// An ended run's state from how it stopped (summary.json's `stopped_by`, or the fleet's
    /// `runs.state` of an ended run) and its pairings' SPRT verdicts.
    pub fn ended(how: &str, verdicts: &[Verdict]) -> State {
        match how {
            "complete" | "sprt" | "decided" => State::decided(verdicts),
            "cancelled" => State::Cancelled,
            "failed" => State::Failed,
            // interrupted, killed, a partial tool run, a pulled copy of an open fleet run.
            _ => State::Stopped,
        }
    }

    /// A fleet run's state from its `runs.state` column and its pairings' SPRT verdicts.
    pub fn of_fleet(column: &str, verdicts: &[Verdict]) -> State {
        match column {
            "pending" => State::Pending,
            "active" => State::Running,
            how => State::ended(how, verdicts),
        }
    }

    /// A run that played to its end: accepted or rejected when every pairing's SPRT says so,
    /// otherwise ended.
    fn decided(verdicts: &[Verdict]) -> State {
        let all = |v: Verdict| !verdicts.is_empty() && verdicts.iter().all(|x| *x == v);
        if all(Verdict::H1) {
            State::Accepted
        } else if all(Verdict::H0) {
            State::Rejected
        } else {
            State::Ended
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_a_run_ends_has_one_word() {
        use Verdict::*;
        assert_eq!(State::of_fleet("pending", &[]), State::Pending);
        assert_eq!(State::of_fleet("active", &[H1]), State::Running);
        assert_eq!(State::of_fleet("decided", &[H1, H1]), State::Accepted);
        assert_eq!(State::of_fleet("decided", &[H0]), State::Rejected);
        assert_eq!(State::of_fleet("decided", &[H0, H1]), State::Ended);
        assert_eq!(State::of_fleet("complete", &[]), State::Ended);
        assert_eq!(State::of_fleet("complete", &[Continue]), State::Ended);
        assert_eq!(State::of_fleet("cancelled", &[H1]), State::Cancelled);
        assert_eq!(State::of_fleet("failed", &[]), State::Failed);
        assert_eq!(State::ended("sprt", &[H1]), State::Accepted);
        assert_eq!(State::ended("interrupted", &[H1]), State::Stopped);
        for s in State::ALL {
            assert_eq!(State::parse(s.name()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.name());
            assert!(s.label().starts_with(s.name()));
        }
        assert_eq!(State::Accepted.label(), "accepted (H1)");
    }
}
