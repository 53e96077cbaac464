//! `mcp-preamble serve` as a child process, driven over its stdio with raw
//! JSON-RPC lines.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// A fresh folder under the temp dir, for one test.
pub fn scratch(test: &str, name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("mcp-preamble-{test}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A config entry running `node tests/servers/<script>` with `env`.
pub fn node(script: &str, env: Value) -> Value {
    super::ensure_npm();
    let path = super::servers_dir().join(script).display().to_string();
    json!({"command": "node", "args": [path], "env": env})
}

/// Writes `dir/mcp.json` with `servers` as its `mcpServers`; its path.
pub fn config(dir: &Path, servers: Value) -> String {
    let path = dir.join("mcp.json");
    std::fs::write(&path, json!({"mcpServers": servers}).to_string()).unwrap();
    path.display().to_string()
}

/// Waits (polling every 100 ms) until `done`, failing after `within`.
pub fn wait_until(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let end = Instant::now() + within;
    while !done() {
        assert!(
            Instant::now() < end,
            "{what} did not happen within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every line `stdout` gives, read on a thread of its own.
pub fn lines_of(stdout: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (tx, lines) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    lines
}

/// A running gateway and what it wrote to stdout.
pub struct Gateway {
    child: Child,
    stdin: ChildStdin,
    /// Every line of its stdout not read yet.
    pub lines: Receiver<String>,
    /// Notifications seen while waiting for answers.
    pub notes: Vec<Value>,
    /// The instructions of the last `initialize` answer.
    pub instructions: String,
    next: u64,
}

impl Gateway {
    /// `mcp-preamble serve ARGS…`, not yet initialized.
    pub fn spawn(args: &[&str]) -> Gateway {
        Gateway::command(&[&["serve"], args].concat(), &[])
    }

    /// `mcp-preamble ARGS…` with `env`, not yet initialized.
    pub fn command(args: &[&str], env: &[(&str, &str)]) -> Gateway {
        // A state directory of this test run unless the test gives one.
        let cache = std::env::temp_dir().join(format!("mcp-preamble-cache-{}", std::process::id()));
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
            .args(args)
            .env("XDG_CACHE_HOME", cache)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let lines = lines_of(stdout);
        Gateway {
            child,
            stdin,
            lines,
            notes: Vec::new(),
            instructions: String::new(),
            next: 1,
        }
    }

    /// `mcp-preamble serve ARGS…`, initialized as a 2025-11-25 host.
    pub fn start(args: &[&str]) -> Gateway {
        let mut g = Gateway::spawn(args);
        let init = g.initialize();
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        g
    }

    /// The `initialize` answer, then `notifications/initialized`.
    pub fn initialize(&mut self) -> Value {
        let init = self.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "1"}}),
        );
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        self.instructions = init["result"]["instructions"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        init
    }

    pub fn send(&mut self, message: Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request; its id.
    pub fn ask(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The answer to request `id`, within `within`; notifications meanwhile
    /// go to [`Gateway::notes`].
    pub fn answer(&mut self, id: u64, within: Duration) -> Value {
        let end = Instant::now() + within;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => panic!("no answer to {id} within {within:?}"),
                Err(e) => panic!("the gateway's stdout closed: {e}"),
            };
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout is not JSON-RPC ({e}): {line:?}"));
            assert_eq!(message["jsonrpc"], "2.0", "{line}");
            if message["id"] == json!(id) {
                return message;
            }
            self.notes.push(message);
        }
    }

    /// A request and its answer (within 30 s).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.ask(method, params);
        self.answer(id, Duration::from_secs(30))
    }

    /// `tools/call` of `tool` with `arguments`; the answer.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// The text of `tool`'s answer to `arguments`.
    pub fn text(&mut self, tool: &str, arguments: Value) -> String {
        let answer = self.call(tool, arguments);
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{tool}: {answer}"))
            .to_string()
    }

    /// The tools `tools/list` gives now.
    pub fn tools(&mut self) -> Vec<Value> {
        let list = self.request("tools/list", json!({}));
        (list["result"]["tools"].as_array().cloned()).unwrap_or_else(|| panic!("{list}"))
    }

    /// The names `tools/list` gives now.
    pub fn names(&mut self) -> Vec<String> {
        (self.tools().iter())
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }

    /// The `list_changed` notifications seen within `wait` (and before), forgotten.
    pub fn list_changes(&mut self, wait: Duration) -> usize {
        let _ = self.request("ping", json!({}));
        std::thread::sleep(wait);
        self.take_list_changes()
    }

    /// The `list_changed` notifications seen so far, forgotten.
    pub fn take_list_changes(&mut self) -> usize {
        let _ = self.request("ping", json!({}));
        let n = (self.notes.iter())
            .filter(|m| m["method"] == "notifications/tools/list_changed")
            .count();
        self.notes.clear();
        n
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        end(&mut self.child);
    }
}

/// Ends a gateway as a host's shutdown does: SIGTERM, so that it ends its
/// upstreams' process groups (a SIGKILL leaves servers that ignore their
/// stdin, such as `linger.mjs`, running after the tests), then SIGKILL if it
/// is still alive after a second.
pub fn end(child: &mut Child) {
    let pid = child.id().to_string();
    let termed = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .is_ok_and(|s| s.success());
    let deadline = Instant::now() + Duration::from_secs(1);
    while termed && Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// This machine's own non-loopback address, if it has one: the address a
/// UDP socket "connected" to a TEST-NET address would send from (no packet
/// is sent).
pub fn own_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

/// The non-loopback address to bind (port 0): this machine's own, else
/// `0.0.0.0` (then reached through 127.0.0.1). The choice is printed.
pub fn non_loopback() -> String {
    let addr = match own_address() {
        Some(ip) => format!("{ip}:0"),
        None => "0.0.0.0:0".to_string(),
    };
    eprintln!("non-loopback binds go to {addr}");
    addr
}

/// `mcp-preamble serve --listen 127.0.0.1:0` with `args` (its config and
/// the rest), stdin and stdout closed, and the URL it serves on.
pub fn serve_listening<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-preamble"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let url = serving_on(child.stderr.take().unwrap(), None);
    (child, url)
}

/// Reads a `serve --listen` gateway's log from `stderr` until it says where
/// it serves, and returns that URL (`http://127.0.0.1:PORT/mcp`). The rest
/// of the log is read on a thread, so the gateway never blocks on a full
/// pipe; `log`, when given, gets every line.
pub fn serving_on(
    stderr: std::process::ChildStderr,
    log: Option<std::sync::Arc<std::sync::Mutex<Vec<String>>>>,
) -> String {
    let keep = move |line: &str| {
        if let Some(log) = &log {
            log.lock().unwrap().push(line.to_string());
        }
    };
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("the gateway stopped before it listened"))
            .unwrap();
        keep(&line);
        if let Some(at) = line.find("serving on http") {
            let url = &line[at + "serving on ".len()..];
            break url.split(' ').next().unwrap().to_string();
        }
    };
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            keep(&line);
        }
    });
    url
}

/// The `host:port` of a URL `serving_on` returned.
pub fn authority(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split('/').next().unwrap().to_string()
}
