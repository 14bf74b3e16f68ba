//! `runner merge DIR... --out DIR`: combines the shards of one run (`--shard K/N`) into one
//! results directory (see [`crate::merge`]).

use std::path::PathBuf;

use anyhow::Result;

use crate::merge::merge_dirs;

/// `runner merge` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct MergeArgs {
    /// Results directories of shards of one run (or earlier partial merges), in any order.
    #[arg(value_name = "DIR", required = true, num_args = 1..)]
    pub dirs: Vec<PathBuf>,
    /// The new directory for the merged results.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// `runner merge`. Returns the process exit code.
pub fn run(args: &MergeArgs) -> Result<u8> {
    let m = merge_dirs(&args.dirs, &args.out)?;
    print!("{}", m.report);
    println!(
        "merged shard(s) {} of a {}-way split: {} of {} scheduled games ({})",
        m.set.describe(),
        m.set.count,
        m.games,
        m.scheduled_games,
        m.stopped_by
    );
    if !m.missing.is_empty() {
        let missing: Vec<String> =
            m.missing.iter().map(|k| format!("{k}/{}", m.set.count)).collect();
        eprintln!(
            "warning: partial merge: shard(s) {} missing; merge this directory again with them \
             (it counts as the shards it holds)",
            missing.join(", ")
        );
    } else if m.games < m.scheduled_games {
        eprintln!(
            "warning: {} scheduled game(s) are not in any shard (shards stopped early: {})",
            m.scheduled_games - m.games,
            m.stopped_by
        );
    }
    println!("results: {}", m.dir.display());
    Ok(0)
}
