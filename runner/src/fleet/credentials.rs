//! People's secrets: API tokens and web session ids (256 random bits from the operating
//! system, stored as SHA-256 only), CSRF tokens, and passwords (argon2id, in the PHC string
//! format). Nothing here touches the database; `queue/users.rs` stores what this makes.

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use rand::TryRng;
use sha2::{Digest, Sha256};

use crate::hex::hex;

/// What a user's API token starts with (so a leaked one is recognisable in a log or a scan).
pub const TOKEN_PREFIX: &str = "rt_";

/// What a worker key starts with (`runner worker-key add` through the server).
pub const WORKER_KEY_PREFIX: &str = "fk_";

/// `Err` with the one line that says so when `secret`, given where a worker key belongs
/// (`worker_key` true) or a person's API token belongs, is the other kind.
pub fn check_kind(secret: &str, worker_key: bool) -> Result<()> {
    if worker_key && secret.starts_with(TOKEN_PREFIX) {
        bail!(
            "this is a person's API token ({TOKEN_PREFIX}...), not a worker key: a worker needs a \
             key an approver makes with `runner worker-key add NAME` ({WORKER_KEY_PREFIX}...)"
        );
    }
    if !worker_key && secret.starts_with(WORKER_KEY_PREFIX) {
        bail!(
            "this is a worker key ({WORKER_KEY_PREFIX}...), not a person's API token: people's \
             commands take the token `runner user add` or `runner user token` printed \
             ({TOKEN_PREFIX}...)"
        );
    }
    Ok(())
}

/// Longest password taken (argon2 takes any length; a bound keeps a login cheap to refuse).
pub const PASSWORD_MAX: usize = 1024;

/// The secret in file `path` (one line), with a warning when others than its owner may read
/// the file, as ssh warns of a private key. `what` names the secret ("key", "token"); `made`
/// says where one comes from ("`runner worker-key add` printed it").
pub fn secret_file(path: &Path, what: &str, made: &str) -> Result<String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the {what} file {shown}"))?;
    let secret = text.trim();
    if secret.is_empty() || secret.contains(char::is_whitespace) {
        bail!("the {what} file {shown} holds no {what} (one line, as {made})");
    }
    use std::os::unix::fs::PermissionsExt as _;
    if let Ok(meta) = std::fs::metadata(path) {
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            errln!(
                "warning: the {what} file {shown} may be read by others (mode {mode:03o}): \
                 chmod 600 {shown}"
            );
        }
    }
    Ok(secret.to_string())
}

/// `n` random bytes from the operating system.
fn random<const N: usize>() -> Result<[u8; N]> {
    let mut b = [0u8; N];
    rand::rngs::SysRng.try_fill_bytes(&mut b).map_err(|e| anyhow!("no randomness: {e}"))?;
    Ok(b)
}

/// A new API token: `rt_` and 64 hex digits (256 random bits).
pub fn new_token() -> Result<String> {
    Ok(format!("{TOKEN_PREFIX}{}", hex(&random::<32>()?)))
}

/// A new web session id (the cookie's value) or CSRF token: 64 hex digits.
pub fn new_secret() -> Result<String> {
    Ok(hex(&random::<32>()?))
}

/// What is stored of a token or session id: the SHA-256 of its text.
pub fn secret_hash(secret: &str) -> Vec<u8> {
    Sha256::digest(secret.as_bytes()).to_vec()
}

/// Whether `s` has the shape of a token or session id this module makes (checked before any
/// lookup: anything else is refused without a database round trip).
pub fn plausible(s: &str, prefix: &str) -> bool {
    s.strip_prefix(prefix)
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The argon2id hash of `password`, with a random salt, in the PHC string format.
pub fn hash_password(password: &str) -> Result<String> {
    if password.is_empty() || password.len() > PASSWORD_MAX {
        return Err(anyhow!("a password has 1 to {PASSWORD_MAX} bytes"));
    }
    let salt = SaltString::encode_b64(&random::<16>()?).map_err(|e| anyhow!("salt: {e}"))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| anyhow!("cannot hash the password: {e}"))
}

/// Whether `password` matches the stored `hash` (a malformed hash matches nothing).
pub fn verify_password(password: &str, hash: &str) -> bool {
    if password.len() > PASSWORD_MAX {
        return false;
    }
    PasswordHash::new(hash)
        .is_ok_and(|h| Argon2::default().verify_password(password.as_bytes(), &h).is_ok())
}

/// Compares two secrets in time independent of where they differ (CSRF tokens).
pub fn same_secret(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_256_bit_and_stored_as_sha256() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_ne!(a, b);
        assert!(plausible(&a, TOKEN_PREFIX), "{a}");
        assert_eq!(a.len(), 3 + 64);
        let h = secret_hash(&a);
        assert_eq!(h.len(), 32);
        assert_ne!(hex(&h), a[3..], "the stored form is not the token");
        // echo -n abc | sha256sum
        assert_eq!(
            hex(&secret_hash("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(!plausible("rt_xyz", TOKEN_PREFIX));
        assert!(!plausible(&a[3..], TOKEN_PREFIX));
        assert!(plausible(&new_secret().unwrap(), ""));
    }

    #[test]
    fn passwords_hash_with_argon2id_and_verify() {
        let h = hash_password("correct horse").unwrap();
        assert!(h.starts_with("$argon2id$"), "{h}");
        assert!(!h.contains("correct horse"));
        assert!(verify_password("correct horse", &h));
        assert!(!verify_password("correct hors", &h));
        assert!(!verify_password("correct horse", "not a hash"));
        assert_ne!(h, hash_password("correct horse").unwrap(), "salted");
        assert!(hash_password("").is_err());
        assert!(hash_password(&"x".repeat(PASSWORD_MAX + 1)).is_err());
    }

    #[test]
    fn secrets_compare() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "abcd"));
    }
}
