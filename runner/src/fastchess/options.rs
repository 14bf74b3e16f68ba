//! Every fastchess option but the engines' keys: what it sets, read in order (a later option
//! wins, as in fastchess), then written as `runner match` flags with fastchess's defaults made
//! explicit where the runner's differ.

use super::engines::{self, EngineFlags};
use super::words::{Opt, boolean, number};

/// What the machine and the moment give a translation (kept out so that it is a pure function).
#[derive(Clone, Debug)]
pub struct Env {
    /// Hardware threads (fastchess's concurrency limit and `-concurrency 0`).
    pub cpus: usize,
    /// `%Y%m%d_%H%M%S`, for fastchess's default `-pgnout`/`-epdout` file names.
    pub stamp: String,
}

/// `-openings`.
#[derive(Clone, Debug, Default)]
struct Book {
    file: Option<String>,
    format: Option<String>,
    order: Option<String>,
    plies: Option<String>,
    start: Option<u64>,
}

/// A fastchess command read so far.
#[derive(Debug, Default)]
pub struct State {
    engines: Vec<Vec<(String, String)>>,
    each: Vec<(String, String)>,
    games: Option<u64>,
    rounds: Option<u64>,
    concurrency: Option<i64>,
    force_concurrency: bool,
    book: Book,
    sprt: bool,
    tournament: Option<String>,
    seeds: Option<String>,
    recover: bool,
    /// Runner flags set directly, in first-given order (a later value replaces the earlier one).
    flags: Vec<(String, Option<String>)>,
    /// Lines printed before the run: what maps to nothing or differently.
    pub notes: Vec<String>,
    /// `-help` or `-version`: text to print instead of running.
    pub print: Option<String>,
}

impl State {
    fn set(&mut self, flag: &str, value: Option<String>) {
        match self.flags.iter_mut().find(|(f, _)| f == flag) {
            Some(slot) => slot.1 = value,
            None => self.flags.push((flag.to_string(), value)),
        }
    }

    fn note(&mut self, line: String) {
        if !self.notes.contains(&line) {
            self.notes.push(line);
        }
    }

    /// Reads one option; an error is the one line that refuses it.
    pub fn apply(&mut self, o: &Opt, env: &Env) -> Result<(), String> {
        let handled = self.apply_match(o)?
            || self.apply_adjudication(o)?
            || self.apply_output(o, env)?
            || self.apply_rest(o, env)?;
        match handled {
            true => Ok(()),
            false => Err(format!("{}: unknown fastchess option", o.name)),
        }
    }

    /// The engines, the games, the openings, the schedule and the SPRT. `Ok(false)`: not one of
    /// these options.
    fn apply_match(&mut self, o: &Opt) -> Result<bool, String> {
        let name = o.name.as_str();
        match name {
            "-engine" => {
                let mut items = Vec::new();
                for (k, v) in o.some_pairs()? {
                    items.extend(engines::engine_key(&k, &v).map_err(|e| format!("{name} {e}"))?);
                }
                self.engines.push(items);
            }
            "-each" => {
                for (k, v) in o.some_pairs()? {
                    let items = engines::engine_key(&k, &v).map_err(|e| format!("{name} {e}"))?;
                    self.each.extend(items);
                }
            }
            "-games" => self.games = Some(number(name, o.single()?)?),
            "-rounds" => self.rounds = Some(number(name, o.single()?)?),
            "-repeat" => {
                self.games = Some(match o.values.as_slice() {
                    [n] if n.bytes().all(|b| b.is_ascii_digit()) => number(name, n)?,
                    _ => 2,
                })
            }
            "-concurrency" => self.concurrency = Some(number(name, o.single()?)?),
            "-force-concurrency" => {
                o.none()?;
                self.force_concurrency = true;
            }
            "-openings" => self.openings(o)?,
            "-srand" => self.set("--seed", Some(number::<u64>(name, o.single()?)?.to_string())),
            "-variant" => match o.single()? {
                v @ ("standard" | "fischerandom") => self.set("--variant", Some(v.into())),
                v => return Err(format!("{name}: expected standard or fischerandom, got {v:?}")),
            },
            "-tournament" => match o.single()? {
                "roundrobin" => self.tournament = Some("round-robin".into()),
                "gauntlet" => self.tournament = Some("gauntlet".into()),
                v => return Err(format!("{name}: expected roundrobin or gauntlet, got {v:?}")),
            },
            "-seeds" => self.seeds = Some(number::<u64>(name, o.single()?)?.to_string()),
            "-noswap" | "-reverse" => {
                o.none()?;
                self.set(&format!("-{name}"), None);
            }
            "-wait" => self.set("--wait", Some(number::<u64>(name, o.single()?)?.to_string())),
            "-sprt" => self.sprt(o)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Adjudication: draw, resign, move limit and Syzygy tables. `Ok(false)`: not one of these
    /// options.
    fn apply_adjudication(&mut self, o: &Opt) -> Result<bool, String> {
        let name = o.name.as_str();
        match name {
            "-draw" => {
                let v =
                    adjudication(o, &[("movenumber", "0"), ("movecount", "1"), ("score", "0")])?;
                self.set("--draw", Some(v));
            }
            "-resign" => self.resign(o)?,
            "-maxmoves" => self.set("--maxmoves", Some(o.single()?.into())),
            // Syzygy adjudication: the folders `:`-separated as on Linux; `-tbpieces 0` is
            // fastchess's "every table", the runner's default.
            "-tb" => self.set("--tb", Some(o.single()?.into())),
            "-tbpieces" => match number::<u32>(name, o.single()?)? {
                0 => {}
                n => self.set("--tbpieces", Some(n.to_string())),
            },
            "-tbignore50" => {
                o.none()?;
                self.set("--tbignore50", None);
            }
            "-tbadjudicate" => {
                let v = match o.single()? {
                    "BOTH" => "both",
                    "WIN_LOSS" => "win-loss",
                    "DRAW" => "draw",
                    v => return Err(format!("{name}: expected BOTH, WIN_LOSS or DRAW, got {v:?}")),
                };
                self.set("--tbadjudicate", Some(v.into()));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// What is written and shown: PGN and EPD files, PGN tags, output lines, logs, saving.
    /// `Ok(false)`: not one of these options.
    fn apply_output(&mut self, o: &Opt, env: &Env) -> Result<bool, String> {
        let name = o.name.as_str();
        let refuse = |why: &str| Err(format!("{name}: not supported: {why}"));
        match name {
            "-pgnout" => self.pgnout(o, env)?,
            "-epdout" => self.epdout(o, env)?,
            "-event" | "-site" => {
                // fastchess joins the words without a separator.
                self.set(&format!("-{name}"), Some(o.values.concat()));
            }
            "-output" => match o.some_pairs()?.as_slice() {
                [(k, v)] if k == "format" && (v == "fastchess" || v == "cutechess") => {
                    self.set("--output", Some(v.clone()))
                }
                _ => return Err(format!("{name}: expected format=fastchess or format=cutechess")),
            },
            "-ratinginterval" | "-scoreinterval" => {
                let n: u64 = number(name, o.single()?)?;
                self.set(&format!("-{name}"), Some(n.to_string()));
            }
            "-report" => {
                for (k, v) in o.some_pairs()? {
                    match (k.as_str(), boolean(name, &v)?) {
                        ("penta", true) => {}
                        ("penta", false) => {
                            return refuse(
                                "penta=false (the fastchess output always has the pentanomial line)",
                            );
                        }
                        _ => return Err(format!("{name}: unknown key {k:?}")),
                    }
                }
            }
            "-autosaveinterval" => {
                number::<i64>(name, o.single()?)?;
                self.note(format!(
                    "{name}: nothing to set: the runner saves every game as it ends \
                     (games.jsonl; --resume continues)"
                ));
            }
            "-config" => {
                return refuse(
                    "fastchess's JSON state; the runner resumes from its results folder \
                     (runner match --resume --out DIR)",
                );
            }
            "-recover" => {
                o.none()?;
                self.recover = true;
            }
            "-log" => self.log(o)?,
            "-show-latency" => {
                o.none()?;
                self.note(format!(
                    "{name}: nothing to set: each move's latency is in games.jsonl (latency) \
                     and the run's in summary.json (runner_overhead)"
                ));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Processes (timeouts, affinity), `-quick`, version and help, and what is refused.
    /// `Ok(false)`: not one of these options.
    fn apply_rest(&mut self, o: &Opt, env: &Env) -> Result<bool, String> {
        let name = o.name.as_str();
        let refuse = |why: &str| Err(format!("{name}: not supported: {why}"));
        match name {
            "-testEnv" => return refuse("no OpenBench/Fishtest output mode"),
            "-strict" => return refuse("warnings never stop a run"),
            "-check-mate-pvs" => return refuse("mate PVs are not checked"),
            "-crc32" => return refuse("no CRC32 of the PGN"),
            "-debug" => {
                return refuse(
                    "fastchess has no -debug either; -log engine=true logs the UCI lines",
                );
            }
            "--compliance" => return refuse("no UCI compliance check"),
            "-startup-ms" => {
                let ms: u64 = number(name, o.single()?)?;
                self.set("--start-timeout", Some(ms_as_seconds(ms)));
            }
            "-ping-ms" => {
                let ms: u64 = number(name, o.single()?)?;
                self.set("--stall-timeout", Some(ms_as_seconds(ms)));
            }
            "-ucinewgame-ms" => {
                return refuse("the wait after ucinewgame is --stall-timeout's (see -ping-ms)");
            }
            "-use-affinity" => match o.values.as_slice() {
                [] => self.set("--affinity", None),
                [cpus] => self.set("--affinity", Some(cpus.clone())),
                _ => return Err(format!("{name}: expects at most one CPU list")),
            },
            "-quick" => self.quick(o, env)?,
            "-version" | "--version" | "-v" | "--v" => {
                self.print = Some(format!(
                    "runner {} (runner fastchess: fastchess command lines run as runner match)",
                    env!("CARGO_PKG_VERSION")
                ));
            }
            "-help" | "--help" => self.print = Some(HELP.trim_end().to_string()),
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn openings(&mut self, o: &Opt) -> Result<(), String> {
        let name = &o.name;
        for (k, v) in o.some_pairs()? {
            match k.as_str() {
                "file" => self.book.file = Some(v),
                "format" if v == "epd" || v == "pgn" => self.book.format = Some(v),
                "order" if v == "sequential" || v == "random" => self.book.order = Some(v),
                "plies" => self.book.plies = Some(number::<u64>(name, &v)?.to_string()),
                "start" => match number::<u64>(name, &v)? {
                    0 => return Err(format!("{name}: start= must be at least 1")),
                    n => self.book.start = Some(n),
                },
                "policy" if v == "round" => {}
                "format" | "order" | "policy" => {
                    return Err(format!("{name}: unknown {k} {v:?}"));
                }
                _ => return Err(format!("{name}: unknown key {k:?}")),
            }
        }
        Ok(())
    }

    fn sprt(&mut self, o: &Opt) -> Result<(), String> {
        let name = &o.name;
        let mut keys: Vec<(String, String)> = Vec::new();
        for (k, v) in o.some_pairs()? {
            match (k.as_str(), v.as_str()) {
                ("elo0" | "elo1" | "alpha" | "beta", _) => {
                    v.parse::<f64>().map_err(|_| format!("{name}: {k}={v} is not a number"))?;
                }
                ("model", "normalized" | "logistic") => {}
                ("model", "bayesian") => {
                    return Err(format!(
                        "{name}: not supported: model=bayesian (BayesElo); \
                                        use normalized or logistic"
                    ));
                }
                ("model", _) => return Err(format!("{name}: unknown model {v:?}")),
                _ => return Err(format!("{name}: unknown key {k:?}")),
            }
            keys.retain(|(key, _)| *key != k);
            keys.push((k, v));
        }
        let missing: Vec<&str> = ["elo0", "elo1", "alpha", "beta"]
            .into_iter()
            .filter(|k| !keys.iter().any(|(key, _)| key == k))
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "{name}: needs elo0=, elo1=, alpha= and beta= (fastchess has no defaults); missing {}",
                missing.join(", ")
            ));
        }
        let spec: Vec<String> = keys.iter().map(|(k, v)| format!("{k}={v}")).collect();
        self.set("--sprt", Some(spec.join(",")));
        self.sprt = true;
        Ok(())
    }

    fn resign(&mut self, o: &Opt) -> Result<(), String> {
        let mut twosided = false;
        let mut rest = o.clone();
        rest.values.retain(|w| match w.strip_prefix("twosided=") {
            Some(v) => {
                twosided = v == "true";
                false
            }
            None => true,
        });
        if let Some(w) = o.values.iter().find(|w| w.starts_with("twosided=")) {
            boolean(&o.name, &w["twosided=".len()..])?;
        }
        let mut v = adjudication(&rest, &[("movecount", "1"), ("score", "0")])?;
        if twosided {
            v += ",twosided=true";
        }
        self.set("--resign", Some(v));
        Ok(())
    }

    fn pgnout(&mut self, o: &Opt, env: &Env) -> Result<(), String> {
        let name = &o.name;
        let mut keys: Vec<(String, String)> = Vec::new();
        for (k, v) in o.pairs()? {
            match k.as_str() {
                "file" | "notation" if v.contains(',') => {
                    return Err(format!(
                        "{name}: {k}={v} holds a comma, which --pgnout cannot carry"
                    ));
                }
                "file" => {}
                "notation" if ["san", "lan", "uci"].contains(&v.as_str()) => {}
                "notation" => return Err(format!("{name}: unknown notation {v:?}")),
                "append" | "nodes" | "seldepth" | "nps" | "hashfull" | "pv" | "timeleft"
                | "latency" | "min" => {
                    boolean(name, &v)?;
                }
                "tbhits" => {
                    if boolean(name, &v)? {
                        return Err(format!(
                            "{name}: not supported: tbhits=true (no tablebases here)"
                        ));
                    }
                    continue;
                }
                "match_line" => {
                    return Err(format!(
                        "{name}: not supported: match_line= (engine output lines in the PGN)"
                    ));
                }
                _ => return Err(format!("{name}: unknown key {k:?}")),
            }
            keys.retain(|(key, _)| *key != k);
            keys.push((k, v));
        }
        if !keys.iter().any(|(k, _)| k == "file") {
            keys.insert(0, ("file".into(), format!("fastchess_{}.pgn", env.stamp)));
        }
        if !keys.iter().any(|(k, _)| k == "append") {
            keys.insert(1, ("append".into(), "true".into()));
        }
        let spec: Vec<String> = keys.iter().map(|(k, v)| format!("{k}={v}")).collect();
        self.set("--pgnout", Some(spec.join(",")));
        Ok(())
    }

    fn epdout(&mut self, o: &Opt, env: &Env) -> Result<(), String> {
        let name = &o.name;
        let mut file = format!("fastchess_{}.epd", env.stamp);
        for (k, v) in o.pairs()? {
            match k.as_str() {
                "file" => file = v,
                "append" => {
                    return Err(format!(
                        "{name}: not supported: append= (the runner's --epdout takes a file only)"
                    ));
                }
                _ => return Err(format!("{name}: unknown key {k:?}")),
            }
        }
        self.set("--epdout", Some(file));
        Ok(())
    }

    fn log(&mut self, o: &Opt) -> Result<(), String> {
        let name = &o.name;
        let mut engine = false;
        for (k, v) in o.some_pairs()? {
            match k.as_str() {
                "file" => {}
                "level" if ["trace", "info", "warn", "err", "fatal"].contains(&v.as_str()) => {}
                "level" => return Err(format!("{name}: unknown level {v:?}")),
                "append" | "compress" | "realtime" => {
                    boolean(name, &v)?;
                }
                "engine" => engine = boolean(name, &v)?,
                _ => return Err(format!("{name}: unknown key {k:?}")),
            }
        }
        if engine {
            self.set("--debug-log", None);
        }
        self.note(format!(
            "{name}: mapped differently: the runner has no log file of its own (its messages \
             go to stderr); engine=true is --debug-log, every UCI line under <out>/logs"
        ));
        Ok(())
    }

    /// `-quick cmd=A cmd=B book=FILE`: fastchess's preset.
    fn quick(&mut self, o: &Opt, env: &Env) -> Result<(), String> {
        let name = &o.name;
        let mut cmds = Vec::new();
        for (k, v) in o.some_pairs()? {
            match k.as_str() {
                "cmd" => cmds.push(v),
                "book" if v.ends_with(".epd") || v.ends_with(".pgn") => {
                    self.book.file = Some(v);
                    self.book.order = Some("random".into());
                }
                "book" => return Err(format!("{name}: book= needs a .epd or .pgn file")),
                _ => return Err(format!("{name}: unknown key {k:?}")),
            }
        }
        if cmds.len() != 2 || self.book.file.is_none() {
            return Err(format!("{name}: needs exactly two cmd= and one book="));
        }
        // fastchess names each engine by its command (1 and 2 appended when they are equal).
        let same = cmds[0] == cmds[1];
        for (i, cmd) in cmds.iter().enumerate() {
            let label = if same { format!("{cmd}{}", i + 1) } else { cmd.clone() };
            let mut items = engines::engine_key("cmd", cmd).map_err(|e| format!("{name} {e}"))?;
            items.extend(engines::engine_key("name", &label).map_err(|e| format!("{name} {e}"))?);
            self.engines.push(items);
        }
        self.each.push(("tc".into(), "10+0.1".into()));
        self.games = Some(2);
        self.rounds = Some(25000);
        self.concurrency = Some((env.cpus as i64 - 2).max(1));
        self.recover = true;
        self.set("--draw", Some("movenumber=30,movecount=8,score=8".into()));
        self.set("--output", Some("cutechess".into()));
        Ok(())
    }

    /// The `runner match` arguments (after `match`), or one line per refusal.
    pub fn finish(&self, env: &Env) -> Result<Vec<String>, Vec<String>> {
        let mut refused = Vec::new();
        let mut argv = Vec::new();
        if self.engines.len() < 2 {
            refused.push("-engine: fastchess needs at least two engines".to_string());
        }
        match engines::resolve(&self.engines, &self.each) {
            Ok(EngineFlags { argv: a, .. }) => argv.extend(a),
            Err(e) => refused.extend(e),
        }
        if self.engines.len() > 2 {
            let kind = self.tournament.clone().unwrap_or("round-robin".into());
            argv.extend(["--tournament".into(), kind.clone()]);
            if let (Some(seeds), "gauntlet") = (&self.seeds, kind.as_str()) {
                argv.extend(["--gauntlet-seats".into(), seeds.clone()]);
            }
        }
        match self.games_flags() {
            Ok(g) => argv.extend(g),
            Err(e) => refused.push(e),
        }
        match self.concurrency_flag(env) {
            Ok(c) => argv.extend(c),
            Err(e) => refused.push(e),
        }
        match self.book_flags() {
            Ok(b) => argv.extend(b),
            Err(e) => refused.push(e),
        }
        for (flag, value) in &self.flags {
            argv.push(flag.clone());
            if let Some(v) = value {
                match flag.as_str() {
                    // An optional value: `--affinity=0-3` can never be read as the next flag's.
                    "--affinity" => *argv.last_mut().expect("just pushed") += &format!("={v}"),
                    _ => argv.push(v.clone()),
                }
            }
        }
        let limit = if self.recover { "0" } else { "1" };
        argv.extend(["--fault-limit".into(), limit.into()]);
        match refused.is_empty() {
            true => Ok(argv),
            false => Err(refused),
        }
    }

    /// The notes that depend on the whole command.
    pub fn final_notes(&self) -> Vec<String> {
        let mut notes = self.notes.clone();
        if self.book.file.is_none() {
            notes.push(
                "no -openings: fastchess plays every game from the start position; the runner \
                 plays its default book (openings/default.epd)"
                    .into(),
            );
        }
        if self.sprt && self.rounds.is_none() {
            notes.push(
                "-sprt without -rounds: fastchess's default of 2 rounds caps the test at 4 games"
                    .into(),
            );
        }
        notes
    }

    fn book_flags(&self) -> Result<Vec<String>, String> {
        let b = &self.book;
        let Some(file) = &b.file else {
            let set = b.format.is_some() || b.order.is_some() || b.plies.is_some();
            return match set || b.start.is_some() {
                true => Err("-openings: needs file=".into()),
                false => Ok(Vec::new()),
            };
        };
        let ext = file.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
        if let (Some(ext @ ("epd" | "pgn")), Some(format)) = (ext.as_deref(), &b.format)
            && ext != format
        {
            return Err(format!(
                "-openings: not supported: format={format} for {file} (the runner reads a book \
                 by its extension)"
            ));
        }
        let order = b.order.clone().unwrap_or("sequential".into());
        let mut out = vec!["--book".into(), file.clone(), "--book-order".into(), order];
        if let Some(p) = &b.plies {
            out.extend(["--book-plies".into(), p.clone()]);
        }
        if let Some(s) = b.start.filter(|&s| s != 1) {
            out.extend(["--book-start".into(), s.to_string()]);
        }
        Ok(out)
    }

    /// fastchess plays `rounds` rounds of `games` games (one opening per round; a `-games`
    /// above 2 is read as the rounds, its documented fix-up); the runner counts total games and
    /// `--repeat` (default 2) games per opening.
    fn games_flags(&self) -> Result<Vec<String>, String> {
        let (mut games, mut rounds) = (self.games.unwrap_or(2), self.rounds.unwrap_or(2));
        if games > 2 {
            std::mem::swap(&mut games, &mut rounds);
            if games > 2 {
                return Err(format!(
                    "-games {rounds} with -rounds {games}: at most 2 games per round (fastchess's limit)"
                ));
            }
        }
        if rounds == 0 && self.sprt {
            rounds = 500_000;
        }
        if games == 0 || rounds == 0 {
            return Err("-games/-rounds: no games to play".into());
        }
        let total = games.checked_mul(rounds).ok_or("-rounds: too many games")?;
        let mut out = vec!["--games".to_string(), total.to_string()];
        if games != 2 {
            out.extend(["--repeat".into(), games.to_string()]);
        }
        Ok(out)
    }

    /// fastchess plays one game at a time unless told; 0 or less counts down from the
    /// hardware threads; more than those needs -force-concurrency.
    fn concurrency_flag(&self, env: &Env) -> Result<Vec<String>, String> {
        let n = self.concurrency.unwrap_or(1);
        let cpus = env.cpus as i64;
        let n = if n <= 0 { cpus + n } else { n };
        if n < 1 {
            return Err(format!("-concurrency: {n} games at once on {cpus} hardware threads"));
        }
        if n > cpus && !self.force_concurrency {
            return Err(format!(
                "-concurrency {n}: more than the {cpus} hardware threads (add -force-concurrency)"
            ));
        }
        Ok(vec!["--concurrency".into(), n.to_string()])
    }
}

/// A key=value adjudication rule with fastchess's defaults for missing keys, in the runner's
/// `key=value,...` form. Scores may not be negative (fastchess refuses them too).
fn adjudication(o: &Opt, keys: &[(&str, &str)]) -> Result<String, String> {
    let name = &o.name;
    let mut vals: Vec<String> = keys.iter().map(|(_, d)| d.to_string()).collect();
    for (k, v) in o.some_pairs()? {
        let Some(i) = keys.iter().position(|(key, _)| *key == k) else {
            return Err(format!("{name}: unknown key {k:?}"));
        };
        let n: i64 = number(name, &v)?;
        if n < 0 {
            return Err(format!("{name}: {k}={v} cannot be negative"));
        }
        vals[i] = n.to_string();
    }
    let parts: Vec<String> = keys.iter().zip(&vals).map(|((k, _), v)| format!("{k}={v}")).collect();
    Ok(parts.join(","))
}

/// Milliseconds as the runner's seconds flags take them.
fn ms_as_seconds(ms: u64) -> String {
    format!("{}", ms as f64 / 1000.0)
}

const HELP: &str = "\
runner fastchess [FASTCHESS OPTIONS] [-- RUNNER MATCH OPTIONS]

Reads a fastchess command line (single-dash options: -engine cmd=X name=Y option.Hash=16,
-each tc=10+0.1, -openings file=B format=epd order=random, -games 2 -rounds 500,
-concurrency 8, -sprt elo0=0 elo1=5 alpha=0.05 beta=0.05, -pgnout file=out.pgn, ...), prints
the `runner match` command it means on one line, and runs it. Where fastchess's defaults differ
from the runner's (concurrency 1, sequential book order, a time margin of 0 ms, 2 rounds of 2
games, stopping at an engine's first crash without -recover), the command says so explicitly.
An option the runner does not have is refused with one line naming it, before anything starts
(exit 2). Options after `--` are runner match options, passed as they are (e.g. -- --out DIR).
Every fastchess option and its runner equivalent: the guide's page
\"Coming from fastchess or cutechess-cli\" (docs/guide/fastchess.md).
";
