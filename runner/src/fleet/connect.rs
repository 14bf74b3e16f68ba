//! Connecting to the fleet's PostgreSQL: `--db URL` or `RUNNER_DB`, in libpq's two spellings
//! (`postgresql://user@host:port/db?sslmode=verify-full` or `host=/run/pg dbname=fleet`), a
//! password from the URL, `PGPASSWORD`, or the password file (`PGPASSFILE`, else `~/.pgpass`).
//!
//! TLS is rustls with Mozilla's roots (or `sslrootcert=FILE`). libpq's `sslmode` values are taken:
//! `disable`; `prefer` (the default: TLS when the server offers it); `require`, `verify-ca` and
//! `verify-full` all require TLS and verify the server's certificate chain and host name (stricter
//! than libpq's `require`, which checks nothing). Unix sockets (`host=/path`) never use TLS.
//! A connection string's password never appears in an error or a log: [`DbTarget`] prints
//! `user@host:port/db` only.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::{Client, Config, NoTls};

/// The environment variable read when `--db` is not given.
pub const DB_ENV: &str = "RUNNER_DB";

/// A parsed connection string: the driver's configuration and our TLS settings.
#[derive(Clone)]
pub struct DbTarget {
    config: Config,
    tls: TlsMode,
    root_cert: Option<PathBuf>,
    /// The worker's frequent statements are prepared once per connection (`Conn`), unless the
    /// connection string says `prepared_statements=off` (a transaction pooler that does not
    /// keep them, such as PgBouncer before 1.21 in transaction mode).
    prepared_statements: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TlsMode {
    Disable,
    Prefer,
    Require,
}

impl fmt::Display for DbTarget {
    /// `user@host:port/db`, never the password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.config;
        let host = match c.get_hosts().first() {
            Some(Host::Tcp(h)) => h.clone(),
            Some(Host::Unix(p)) => p.display().to_string(),
            None => "localhost".into(),
        };
        let port = c.get_ports().first().copied().unwrap_or(5432);
        let user = c.get_user().unwrap_or("?");
        write!(f, "{user}@{host}:{port}/{}", c.get_dbname().unwrap_or(user))
    }
}

impl fmt::Debug for DbTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DbTarget({self})")
    }
}

/// The connection string of `--db`, else of `RUNNER_DB`.
pub fn db_url(flag: Option<&str>) -> Result<String> {
    match flag {
        Some(s) => Ok(s.to_string()),
        None => {
            std::env::var(DB_ENV).map_err(|_| anyhow!("no database: give --db URL or set {DB_ENV}"))
        }
    }
}

/// Splits our TLS keys off a connection string (the driver does not know `verify-full` or
/// `sslrootcert`) and parses the rest.
pub fn parse_target(url: &str) -> Result<DbTarget> {
    let (rest, keys) = take_our_keys(url);
    let (sslmode, root) = (keys.sslmode, keys.sslrootcert);
    let prepared_statements = match keys.prepared_statements.as_deref() {
        None | Some("on") => true,
        Some("off") => false,
        Some(other) => bail!("prepared_statements={other} is not on or off"),
    };
    let mut config: Config = rest.parse().map_err(|e| {
        // The driver's message never quotes the string, so no password leaks through it; a
        // key it does not know is named (a key is never a secret).
        match unknown_key(&rest) {
            Some(k) => anyhow!(
                "cannot parse the database connection string: unknown key {k:?} (known: {})",
                KNOWN_KEYS.join(", ")
            ),
            None => anyhow!("cannot parse the database connection string: {e}"),
        }
    })?;
    let tls = match sslmode.as_deref() {
        None | Some("prefer") | Some("allow") => TlsMode::Prefer,
        Some("disable") => TlsMode::Disable,
        Some("require") | Some("verify-ca") | Some("verify-full") => TlsMode::Require,
        Some(other) => bail!(
            "sslmode={other} is not one of disable, allow, prefer, require, verify-ca, verify-full"
        ),
    };
    config.ssl_mode(match tls {
        TlsMode::Disable => SslMode::Disable,
        TlsMode::Prefer => SslMode::Prefer,
        TlsMode::Require => SslMode::Require,
    });
    if config.get_user().is_none() {
        let user = std::env::var("PGUSER")
            .or_else(|_| std::env::var("USER"))
            .map_err(|_| anyhow!("no database user: give user= in the connection string"))?;
        config.user(&user);
    }
    if config.get_hosts().is_empty() {
        config.host(std::env::var("PGHOST").as_deref().unwrap_or("localhost"));
    }
    if config.get_password().is_none() {
        if let Ok(p) = std::env::var("PGPASSWORD") {
            config.password(p);
        } else if let Some(p) = password_from_file(&config) {
            config.password(p);
        }
    }
    config.connect_timeout(Duration::from_secs(10));
    config.application_name(super::schema::application_name());
    Ok(DbTarget { config, tls, root_cert: root.map(PathBuf::from), prepared_statements })
}

/// The keys the driver takes, and ours (`take_our_keys`).
const KNOWN_KEYS: &[&str] = &[
    "user",
    "password",
    "dbname",
    "options",
    "application_name",
    "host",
    "hostaddr",
    "port",
    "connect_timeout",
    "tcp_user_timeout",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_retries",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
    "sslnegotiation",
    "sslmode",
    "sslrootcert",
    "prepared_statements",
];

/// The first key of a URL's query or a key=value string that is not in [`KNOWN_KEYS`].
fn unknown_key(s: &str) -> Option<String> {
    let pairs: Vec<&str> = if s.starts_with("postgres://") || s.starts_with("postgresql://") {
        s.split_once('?').map(|(_, q)| q.split('&').collect()).unwrap_or_default()
    } else {
        s.split_whitespace().collect()
    };
    pairs
        .into_iter()
        .filter_map(|kv| kv.split_once('=').map(|(k, _)| k.trim()))
        .find(|k| !k.is_empty() && !KNOWN_KEYS.contains(k))
        .map(str::to_string)
}

/// The keys of a connection string that the driver does not take.
#[derive(Debug, Default, PartialEq)]
struct OurKeys {
    sslmode: Option<String>,
    sslrootcert: Option<String>,
    prepared_statements: Option<String>,
}

/// Removes `sslmode`, `sslrootcert` and `prepared_statements` from a URL's query or a
/// key=value string.
fn take_our_keys(url: &str) -> (String, OurKeys) {
    let mut keys = OurKeys::default();
    let mut take = |k: &str, v: &str| {
        let slot = match k {
            "sslmode" => &mut keys.sslmode,
            "sslrootcert" => &mut keys.sslrootcert,
            "prepared_statements" => &mut keys.prepared_statements,
            _ => return false,
        };
        *slot = Some(v.to_string());
        true
    };
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let Some((base, query)) = url.split_once('?') else {
            return (url.to_string(), OurKeys::default());
        };
        let kept: Vec<&str> = query
            .split('&')
            .filter(|kv| {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                !take(k, &percent_decode(v))
            })
            .collect();
        let rest =
            if kept.is_empty() { base.to_string() } else { format!("{base}?{}", kept.join("&")) };
        (rest, keys)
    } else {
        let kept: Vec<&str> = url
            .split_whitespace()
            .filter(|kv| {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                !take(k.trim(), v.trim().trim_matches('\''))
            })
            .collect();
        (kept.join(" "), keys)
    }
}

/// `%XX` escapes of a URL query value decoded (a path such as `sslrootcert=%2Fetc%2Fca.pem`).
fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
}

/// The password of the first matching `host:port:database:username:password` line of the
/// password file (libpq's rules: `*` matches anything, `\:` and `\\` escape). A file readable
/// by group or others is ignored with a warning, as libpq does.
fn password_from_file(c: &Config) -> Option<String> {
    let path = match std::env::var_os("PGPASSFILE") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".pgpass"),
    };
    let text = read_pgpass(&path)?;
    let host = match c.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(_)) | None => "localhost".into(),
    };
    let port = c.get_ports().first().copied().unwrap_or(5432).to_string();
    let user = c.get_user().unwrap_or_default().to_string();
    let db = c.get_dbname().map(str::to_string).unwrap_or_else(|| user.clone());
    pgpass_lookup(&text, [&host, &port, &db, &user])
}

fn read_pgpass(path: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).ok()?;
    if meta.permissions().mode() & 0o077 != 0 {
        errln!(
            "warning: password file {} has group or world access; it is ignored (chmod 0600)",
            path.display()
        );
        return None;
    }
    std::fs::read_to_string(path).ok()
}

/// The password for `[host, port, database, user]` in a password file's text.
pub fn pgpass_lookup(text: &str, want: [&str; 4]) -> Option<String> {
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields = split_pgpass(line);
        if fields.len() != 5 {
            continue;
        }
        if fields[..4].iter().zip(want).all(|(f, w)| f == "*" || f == w) {
            return Some(fields[4].clone());
        }
    }
    None
}

fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(ch) = chars.next() {
        match ch {
            '\\' => {
                if let (Some(n), Some(f)) = (chars.next(), fields.last_mut()) {
                    f.push(n);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            _ => {
                if let Some(f) = fields.last_mut() {
                    f.push(ch);
                }
            }
        }
    }
    fields
}

impl DbTarget {
    /// Whether a worker prepares its frequent statements once per connection.
    pub fn prepared_statements(&self) -> bool {
        self.prepared_statements
    }

    /// Connects; the connection's driver task runs in the background until the client drops.
    /// A failure is a [`ConnectError`] (its source says whether it may pass).
    pub async fn connect(&self) -> Result<Client> {
        let unix = matches!(self.config.get_hosts().first(), Some(Host::Unix(_)));
        // A socket folder that is not there is a mistyped URL, not a server starting: said at once.
        if let Some(Host::Unix(dir)) = self.config.get_hosts().first()
            && !dir.is_dir()
        {
            bail!(
                "cannot connect to the database {self}: its socket folder {} does not exist \
                 (the URL's host)",
                dir.display()
            );
        }
        let failed = |e| ConnectError { target: self.to_string(), source: e };
        if self.tls == TlsMode::Disable || unix {
            let (client, conn) = self.config.connect(NoTls).await.map_err(failed)?;
            tokio::spawn(async move {
                let _ = conn.await;
            });
            return Ok(client);
        }
        let tls = tokio_postgres_rustls::MakeRustlsConnect::new(self.tls_config()?);
        let (client, conn) = self.config.connect(tls).await.map_err(failed)?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(client)
    }

    /// The driver's configuration (a server's connection pool is made from it).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The TLS configuration its connections use; None when they use none (`sslmode=disable`,
    /// a Unix socket).
    pub fn tls(&self) -> Result<Option<rustls::ClientConfig>> {
        let unix = matches!(self.config.get_hosts().first(), Some(Host::Unix(_)));
        if self.tls == TlsMode::Disable || unix {
            return Ok(None);
        }
        self.tls_config().map(Some)
    }

    fn tls_config(&self) -> Result<rustls::ClientConfig> {
        let mut roots = rustls::RootCertStore::empty();
        match &self.root_cert {
            Some(path) => {
                let pem = std::fs::read(path)
                    .with_context(|| format!("cannot read sslrootcert {}", path.display()))?;
                for cert in rustls_pemfile::certs(&mut pem.as_slice()) {
                    let cert = cert.map_err(|e| anyhow!("sslrootcert {}: {e}", path.display()))?;
                    roots.add(cert).map_err(|e| anyhow!("sslrootcert {}: {e}", path.display()))?;
                }
                if roots.is_empty() {
                    bail!("sslrootcert {} holds no PEM certificate", path.display());
                }
            }
            None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        Ok(rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| anyhow!("TLS setup: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth())
    }
}

/// A connection that could not be made: the target (never its password) and the driver's error.
#[derive(Debug)]
pub struct ConnectError {
    target: String,
    source: tokio_postgres::Error,
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot connect to the database {}: {}", self.target, pg_reason(&self.source))
    }
}

/// The driver's error is in the text already (a source would print it twice); [`Self::driver`]
/// gives it to those that sort errors (`link::is_transient`).
impl std::error::Error for ConnectError {}

impl ConnectError {
    /// The driver's error.
    pub fn driver(&self) -> &tokio_postgres::Error {
        &self.source
    }
}

/// The driver's error with the server's or the system's reason ("db error" alone says nothing:
/// the reason is its source). Never holds the password: neither the driver nor the server
/// repeats it.
pub fn pg_reason(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => match std::error::Error::source(e) {
            Some(src) => format!("{e}: {src}"),
            None => e.to_string(),
        },
    }
}

/// How long a one-shot command (status, cancel, submit, ...) waits for a database that refuses
/// connections for a passing reason (full, restarting).
pub const COMMAND_PATIENCE: Duration = Duration::from_secs(30);

/// `--db` (or `RUNNER_DB`) parsed and connected (a full or restarting database is waited for).
pub async fn connect(flag: Option<&str>) -> Result<(DbTarget, Client)> {
    let target = parse_target(&db_url(flag)?)?;
    let client = super::link::connect_patiently(&target, COMMAND_PATIENCE).await?;
    Ok((target, client))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_keys_are_taken_off_urls_and_keyword_strings() {
        let (rest, keys) = take_our_keys(
            "postgresql://u:secret@db.example/fleet?sslmode=verify-full&sslrootcert=%2Fca.pem&connect_timeout=5",
        );
        assert_eq!(rest, "postgresql://u:secret@db.example/fleet?connect_timeout=5");
        assert_eq!(keys.sslmode.as_deref(), Some("verify-full"));
        assert_eq!(keys.sslrootcert.as_deref(), Some("/ca.pem"));
        let (rest, keys) = take_our_keys("host=/tmp/pg dbname=fleet sslmode=disable");
        assert_eq!(rest, "host=/tmp/pg dbname=fleet");
        assert_eq!(keys.sslmode.as_deref(), Some("disable"));
    }

    #[test]
    fn an_unknown_key_is_named() {
        let e = parse_target("host=/tmp dbname=f user=u sslmod=require").unwrap_err().to_string();
        assert!(e.contains("unknown key \"sslmod\""), "{e}");
        let e = parse_target("postgresql://u:secret@h/f?bogus=1").unwrap_err().to_string();
        assert!(e.contains("unknown key \"bogus\"") && !e.contains("secret"), "{e}");
    }

    #[test]
    fn prepared_statements_are_on_unless_the_connection_string_turns_them_off() {
        assert!(parse_target("host=/tmp/pg user=u dbname=fleet").unwrap().prepared_statements());
        let t = parse_target("host=/tmp/pg port=6432 user=u prepared_statements=off dbname=fleet");
        assert!(!t.unwrap().prepared_statements());
        let t = parse_target("postgresql://u@db.example:6432/fleet?prepared_statements=off");
        assert!(!t.unwrap().prepared_statements());
        let e = parse_target("host=/tmp/pg user=u prepared_statements=maybe").err().unwrap();
        assert_eq!(format!("{e:#}"), "prepared_statements=maybe is not on or off");
    }

    #[test]
    fn the_password_is_never_shown() {
        let t = parse_target("postgresql://alice:hunter2@db.example:6543/fleet").unwrap();
        let shown = format!("{t} {t:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("alice@db.example:6543/fleet"), "{shown}");
        let e = parse_target("postgresql://alice:hunter2@db.example/fleet?sslmode=sometimes")
            .err()
            .unwrap();
        assert!(!format!("{e:#}").contains("hunter2"));
        let e = parse_target("postgresql://alice:hunter2@db.example:notaport/fleet").err().unwrap();
        assert!(!format!("{e:#}").contains("hunter2"), "{e:#}");
    }

    #[test]
    fn password_file_lines_match_with_wildcards_and_escapes() {
        let text = "# comment\nother:5432:*:bob:no\n*:5432:fleet:alice:pa\\:ss\n";
        assert_eq!(pgpass_lookup(text, ["h", "5432", "fleet", "alice"]).as_deref(), Some("pa:ss"));
        assert_eq!(pgpass_lookup(text, ["h", "5433", "fleet", "alice"]), None);
        assert_eq!(pgpass_lookup(text, ["other", "5432", "x", "bob"]).as_deref(), Some("no"));
    }
}
