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
    dir: PathBuf,
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
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut redis = Redis {
            child: None,
            port,
            dir: scratch("redis", test),
        };
        redis.up();
        Some(redis)
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Starts the server (again) on its port and waits for its PONG.
    pub fn up(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
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
