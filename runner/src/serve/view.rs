//! What a list of runs shows of one run, whichever its source (a local folder or the fleet's
//! database): the same rows, the same JSON. Fields a source does not have are `None` (a local
//! run has no owner, priority or workers), so the fleet's later columns slot in as new
//! optional fields without touching the pages of the other source.

use serde::Serialize;
use stats::{Penta, Summary, Verdict, Wdl};

use crate::report::summary::PairingTally;

pub use crate::state::State;

/// The games a plan schedules, every pairing together (with an SPRT, the most it may play).
pub fn planned_games(plan: &crate::plan::run_plan::RunPlan) -> u64 {
    plan.pairs as u64 * 2 * plan.pairings.len().max(1) as u64
}

/// The SPRT verdicts of a run's pairings (none without an SPRT), for its [`State`].
pub fn verdicts(pairings: &[PairingView]) -> Vec<Verdict> {
    pairings.iter().filter_map(|p| p.summary.as_ref()?.sprt.as_ref().map(|r| r.verdict)).collect()
}

/// One run of the list.
#[derive(Clone, Debug, Default, Serialize, utoipa::ToSchema)]
pub struct RunView {
    /// The id in the server's URLs: a folder name, or `fleet-N` for fleet run N.
    pub id: String,
    /// `local` (a run folder) or `fleet` (the database).
    #[schema(value_type = String)]
    pub source: &'static str,
    /// match, gauntlet, sweep, tune, ...
    pub kind: String,
    /// One of [`State`]'s words: pending, running, accepted, rejected, ended, stopped,
    /// cancelled, failed.
    pub state: State,
    /// Why it is in that state: how it stopped, or why it counts as running.
    pub state_note: String,
    pub engines: Vec<String>,
    /// The UCI options that tell the engines apart (`nompc: MPC=false`), from
    /// [`differing_options`].
    pub options: Vec<String>,
    /// Time control or node / depth limit, as the plan words it.
    pub limits: String,
    pub games: u64,
    /// The games its plan schedules ([`planned_games`]; with an SPRT, the most it may play),
    /// when it has a plan.
    pub games_planned: Option<u64>,
    pub pairings: Vec<PairingView>,
    /// The fleet's: who submitted it, its priority, its workers, when.
    pub owner: Option<String>,
    pub priority: Option<i64>,
    pub workers: Option<i64>,
    pub submitted: Option<String>,
    /// The fleet's share columns: the run's throughput, its part of the pairs in flight now
    /// and its target part (active runs), pairs per hour and the time left in words with its
    /// range (`fleet::share`'s), when it finished.
    pub throughput: Option<i64>,
    pub share_now: Option<f64>,
    pub share_target: Option<f64>,
    pub pairs_per_hour: Option<f64>,
    pub time_left: Option<String>,
    pub finished: Option<String>,
}

/// Per engine of a plan's `engines`, the options it sets to a value not every engine has
/// (`nompc: MPC=false`; an option one engine sets and another leaves at its default counts):
/// what the list shows of a run's engines besides their names, as the anchors show a test's
/// changed parameters.
pub fn differing_options(engines: &[crate::plan::engine_spec::EngineSpec]) -> Vec<String> {
    let same_everywhere = |name: &str, value: &str| {
        engines.iter().all(|e| e.options.iter().any(|(n, v)| n == name && v == value))
    };
    engines
        .iter()
        .filter_map(|e| {
            let own: Vec<String> = e
                .options
                .iter()
                .filter(|(n, v)| !same_everywhere(n, v))
                .map(|(n, v)| format!("{n}={v}"))
                .collect();
            (!own.is_empty()).then(|| format!("{}: {}", e.name, own.join(", ")))
        })
        .collect()
}

/// One pairing's counts and statistics.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema)]
pub struct PairingView {
    pub label: String,
    pub games: u64,
    /// `{"wins", "draws", "losses"}`, of the first engine.
    #[schema(value_type = Object)]
    pub wdl: Wdl,
    /// `{"ll", "ld", "dd", "wd", "ww"}`: game pairs from the worst to the best.
    #[schema(value_type = Object)]
    pub penta: Penta,
    /// The statistics of `runner stats` (score, Elo and normalized Elo with their intervals,
    /// the SPRT's LLR, bounds and verdict), when there are games.
    #[schema(value_type = Option<Object>)]
    pub summary: Option<Summary>,
}

impl PairingView {
    pub fn from_tally(label: String, tally: &PairingTally, sprt: Option<stats::SprtSpec>) -> Self {
        PairingView {
            label,
            games: tally.wdl_all.games(),
            wdl: tally.wdl_all,
            penta: tally.penta,
            summary: tally.summarize(sprt),
        }
    }
}

impl RunView {
    /// The pairing a row shows: the only one, or the first (the rest are on the run's page).
    pub fn lead(&self) -> Option<&PairingView> {
        self.pairings.first()
    }

    /// Its games against those planned, 0..1, when it has a plan.
    pub fn progress(&self) -> Option<f64> {
        let planned = self.games_planned.filter(|n| *n > 0)?;
        Some((self.games as f64 / planned as f64).min(1.0))
    }

    /// Whether one of its engines' names holds `engine` (lower case).
    pub fn has_engine(&self, engine: &str) -> bool {
        engine.is_empty() || self.engines.iter().any(|e| e.to_lowercase().contains(engine))
    }

    /// Whether `query` (lower case) is in its id, engines, kind or owner.
    pub fn matches(&self, query: &str) -> bool {
        query.is_empty()
            || std::iter::once(&self.id)
                .chain(&self.engines)
                .chain(&self.options)
                .chain(std::iter::once(&self.kind))
                .chain(&self.owner)
                .any(|s| s.to_lowercase().contains(query))
    }
}

/// The live counts pushed to a page: a run's id and state with short texts keyed by field, and
/// whether the run has ended (the page then stops listening).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LiveCounts {
    pub id: String,
    /// The word the row's class (`st-WORD`) follows; its label is the `state` field.
    pub state: State,
    pub ended: bool,
    pub fields: Vec<(&'static str, String)>,
    /// Where the LLR stands between its bounds, 0..1 (the bar's marker).
    pub llr_at: Option<f64>,
}

impl LiveCounts {
    pub fn of(run: &RunView) -> LiveCounts {
        let lead = run.lead();
        let s = lead.and_then(|p| p.summary.as_ref());
        let mut fields =
            vec![("games", run.games.to_string()), ("state", run.state.label().into())];
        if let Some(p) = lead {
            fields.push(("wdl", format!("{}-{}-{}", p.wdl.wins, p.wdl.draws, p.wdl.losses)));
            fields.push(("penta", penta_text(&p.penta)));
        }
        fields.push(("elo", s.map_or("n/a".into(), |s| with_ci(s.elo, s.elo_ci))));
        fields.push(("nelo", s.map_or("n/a".into(), |s| with_ci(s.nelo, s.nelo_ci))));
        let sprt = s.and_then(|s| s.sprt.as_ref());
        fields.push(("llr", sprt.map_or("n/a".into(), |r| format!("{:.2}", r.llr))));
        if let Some(p) = lead {
            fields.push((VERDICT_LINE, verdict_line(p)));
        }
        LiveCounts {
            id: run.id.clone(),
            state: run.state,
            ended: run.state.has_ended(),
            fields,
            llr_at: sprt.map(|r| llr_at(r.llr, r.lower_bound, r.upper_bound)),
        }
    }

    /// The text of field `k`.
    pub fn field(&self, k: &str) -> Option<&str> {
        self.fields.iter().find(|(f, _)| *f == k).map(|(_, v)| v.as_str())
    }
}

/// The field of [`LiveCounts`] that keeps a run page's verdict line current (not shown in the
/// page's live box, which would say it twice).
pub const VERDICT_LINE: &str = "verdict_line";

/// The run page's verdict line of a pairing, as the report renderer words it.
fn verdict_line(p: &PairingView) -> String {
    crate::report::html::results::verdict_text(&p.label, p.summary.as_ref(), None)
}

/// Pentanomial counts from the worst pair (LL) to the best (WW).
pub fn penta_text(p: &Penta) -> String {
    format!("{} {} {} {} {}", p.ll, p.ld, p.dd, p.wd, p.ww)
}

/// "+12.3 [+1.0, +23.6]", or "n/a".
pub fn with_ci(v: Option<f64>, ci: Option<[f64; 2]>) -> String {
    match (v, ci) {
        (Some(v), Some([a, b])) => format!("{v:+.1} [{a:+.1}, {b:+.1}]"),
        (Some(v), None) => format!("{v:+.1}"),
        _ => "n/a".into(),
    }
}

/// Where `llr` stands between `lower` and `upper`, clamped to 0..1.
pub fn llr_at(llr: f64, lower: f64, upper: f64) -> f64 {
    // NaN bounds compare false: the bar sits in the middle.
    if upper.partial_cmp(&lower) != Some(std::cmp::Ordering::Greater) || !llr.is_finite() {
        return 0.5;
    }
    ((llr - lower) / (upper - lower)).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_llr_bar_stays_between_its_bounds() {
        assert_eq!(llr_at(0.0, -2.94, 2.94), 0.5);
        assert_eq!(llr_at(9.0, -2.94, 2.94), 1.0);
        assert_eq!(llr_at(f64::NAN, -2.94, 2.94), 0.5);
        assert_eq!(with_ci(Some(1.0), Some([-2.0, 4.0])), "+1.0 [-2.0, +4.0]");
        assert_eq!(with_ci(None, None), "n/a");
    }

    #[test]
    fn only_the_options_that_tell_engines_apart_are_shown() {
        let engine = |name: &str, options: &[(&str, &str)]| crate::plan::engine_spec::EngineSpec {
            name: name.into(),
            cmd: "e".into(),
            args: vec![],
            dir: None,
            options: options.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect(),
            limits: Default::default(),
        };
        let engines = [
            engine("dev", &[("Hash", "16"), ("t_mid", "1.0")]),
            engine("tight", &[("Hash", "16"), ("t_mid", "0.5")]),
            engine("nompc", &[("Hash", "16"), ("MPC", "false")]),
        ];
        assert_eq!(
            differing_options(&engines),
            ["dev: t_mid=1.0", "tight: t_mid=0.5", "nompc: MPC=false"]
        );
        // The same options everywhere: nothing to show.
        assert!(differing_options(&engines[..1]).is_empty());
    }
}
