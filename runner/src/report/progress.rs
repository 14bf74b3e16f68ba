//! Progress display: an indicatif bar on a terminal, plain periodic lines otherwise (CI logs).

use std::io::IsTerminal as _;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use stats::{ScoreMoments, SprtSpec};

use crate::report::summary::{PairingTally, Tally};

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgressMode {
    /// A bar when stderr is a terminal, else plain lines.
    Auto,
    Plain,
    Quiet,
}

impl ProgressMode {
    /// `--progress plain|quiet|auto` (anything else: auto).
    pub fn parse(text: &str) -> ProgressMode {
        match text {
            "plain" => ProgressMode::Plain,
            "quiet" => ProgressMode::Quiet,
            _ => ProgressMode::Auto,
        }
    }
}

pub struct Progress {
    bar: Option<ProgressBar>,
    plain: bool,
    last_line: Instant,
    interval: Duration,
    total: u64,
    unit: &'static str,
}

impl Progress {
    pub fn new(mode: ProgressMode, total_games: u64, done: u64) -> Progress {
        let use_bar = mode == ProgressMode::Auto && std::io::stderr().is_terminal();
        let bar = use_bar.then(|| {
            let b = ProgressBar::with_draw_target(Some(total_games), ProgressDrawTarget::stderr());
            if let Ok(style) =
                ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            {
                b.set_style(style.progress_chars("=> "));
            }
            b.set_position(done);
            b
        });
        Progress {
            bar,
            plain: mode != ProgressMode::Quiet && !use_bar,
            last_line: Instant::now(),
            interval: Duration::from_secs(5),
            total: total_games,
            unit: "games",
        }
    }

    /// Names what is counted in plain progress lines (default "games").
    pub fn with_unit(mut self, unit: &'static str) -> Progress {
        self.unit = unit;
        self
    }

    /// One-line status of a pairing: W-D-L of every game, then the figures over complete pairs
    /// (saying so, and marking too few pairs).
    pub fn status(t: &PairingTally, sprt: Option<SprtSpec>) -> String {
        let w = &t.wdl_all;
        let pairs = t.penta.pairs();
        let mut s = format!("W-D-L {}-{}-{}", w.wins, w.draws, w.losses);
        if let Some(sum) = t.summarize(sprt) {
            s.push_str(&format!(", {pairs} pair{}:", if pairs == 1 { "" } else { "s" }));
            if let Some(score) = sum.score {
                s.push_str(&format!(" score {:.1}%", score * 100.0));
            }
            s.push_str(&format!(" Elo {}", crate::report::figures::elo(&sum)));
            if let Some(r) = sum.sprt {
                s.push_str(&format!(
                    " LLR {:.2} [{:.2}, {:.2}]",
                    r.llr, r.lower_bound, r.upper_bound
                ));
            }
            if crate::report::figures::too_few(pairs) {
                s.push_str(" (few pairs)");
            }
        }
        s
    }

    /// The status line of a run after a game of pairing `p`: with one pairing its status; with
    /// several, the pairing named, and with `leader` (sweeps) the point with the best score so
    /// far, so that the line never shows an unnamed tally.
    pub fn run_status(
        labels: &[String],
        tally: &Tally,
        p: usize,
        sprt: Option<SprtSpec>,
        leader: bool,
    ) -> String {
        let Some(t) = tally.pairings.get(p) else { return String::new() };
        if tally.pairings.len() <= 1 {
            return Progress::status(t, sprt);
        }
        let name = |i: usize| labels.get(i).map(String::as_str).unwrap_or("?");
        let mut s = format!("{} {}", name(p), Progress::status(t, sprt));
        if leader {
            let best = tally
                .pairings
                .iter()
                .enumerate()
                .filter_map(|(i, t)| ScoreMoments::from_penta(&t.penta).map(|m| (i, m.score)))
                .fold(None::<(usize, f64)>, |b, x| match b {
                    Some(b) if b.1 >= x.1 => Some(b),
                    _ => Some(x),
                });
            if let Some((i, score)) = best {
                let pairs = tally.pairings[i].penta.pairs();
                s.push_str(&format!(
                    "; leader {} {:.1}% over {pairs} pair{}",
                    name(i),
                    100.0 * score,
                    if pairs == 1 { "" } else { "s" }
                ));
            }
        }
        s
    }

    /// Called after each finished game.
    pub fn update(&mut self, done: u64, status: &str) {
        if let Some(b) = &self.bar {
            b.set_position(done);
            b.set_message(status.to_string());
        } else if self.plain && (self.last_line.elapsed() >= self.interval || done == self.total) {
            self.last_line = Instant::now();
            errln!("{} {done}/{}: {status}", self.unit, self.total);
        }
    }

    /// Prints a message without breaking the bar.
    pub fn println(&self, msg: &str) {
        match &self.bar {
            Some(b) => b.println(msg),
            None if self.plain => errln!("{msg}"),
            None => {}
        }
    }

    /// A line that must be seen whatever the display: above the bar, or on stderr.
    pub fn warn(&self, msg: &str) {
        match &self.bar {
            Some(b) => b.println(msg),
            None => errln!("{msg}"),
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stats::GameScore;

    fn tally_of(pairs: &[&[(GameScore, GameScore)]]) -> Tally {
        let mut t = Tally::new(pairs.len());
        for (i, ps) in pairs.iter().enumerate() {
            for &(a, b) in *ps {
                t.pairings[i].penta.add_pair(a, b);
                t.pairings[i].wdl_all.add(a);
                t.pairings[i].wdl_all.add(b);
                t.pairings[i].wdl_paired.add(a);
                t.pairings[i].wdl_paired.add(b);
            }
        }
        t
    }

    #[test]
    fn sweep_status_names_the_point_and_the_leader() {
        use GameScore::*;
        let labels = vec!["t_mid=0.8".to_string(), "t_mid=1.2".to_string()];
        let t = tally_of(&[&[(Win, Loss), (Loss, Loss)], &[(Win, Win), (Win, Draw)]]);
        let s = Progress::run_status(&labels, &t, 0, None, true);
        assert!(s.starts_with("t_mid=0.8 W-D-L 1-0-3, 2 pairs: score 25.0% Elo "), "{s}");
        assert!(s.contains("(few pairs)"), "{s}");
        assert!(s.ends_with("; leader t_mid=1.2 87.5% over 2 pairs"), "{s}");
        assert!(!s.contains("+/-"), "{s}");
        // One pairing: no name, no leader.
        let one = tally_of(&[&[(Win, Draw)]]);
        let s = Progress::run_status(&labels[..1], &one, 0, None, true);
        assert!(s.starts_with("W-D-L 1-1-0, 1 pair: score 75.0%"), "{s}");
    }
}
