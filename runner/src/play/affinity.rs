//! CPU pinning (`--affinity [CPUS]`, Linux), as fastchess's `-use-affinity`: concurrency slot i
//! gets the i-th CPU of the list, and both engines of every game that slot plays are pinned to
//! it (they think in turn, so they share it without slowing each other).
//!
//! Engines are pinned when a slot takes them from their pool, not when they are started: the
//! pools are shared by all slots, so an idle engine may play its next game on another slot. Every
//! thread of the process is pinned (`/proc/PID/task`), so an engine that started its search
//! threads at `setoption Threads` moves with them; threads it starts later inherit the mask.

/// The CPUs of a list such as `0,2,4-7`, in the order given; a repeated CPU, an empty item or a
/// range that runs backwards is refused.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, String> {
    let bad = |why: String| format!("bad --affinity {s:?}: {why}");
    let number = |t: &str| {
        t.trim().parse::<usize>().map_err(|_| bad(format!("{:?} is not a CPU number", t.trim())))
    };
    let mut cpus = Vec::new();
    for item in s.split(',') {
        let (lo, hi) = match item.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => (number(item)?, number(item)?),
        };
        if lo > hi {
            return Err(bad(format!("the range {} runs backwards", item.trim())));
        }
        if hi >= MAX_CPUS {
            return Err(bad(format!("CPU {hi} is beyond the {MAX_CPUS} a CPU set can hold")));
        }
        for c in lo..=hi {
            if cpus.contains(&c) {
                return Err(bad(format!("CPU {c} is given twice")));
            }
            cpus.push(c);
        }
    }
    Ok(cpus)
}

/// CPUs a `cpu_set_t` can name.
const MAX_CPUS: usize = 1024;

/// `0,1,4-7` for a list of CPUs (consecutive runs as ranges), as Linux writes them.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j > i { format!("{}-{}", cpus[i], cpus[j]) } else { cpus[i].to_string() });
        i = j + 1;
    }
    parts.join(",")
}

/// The CPU of each concurrency slot: the first `slots` CPUs of `list` (all CPUs this process
/// may run on when `None`; all CPUs of the list when `slots` is `None`). A CPU outside that
/// allowed set, or more slots than CPUs, is a one-line error.
pub fn slot_cpus(list: Option<&str>, slots: Option<usize>) -> Result<Vec<usize>, String> {
    let allowed = allowed_cpus()?;
    let cpus = match list {
        Some(s) => parse_cpu_list(s)?,
        None => allowed.clone(),
    };
    if let Some(c) = cpus.iter().find(|c| !allowed.contains(c)) {
        return Err(format!(
            "--affinity: CPU {c} is not one this process may run on (allowed: {})",
            format_cpu_list(&allowed)
        ));
    }
    let slots = slots.unwrap_or(cpus.len());
    if slots > cpus.len() {
        return Err(format!(
            "--affinity: --concurrency {slots} needs {slots} CPUs, one per slot, but only {} \
             are given ({})",
            cpus.len(),
            format_cpu_list(&cpus)
        ));
    }
    Ok(cpus[..slots].to_vec())
}

/// The CPUs this process may run on (its affinity mask).
#[cfg(target_os = "linux")]
pub fn allowed_cpus() -> Result<Vec<usize>, String> {
    // SAFETY: sched_getaffinity writes at most size_of::<cpu_set_t>() bytes into the zeroed set
    // we own; CPU_ISSET only reads it, for indices below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            let e = std::io::Error::last_os_error();
            return Err(format!("--affinity: cannot read this process's CPUs: {e}"));
        }
        Ok((0..MAX_CPUS).filter(|&c| libc::CPU_ISSET(c, &set)).collect())
    }
}

#[cfg(not(target_os = "linux"))]
pub fn allowed_cpus() -> Result<Vec<usize>, String> {
    Err("--affinity works on Linux only".into())
}

/// Pins every thread of process `pid` and of its descendants to `cpu` (a boxed engine is the
/// grandchild of the bwrap process the runner started: `play::sandbox`). A process (or
/// thread) that is gone is not an error: its game ends by a fault of its own.
#[cfg(target_os = "linux")]
pub fn pin_process(pid: i32, cpu: usize) -> std::io::Result<()> {
    for p in with_descendants(pid) {
        pin_threads(p, cpu)?;
    }
    Ok(())
}

/// `pid` and every process below it, from the parent pids /proc lists.
#[cfg(target_os = "linux")]
fn with_descendants(pid: i32) -> Vec<i32> {
    let parent_of = |p: i32| -> Option<i32> {
        let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
        // After the command's closing parenthesis: state, then the parent pid.
        stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
    };
    let all: Vec<(i32, i32)> = std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
                .filter_map(|p| Some((p, parent_of(p)?)))
                .collect()
        })
        .unwrap_or_default();
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let p = out[i];
        out.extend(all.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    out
}

#[cfg(target_os = "linux")]
fn pin_threads(pid: i32, cpu: usize) -> std::io::Result<()> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Ok(());
    };
    for task in tasks.flatten() {
        let Ok(tid) = task.file_name().to_string_lossy().parse::<i32>() else { continue };
        // SAFETY: the set is a zeroed cpu_set_t we own; CPU_SET writes one bit below
        // CPU_SETSIZE (cpu < MAX_CPUS, checked when the list was read); sched_setaffinity only
        // reads it.
        let rc = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set)
        };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::ESRCH) {
                return Err(e);
            }
        }
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
pub fn pin_process(_pid: i32, _cpu: usize) -> std::io::Result<()> {
    Err(std::io::Error::other("--affinity works on Linux only"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cpu_lists_as_linux_writes_them() {
        assert_eq!(parse_cpu_list("0,2,4-7").unwrap(), vec![0, 2, 4, 5, 6, 7]);
        assert_eq!(parse_cpu_list("3").unwrap(), vec![3]);
        assert_eq!(parse_cpu_list(" 1 , 0 ").unwrap(), vec![1, 0]);
        for (bad, why) in [
            ("", "not a CPU number"),
            ("0,,1", "not a CPU number"),
            ("x", "not a CPU number"),
            ("-1", "not a CPU number"),
            ("3-1", "backwards"),
            ("0,0", "twice"),
            ("0-2,1", "twice"),
            ("1024", "beyond"),
        ] {
            let e = parse_cpu_list(bad).unwrap_err();
            assert!(e.contains(why) && e.starts_with("bad --affinity"), "{bad:?}: {e}");
        }
        assert_eq!(format_cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
    }

    #[test]
    fn slots_get_allowed_cpus_or_an_error() {
        let allowed = allowed_cpus().unwrap();
        assert_eq!(slot_cpus(None, Some(1)).unwrap(), vec![allowed[0]]);
        assert_eq!(slot_cpus(None, None).unwrap(), allowed);
        let e = slot_cpus(None, Some(allowed.len() + 1)).unwrap_err();
        assert!(e.contains("needs") && e.contains("one per slot"), "{e}");
        let one = allowed[0].to_string();
        assert!(slot_cpus(Some(&one), Some(2)).unwrap_err().contains("only 1 are given"));
        let outside = (0..MAX_CPUS).find(|c| !allowed.contains(c)).unwrap();
        let e = slot_cpus(Some(&outside.to_string()), Some(1)).unwrap_err();
        assert!(e.contains(&format!("CPU {outside} is not one")), "{e}");
    }
}
