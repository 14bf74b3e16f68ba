//! Who may do what in the fleet, in one place (docs/guide/fleet-how-it-works.md, "Who may do
//! what"): pure functions of the principal (anonymous, a user, an approver, a worker key), the
//! action, and the run it touches (its owner and state), giving `Ok` or a typed [`Refusal`]. The
//! server's people handlers (`serve/people/`) and the people operations (`queue/people.rs`) ask
//! [`may`] before anything is written; nothing else decides rights.

use serde::{Deserialize, Serialize};

/// Who asks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Principal {
    /// No token, no session.
    Anonymous,
    /// A person, by an API token or a web session (`approver`: the user's flag).
    User { name: String, approver: bool },
    /// A worker machine, by its key's name.
    Worker { key: String },
}

impl Principal {
    /// The name the audit log and the runs' `owner` use (None: anonymous).
    pub fn name(&self) -> Option<&str> {
        match self {
            Principal::Anonymous => None,
            Principal::User { name, .. } => Some(name),
            Principal::Worker { key } => Some(key),
        }
    }

    pub fn role(&self) -> Role {
        match self {
            Principal::Anonymous => Role::Anonymous,
            Principal::User { approver: true, .. } => Role::Approver,
            Principal::User { approver: false, .. } => Role::Submitter,
            Principal::Worker { .. } => Role::Worker,
        }
    }
}

/// The rows of the table in docs/guide/fleet-how-it-works.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    Anonymous,
    Submitter,
    Approver,
    Worker,
}

/// A run's state, as the `runs.state` column holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RunState {
    Pending,
    Active,
    Decided,
    Complete,
    Cancelled,
    Failed,
}

impl RunState {
    pub const ALL: [RunState; 6] = [
        RunState::Pending,
        RunState::Active,
        RunState::Decided,
        RunState::Complete,
        RunState::Cancelled,
        RunState::Failed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Pending => "pending",
            RunState::Active => "active",
            RunState::Decided => "decided",
            RunState::Complete => "complete",
            RunState::Cancelled => "cancelled",
            RunState::Failed => "failed",
        }
    }

    /// The state a column holds (None: a word no runner writes).
    pub fn parse(s: &str) -> Option<RunState> {
        RunState::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Pending or active: workers may still play it.
    pub fn is_open(self) -> bool {
        matches!(self, RunState::Pending | RunState::Active)
    }
}

/// What is asked. Actions on a run take the run's [`RunFacts`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Read runs, games, counts and pages (refused to anonymous callers on a `--private` server).
    Read,
    /// Submit a run (it waits for approval unless an approver submits it).
    Submit,
    /// Approve a pending run.
    Approve,
    /// Cancel a pending or active run.
    Cancel,
    /// Change a run's priority (up to the default), throughput or length.
    Modify,
    /// Set a priority above the default (0).
    RaisePriority,
    /// Take back a worker key's pairs of a run.
    Purge,
    /// Remove a finished run.
    Delete,
    /// Record that the run was written to a results folder.
    Pulled,
    /// Issue, revoke or list worker keys.
    ManageKeys,
    /// Delete the stored artifacts no run names (`runner gc`).
    CollectGarbage,
    /// Read the audit log.
    ReadAudit,
    /// The worker API: register, claim, report, heartbeat.
    Work,
}

impl Action {
    pub const ALL: [Action; 13] = [
        Action::Read,
        Action::Submit,
        Action::Approve,
        Action::Cancel,
        Action::Modify,
        Action::RaisePriority,
        Action::Purge,
        Action::Delete,
        Action::Pulled,
        Action::ManageKeys,
        Action::CollectGarbage,
        Action::ReadAudit,
        Action::Work,
    ];

    /// Whether the action is about one run (and needs its [`RunFacts`]).
    pub fn on_run(self) -> bool {
        matches!(
            self,
            Action::Approve
                | Action::Cancel
                | Action::Modify
                | Action::RaisePriority
                | Action::Purge
                | Action::Delete
                | Action::Pulled
        )
    }
}

/// What the rules read of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFacts {
    pub owner: String,
    pub state: RunState,
    /// A tuning run (its results cannot be taken back, its length cannot change).
    pub tune: bool,
}

/// Why an action is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "refusal", rename_all = "kebab-case")]
pub enum Refusal {
    #[error("log in first: this needs a user's token or session")]
    NeedLogin,
    #[error("a worker key acts for a worker machine only, not for a person")]
    WorkerKey,
    #[error("only the worker API takes a worker key; people's tokens cannot claim or report")]
    NotWorker,
    #[error("only an approver may do this")]
    ApproverOnly,
    #[error("the run belongs to {owner}: only its owner or an approver may change it")]
    NotOwner { owner: String },
    #[error("the run is {state}: cancel it first, then delete it", state = state.as_str())]
    StillOpen { state: RunState },
    #[error(
        "the run is a tuning run: its theta moved with those results, so they cannot be taken \
         back (cancel it and submit it again)"
    )]
    Tuning,
}

impl Refusal {
    /// The HTTP status a refusal is answered with: 401 when nobody is logged in, 409 when the
    /// run's state is what refuses, 403 otherwise.
    pub fn status(&self) -> u16 {
        match self {
            Refusal::NeedLogin => 401,
            Refusal::StillOpen { .. } | Refusal::Tuning => 409,
            _ => 403,
        }
    }
}

/// Whether `who` may do `what` (on `run`, for the actions on a run; `private`: the server was
/// started with `--private`, so reading needs a login too). An action on a run given no run is
/// judged as if the caller did not own it.
pub fn may(
    who: &Principal,
    what: Action,
    run: Option<&RunFacts>,
    private: bool,
) -> Result<(), Refusal> {
    match (who, what) {
        (Principal::Worker { .. }, Action::Work) => Ok(()),
        (_, Action::Work) => Err(Refusal::NotWorker),
        (Principal::Anonymous, Action::Read) if !private => Ok(()),
        (Principal::Anonymous, _) => Err(Refusal::NeedLogin),
        (Principal::Worker { .. }, Action::Read) => Ok(()),
        (Principal::Worker { .. }, _) => Err(Refusal::WorkerKey),
        (Principal::User { name, approver }, what) => user_may(name, *approver, what, run),
    }
}

fn user_may(
    name: &str,
    approver: bool,
    what: Action,
    run: Option<&RunFacts>,
) -> Result<(), Refusal> {
    let owns = run.is_some_and(|r| r.owner == name);
    let change = || {
        if approver || owns {
            Ok(())
        } else {
            Err(Refusal::NotOwner { owner: run.map_or_else(String::new, |r| r.owner.clone()) })
        }
    };
    match what {
        Action::Read | Action::Submit => Ok(()),
        Action::Approve
        | Action::RaisePriority
        | Action::ManageKeys
        | Action::CollectGarbage
        | Action::ReadAudit => {
            if approver {
                Ok(())
            } else {
                Err(Refusal::ApproverOnly)
            }
        }
        Action::Cancel | Action::Modify | Action::Pulled => change(),
        Action::Purge => {
            change()?;
            if run.is_some_and(|r| r.tune) { Err(Refusal::Tuning) } else { Ok(()) }
        }
        Action::Delete => {
            change()?;
            match run.map(|r| r.state) {
                Some(state) if state.is_open() => Err(Refusal::StillOpen { state }),
                _ => Ok(()),
            }
        }
        Action::Work => Err(Refusal::NotWorker),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(name: &str) -> Principal {
        Principal::User { name: name.into(), approver: false }
    }
    fn approver(name: &str) -> Principal {
        Principal::User { name: name.into(), approver: true }
    }
    fn run(owner: &str, state: RunState, tune: bool) -> RunFacts {
        RunFacts { owner: owner.into(), state, tune }
    }

    /// The table, cell by cell: for each principal (anonymous, a worker key, a user acting on
    /// their own run, a user on another's run, an approver on another's run), each action, on
    /// an active match run: allowed (`.`) or the refusal's letter. `N` need login, `W` worker
    /// key, `X` not a worker, `A` approver only, `O` not the owner, `S` still open (delete).
    #[test]
    fn every_cell_of_the_table() {
        use Action::*;
        let active = run("alice", RunState::Active, false);
        let who: [(&str, Principal); 5] = [
            ("anonymous", Principal::Anonymous),
            ("worker", Principal::Worker { key: "box1".into() }),
            ("owner", user("alice")),
            ("other", user("bob")),
            ("approver", approver("carol")),
        ];
        // Columns: anonymous, worker, owner, other, approver.
        let table: [(Action, [char; 5]); 13] = [
            (Read, ['.', '.', '.', '.', '.']),
            (Submit, ['N', 'W', '.', '.', '.']),
            (Approve, ['N', 'W', 'A', 'A', '.']),
            (Cancel, ['N', 'W', '.', 'O', '.']),
            (Modify, ['N', 'W', '.', 'O', '.']),
            (RaisePriority, ['N', 'W', 'A', 'A', '.']),
            (Purge, ['N', 'W', '.', 'O', '.']),
            (Delete, ['N', 'W', 'S', 'O', 'S']),
            (Pulled, ['N', 'W', '.', 'O', '.']),
            (ManageKeys, ['N', 'W', 'A', 'A', '.']),
            (CollectGarbage, ['N', 'W', 'A', 'A', '.']),
            (ReadAudit, ['N', 'W', 'A', 'A', '.']),
            (Work, ['X', '.', 'X', 'X', 'X']),
        ];
        assert_eq!(table.len(), Action::ALL.len(), "every action has a row");
        for (action, cells) in table {
            for ((label, p), want) in who.iter().zip(cells) {
                let got = match may(p, action, Some(&active), false) {
                    Ok(()) => '.',
                    Err(Refusal::NeedLogin) => 'N',
                    Err(Refusal::WorkerKey) => 'W',
                    Err(Refusal::NotWorker) => 'X',
                    Err(Refusal::ApproverOnly) => 'A',
                    Err(Refusal::NotOwner { owner }) => {
                        assert_eq!(owner, "alice");
                        'O'
                    }
                    Err(Refusal::StillOpen { state }) => {
                        assert_eq!(state, RunState::Active);
                        'S'
                    }
                    Err(Refusal::Tuning) => 'T',
                };
                assert_eq!(got, want, "{label} {action:?}");
            }
        }
    }

    /// `--private`: anonymous readers are refused; everyone else reads as before.
    #[test]
    fn private_servers_need_a_login_to_read() {
        assert_eq!(may(&Principal::Anonymous, Action::Read, None, true), Err(Refusal::NeedLogin));
        assert_eq!(may(&Principal::Anonymous, Action::Read, None, false), Ok(()));
        for p in [user("a"), approver("b"), Principal::Worker { key: "k".into() }] {
            assert_eq!(may(&p, Action::Read, None, true), Ok(()), "{p:?}");
        }
    }

    /// Delete: refused for an open run (pending, active) whoever asks, allowed for a finished
    /// one to its owner and approvers, never to another user.
    #[test]
    fn delete_follows_the_state() {
        for state in RunState::ALL {
            let r = run("alice", state, false);
            let want = if state.is_open() { Err(Refusal::StillOpen { state }) } else { Ok(()) };
            assert_eq!(may(&user("alice"), Action::Delete, Some(&r), false), want, "{state:?}");
            assert_eq!(may(&approver("c"), Action::Delete, Some(&r), false), want, "{state:?}");
            assert!(matches!(
                may(&user("bob"), Action::Delete, Some(&r), false),
                Err(Refusal::NotOwner { .. })
            ));
        }
    }

    /// Purge: a tuning run's results cannot be taken back, by anyone; another's run is refused
    /// for ownership first.
    #[test]
    fn purge_refuses_tuning_runs() {
        let t = run("alice", RunState::Active, true);
        assert_eq!(may(&user("alice"), Action::Purge, Some(&t), false), Err(Refusal::Tuning));
        assert_eq!(may(&approver("c"), Action::Purge, Some(&t), false), Err(Refusal::Tuning));
        assert!(matches!(
            may(&user("bob"), Action::Purge, Some(&t), false),
            Err(Refusal::NotOwner { .. })
        ));
    }

    /// An action on a run with no run given is judged as on another's run.
    #[test]
    fn no_run_is_not_owned() {
        assert!(matches!(
            may(&user("alice"), Action::Cancel, None, false),
            Err(Refusal::NotOwner { .. })
        ));
        assert_eq!(may(&approver("c"), Action::Cancel, None, false), Ok(()));
    }

    #[test]
    fn states_and_statuses() {
        for s in RunState::ALL {
            assert_eq!(RunState::parse(s.as_str()), Some(s));
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
        }
        assert_eq!(RunState::parse("bogus"), None);
        assert_eq!(Refusal::NeedLogin.status(), 401);
        assert_eq!(Refusal::ApproverOnly.status(), 403);
        assert_eq!(Refusal::Tuning.status(), 409);
        assert_eq!(serde_json::to_string(&Action::ManageKeys).unwrap(), "\"manage-keys\"");
        assert_eq!(Principal::Anonymous.role(), Role::Anonymous);
        assert_eq!(approver("x").role(), Role::Approver);
    }
}
