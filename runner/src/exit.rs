//! The runner's exit codes, named in one place (listed in runner/README.md, "Exit codes").
//! Every command returns one of them; `main` turns it into the process status. The lowest
//! layer beside `out`: `play/cancel.rs` exits with [`Exit::Interrupted`] on a second signal.

/// How a command ended, as the process exit status says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// 0: the command did what was asked (a run complete or decided by its SPRT).
    Done,
    /// 1: an error, said in one line on stderr (also `runner book` when it found fewer
    /// openings than asked).
    Error,
    /// 2: a command line that was refused (clap's usage errors, and `runner fastchess` for a
    /// fastchess command line it cannot translate).
    BadCommandLine,
    /// 130 (128 + SIGINT): stopped by Ctrl-C or SIGTERM, or by a closed stdout or stderr; what
    /// was finished is kept and `--resume` continues it.
    Interrupted,
}

impl Exit {
    /// The process exit status.
    pub const fn code(self) -> u8 {
        match self {
            Exit::Done => 0,
            Exit::Error => 1,
            Exit::BadCommandLine => 2,
            Exit::Interrupted => 130,
        }
    }

    /// [`Exit::Interrupted`] when `cancelled`, else [`Exit::Done`].
    pub fn done_unless(cancelled: bool) -> Exit {
        if cancelled { Exit::Interrupted } else { Exit::Done }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(e: Exit) -> Self {
        std::process::ExitCode::from(e.code())
    }
}
