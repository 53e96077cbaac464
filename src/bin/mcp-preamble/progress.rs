//! Per-server connection status on stderr.

use std::io::{IsTerminal, Write as _};
use std::sync::{Arc, Mutex};

use mcp_preamble::files::ServerEntry;
use mcp_preamble::text::terminal_safe;

use crate::emit::truncate;

/// One status line per server on stderr, redrawn in place on a terminal.
#[derive(Clone)]
pub struct Progress {
    lines: Arc<Mutex<Vec<(String, String)>>>,
    live: bool,
}

impl Progress {
    pub fn new(servers: &[ServerEntry]) -> Progress {
        let live = std::io::stderr().is_terminal() && !servers.is_empty();
        let p = Progress {
            lines: Arc::new(Mutex::new(
                servers
                    .iter()
                    .map(|s| (s.alias.clone(), "connecting…".to_string()))
                    .collect(),
            )),
            live,
        };
        if live {
            p.draw(false);
        }
        p
    }

    pub fn set(&self, i: usize, status: &str) {
        if let Some(line) = self
            .lines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(i)
        {
            line.1 = status.to_string();
        }
        if self.live {
            self.draw(true);
        }
    }

    fn draw(&self, redraw: bool) {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        let mut err = std::io::stderr().lock();
        if redraw {
            let _ = write!(err, "\x1b[{}A", lines.len());
        }
        for (alias, status) in lines.iter() {
            // One screen line each, or the redraw would climb too few lines;
            // escaped, so a server's text cannot move the cursor itself.
            let line = format!("  {alias}: {status}").replace(['\n', '\t'], " ");
            let line = mcp_preamble::redact::printed(&line);
            let line = truncate(&terminal_safe(&line), 78);
            let _ = writeln!(err, "\x1b[2K{line}");
        }
        let _ = err.flush();
    }

    pub fn finish(&self) {
        if self.live {
            let n = self.lines.lock().map(|l| l.len()).unwrap_or(0);
            // Clear the progress block so the report starts clean.
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\x1b[{n}A");
            for _ in 0..n {
                let _ = writeln!(err, "\x1b[2K");
            }
            let _ = write!(err, "\x1b[{n}A");
        }
    }
}
