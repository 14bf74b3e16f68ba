//! Progress display for analysis runs: an indicatif bar on a terminal, plain periodic lines
//! otherwise (CI logs).

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

pub struct Progress {
    bar: Option<ProgressBar>,
    total: u64,
    done: u64,
    label: String,
    last_line: Instant,
    every: Duration,
}

impl Progress {
    /// `already` items were done before (a resumed run).
    pub fn new(label: &str, total: u64, already: u64) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total);
            let style = ProgressStyle::with_template(
                "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} eta {eta} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.set_prefix(label.to_string());
            bar.set_position(already);
            bar
        });
        Progress {
            bar,
            total,
            done: already,
            label: label.to_string(),
            last_line: Instant::now(),
            every: Duration::from_secs(10),
        }
    }

    /// One more item done; `msg` is a short running summary.
    pub fn inc(&mut self, msg: &str) {
        self.done += 1;
        match &self.bar {
            Some(bar) => {
                bar.set_message(msg.to_string());
                bar.inc(1);
            }
            None => {
                if self.last_line.elapsed() >= self.every || self.done == self.total {
                    self.last_line = Instant::now();
                    errln!("{}: {}/{} {msg}", self.label, self.done, self.total);
                }
            }
        }
    }

    /// Prints a line without breaking the bar.
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.println(line),
            None => errln!("{line}"),
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
