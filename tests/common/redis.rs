//! A real `redis-server` for a test, on a free loopback port, with no
//! persistence; stopped and started again to see gateways through an
//! outage. Without `redis-server` a test is skipped, unless
//! `MCP_PREAMBLE_REQUIRE_REDIS=1` (CI) makes it fail.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::gateway::{scratch, wait_until};

/// A `redis-server` of one test, killed when dropped.
pub struct Redis {
    child: Option<Child>,
    pub port: u16,
    /// A TLS port too (the test CA's server certificate), when asked for.
    tls_port: Option<u16>,
    dir: PathBuf,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Redis {
    /// A server on a free port; `None` (the test skips) when there is no
    /// `redis-server` and CI does not require one.
    pub fn start(test: &str) -> Option<Redis> {
        let found = Command::new("redis-server")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            assert!(
                std::env::var("MCP_PREAMBLE_REQUIRE_REDIS").as_deref() != Ok("1"),
                "redis-server is required (MCP_PREAMBLE_REQUIRE_REDIS=1): apt-get install redis-server"
            );
            eprintln!("skipped: no redis-server (apt-get install redis-server)");
            return None;
        }
        let mut redis = Redis {
            child: None,
            port: free_port(),
            tls_port: None,
            dir: scratch("redis", test),
        };
        redis.up();
        Some(redis)
    }

    /// [`Redis::start`], also serving TLS with `tests/data/auth`'s server
    /// certificate (signed by its `ca.pem`), clients unauthenticated.
    pub fn start_tls(test: &str) -> Option<Redis> {
        let mut redis = Redis::start(test)?;
        redis.down();
        redis.tls_port = Some(free_port());
        redis.up();
        Some(redis)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// The TLS port's URL (`rediss://`).
    pub fn tls_url(&self) -> String {
        let port = self.tls_port.expect("started with start_tls");
        format!("rediss://127.0.0.1:{port}/0")
    }

    /// Starts the server (again) on its port and waits for its PONG.
    pub fn up(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .args(self.tls_args())
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        wait_until("redis-server answers", Duration::from_secs(10), || {
            self.try_command(&["PING"]).is_some_and(|r| r == "+PONG")
        });
    }

    fn tls_args(&self) -> Vec<String> {
        let Some(port) = self.tls_port else {
            return Vec::new();
        };
        let auth = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/auth");
        let file = |name: &str| auth.join(name).display().to_string();
        vec![
            "--tls-port".into(),
            port.to_string(),
            "--tls-cert-file".into(),
            file("server.pem"),
            "--tls-key-file".into(),
            file("server-key.pem"),
            "--tls-ca-cert-file".into(),
            file("ca.pem"),
            "--tls-auth-clients".into(),
            "no".into(),
        ]
    }

    /// Stops the server (its data goes with it).
    pub fn down(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// One command in RESP; the first line of the answer.
    pub fn try_command(&self, args: &[&str]) -> Option<String> {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        let mut out = format!("*{}\r\n", args.len());
        for a in args {
            out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        s.write_all(out.as_bytes()).ok()?;
        let mut buf = [0u8; 512];
        let n = s.read(&mut buf).ok()?;
        let text = String::from_utf8_lossy(&buf[..n]).into_owned();
        Some(text.lines().next().unwrap_or_default().to_string())
    }

    pub fn command(&self, args: &[&str]) -> String {
        self.try_command(args).expect("redis-server answers")
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.down();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
