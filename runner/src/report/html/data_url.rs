//! Bytes carried inside the page without ever being parsed as its markup: base64 `data:` URLs
//! (the run folder's SVG plots become `<img>` sources, where a browser runs no script and loads
//! nothing) and the base64 SHA-256 digests the Content-Security-Policy names the page's own
//! script and stylesheet by.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest, Sha256};

/// Standard base64 (RFC 4648, with padding).
fn base64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// A `data:` URL of an SVG image.
pub fn svg_data_url(svg: &str) -> String {
    format!("data:image/svg+xml;base64,{}", base64(svg.as_bytes()))
}

/// A CSP source naming `text` by its digest: `'sha256-...'`.
pub fn csp_hash(text: &str) -> String {
    format!("'sha256-{}'", base64(&Sha256::digest(text.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, coded) in cases {
            assert_eq!(base64(plain.as_bytes()), coded, "{plain}");
        }
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
    }

    #[test]
    fn csp_hashes_are_sha256_in_base64() {
        // echo -n abc | sha256sum | xxd -r -p | base64
        assert_eq!(csp_hash("abc"), "'sha256-ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0='");
    }
}
