//! One HTTP/1.0 request over a plain TCP connection to a server on 127.0.0.1, and its reply:
//! what the tests that speak to `runner serve` by hand need (a refusal's status and headers, a
//! cookie, a body), with nothing between them and the server.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A response: status, header block (lower-cased names and values) and body.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub head: String,
    /// The body as text (invalid UTF-8 replaced).
    pub body: String,
    /// The body's bytes as sent.
    pub bytes: Vec<u8>,
}

impl Reply {
    /// The value a `Set-Cookie` header gives cookie `name` (None: not set).
    pub fn cookie(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let v = l.strip_prefix("set-cookie: ")?;
            let (k, rest) = v.split_once('=')?;
            (k == name).then(|| rest.split(';').next().unwrap_or("").to_string())
        })
    }

    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| l.strip_prefix(&format!("{name}: ")))
    }
}

/// One HTTP/1.0 request to 127.0.0.1:`port` with `headers` and `body`.
pub fn request(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to the server");
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read the reply");
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n");
    let (head, bytes) = match split {
        Some(i) => (&raw[..i], raw[i + 4..].to_vec()),
        None => (&raw[..], Vec::new()),
    };
    let head = String::from_utf8_lossy(head).to_lowercase();
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    Reply { status, head, body: String::from_utf8_lossy(&bytes).into_owned(), bytes }
}
