//! Progress display, of games (runs) and of positions (the tools that search positions): an
//! indicatif bar on a terminal, plain periodic lines otherwise (CI logs).

use std::io::IsTerminal as _;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use stats::{ScoreMoments, SprtSpec};

use crate::report::summary::{PairingTally, Tally};

/// How progress is shown: `--progress`, a clap value (an unknown one is refused there).
pub use crate::cli::ProgressMode;

/// The bar's line: `00:01:02 [=====>    ] 41/48 ` then the status.
const BAR_TEMPLATE: &str = "{elapsed_precise} [{bar:30}] {pos}/{len} {msg}";

/// Characters of the bar's line before the status, at `done` of `total`.
fn bar_prefix_len(done: u64, total: u64) -> usize {
    // "HH:MM:SS [" + 30 + "] " + pos + "/" + len + " "
    10 + 30 + 2 + done.to_string().len() + 1 + total.to_string().len() + 1
}

/// The width of the terminal on stderr, if it is one (asked of `console`, the terminal crate
/// the bar's indicatif draws with).
fn terminal_width() -> Option<usize> {
    let (_rows, cols) = console::Term::stderr().size_checked()?;
    (cols > 0).then_some(usize::from(cols))
}

/// A piece of a status line: its text, the separator before it (unless it comes first), and
/// how important it is (higher stays longer when the line must be shortened).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub rank: u8,
    pub sep: &'static str,
    pub text: String,
}

impl Part {
    pub fn new(rank: u8, sep: &'static str, text: String) -> Part {
        Part { rank, sep, text }
    }
}

/// The parts as one line.
pub fn compose(parts: &[Part]) -> String {
    let mut s = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            s.push_str(p.sep);
        }
        s.push_str(&p.text);
    }
    s
}

/// The parts as one line of at most `width` characters (a line that wraps on a terminal breaks
/// the bar): the least important parts are left out first (the later one of equal rank first),
/// and a line still too long is cut with "…".
pub fn fit(parts: &[Part], width: usize) -> String {
    let mut kept: Vec<Part> = parts.to_vec();
    while compose(&kept).chars().count() > width && kept.len() > 1 {
        let drop = kept
            .iter()
            .enumerate()
            .min_by_key(|(i, p)| (p.rank, std::cmp::Reverse(*i)))
            .map(|(i, _)| i)
            .unwrap_or(0);
        kept.remove(drop);
    }
    let line = compose(&kept);
    if line.chars().count() <= width {
        return line;
    }
    let mut cut: String = line.chars().take(width.saturating_sub(1)).collect();
    if width > 0 {
        cut.push('…');
    }
    cut
}

pub struct Progress {
    bar: Option<ProgressBar>,
    plain: bool,
    last_line: Instant,
    interval: Duration,
    total: u64,
    /// Items done so far (the last `update`, or counted by `inc`).
    done: u64,
    unit: &'static str,
}

impl Progress {
    /// `done` of `total_games` were played before (a resumed run).
    pub fn new(mode: ProgressMode, total_games: u64, done: u64) -> Progress {
        let use_bar = mode == ProgressMode::Auto && std::io::stderr().is_terminal();
        let bar = use_bar.then(|| {
            let b = ProgressBar::with_draw_target(Some(total_games), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(BAR_TEMPLATE) {
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
            done,
            unit: "games",
        }
    }

    /// The display of a tool that searches positions one at a time (`runner calibrate`,
    /// `runner searchtest`, the oracle): plain lines name `label`; `already` were searched
    /// before (a resumed calibration). Count with [`Progress::inc`].
    pub fn positions(label: &'static str, total: u64, already: u64) -> Progress {
        Progress::new(ProgressMode::Auto, total, already).with_unit(label)
    }

    /// Names what is counted in plain progress lines (default "games").
    pub fn with_unit(mut self, unit: &'static str) -> Progress {
        self.unit = unit;
        self
    }

    /// One-line status of a pairing: W-D-L of every game, then the figures over complete pairs
    /// (saying so, and marking too few pairs).
    pub fn status(t: &PairingTally, sprt: Option<SprtSpec>) -> String {
        compose(&Progress::status_parts(t, sprt))
    }

    /// [`Progress::status`] in parts, ranked for [`fit`].
    fn status_parts(t: &PairingTally, sprt: Option<SprtSpec>) -> Vec<Part> {
        let w = &t.wdl_all;
        let pairs = t.penta.pairs();
        let mut s = vec![Part::new(3, "", format!("W-D-L {}-{}-{}", w.wins, w.draws, w.losses))];
        if let Some(sum) = t.summarize(sprt) {
            s.push(Part::new(
                4,
                ", ",
                format!("{pairs} pair{}:", if pairs == 1 { "" } else { "s" }),
            ));
            if let Some(score) = sum.score {
                s.push(Part::new(7, " ", format!("score {:.1}%", score * 100.0)));
            }
            let elo = crate::report::figures::elo(&sum);
            match elo.split_once(" [") {
                Some((v, interval)) => {
                    s.push(Part::new(6, " ", format!("Elo {v}")));
                    s.push(Part::new(2, " ", format!("[{interval}")));
                }
                None => s.push(Part::new(6, " ", format!("Elo {elo}"))),
            }
            if let Some(r) = sum.sprt {
                s.push(Part::new(8, " ", format!("LLR {:.2}", r.llr)));
                s.push(Part::new(1, " ", format!("[{:.2}, {:.2}]", r.lower_bound, r.upper_bound)));
            }
            if crate::report::figures::too_few(pairs) {
                s.push(Part::new(1, " ", "(few pairs)".into()));
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
        compose(&Progress::run_status_parts(labels, tally, p, sprt, leader))
    }

    /// [`Progress::run_status`] in parts, ranked for [`fit`]: the point's name, its score, Elo
    /// and LLR stay longest; then the leader; the intervals and "(few pairs)" go first.
    pub fn run_status_parts(
        labels: &[String],
        tally: &Tally,
        p: usize,
        sprt: Option<SprtSpec>,
        leader: bool,
    ) -> Vec<Part> {
        let Some(t) = tally.pairings.get(p) else { return Vec::new() };
        if tally.pairings.len() <= 1 {
            return Progress::status_parts(t, sprt);
        }
        let name = |i: usize| labels.get(i).map(String::as_str).unwrap_or("?");
        let mut s = vec![Part::new(9, "", name(p).to_string())];
        let mut st = Progress::status_parts(t, sprt);
        if let Some(first) = st.first_mut() {
            first.sep = " ";
        }
        s.extend(st);
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
                s.push(Part::new(5, "; ", format!("leader {} {:.1}%", name(i), 100.0 * score)));
                s.push(Part::new(
                    2,
                    " ",
                    format!("over {pairs} pair{}", if pairs == 1 { "" } else { "s" }),
                ));
            }
        }
        s
    }

    /// After each finished game: on a terminal, the status fitted to the terminal's width (see
    /// [`fit`]); plain lines keep every part.
    pub fn update_parts(&mut self, done: u64, parts: &[Part]) {
        match (&self.bar, terminal_width()) {
            (Some(_), Some(width)) => {
                let room = width.saturating_sub(bar_prefix_len(done, self.total));
                self.update(done, &fit(parts, room));
            }
            _ => self.update(done, &compose(parts)),
        }
    }

    /// One more item done; `status` is a short running summary.
    pub fn inc(&mut self, status: &str) {
        self.update(self.done + 1, status);
    }

    /// Called after each finished game, with the games done so far.
    pub fn update(&mut self, done: u64, status: &str) {
        self.done = done;
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

    /// A line for scripts on stdout (`--output cutechess|fastchess`): the bar (on stderr) is
    /// hidden while it is written, so a terminal showing both never mixes them.
    pub fn stdout(&self, line: &str) {
        match &self.bar {
            Some(b) => b.suspend(|| outln!("{line}")),
            None => outln!("{line}"),
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

    /// On a 160-column terminal a sweep's line once wrapped ("... leader t_mid=0.8 75.0%
    /// over" / "1 pair"). Fitted to 80, 120 and 160 columns, the whole bar line stays within the
    /// width, and the point with its most important figures stays.
    #[test]
    fn the_bar_line_fits_the_terminal_and_keeps_the_point_and_its_score() {
        use GameScore::*;
        let labels: Vec<String> =
            ["t_mid=0.8", "t_mid=1.2", "t_mid=1.6"].iter().map(|s| s.to_string()).collect();
        let t = tally_of(&[
            &[(Win, Loss), (Loss, Loss), (Draw, Draw)],
            &[(Win, Win), (Win, Draw), (Draw, Loss)],
            &[(Win, Draw)],
        ]);
        let sprt = Some(SprtSpec::parse("elo0=0,elo1=5").unwrap());
        let parts = Progress::run_status_parts(&labels, &t, 1, sprt, true);
        let full = compose(&parts);
        assert!(full.contains("; leader ") && full.contains(" LLR "), "{full}");
        let (done, total) = (1234, 2400);
        let prefix = bar_prefix_len(done, total);
        let bar_line = |msg: &str| format!("{:8} [{:30}] {done}/{total} {msg}", "00:12:34", "");
        assert_eq!(bar_line("").chars().count(), prefix, "the prefix as indicatif draws it");
        for width in [80, 120, 160] {
            let line = bar_line(&fit(&parts, width - prefix));
            assert!(
                line.chars().count() <= width,
                "{width}: {} chars: {line}",
                line.chars().count()
            );
            let keep: &[&str] = match width {
                80 => &["t_mid=1.2 ", "LLR "],
                120 => &["t_mid=1.2 ", "score ", "Elo ", "LLR "],
                _ => &["t_mid=1.2 ", "score ", "Elo ", "LLR ", "; leader t_mid="],
            };
            for k in keep {
                assert!(line.contains(k), "{width}: {k} kept in {line}");
            }
        }
        // Without an SPRT, 80 columns keep the point and its score.
        let parts = Progress::run_status_parts(&labels, &t, 1, None, true);
        let line = bar_line(&fit(&parts, 80 - prefix));
        assert!(line.chars().count() <= 80, "{line}");
        assert!(line.contains("t_mid=1.2 score "), "{line}");
        let parts = Progress::run_status_parts(&labels, &t, 1, sprt, true);
        let wide = fit(&parts, 160 - prefix);
        assert!(wide.contains("LLR") && wide.contains("leader t_mid="), "{wide}");
        assert_eq!(fit(&parts, 1000), full, "a wide terminal shows everything");
        assert_eq!(fit(&parts, 5).chars().count(), 5, "cut when nothing else helps");
    }
}
