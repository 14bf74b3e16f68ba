//! Whether a worker boxes the engines and builds of the runs it plays (`play::sandbox`): it
//! does when it can; a worker that cannot says so at start and then runs only the engines of
//! its own catalog (unboxed, as workers did before the box), unless it was started with
//! `--no-box` (every engine unboxed, its operator's choice).

use std::path::PathBuf;
use std::sync::Arc;

use crate::play::sandbox::Sandbox;

/// How a worker starts the engines and builds of submitted runs.
#[derive(Clone, Debug, Default)]
pub enum EngineBox {
    /// In the box.
    Boxed(Arc<Sandbox>),
    /// Unboxed: `--no-box` (and callers that are not workers).
    #[default]
    Unboxed,
    /// This machine cannot box (the reason): only the catalog's engines run, unboxed.
    CannotBox(String),
}

impl EngineBox {
    /// The box of a worker hiding `hide` (its key file, cache, logs, and `--box-hide`) and
    /// showing `show` (`--box-show`), or `--no-box`; says on stderr what it will do.
    pub fn for_worker(no_box: bool, hide: &[PathBuf], show: &[PathBuf]) -> EngineBox {
        if no_box {
            errln!(
                "warning: --no-box: engines and builds of submitted runs run unboxed, as this user"
            );
            return EngineBox::Unboxed;
        }
        match Sandbox::new(hide, show) {
            Ok(b) => {
                errln!(
                    "engines and builds run in a box (bwrap: no network, no secrets, read-only files)"
                );
                EngineBox::Boxed(Arc::new(b))
            }
            Err(why) => {
                errln!(
                    "warning: this worker cannot box engines: {why}; it runs only the engines of \
                     its own catalog (unboxed) and refuses submitted engines and builds (start it \
                     with --no-box to run them unboxed)"
                );
                EngineBox::CannotBox(why)
            }
        }
    }

    /// The box to start engines in, if any.
    pub fn sandbox(&self) -> Option<Arc<Sandbox>> {
        match self {
            EngineBox::Boxed(b) => Some(b.clone()),
            _ => None,
        }
    }

    /// `Err` (the line refusing the run) when `engine`, a submitted engine (an artifact, a
    /// build, a command under `--trust`), may not run here: the worker cannot box it.
    pub fn allow_submitted(&self, engine: &str) -> Result<(), String> {
        match self {
            EngineBox::CannotBox(why) => Err(format!(
                "engine {engine}: this worker cannot box a submitted engine ({why}) and was not \
                 started with --no-box"
            )),
            _ => Ok(()),
        }
    }
}
