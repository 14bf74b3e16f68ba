//! One search of one position, read from the engine's `info` lines: the score of every completed
//! iteration (depth), the final score, nodes, best move, and the engine's own `info string`s.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::uci_child::{ChildError, UciChild};
use crate::uci_info::{Eval, parse_info};

/// How long a search may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Limit {
    Depth(u32),
    Movetime(u64),
}

impl Limit {
    pub fn go_command(self) -> String {
        match self {
            Limit::Depth(d) => format!("go depth {d}"),
            Limit::Movetime(ms) => format!("go movetime {ms}"),
        }
    }
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

/// Searches `fen` with `limit`. A depth search fails after `timeout`; a timed search is sent
/// `stop` after its movetime plus `timeout` and fails 5 s later.
pub async fn search(
    engine: &mut UciChild,
    fen: &str,
    limit: Limit,
    timeout: Duration,
) -> Result<SearchReport, ChildError> {
    engine.send(&format!("position fen {fen}")).await?;
    engine.send(&limit.go_command()).await?;
    let start = Instant::now();
    let mut deadline = start
        + timeout
        + match limit {
            Limit::Movetime(ms) => Duration::from_millis(ms),
            Limit::Depth(_) => Duration::ZERO,
        };
    let mut stopped = false;
    let mut info = InfoCollector::default();
    loop {
        let line = match engine.next_line(deadline, "bestmove").await {
            Ok(line) => line,
            Err(ChildError::Timeout { .. }) if matches!(limit, Limit::Movetime(_)) && !stopped => {
                stopped = true;
                engine.send("stop").await?;
                deadline = Instant::now() + Duration::from_secs(5);
                continue;
            }
            Err(e) => return Err(e),
        };
        if let Some(rest) = line.trim_start().strip_prefix("bestmove") {
            let wall_ms = start.elapsed().as_millis() as u64;
            let best = rest.split_whitespace().next().unwrap_or("").to_string();
            return Ok(info.finish(best, wall_ms));
        }
        info.feed(&line);
    }
}

/// `ucinewgame` + `isready`: the next search starts with cleared tables.
pub async fn new_game(engine: &mut UciChild, timeout: Duration) -> Result<(), ChildError> {
    engine.send("ucinewgame").await?;
    engine.sync(timeout).await.map(|_| ())
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
        use crate::engine_spec::EngineSpec;
        let script = "read l; echo uciok; read l; read l; \
            echo 'info depth 1 score cp 5 nodes 10 pv e2e4'; \
            echo 'info depth 2 score mate 3 nodes 30 pv e2e4'; echo 'bestmove e2e4'; \
            read l; read l; sleep 10";
        let spec = EngineSpec {
            name: "fake".into(),
            cmd: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            dir: None,
            options: vec![],
        };
        let mut e = UciChild::start(&spec, None, Duration::from_secs(5)).await.unwrap();
        let fen = crate::openings::STARTPOS_FEN;
        let r = search(&mut e, fen, Limit::Depth(2), Duration::from_secs(5)).await.unwrap();
        assert_eq!(r.bestmove, "e2e4");
        assert_eq!(r.score, Some(Eval::Mate(3)));
        assert_eq!(r.depths[0].score, Eval::Cp(5));
        let err = search(&mut e, fen, Limit::Depth(2), Duration::from_millis(300)).await;
        assert!(matches!(err, Err(ChildError::Timeout { .. })), "{err:?}");
    }
}
