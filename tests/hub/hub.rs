//! The live hub: concurrency, revisions, deltas, and incremental work.
#![cfg(feature = "hub")]

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_preamble::hub::Hub;
use mcp_preamble::{Assembler, ServerSnapshot, TokenCounter, Tool};

fn server(name: &str, text: &str) -> ServerSnapshot {
    ServerSnapshot::new(name)
        .with_instructions(text)
        .with_tool(Tool::new(format!("{name}_tool"), "Does a thing."))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_and_readers_see_whole_sections() {
    let hub = Hub::new(Assembler::new().budget(200));
    let seen: Arc<Mutex<HashMap<u64, String>>> = Arc::default();
    let mut tasks = Vec::new();
    for w in 0..4 {
        let hub = hub.clone();
        tasks.push(tokio::spawn(async move {
            for n in 0..25 {
                let alias = format!("server-{}", (w * 7 + n) % 6);
                let text = format!("Always call {alias}_tool first. Writer {w} round {n}.");
                hub.upsert(&alias, server(&alias, &text)).unwrap();
                if n % 5 == 4 {
                    let _ = hub.remove(&alias);
                }
                tokio::task::yield_now().await;
            }
        }));
    }
    for _ in 0..4 {
        let hub = hub.clone();
        let seen = seen.clone();
        tasks.push(tokio::spawn(async move {
            let mut last = 0;
            for _ in 0..200 {
                let s = hub.section();
                assert!(s.revision() >= last, "revisions only grow");
                last = s.revision();
                // A section is whole: every block is in its text, at its span.
                for r in s.assembly().servers().iter().filter(|r| r.included) {
                    let (a, b) = r.span.unwrap();
                    assert_eq!(&s.text()[a..b], r.text);
                }
                assert_eq!(
                    s.blocks().len(),
                    s.assembly().servers().iter().filter(|r| r.included).count()
                );
                // One revision, one content.
                {
                    let mut seen = seen.lock().unwrap();
                    let text = seen
                        .entry(s.revision())
                        .or_insert_with(|| s.text().to_string());
                    assert_eq!(text, s.text(), "revision {} had two contents", s.revision());
                }
                tokio::task::yield_now().await;
            }
        }));
    }
    let all = futures_join(tasks);
    tokio::time::timeout(Duration::from_secs(60), all)
        .await
        .expect("no deadlock");
    let final_section = hub.section();
    let fresh = Assembler::new()
        .budget(200)
        .assemble(
            &hub.aliases()
                .iter()
                .map(|a| hub.snapshot(a).unwrap())
                .collect::<Vec<_>>(),
        )
        .unwrap();
    assert_eq!(
        final_section.text(),
        fresh.text(),
        "the hub matches a fresh assembly"
    );
}

async fn futures_join(tasks: Vec<tokio::task::JoinHandle<()>>) {
    for t in tasks {
        t.await.unwrap();
    }
}

#[test]
fn subscribers_see_each_new_section() {
    let hub = Hub::new(Assembler::new());
    let mut rx = hub.subscribe();
    assert_eq!(rx.borrow().revision(), 0);
    let r1 = hub.upsert("a", server("a", "Call a_tool first.")).unwrap();
    assert!(rx.has_changed().unwrap());
    assert_eq!(rx.borrow_and_update().revision(), r1);
    // The same snapshot again changes nothing.
    assert_eq!(
        hub.upsert("a", server("a", "Call a_tool first.")).unwrap(),
        r1
    );
    assert!(!rx.has_changed().unwrap());
    let r2 = hub.remove("a").unwrap();
    assert_eq!(r2, r1 + 1);
    assert_eq!(hub.section().text(), "");
    assert_eq!(
        hub.remove("a").unwrap_err().to_string(),
        "invalid configuration: no server with alias \"a\""
    );
}

#[test]
fn deltas_replay_to_the_current_blocks() {
    let hub = Hub::new(Assembler::new());
    let mut history: BTreeMap<u64, BTreeMap<String, String>> = BTreeMap::new();
    history.insert(0, BTreeMap::new());
    // A deterministic mix of adds, edits, tool changes and removals.
    for step in 0..40u64 {
        let alias = format!("s{}", step % 5);
        let r = match step % 7 {
            3 => hub.remove(&alias).unwrap_or(hub.revision()),
            5 => hub
                .update_tools(&alias, vec![Tool::new(format!("t{step}"), "x")])
                .unwrap_or(hub.revision()),
            _ => hub
                .upsert(&alias, server(&alias, &format!("Never skip step {step}.")))
                .unwrap(),
        };
        history.insert(r, hub.section().blocks().clone());
    }
    let now = hub.section();
    for (r, blocks) in &history {
        let delta = hub.changes_since(*r);
        assert_eq!(delta.to, now.revision());
        assert!(!delta.full);
        let mut replay = blocks.clone();
        delta.apply(&mut replay);
        assert_eq!(&replay, now.blocks(), "from revision {r}");
    }
    let unknown = hub.changes_since(10_000);
    assert!(unknown.full);
    let mut replay = BTreeMap::from([("stale".to_string(), "x".to_string())]);
    unknown.apply(&mut replay);
    assert_eq!(&replay, now.blocks());
}

/// Counts how much text was tokenized.
#[derive(Clone, Default)]
struct Counting(Arc<AtomicUsize>);

impl TokenCounter for Counting {
    fn name(&self) -> &str {
        "o200k_base"
    }
    fn count(&self, text: &str) -> usize {
        self.0.fetch_add(text.len(), Ordering::SeqCst);
        tiktoken_rs::o200k_base_singleton().count_ordinary(text)
    }
    fn splits_after_newline(&self) -> bool {
        true
    }
}

#[test]
fn one_change_among_fifty_costs_about_one_server() {
    let counter = Counting::default();
    let hub = Hub::new(Assembler::new().token_counter(counter.clone()));
    for i in 0..50 {
        let alias = format!("server-{i:02}");
        let text = format!("Always call {alias}_tool before the others. It handles area {i}.");
        hub.upsert(&alias, server(&alias, &text)).unwrap();
    }
    let before = counter.0.load(Ordering::SeqCst);
    hub.upsert(
        "server-17",
        server("server-17", "Never call server-17_tool twice."),
    )
    .unwrap();
    let tokenized = counter.0.load(Ordering::SeqCst) - before;
    let section = hub.section();
    let block = section.blocks()["server-17"].len();
    assert!(
        tokenized < 4 * block + 400,
        "one change tokenized {tokenized} bytes; the block is {block}, the section {}",
        section.text().len()
    );
    assert_eq!(
        section.assembly().total_tokens(),
        common::o200k(section.text())
    );
}

#[test]
fn a_failed_assembly_leaves_the_hub_as_it_was() {
    // This template fails for servers without tools.
    let t = mcp_preamble::Template::from_source(
        "first-tool",
        "{% macro server(s) %}{{ s.name }}: {{ s.tools[0].name }}{% endmacro %}{% for b in blocks %}{{ b }}\n{% endfor %}",
    )
    .unwrap();
    let hub = Hub::new(Assembler::new().template(t));
    let r = hub.upsert("good", server("good", "Fine.")).unwrap();
    let bad = ServerSnapshot::new("bad").with_instructions("No tools.");
    assert!(hub.upsert("bad", bad.clone()).is_err());
    assert_eq!(hub.aliases(), ["good"], "the failed server is not kept");
    assert!(
        hub.upsert("bad", bad).is_err(),
        "and fails again, not silently"
    );
    assert_eq!(hub.revision(), r);
    hub.update_tools("good", vec![Tool::new("other", "d")])
        .unwrap();
    assert!(hub.section().text().contains("good: other"));
}

#[test]
fn blocks_are_keyed_by_the_hubs_own_aliases() {
    let hub = Hub::new(Assembler::new());
    hub.upsert("x", server("x", "One.")).unwrap();
    hub.upsert("x\u{200b}", server("y", "Two.")).unwrap();
    let long_a = format!("{}a", "n".repeat(120));
    let long_b = format!("{}b", "n".repeat(120));
    hub.upsert(&long_a, server("a", "Three.")).unwrap();
    hub.upsert(&long_b, server("b", "Four.")).unwrap();
    let section = hub.section();
    let keys: Vec<&String> = section.blocks().keys().collect();
    assert_eq!(keys.len(), 4, "{keys:?}");
    assert!(section.blocks().contains_key("x\u{200b}"));
    assert!(section.blocks()[&long_b].contains("Four."));
    assert_eq!(hub.changes_since(0).added.len(), 4);
}
