-- Schema version 6: people as rows of the fleet's own tables, for the server that holds the
-- rules (`runner serve --db URL`, which connects as the one role that owns these tables).
--
-- A person is a user (name, approver or not, disabled or not, an optional password for the web
-- page, stored as an argon2 hash); a script acts as a user through an API token, of which only
-- the SHA-256 is stored (the token is 256 random bits, shown once); a browser through a web
-- session, of which only the SHA-256 of the cookie's id is stored, with the CSRF token its forms
-- carry and when it expires. Who did what to which run or key is in the audit log.
--
-- Rolling deploy: this migration only adds tables (no existing table, column, index or
-- function is changed or locked), so a version-5 server and its workers that are running keep
-- working while it is applied and after; the rules of which user may do what are in the
-- server's Rust code (`fleet/rights.rs`), not here. Run owners stay names (`runs.owner`): a
-- user whose name is the PostgreSQL role that submitted a run before version 6 owns it.

CREATE TABLE users (
    id             bigserial PRIMARY KEY,
    -- Letters, digits and . _ @ - only: a name is shown on pages and in logs as it is.
    name           text NOT NULL UNIQUE
                   CHECK (length(name) BETWEEN 1 AND 64 AND name ~ '^[A-Za-z0-9._@-]+$'),
    approver       boolean NOT NULL DEFAULT false,
    disabled_at    timestamptz,
    -- argon2id in the PHC string format; NULL: this user cannot log in on the page.
    password_hash  text CHECK (password_hash IS NULL OR length(password_hash) <= 200),
    created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE user_tokens (
    id          bigserial PRIMARY KEY,
    user_id     bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    -- SHA-256 of the token's 32 random bytes as sent (the text form), never the token.
    token_hash  bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
);
CREATE INDEX user_tokens_user ON user_tokens (user_id);

CREATE TABLE web_sessions (
    -- SHA-256 of the session cookie's random id, never the id.
    id_hash     bytea PRIMARY KEY CHECK (length(id_hash) = 32),
    user_id     bigint NOT NULL REFERENCES users ON DELETE CASCADE,
    -- The token every form of this session carries (random, per session).
    csrf        text NOT NULL CHECK (length(csrf) BETWEEN 32 AND 128),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL
);
CREATE INDEX web_sessions_expiry ON web_sessions (expires_at);
CREATE INDEX web_sessions_user ON web_sessions (user_id);

-- Who did what, when. `run_id` has no foreign key: a deleted run's entries stay. `actor` is a
-- user's name (or `operator` for the bootstrap commands on the server's machine).
CREATE TABLE audit (
    id      bigserial PRIMARY KEY,
    at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    actor   text NOT NULL CHECK (length(actor) <= 64),
    action  text NOT NULL CHECK (action IN ('approve', 'cancel', 'modify', 'purge', 'delete',
                'pulled', 'key-add', 'key-revoke', 'user-add', 'user-passwd', 'user-disable',
                'token-add', 'token-revoke', 'login', 'login-failed')),
    run_id  bigint,
    target  text CHECK (length(target) <= 200),
    detail  text CHECK (length(detail) <= 1000)
);
CREATE INDEX audit_run ON audit (run_id) WHERE run_id IS NOT NULL;
