//! Progress display: an indicatif bar on a terminal, plain periodic lines otherwise (CI logs).

use std::io::IsTerminal as _;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use stats::SprtSpec;

use crate::report::summary::PairingTally;

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

    /// One-line status of a pairing.
    pub fn status(t: &PairingTally, sprt: Option<SprtSpec>) -> String {
        let w = &t.wdl_all;
        let mut s = format!("W-D-L {}-{}-{}", w.wins, w.draws, w.losses);
        if let Some(sum) = t.summarize(sprt) {
            if let Some(score) = sum.score {
                s.push_str(&format!(" score {:.1}%", score * 100.0));
            }
            s.push_str(&format!(" Elo {}", sum.format_elo()));
            if let Some(r) = sum.sprt {
                s.push_str(&format!(
                    " LLR {:.2} [{:.2}, {:.2}]",
                    r.llr, r.lower_bound, r.upper_bound
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
            eprintln!("{} {done}/{}: {status}", self.unit, self.total);
        }
    }

    /// Prints a message without breaking the bar.
    pub fn println(&self, msg: &str) {
        match &self.bar {
            Some(b) => b.println(msg),
            None if self.plain => eprintln!("{msg}"),
            None => {}
        }
    }

    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
