//! Printing that never panics. `println!` and `eprintln!` panic when their stream is a closed
//! pipe (`runner report DIR | head -1`; Rust ignores SIGPIPE, so the write fails with EPIPE);
//! the runner prints with [`outln!`](crate::outln), [`out!`](crate::out) and
//! [`errln!`](crate::errln) instead. A write that fails drops its text; the first failure of a
//! stream calls the hooks given to [`on_failure`] once (a run stops as on SIGTERM: games kept,
//! final files written). Below every layer: it uses nothing of the crate.

use std::io::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Standard output or standard error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    Out,
    Err,
}

type Hook = Box<dyn Fn() + Send + Sync>;

static FAILED: AtomicBool = AtomicBool::new(false);
static HOOKS: Mutex<Vec<Hook>> = Mutex::new(Vec::new());

/// Calls `hook` (once) when a write to stdout or stderr fails; at once if one already failed.
pub fn on_failure(hook: impl Fn() + Send + Sync + 'static) {
    if FAILED.load(Ordering::SeqCst) {
        hook();
        return;
    }
    HOOKS.lock().unwrap_or_else(|e| e.into_inner()).push(Box::new(hook));
}

/// Whether a write to stdout or stderr has failed.
pub fn failed() -> bool {
    FAILED.load(Ordering::SeqCst)
}

/// Writes `args` to `stream` and flushes; a failure drops the text and fires the hooks.
pub fn write(stream: Stream, args: std::fmt::Arguments<'_>) {
    let res = match stream {
        Stream::Out => {
            let mut w = std::io::stdout().lock();
            w.write_fmt(args).and_then(|()| w.flush())
        }
        Stream::Err => std::io::stderr().lock().write_fmt(args),
    };
    if res.is_err() {
        fail();
    }
}

fn fail() {
    if FAILED.swap(true, Ordering::SeqCst) {
        return;
    }
    let hooks = std::mem::take(&mut *HOOKS.lock().unwrap_or_else(|e| e.into_inner()));
    for h in hooks {
        h();
    }
}

/// `println!` that never panics (see [`crate::out`]).
#[macro_export]
macro_rules! outln {
    () => { $crate::out::write($crate::out::Stream::Out, format_args!("\n")) };
    ($($arg:tt)*) => {
        $crate::out::write($crate::out::Stream::Out, format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` that never panics (see [`crate::out`]).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => { $crate::out::write($crate::out::Stream::Out, format_args!($($arg)*)) };
}

/// `eprintln!` that never panics (see [`crate::out`]).
#[macro_export]
macro_rules! errln {
    () => { $crate::out::write($crate::out::Stream::Err, format_args!("\n")) };
    ($($arg:tt)*) => {
        $crate::out::write($crate::out::Stream::Err, format_args!("{}\n", format_args!($($arg)*)))
    };
}
