//! One search of one position for the tools (calibration, search tests), read from the engine's
//! `info` lines through the UCI driver's per-line callback: the score of every completed
//! iteration (depth), the final score, nodes, best move, and the engine's own `info string`s.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::play::uci::{UciEngine, UciError};
use crate::play::uci_info::{Eval, parse_info};

/// How the score of each depth is obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ScoreMode {
    /// One `go depth <deepest>` per position; the score of depth d is the last exact score the
    /// engine reported for iteration d. Cheap: the deepest search runs every shallower iteration
    /// anyway. For an engine whose `go depth d` after `ucinewgame` is deterministic (the bundled
    /// one), iteration d IS the separate depth-d search, so both modes give the same scores.
    Iterative,
    /// A separate `go depth d` for every needed depth, each after `ucinewgame`: for engines whose
    /// iterations depend on the final depth or on time.
    Separate,
}

/// How long a search may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    Depth(u32),
    Movetime(u64),
    Nodes(u64),
}

impl Limit {
    pub fn go_command(self) -> String {
        match self {
            Limit::Depth(d) => format!("go depth {d}"),
            Limit::Movetime(ms) => format!("go movetime {ms}"),
            Limit::Nodes(n) => format!("go nodes {n}"),
        }
    }
}

/// `--timeout SECONDS` of the tools: how much longer than asked a search may run.
pub fn timeout_from_secs(secs: f64) -> anyhow::Result<Duration> {
    if !(secs.is_finite() && secs > 0.0) {
        anyhow::bail!("--timeout must be a positive number of seconds, got {secs}");
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The last exact (not lowerbound/upperbound) score the engine reported at one depth.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepthScore {
    pub depth: u32,
    pub score: Eval,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u64>,
}

/// Everything read from one search.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchReport {
    /// Per depth, ascending; depths the engine did not report are absent.
    pub depths: Vec<DepthScore>,
    /// Score of the last exact info line (the final one of the search).
    pub score: Option<Eval>,
    /// Deepest depth with an exact score.
    pub depth: Option<u32>,
    /// Nodes of the last info line that gave a node count.
    pub nodes: Option<u64>,
    pub bestmove: String,
    /// Wall time from `go` to `bestmove`, measured here.
    pub wall_ms: u64,
    /// `info string` texts (e.g. the bundled engine's `mpc tries N cuts M ...`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub strings: Vec<String>,
}

/// Collects info lines into a report.
#[derive(Default)]
pub struct InfoCollector {
    depths: BTreeMap<u32, DepthScore>,
    score: Option<Eval>,
    nodes: Option<u64>,
    strings: Vec<String>,
}

impl InfoCollector {
    pub fn feed(&mut self, line: &str) {
        let line = line.trim();
        if let Some(text) = line.strip_prefix("info string ") {
            self.strings.push(text.to_string());
            return;
        }
        if !line.starts_with("info ") {
            return;
        }
        let info = parse_info(line);
        if info.nodes.is_some() {
            self.nodes = info.nodes;
        }
        let (Some(depth), Some(score)) = (info.depth, info.score) else {
            return;
        };
        if is_bound(line) {
            return;
        }
        self.score = Some(score);
        self.depths.insert(depth, DepthScore { depth, score, nodes: info.nodes });
    }

    pub fn finish(self, bestmove: String, wall_ms: u64) -> SearchReport {
        SearchReport {
            depth: self.depths.keys().next_back().copied(),
            depths: self.depths.into_values().collect(),
            score: self.score,
            nodes: self.nodes,
            bestmove,
            wall_ms,
            strings: self.strings,
        }
    }
}

/// Whether the score of an info line is only a bound (a failed aspiration search).
fn is_bound(line: &str) -> bool {
    line.split_ascii_whitespace()
        .take_while(|t| !matches!(*t, "pv" | "string"))
        .any(|t| t == "lowerbound" || t == "upperbound")
}

/// Searches `fen` with `limit` on an engine started with `every_line`, among `searchmoves` only
/// when that list (UCI moves) is not empty. A depth or node search fails after `timeout`; a timed
/// search is sent `stop` after its movetime plus `timeout` and fails 5 s later.
pub async fn search(
    engine: &mut UciEngine,
    fen: &str,
    limit: Limit,
    searchmoves: &[String],
    timeout: Duration,
) -> Result<SearchReport, UciError> {
    let wait = timeout
        + match limit {
            Limit::Movetime(ms) => Duration::from_millis(ms),
            Limit::Depth(_) | Limit::Nodes(_) => Duration::ZERO,
        };
    let mut info = InfoCollector::default();
    let position = format!("position fen {fen}");
    let mut go = limit.go_command();
    if !searchmoves.is_empty() {
        go.push_str(" searchmoves ");
        go.push_str(&searchmoves.join(" "));
    }
    let reply = match engine.go_each(&position, &go, wait, "bestmove", &mut |l| info.feed(l)).await
    {
        Err(UciError::Timeout { .. }) if matches!(limit, Limit::Movetime(_)) => {
            engine.send("stop\n").await?;
            let now = Instant::now();
            let grace = Duration::from_secs(5);
            let on_line = &mut |l: &str| info.feed(l);
            engine.read_reply(now, now + grace, "bestmove", grace, on_line).await?
        }
        r => r?,
    };
    let wall_ms = reply.received_at.saturating_duration_since(reply.sent_at).as_millis() as u64;
    Ok(info.finish(reply.bestmove, wall_ms))
}

/// `ucinewgame` + `isready`: the next search starts with cleared tables.
pub async fn new_game(engine: &mut UciEngine, timeout: Duration) -> Result<(), UciError> {
    engine.new_game(timeout).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collector_keeps_last_exact_score_per_depth() {
        let mut c = InfoCollector::default();
        for l in [
            "info depth 1 seldepth 1 score cp 20 nodes 21 time 0 pv e2e4",
            "info depth 2 score cp 35 lowerbound nodes 80 pv e2e4",
            "info depth 2 score cp 12 nodes 120 pv d2d4",
            "info depth 3 currmove e2e4 currmovenumber 1",
            "info depth 3 score cp 9 upperbound nodes 300",
            "info nodes 400 nps 1000",
            "info string mpc tries 3 cuts 1",
            "garbage line",
        ] {
            c.feed(l);
        }
        let r = c.finish("d2d4".into(), 5);
        assert_eq!(r.depths.len(), 2);
        assert_eq!(r.depths[1], DepthScore { depth: 2, score: Eval::Cp(12), nodes: Some(120) });
        assert_eq!((r.depth, r.score, r.nodes), (Some(2), Some(Eval::Cp(12)), Some(400)));
        assert_eq!(r.strings, ["mpc tries 3 cuts 1"]);
        assert!(!is_bound("info depth 2 score cp 1 pv a2a3 upperbound"));
    }

    #[tokio::test]
    async fn fake_engine_search_and_fault() {
        use crate::plan::engine_spec::EngineSpec;
        let script = "read l; echo uciok; read l; echo readyok; read l; read l; \
            echo 'info depth 1 score cp 5 nodes 10 pv e2e4'; \
            echo 'info depth 2 score mate 3 nodes 30 pv e2e4'; echo 'bestmove e2e4'; \
            read l; read l; sleep 10";
        let spec = EngineSpec {
            name: "fake".into(),
            cmd: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            dir: None,
            options: vec![],
            limits: Default::default(),
        };
        let opts = crate::play::uci::StartOptions { every_line: true, ..Default::default() };
        let mut e = UciEngine::start(&spec, &opts).await.unwrap();
        let fen = crate::plan::openings::STARTPOS_FEN;
        let r = search(&mut e, fen, Limit::Depth(2), &[], Duration::from_secs(60)).await.unwrap();
        assert_eq!(r.bestmove, "e2e4");
        assert_eq!(r.score, Some(Eval::Mate(3)));
        assert_eq!(r.depths[0].score, Eval::Cp(5));
        let err = search(&mut e, fen, Limit::Depth(2), &[], Duration::from_millis(300)).await;
        assert!(matches!(err, Err(UciError::Timeout { .. })), "{err:?}");
    }
}
