//! The server's people side end to end: users made with `runner user`, their JSON API with
//! bearer tokens, the page's login, session cookie and CSRF-checked forms, `--private`, login
//! limits, and an approver approving a pending run in headless Chromium. Each attack is a
//! request that must be refused with the run unchanged; where today's direct-database path has
//! the equivalent, the comment names it.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use e2e::fleet::Fleet;
use e2e::http::{Reply, request};
use e2e::*;

/// A JSON POST with a bearer token (None: no Authorization header).
fn api_post(port: u16, path: &str, token: Option<&str>, body: &str) -> Reply {
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut h = vec![("Content-Type", "application/json")];
    if let Some(a) = &auth {
        h.push(("Authorization", a));
    }
    request(port, "POST", path, &h, body)
}

fn api_get(port: u16, path: &str, token: &str) -> Reply {
    request(port, "GET", path, &[("Authorization", &format!("Bearer {token}"))], "")
}

/// A form POST with cookies.
fn form_post(port: u16, path: &str, cookies: &str, form: &str) -> Reply {
    let mut h = vec![("Content-Type", "application/x-www-form-urlencoded")];
    if !cookies.is_empty() {
        h.push(("Cookie", cookies));
    }
    request(port, "POST", path, &h, form)
}

/// The value of the first `<input name="NAME" value="...">` of `html`.
fn input_value(html: &str, name: &str) -> Option<String> {
    let at = html.find(&format!("name=\"{name}\" value=\""))?;
    let rest = &html[at + name.len() + 15..];
    rest.split('"').next().map(String::from)
}

/// Percent-encodes a form value (letters and digits as they are).
fn enc(s: &str) -> String {
    s.bytes()
        .map(
            |b| {
                if b.is_ascii_alphanumeric() {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            },
        )
        .collect()
}

/// A fleet (`e2e::fleet::Fleet`: its database, its approver `ops` and its server) with users
/// alice and bob (submitters) and carol (approver), their tokens, a book and an empty
/// `results/`. The fleet's methods and fields through `Deref`.
struct Fixture {
    fleet: Fleet,
    book: String,
    alice: String,
    bob: String,
    carol: String,
}

impl std::ops::Deref for Fixture {
    type Target = Fleet;

    fn deref(&self) -> &Fleet {
        &self.fleet
    }
}

fn runner_ok(dir: &Path, args: &[&str]) -> String {
    let o = run_runner(dir, args);
    assert!(o.status.success(), "runner {args:?}: {}", stderr(&o));
    stdout(&o)
}

/// `runner user add NAME --db URL [--approver]` (the operator's): the token on the last line.
fn user_add(fleet: &Fleet, name: &str, approver: bool) -> String {
    let token = read_text(&fleet.user(name, approver)).trim().to_string();
    assert!(token.starts_with("rt_") && token.len() == 67, "the token alone last: {token}");
    token
}

fn user_passwd(dir: &Path, url: &str, name: &str, password: &str) {
    let mut child = Command::new(runner_bin())
        .current_dir(dir)
        .args(["user", "passwd", name, "--db", url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runner user passwd");
    child.stdin.take().unwrap().write_all(format!("{password}\n").as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "user passwd: {}", stderr(&o));
    assert!(!stdout(&o).contains(password) && !stderr(&o).contains(password));
}

fn fixture(name: &str) -> Fixture {
    let fleet = Fleet::new(name);
    std::fs::create_dir_all(fleet.dir.join("results")).unwrap();
    let book = write_book(&fleet.dir, 4);
    let alice = user_add(&fleet, "alice", false);
    let bob = user_add(&fleet, "bob", false);
    let carol = user_add(&fleet, "carol", true);
    Fixture { fleet, book, alice, bob, carol }
}

impl Fixture {
    /// A match run submitted through the server by the user of `token_file` (the fleet's
    /// approver `ops`: active at once).
    fn submit_by(&self, token_file: &Path) -> i64 {
        let (a, b) = (bad_spec("A", "good", None), bad_spec("B", "good", None));
        let mut args = vec!["match", "--engine", &a, "--engine", &b, "--book", &self.book];
        args.extend(["--nodes", "1", "--games", "4"]);
        self.fleet.submit_as(token_file, &args).0
    }

    /// A run of `owner` in `state` (submitted by the fleet's owner, then set so).
    fn run_of(&self, owner: &str, state: &str) -> i64 {
        let run = self.submit_by(&self.token_file);
        self.pg.psql(&format!(
            "UPDATE runs SET owner = '{owner}', state = '{state}', approved_by = NULL, \
             finished_at = CASE WHEN '{state}' IN ('pending', 'active') THEN NULL ELSE now() END \
             WHERE id = {run}"
        ));
        run
    }

    fn state(&self, run: i64) -> String {
        self.pg.psql(&format!("SELECT coalesce((SELECT state FROM runs WHERE id = {run}), 'gone')"))
    }

    fn row(&self, run: i64) -> String {
        self.pg.psql(&format!(
            "SELECT state, priority, throughput, owner, (SELECT count(*) FROM pairs p \
               WHERE p.run_id = r.id AND p.state = 'pending') FROM runs r WHERE id = {run}"
        ))
    }
}

/// The people's API of one test: the fixture, the server's port, alice's pending run and her
/// cancelled one.
struct Api<'a> {
    f: &'a Fixture,
    port: u16,
    pending: i64,
    ended: i64,
}

impl Api<'_> {
    fn post(&self, path: &str, token: Option<&str>, body: &str) -> Reply {
        api_post(self.port, path, token, body)
    }

    fn run(&self, run: i64, action: &str) -> String {
        format!("/api/v1/runs/{run}/{action}")
    }
}

#[test]
fn the_people_api_refuses_what_the_rights_table_refuses() {
    let _w = watchdog("people-api", Duration::from_secs(900));
    let f = fixture("people-api");
    let pending = f.run_of("alice", "pending");
    let ended = f.run_of("alice", "cancelled");
    let api = Api { f: &f, port: f.port(), pending, ended };
    let before = f.row(pending);
    anonymous_and_unknown_tokens_change_nothing(&api);
    another_owner_changes_nothing(&api, &before);
    a_submitter_approves_nothing_and_issues_no_key(&api, &before);
    bodies_are_typed_and_bounded(&api);
    the_owner_and_the_approver_do_what_they_may(&api);
    revoked_and_disabled_tokens_are_refused(&api);
}

/// Anonymous: no token, no change. (Today's main: a connection without a role is refused by
/// PostgreSQL itself; the page has no way to change anything.) A malformed or unknown token is
/// refused, never taken as anonymous.
fn anonymous_and_unknown_tokens_change_nothing(api: &Api) {
    let pending = api.pending;
    for action in ["approve", "cancel", "pulled"] {
        let r = api.post(&api.run(pending, action), None, "");
        assert_eq!(r.status, 401, "anonymous {action}: {r:?}");
    }
    let r = api.post(&api.run(pending, "modify"), None, r#"{"priority":-1}"#);
    assert_eq!(r.status, 401, "{r:?}");
    for bad in ["garbage", "rt_0000000000000000000000000000000000000000000000000000000000000000"] {
        let r = api.post(&api.run(pending, "cancel"), Some(bad), "");
        assert_eq!(r.status, 401, "{bad}: {r:?}");
    }
}

/// Bob cancels, modifies, purges and deletes alice's runs: refused, nothing changes.
/// (Today's main: `SELECT fleet_cancel(RUN)` / `fleet_modify` / `fleet_delete` as role bob,
/// refused by fleet_may_change; `SELECT fleet_pulled(RUN)` as bob succeeds: no owner check.)
fn another_owner_changes_nothing(api: &Api, before: &str) {
    let (f, pending, ended) = (api.f, api.pending, api.ended);
    let bob = Some(f.bob.as_str());
    let r = api.post(&api.run(pending, "cancel"), bob, "");
    assert_eq!(r.status, 403, "{r:?}");
    assert!(r.body.contains("alice"), "names the owner: {}", r.body);
    for (run, action, body) in [
        (pending, "modify", r#"{"games":2}"#),
        (pending, "purge", r#"{"worker":"k"}"#),
        (ended, "pulled", ""),
        (ended, "delete", r#"{"force":true}"#),
    ] {
        let r = api.post(&api.run(run, action), bob, body);
        assert_eq!(r.status, 403, "{action}: {r:?}");
    }
    assert_eq!(f.row(pending), before);
    assert_eq!(f.state(ended), "cancelled");
    assert_eq!(f.pg.psql(&format!("SELECT pulled_by IS NULL FROM runs WHERE id = {ended}")), "t");
}

/// Alice, a submitter, approves her own run, raises its priority, issues a worker key, reads
/// the keys and the audit log: refused. (Today's main: `SELECT fleet_approve(RUN)`,
/// `fleet_modify(RUN, 5, NULL, NULL)`, `fleet_key_add('k')` as role alice, all refused.)
fn a_submitter_approves_nothing_and_issues_no_key(api: &Api, before: &str) {
    let (f, pending, port) = (api.f, api.pending, api.port);
    let alice = Some(f.alice.as_str());
    let r = api.post(&api.run(pending, "approve"), alice, "");
    assert_eq!(r.status, 403, "{r:?}");
    let r = api.post(&api.run(pending, "modify"), alice, r#"{"priority":5}"#);
    assert_eq!(r.status, 403, "{r:?}");
    let r = api.post("/api/v1/worker-keys", alice, r#"{"name":"box1"}"#);
    assert_eq!(r.status, 403, "{r:?}");
    assert_eq!(api_get(port, "/api/v1/worker-keys", &f.alice).status, 403);
    assert_eq!(api_get(port, "/api/v1/audit", &f.alice).status, 403);
    assert_eq!(f.row(pending), before);
    assert_eq!(f.pg.psql("SELECT count(*) FROM worker_keys WHERE name <> 'box'"), "0");
}

/// Bodies are typed and bounded: out of range, unknown fields, markup or control characters in
/// a name, an oversized body. (Today's main: `fleet_key_add` takes any name up to 200
/// characters, markup and newlines included.)
fn bodies_are_typed_and_bounded(api: &Api) {
    let f = api.f;
    let (alice, carol) = (Some(f.alice.as_str()), Some(f.carol.as_str()));
    let path = api.run(api.pending, "modify");
    let r = api.post(&path, alice, r#"{"throughput":0}"#);
    assert_eq!(r.status, 400, "{r:?}");
    let r = api.post(&path, alice, r#"{"priority":-1,"owner":"bob"}"#);
    assert!((400..500).contains(&r.status), "unknown field: {r:?}");
    for name in ["<b>k</b>", "a\\nb", &"k".repeat(65)] {
        let r = api.post("/api/v1/worker-keys", carol, &format!(r#"{{"name":"{name}"}}"#));
        assert!((400..500).contains(&r.status), "{name}: {r:?}");
    }
    let big = format!(r#"{{"name":"{}"}}"#, "k".repeat(20_000));
    let r = api.post("/api/v1/worker-keys", carol, &big);
    assert!((400..500).contains(&r.status), "oversized body: {}", r.status);
    assert_eq!(f.pg.psql("SELECT count(*) FROM worker_keys WHERE name <> 'box'"), "0");
}

/// What the owner may do, she does: lower her priority. The approver approves, issues a key
/// (shown once, stored hashed) and reads the log. Delete: the owner's finished run, not
/// pulled, is refused without force, then removed.
fn the_owner_and_the_approver_do_what_they_may(api: &Api) {
    let (f, pending, ended, port) = (api.f, api.pending, api.ended, api.port);
    let (alice, carol) = (Some(f.alice.as_str()), Some(f.carol.as_str()));
    let r = api.post(&api.run(pending, "modify"), alice, r#"{"priority":-5,"throughput":50}"#);
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(
        f.pg.psql(&format!("SELECT priority, throughput FROM runs WHERE id = {pending}")),
        "-5|50"
    );
    let r = api.post(&api.run(pending, "approve"), carol, "");
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(f.state(pending), "active");
    let r = api.post("/api/v1/worker-keys", carol, r#"{"name":"box1"}"#);
    assert_eq!(r.status, 200, "{r:?}");
    let v: serde_json::Value = serde_json::from_str(&r.body).unwrap();
    let key = v["key"].as_str().expect("the key").to_string();
    let list = api_get(port, "/api/v1/worker-keys", &f.carol);
    assert_eq!(list.status, 200);
    assert!(list.body.contains("box1") && !list.body.contains(&key), "{}", list.body);
    assert!(!f.pg.psql("SELECT key_hash FROM worker_keys").contains(&key));
    let audit = api_get(port, "/api/v1/audit", &f.carol);
    assert_eq!(audit.status, 200);
    let log: serde_json::Value = serde_json::from_str(&audit.body).unwrap();
    let did: Vec<(String, String)> = log["audit"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["actor"].as_str().unwrap().into(), e["action"].as_str().unwrap().into()))
        .collect();
    for want in [("carol", "key-add"), ("carol", "approve"), ("alice", "modify")] {
        assert!(did.contains(&(want.0.into(), want.1.into())), "{want:?} in {did:?}");
    }
    assert!(!audit.body.contains(&key));
    let r = api.post(&api.run(ended, "delete"), alice, "{}");
    assert_eq!(r.status, 409, "{r:?}");
    let r = api.post(&api.run(ended, "delete"), alice, r#"{"force":true}"#);
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(f.state(ended), "gone");
}

/// A revoked token and a disabled user's token: refused. (Today's main: a revoked worker key is
/// refused by fleet_worker_auth; people have PostgreSQL roles, revoked by hand.) Tokens are
/// stored hashed only.
fn revoked_and_disabled_tokens_are_refused(api: &Api) {
    let (f, pending, port) = (api.f, api.pending, api.port);
    let second = runner_ok(&f.dir, &["user", "token", "alice", "--db", &f.pg.url()]);
    let second = second.lines().last().unwrap().to_string();
    assert_eq!(api_get(port, "/api/v1/me", &second).status, 200);
    runner_ok(&f.dir, &["user", "revoke", "alice", "--db", &f.pg.url()]);
    for t in [&f.alice, &second] {
        let r = api.post(&api.run(pending, "cancel"), Some(t), "");
        assert_eq!(r.status, 401, "revoked: {r:?}");
    }
    runner_ok(&f.dir, &["user", "disable", "carol", "--db", &f.pg.url()]);
    let r = api.post(&api.run(pending, "cancel"), Some(f.carol.as_str()), "");
    assert_eq!(r.status, 401, "disabled: {r:?}");
    assert_eq!(f.state(pending), "active");
    let stored = f.pg.psql("SELECT encode(token_hash, 'hex') FROM user_tokens");
    for t in [&f.alice, &f.bob, &f.carol, &second] {
        assert!(!stored.contains(&t[3..]), "a token stored as itself");
    }
}

/// Logs `user` in through the form from client address `via` (an `X-Forwarded-For` the
/// trusted proxy 127.0.0.1 passes on, or none); the reply of the POST.
fn login(port: u16, user: &str, password: &str, via: Option<&str>) -> Reply {
    let form = request(port, "GET", "/login", &[], "");
    assert_eq!(form.status, 200, "{form:?}");
    let csrf = input_value(&form.body, "csrf").expect("a csrf field");
    let cookie = format!("runner_login={}", form.cookie("runner_login").expect("a login cookie"));
    let body = format!("csrf={csrf}&username={}&password={}", enc(user), enc(password));
    let mut h = vec![("Content-Type", "application/x-www-form-urlencoded"), ("Cookie", &cookie)];
    if let Some(v) = via {
        h.push(("X-Forwarded-For", v));
    }
    request(port, "POST", "/login", &h, &body)
}

#[test]
fn forms_need_a_session_and_its_token_logins_are_limited_and_private_needs_a_login() {
    let _w = watchdog("people-web", Duration::from_secs(900));
    let f = fixture("people-web");
    let url = f.pg.url();
    user_passwd(&f.dir, &url, "carol", "carol's pw");
    user_passwd(&f.dir, &url, "bob", "bob's pw");
    let pending = f.run_of("alice", "pending");
    let evil = f.run_of("<i>eve</i>", "active");
    // Markup where only today's direct path could put it: a worker key's name (fleet_key_add
    // takes any text) with a worker and counts in the run, and an audit detail.
    f.pg.psql(&format!(
        "INSERT INTO worker_keys (name) VALUES ('<b>k</b>');
         INSERT INTO workers (host, pid, concurrency, lease_secs, key_id)
           SELECT 'h', 1, 1, 60, id FROM worker_keys WHERE name = '<b>k</b>';
         INSERT INTO tallies (run_id, pairing, worker_id) SELECT {evil}, 0, id FROM workers;
         INSERT INTO audit (actor, action, detail) VALUES ('operator', 'user-add', '<script>x()</script>');"
    ));
    let extra = ["--results", "results", "--trusted-proxy", "127.0.0.1"];
    let server = f.server_on(&url, &extra, "serve");
    let port = server.port;
    let run_path = format!("/run/fleet-{pending}");

    let (carol, csrf) = carol_logs_in_and_sees_the_approve_form(&f, port, &run_path);
    let bob = forged_and_foreign_posts_are_refused(&f, port, (&run_path, pending), (&carol, &csrf));
    // With her session and its token, carol approves.
    let r = form_post(port, &format!("{run_path}/act/approve"), &carol, &format!("csrf={csrf}"));
    assert_eq!(r.status, 303, "{r:?}");
    assert_eq!(f.state(pending), "active");
    markup_is_escaped_on_every_page(port, evil, &carol, &bob);
    logins_are_limited_per_client_address(port);
    // Log out: the session is gone.
    let r = form_post(port, "/logout", &carol, &format!("csrf={csrf}"));
    assert_eq!(r.status, 303, "{r:?}");
    let page = request(port, "GET", &run_path, &[("Cookie", &carol)], "");
    assert!(!html_section(&page.body, "actions").contains("csrf"));

    private_needs_a_login(&f, &run_path, pending);
}

/// A login POST without the form's cookie is refused; carol's login gives a strict session
/// cookie, and the run page shows her the approve form. Her cookie and the form's token.
fn carol_logs_in_and_sees_the_approve_form(
    f: &Fixture,
    port: u16,
    run_path: &str,
) -> (String, String) {
    // A login POST without the form's cookie (another site's form): refused.
    let r = form_post(port, "/login", "", "csrf=x&username=carol&password=carol%27s+pw");
    assert_eq!(r.status, 403, "{r:?}");
    // The approver logs in: a session cookie, HttpOnly and SameSite=Strict (not Secure over
    // plain HTTP without --public-url https://).
    let r = login(port, "carol", "carol's pw", None);
    assert_eq!(r.status, 303, "{r:?}");
    let sid = r.cookie("runner_session").expect("a session cookie");
    let line = r.head.lines().find(|l| l.starts_with("set-cookie: runner_session=")).unwrap();
    assert!(line.contains("httponly") && line.contains("samesite=strict"), "{line}");
    assert!(!line.contains("secure"), "{line}");
    let carol = format!("runner_session={sid}");
    assert!(!f.pg.psql("SELECT encode(id_hash, 'hex') FROM web_sessions").contains(&sid));

    // The run page shows her the approve form with the session's CSRF token.
    let page = request(port, "GET", run_path, &[("Cookie", &carol)], "");
    assert_eq!(page.status, 200);
    let actions = html_section(&page.body, "actions");
    assert!(actions.contains("id=\"approve\""), "{actions}");
    // Above the button, what she approves: each engine as workers will run it.
    let what = actions.split("id=\"approve\"").next().unwrap_or_default();
    assert!(what.contains("id=\"what-runs\"") && what.contains("command: "), "{actions}");
    let csrf = input_value(actions, "csrf").expect("the form's token");
    // Anonymous readers see no form.
    let anon = request(port, "GET", run_path, &[], "");
    assert!(!anon.body.contains("id=\"approve\"") && anon.body.contains("/login"));

    (carol, csrf.to_string())
}

/// Posts without the session's token, and bob's own valid token on alice's run: refused, the
/// run still pending. Bob's session cookie.
fn forged_and_foreign_posts_are_refused(
    f: &Fixture,
    port: u16,
    (run_path, pending): (&str, i64),
    (carol, csrf): (&str, &str),
) -> String {
    // Forged posts: no token, a wrong token, the token without the session. (Today's main has
    // no forms; the gap this closes is a change from another site through the cookie.)
    let act = format!("{run_path}/act/approve");
    assert_eq!(form_post(port, &act, carol, "").status, 403);
    let wrong = "0".repeat(64);
    assert_eq!(form_post(port, &act, carol, &format!("csrf={wrong}")).status, 403);
    assert_eq!(form_post(port, &act, "", &format!("csrf={csrf}")).status, 401);
    assert_eq!(form_post(port, &act, "runner_session=junk", &format!("csrf={csrf}")).status, 401);
    assert_eq!(f.state(pending), "pending");
    // Bob, logged in, posts his own valid token to approve and to cancel alice's run: refused.
    let b = login(port, "bob", "bob's pw", None);
    let bob = format!("runner_session={}", b.cookie("runner_session").expect("bob's session"));
    let bob_page = request(port, "GET", run_path, &[("Cookie", &bob)], "");
    let bob_csrf = input_value(&bob_page.body, "csrf").expect("bob's token");
    assert!(!bob_page.body.contains("id=\"approve\"") && !bob_page.body.contains("id=\"cancel\""));
    assert_eq!(form_post(port, &act, &bob, &format!("csrf={bob_csrf}")).status, 403);
    let cancel = format!("{run_path}/act/cancel");
    assert_eq!(form_post(port, &cancel, &bob, &format!("csrf={bob_csrf}")).status, 403);
    assert_eq!(f.state(pending), "pending");
    bob
}

fn markup_is_escaped_on_every_page(port: u16, evil: i64, carol: &str, bob: &str) {
    // Markup in an owner's name, a key's name and an audit detail is escaped on every page.
    let page = request(port, "GET", &format!("/run/fleet-{evil}"), &[("Cookie", carol)], "");
    let audit = request(port, "GET", "/audit", &[("Cookie", carol)], "");
    let workers = request(port, "GET", "/workers?all=true", &[("Cookie", carol)], "");
    for (what, r) in [("run page", &page), ("audit", &audit), ("workers", &workers)] {
        assert_eq!(r.status, 200, "{what}: {r:?}");
        for raw in ["<i>eve</i>", "<b>k</b>", "<script>x()"] {
            assert!(!r.body.contains(raw), "{what} holds {raw} unescaped");
        }
    }
    assert!(html_section(&page.body, "actions").contains("&lt;i&gt;eve&lt;/i&gt;"));
    assert!(html_section(&page.body, "actions").contains("&lt;b&gt;k&lt;/b&gt;"));
    assert!(audit.body.contains("&lt;script&gt;x()"), "{}", audit.body);
    // The audit page is for approvers.
    assert_eq!(request(port, "GET", "/audit", &[("Cookie", bob)], "").status, 403);
    assert_eq!(request(port, "GET", "/audit", &[], "").status, 401);
}

fn logins_are_limited_per_client_address(port: u16) {
    // Brute force from one client address (behind the trusted proxy): 10 attempts, then 429
    // even with the right password; another address is not held back.
    for i in 0..10 {
        let r = login(port, "carol", &format!("guess {i}"), Some("198.51.100.9"));
        assert_eq!(r.status, 401, "attempt {i}: {r:?}");
    }
    let r = login(port, "carol", "carol's pw", Some("198.51.100.9"));
    assert_eq!(r.status, 429, "{r:?}");
    assert!(r.header("retry-after").is_some(), "{}", r.head);
    assert_eq!(login(port, "carol", "carol's pw", Some("198.51.100.10")).status, 303);
}

fn private_needs_a_login(f: &Fixture, run_path: &str, pending: i64) {
    let url = f.pg.url();
    // --private: reading needs a login too.
    let private = f.server_on(&url, &["--results", "results", "--private"], "private");
    let p = private.port;
    for path in ["/", "/workers", run_path, "/metrics"] {
        let r = request(p, "GET", path, &[], "");
        assert_eq!((r.status, r.header("location")), (303, Some("/login")), "{path}: {r:?}");
    }
    for path in ["/api/runs", &format!("/api/run/fleet-{pending}")] {
        assert_eq!(request(p, "GET", path, &[], "").status, 401, "{path}");
    }
    assert_eq!(request(p, "GET", "/login", &[], "").status, 200);
    assert_eq!(api_get(p, "/api/runs", &f.bob).status, 200);
    let r = login(p, "bob", "bob's pw", None);
    let bob = format!("runner_session={}", r.cookie("runner_session").expect("a session"));
    let index = request(p, "GET", "/", &[("Cookie", &bob)], "");
    assert_eq!(index.status, 200);
    assert!(index.body.contains(&format!("fleet-{pending}")), "the list");
}

#[test]
fn an_approver_logs_in_and_approves_a_pending_run_in_chromium() {
    let _w = watchdog("people-chromium", Duration::from_secs(900));
    let f = fixture("people-chromium");
    let url = f.pg.url();
    // Alice, a submitter, submits through the server with her token: the run waits for
    // approval.
    let run = f.submit_by(&f.dir.join("alice.token"));
    assert_eq!(f.state(run), "pending");
    user_passwd(&f.dir, &url, "carol", "carol's pw");
    let base = f.url.clone();

    let mut b = cdp::Browser::launch(&f.dir);
    b.open(&format!("{base}/login"));
    b.eval(
        "document.querySelector('#login input[name=username]').value = 'carol';
         document.querySelector('#login input[name=password]').value = \"carol's pw\";
         document.querySelector('#login button').click(); true",
    );
    b.wait_for(&format!("location.href === '{base}/'"), Duration::from_secs(60));
    b.open(&format!("{base}/run/fleet-{run}"));
    b.wait_for("document.querySelector('#actions #approve button')", Duration::from_secs(60));
    b.eval("document.querySelector('#actions #approve button').click(); true");
    // The form posts, the server redirects to the run page, which no longer offers approval.
    b.wait_for(
        "document.querySelector('#actions') && !document.querySelector('#actions #approve')",
        Duration::from_secs(60),
    );
    assert_eq!(f.state(run), "active");
    assert_eq!(
        f.pg.psql(&format!("SELECT approved_by FROM runs WHERE id = {run}")),
        "carol",
        "approved by the user, not the server's role"
    );
    assert_eq!(
        f.pg.psql(&format!("SELECT actor, action FROM audit WHERE run_id = {run}")),
        "carol|approve"
    );
}

/// `runner status|approve|cancel|modify|workers|worker-key --server URL` with a user's token
/// (`--token-file FILE` or `RUNNER_TOKEN`): no database URL anywhere, the same words as the
/// direct way. Another owner's cancel and a submitter's approval are refused in one line with
/// the run unchanged (today's main: `runner cancel --db` as another role, refused by
/// `fleet_cancel`'s owner check); a change without a token is refused before any request.
/// The people's commands of one test: run from the fixture's folder against `url`, with no
/// database in their environment.
struct Cli<'a> {
    f: &'a Fixture,
    url: String,
}

impl Cli<'_> {
    /// A command of the user whose token is in `file`.
    fn run(&self, file: Option<&str>, args: &[&str]) -> std::process::Output {
        let mut cmd = Command::new(runner_bin());
        cmd.current_dir(&self.f.dir).args(args).args(["--server", &self.url]);
        cmd.stdin(Stdio::null());
        for var in ["RUNNER_DB", "RUNNER_SERVER", "RUNNER_TOKEN", "PGHOST", "PGPORT"] {
            cmd.env_remove(var);
        }
        if let Some(file) = file {
            cmd.args(["--token-file", file]);
        }
        cmd.output().expect("runner")
    }

    /// `token` in a file of the given mode; its path.
    fn token_file(&self, name: &str, token: &str, mode: u32) -> String {
        use std::os::unix::fs::PermissionsExt as _;
        let p = self.f.dir.join(format!("{name}.token"));
        std::fs::write(&p, format!("{token}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p.to_string_lossy().into_owned()
    }
}

/// The standard output of a command that succeeded.
fn said(o: std::process::Output, what: &str) -> String {
    assert!(o.status.success(), "{what}: {}", stderr(&o));
    stdout(&o)
}

/// A command refused in one line holding `needle` (warnings aside).
fn refused(o: std::process::Output, what: &str, needle: &str) {
    assert!(!o.status.success(), "{what} was not refused: {}", stdout(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().filter(|l| !l.starts_with("warning:")).collect();
    assert!(lines.len() == 1 && lines[0].contains(needle), "{what}: {err}");
}

#[test]
fn the_commands_speak_to_the_server_with_a_users_token() {
    let _w = watchdog("people-cli", Duration::from_secs(900));
    let f = fixture("people-cli");
    let run = f.run_of("alice", "pending");
    let cli = Cli { f: &f, url: f.url.clone() };
    let (alice, bob) =
        (cli.token_file("alice", &f.alice, 0o600), cli.token_file("bob", &f.bob, 0o644));
    let carol = cli.token_file("carol", &f.carol, 0o600);
    let id = run.to_string();
    reading_needs_no_token(&cli, run, &bob);
    changes_follow_the_rights(&cli, run, &alice, &bob, &carol);
    worker_keys_and_the_kinds_of_secret(&cli, f.port(), &alice, &carol);

    // Neither a server nor a database: one line naming both ways.
    let o = Command::new(runner_bin())
        .current_dir(&f.dir)
        .args(["cancel", &id])
        .env_remove("RUNNER_DB")
        .env_remove("RUNNER_SERVER")
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(stderr(&o).contains("give --server URL (or set RUNNER_SERVER)"), "{}", stderr(&o));

    // RUNNER_SERVER and RUNNER_TOKEN instead of flags.
    let o = Command::new(runner_bin())
        .current_dir(&f.dir)
        .args(["status", &id])
        .env_remove("RUNNER_DB")
        .env("RUNNER_SERVER", &cli.url)
        .env("RUNNER_TOKEN", &f.alice)
        .output()
        .unwrap();
    assert!(said(o, "status by the environment").contains("cancelled"));

    // Who did what: the audit log names each person.
    let audit = f.pg.psql(&format!(
        "SELECT string_agg(actor || ' ' || action, ', ' ORDER BY id) FROM audit WHERE run_id = {run}"
    ));
    assert_eq!(audit, "carol approve, alice modify, alice cancel", "{audit}");
}

/// Reading: the run and its engines, without and with a token. Bob's token file may be read by
/// others: said, as ssh does, and used all the same.
fn reading_needs_no_token(cli: &Cli, run: i64, bob: &str) {
    let id = run.to_string();
    let out = said(cli.run(None, &["status", &id]), "status");
    assert!(out.contains(&format!("run {run} (match, ")) && out.contains("pending"), "{out}");
    assert!(out.contains("command: "), "the engines as workers run them: {out}");
    let out = said(cli.run(None, &["workers"]), "workers");
    assert!(out.contains("no worker"), "{out}");
    let o = cli.run(Some(bob), &["status"]);
    assert!(stderr(&o).contains("may be read by others (mode 644)"), "{}", stderr(&o));
    assert!(said(o, "bob's status").contains(&format!("run {run} (match")));
}

/// Refusals: no token for a change; bob cancels alice's run; alice approves her own. Carol, an
/// approver: not without a yes on a terminal, then with --yes. Alice changes and cancels her
/// run, with the direct way's words.
fn changes_follow_the_rights(cli: &Cli, run: i64, alice: &str, bob: &str, carol: &str) {
    let (f, id) = (cli.f, run.to_string());
    refused(cli.run(None, &["cancel", &id]), "a change without a token", "--token-file FILE");
    refused(cli.run(Some(bob), &["cancel", &id]), "bob's cancel", "only its owner or an approver");
    // Refused before the engines are shown for a yes she may not give.
    let o = cli.run(Some(alice), &["approve", &id, "--yes"]);
    assert!(!o.status.success() && stdout(&o).is_empty(), "{}", stdout(&o));
    refused(o, "alice's approve", "only an approver may do this");
    assert_eq!(f.state(run), "pending");
    refused(cli.run(Some(carol), &["approve", &id]), "approve from a pipe", "not a terminal");
    assert_eq!(f.state(run), "pending");
    let out = said(cli.run(Some(carol), &["approve", &id, "--yes"]), "carol's approve");
    assert!(out.contains("command: "), "the engines before the approval: {out}");
    assert!(out.contains(&format!("run {run} approved: workers start on it")), "{out}");
    assert_eq!(f.state(run), "active");
    let args = ["modify", &id, "--priority", "-5", "--throughput", "50"];
    let out = said(cli.run(Some(alice), &args), "modify");
    assert_eq!(out.trim(), format!("run {run} (active): priority -5, throughput 50"));
    let out = said(cli.run(Some(alice), &["cancel", &id]), "cancel");
    assert_eq!(out.trim(), format!("run {run} cancelled"));
    let out = said(cli.run(Some(alice), &["cancel", &id]), "cancel again");
    assert!(out.contains("already cancelled"), "{out}");
}

/// Worker keys (approvers): issued with the key alone on the last line, listed, revoked. Each
/// kind of secret where the other belongs says which it is, in one line: a worker key as a
/// person's token (on today's main: "the token is not valid"), a person's token as a worker's
/// key (on today's main: "unknown worker key"), by the command and by the server.
fn worker_keys_and_the_kinds_of_secret(cli: &Cli, port: u16, alice: &str, carol: &str) {
    let f = cli.f;
    refused(cli.run(Some(alice), &["worker-key", "add", "m1"]), "alice's key", "approver");
    let out = said(cli.run(Some(carol), &["worker-key", "add", "m1"]), "key add");
    let key = out.lines().last().unwrap_or_default();
    assert!(!key.is_empty() && !key.contains(' '), "{out}");
    let key_file = cli.token_file("m1-key", key, 0o600);
    refused(cli.run(Some(&key_file), &["status"]), "a key as a token", "this is a worker key");
    let r = api_get(port, "/api/v1/me", key);
    assert!(r.status == 401 && r.body.contains("this is a worker key"), "{r:?}");
    let o = Command::new(runner_bin())
        .current_dir(&f.dir)
        .args(["worker", "--server", &cli.url, "--key-file", carol])
        .env_remove("RUNNER_DB")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    refused(o, "a token as a worker key", "this is a person's API token");
    let body = r#"{"host":"h","pid":1,"concurrency":1,"lease_secs":60,"version":"0","cpu":null,"cores":null}"#;
    let r = api_post(port, "/api/v1/worker/register", Some(&f.carol), body);
    assert!(r.status == 401 && r.body.contains("this is a person's API token"), "{r:?}");
    let out = said(cli.run(Some(carol), &["worker-key", "list"]), "key list");
    assert!(out.contains("m1: valid; issued by carol"), "{out}");
    assert!(!out.contains(key), "a key is shown once only");
    let out = said(cli.run(Some(carol), &["worker-key", "revoke", "m1"]), "revoke");
    assert_eq!(out.trim(), "worker key m1 revoked; 0 leased pair(s) went back to the queue");
}

/// `runner submit --server URL --token-file FILE match ...` as the user whose token is in
/// `file`, from the fixture's folder with no database in the environment; (run id, stderr).
fn submit_via(f: &Fixture, url: &str, file: &str, extra: &[&str]) -> (Option<i64>, String) {
    let (a, b) = (bad_spec("A", "good", None), bad_spec("B", "good", None));
    let mut args = vec!["submit", "--server", url, "--token-file", file];
    args.extend_from_slice(extra);
    let more = ["--book", f.book.as_str(), "--nodes", "1", "--games", "4"];
    args.extend(match_args(&a, &b, "unused", &more));
    args.truncate(args.len() - 4); // no --progress / --out for a submission
    let mut cmd = Command::new(runner_bin());
    cmd.current_dir(&f.dir).args(&args).stdin(Stdio::null());
    for var in ["RUNNER_DB", "RUNNER_SERVER", "RUNNER_TOKEN", "PGHOST", "PGPORT"] {
        cmd.env_remove(var);
    }
    let o = cmd.output().expect("runner");
    let run = o.status.success().then(|| {
        stdout(&o).lines().last().and_then(|l| l.strip_prefix("run ")?.trim().parse().ok())
    });
    (run.flatten(), stderr(&o))
}

/// A raw request with a bearer token and a body.
fn api_send(port: u16, method: &str, path: &str, token: Option<&str>, body: &str) -> Reply {
    let auth = token.map(|t| format!("Bearer {t}"));
    let mut h = vec![("Content-Type", "application/octet-stream")];
    if let Some(a) = &auth {
        h.push(("Authorization", a));
    }
    request(port, method, path, &h, body)
}

/// sha256("hello world") and sha256("abc").
const HELLO: &str = "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9";
const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

/// `runner submit --server`: a submitter's run is theirs and pending, its engine uploaded over
/// HTTP in chunks and stored once for everyone; the server computes the schedule itself. As
/// requests: an upload is its uploader's until sealed (today's main: `fleet_artifact_put` of
/// the same hash by another role deletes the upload and starts it again as theirs), bytes that
/// are not the file of the hash are never sealed, chunks are bounded, and a run names only
/// artifacts of its own engines.
#[test]
fn runs_and_their_engines_are_submitted_through_the_server() {
    let _w = watchdog("people-submit", Duration::from_secs(900));
    let f = fixture("people-submit");
    let (port, url) = (f.port(), f.url.clone());
    let cli = Cli { f: &f, url: url.clone() };
    let (alice, bob) =
        (cli.token_file("alice", &f.alice, 0o600), cli.token_file("bob", &f.bob, 0o600));
    let (run, err) = submit_via(&f, &url, &alice, &[]);
    let run = run.unwrap_or_else(|| panic!("alice's submit: {err}"));
    assert!(err.contains(&format!("submitted to {url}")), "{err}");
    assert!(err.contains("waits for an approver"), "{err}");
    assert_eq!(
        f.pg.psql(&format!(
            "SELECT owner || ' ' || state || ' ' || (SELECT count(*) FROM pairs p \
             WHERE p.run_id = r.id) FROM runs r WHERE id = {run}"
        )),
        "alice pending 2",
        "the run is alice's, pending, with the schedule of 4 games"
    );
    let stored =
        "SELECT string_agg(created_by || ' ' || sealed || ' ' || kind, ', ') FROM artifacts";
    assert_eq!(f.pg.psql(stored), "alice true binary", "one engine binary, uploaded by alice");
    // Bob's run of the same engines uploads nothing again.
    let (bobs, err) = submit_via(&f, &url, &bob, &[]);
    let bobs = bobs.unwrap_or_else(|| panic!("bob's submit: {err}"));
    assert_eq!(f.pg.psql(stored), "alice true binary");
    assert_eq!(
        f.pg.psql(&format!("SELECT count(*) FROM run_artifacts WHERE run_id IN ({run}, {bobs})")),
        "2"
    );
    // A priority above 0 is an approver's.
    let (none, err) = submit_via(&f, &url, &alice, &["--priority", "5"]);
    assert!(none.is_none() && err.contains("approver"), "{err}");

    // Uploads as requests.
    let put = |who: Option<&str>, sha: &str, q: &str, body: &str| {
        api_send(port, "PUT", &format!("/api/v1/artifacts/{sha}/chunks/{q}"), who, body)
    };
    assert_eq!(put(None, HELLO, "0?size=11&kind=binary", "hello world").status, 401);
    let r = put(Some(&f.bob), HELLO, "0?size=11&kind=binary", "hello world");
    assert_eq!(r.status, 200, "{r:?}");
    let r = put(Some(&f.alice), HELLO, "0?size=11&kind=binary", "hello world");
    assert!(r.status == 409 && r.body.contains("being uploaded by bob"), "{r:?}");
    let seal = |who: &str, sha: &str| {
        api_send(port, "POST", &format!("/api/v1/artifacts/{sha}/seal"), Some(who), "")
    };
    assert_eq!(seal(&f.alice, HELLO).status, 409, "only its uploader seals it");
    assert_eq!(seal(&f.bob, HELLO).status, 200);
    let r = api_get(port, &format!("/api/v1/artifacts/{HELLO}"), &f.alice);
    assert!(r.body.contains("\"sealed\":true"), "{r:?}");
    assert_eq!(
        f.pg.psql(&format!(
            "SELECT created_by || ' ' || sealed FROM artifacts WHERE sha = '{HELLO}'"
        )),
        "bob true"
    );
    // Other bytes under a hash: never sealed, and the upload is dropped.
    assert_eq!(put(Some(&f.bob), ABC, "0?size=3&kind=source", "xyz").status, 200);
    let r = seal(&f.bob, ABC);
    assert!(r.status == 400 && r.body.contains("not the file of that hash"), "{r:?}");
    assert_eq!(f.pg.psql(&format!("SELECT count(*) FROM artifacts WHERE sha = '{ABC}'")), "0");
    // Bounds: a chunk of the wrong length, past the last, a size of 0 or over 128 MiB, a name
    // that is no SHA-256, a kind that is none.
    for (sha, q, body) in [
        (ABC, "0?size=3&kind=binary", "ab"),
        (ABC, "1?size=3&kind=binary", "abc"),
        (ABC, "0?size=0&kind=binary", ""),
        (ABC, "0?size=999999999999&kind=binary", "abc"),
        ("ABC", "0?size=3&kind=binary", "abc"),
        (ABC, "0?size=3&kind=script", "abc"),
    ] {
        let r = put(Some(&f.bob), sha, q, body);
        assert_eq!(r.status, 400, "{sha} {q}: {r:?}");
    }
    assert_eq!(f.pg.psql(&format!("SELECT count(*) FROM artifacts WHERE sha = '{ABC}'")), "0");

    // A run naming an artifact that is not one of its engines', or a malformed submission.
    let sub = f.pg.psql(&format!("SELECT submission FROM runs WHERE id = {run}"));
    let body = format!("{{\"submission\": {sub}, \"artifacts\": [\"{HELLO}\"]}}");
    let r = api_post(port, "/api/v1/runs", Some(&f.alice), &body);
    assert!(r.status == 400 && r.body.contains("none of the run's engines"), "{r:?}");
    let r = api_post(port, "/api/v1/runs", Some(&f.alice), "{\"submission\": {\"format\": 99}}");
    assert_eq!(r.status, 400, "{r:?}");
    let r = api_post(port, "/api/v1/runs", None, &format!("{{\"submission\": {sub}}}"));
    assert_eq!(r.status, 401, "{r:?}");
    let runs = f.pg.psql("SELECT count(*) FROM runs");
    let r = api_post(port, "/api/v1/runs", Some(&f.carol), &format!("{{\"submission\": {sub}}}"));
    assert!(r.status == 200 && r.body.contains("\"state\":\"active\""), "an approver's: {r:?}");
    assert_eq!(
        f.pg.psql("SELECT count(*) FROM runs"),
        (runs.parse::<i64>().unwrap() + 1).to_string()
    );

    // Pulled through the server, with no database anywhere: alice's pending run, no games yet.
    let out = f.dir.join("pulled");
    let o = cli.run(Some(&alice), &["pull", &run.to_string(), "--out", &out.to_string_lossy()]);
    let text = said(o, "pull");
    assert!(text.contains("results: "), "{text}");
    let origin = std::fs::read_to_string(out.join("pull.json")).unwrap();
    assert!(origin.contains(&url), "{origin}");
    assert_eq!(f.pg.psql(&format!("SELECT pulled_by FROM runs WHERE id = {run}")), "alice");
    // Another run into the same folder is refused.
    let o = cli.run(Some(&alice), &["pull", &bobs.to_string(), "--out", &out.to_string_lossy()]);
    refused(o, "a pull of another run into the folder", "choose a new folder");
}
