//! `tracing` events: an assembly under a budget tells a subscriber which
//! server was trimmed and by how much; without a subscriber nothing runs.

use std::sync::{Arc, Mutex};

use mcp_preamble::{Assembler, ServerSnapshot};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// One captured event or span: its name or message, and its fields as text.
#[derive(Debug, Clone, Default)]
struct Captured {
    level: String,
    fields: Vec<(String, String)>,
}

impl Captured {
    fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

impl Visit for Captured {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.fields
            .push((field.name().to_owned(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.fields
            .push((field.name().to_owned(), value.to_owned()));
    }
}

/// A subscriber that keeps every event and span it sees.
#[derive(Clone, Default)]
struct Capture {
    events: Arc<Mutex<Vec<Captured>>>,
    spans: Arc<Mutex<Vec<(String, Captured)>>>,
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let mut c = Captured {
            level: attrs.metadata().level().to_string(),
            ..Captured::default()
        };
        attrs.record(&mut c);
        let mut spans = self.spans.lock().unwrap();
        spans.push((attrs.metadata().name().to_owned(), c));
        Id::from_u64(spans.len() as u64)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        let mut spans = self.spans.lock().unwrap();
        values.record(&mut spans[span.into_u64() as usize - 1].1);
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut c = Captured {
            level: event.metadata().level().to_string(),
            ..Captured::default()
        };
        event.record(&mut c);
        self.events.lock().unwrap().push(c);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

fn wordy(name: &str) -> ServerSnapshot {
    ServerSnapshot::new(name).with_instructions(
        "Always call list_periods before get_invoice.\n\n\
         Invoices are read-only; never try to change one.\n\n\
         Amounts are in cents, dates in UTC, and periods are calendar months \
         that start on the first day and end on the last day of the month.",
    )
}

#[test]
fn an_assembly_under_a_budget_emits_a_trim_event_with_token_counts() {
    let capture = Capture::default();
    let assembler = Assembler::new().server_budget("billing", 20);
    let assembly = tracing::subscriber::with_default(capture.clone(), || {
        assembler
            .assemble(&[wordy("billing"), wordy("notes")])
            .unwrap()
    });
    let billing = assembly
        .servers()
        .iter()
        .find(|s| s.name == "billing")
        .unwrap();
    assert!(billing.trimmed(), "{billing:?}");

    let events = capture.events.lock().unwrap().clone();
    let trims: Vec<&Captured> = events
        .iter()
        .filter(|e| e.get("message") == Some("trimmed"))
        .collect();
    // Only the server that was cut; the one within budget says nothing.
    assert_eq!(trims.len(), 1, "{events:?}");
    let trim = trims[0];
    assert_eq!(trim.level, "DEBUG");
    assert_eq!(trim.get("server"), Some("billing"));
    assert_eq!(
        trim.get("tokens_before"),
        Some(billing.tokens_before.to_string().as_str())
    );
    assert_eq!(
        trim.get("tokens_after"),
        Some(billing.tokens.to_string().as_str())
    );
    assert_eq!(trim.get("budget"), Some("20"));
    assert!(
        billing.tokens <= 20 && billing.tokens_before > 20,
        "{billing:?}"
    );

    let spans = capture.spans.lock().unwrap().clone();
    let (_, assemble) = spans
        .iter()
        .find(|(name, _)| name == "assemble")
        .expect("an assemble span");
    assert_eq!(assemble.level, "DEBUG");
    assert_eq!(assemble.get("servers"), Some("2"));
    assert_eq!(
        assemble.get("tokens"),
        Some(assembly.total_tokens().to_string().as_str())
    );
}

/// A subscriber that takes only INFO and above sees nothing: the crate's
/// events are DEBUG, off by default.
#[test]
fn nothing_is_emitted_at_info() {
    #[derive(Clone, Default)]
    struct InfoOnly(Capture);
    impl Subscriber for InfoOnly {
        fn enabled(&self, m: &Metadata<'_>) -> bool {
            *m.level() <= tracing::Level::INFO
        }
        fn new_span(&self, a: &Attributes<'_>) -> Id {
            self.0.new_span(a)
        }
        fn record(&self, s: &Id, v: &Record<'_>) {
            self.0.record(s, v)
        }
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, e: &Event<'_>) {
            self.0.event(e)
        }
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }
    let sub = InfoOnly::default();
    let assembler = Assembler::new().server_budget("billing", 20);
    tracing::subscriber::with_default(sub.clone(), || {
        assembler.assemble(&[wordy("billing")]).unwrap();
    });
    assert!(sub.0.events.lock().unwrap().is_empty());
    assert!(sub.0.spans.lock().unwrap().is_empty());
}

/// A server that cannot start: the connect span names it and records the
/// kind of failure (not the error text, which may quote secrets).
#[cfg(feature = "rmcp")]
#[tokio::test]
async fn a_failed_connect_is_a_connect_span_with_its_state() {
    use mcp_preamble::connect::{ConnectOptions, connect};
    let capture = Capture::default();
    let _default = tracing::subscriber::set_default(capture.clone());
    let entry = mcp_preamble::files::ServerEntry {
        alias: "nowhere".into(),
        transport: mcp_preamble::files::ServerTransport::Stdio {
            command: "/nonexistent/mcp-server".into(),
            args: vec![],
            env: Default::default(),
            cwd: None,
        },
    };
    assert!(connect(&entry, &ConnectOptions::new()).await.is_err());
    let spans = capture.spans.lock().unwrap().clone();
    let (_, span) = spans
        .iter()
        .find(|(name, _)| name == "connect")
        .expect("a connect span");
    assert_eq!(span.get("alias"), Some("nowhere"));
    assert_eq!(span.get("state"), Some("Connect"));
    let events = capture.events.lock().unwrap().clone();
    let done = events
        .iter()
        .find(|e| e.get("message") == Some("connect finished"))
        .expect("a connect finished event");
    assert_eq!(done.get("alias"), Some("nowhere"));
    assert_eq!(done.get("state"), Some("Connect"));
}

/// A hub tells each new revision it publishes, with the section's tokens;
/// the same bytes again publish nothing.
#[cfg(feature = "hub")]
#[test]
fn a_hub_revision_is_a_published_event() {
    let capture = Capture::default();
    let hub = mcp_preamble::hub::Hub::new(Assembler::new());
    let revision = tracing::subscriber::with_default(capture.clone(), || {
        let r = hub.upsert("billing", wordy("billing")).unwrap();
        assert_eq!(hub.upsert("billing", wordy("billing")).unwrap(), r);
        r
    });
    let events = capture.events.lock().unwrap().clone();
    let published: Vec<&Captured> = events
        .iter()
        .filter(|e| e.get("message") == Some("published"))
        .collect();
    assert_eq!(published.len(), 1, "{events:?}");
    assert_eq!(
        published[0].get("revision"),
        Some(revision.to_string().as_str())
    );
    assert_eq!(
        published[0].get("tokens"),
        Some(hub.section().assembly().total_tokens().to_string().as_str())
    );
}
