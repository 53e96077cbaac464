//! The host table (`src/hosts.rs`) is the one place a host fact is
//! written: each cap's number, a unit's measuring, each host's name and
//! which naming rule it uses. The code of every other file in `src/` (the
//! binary's help included) is scanned for them; a fact written again there
//! fails with the file and the fact.

use std::path::{Path, PathBuf};

use mcp_preamble::hosts::{Cut, Host};

use crate::lexer::lex;

/// A number that is a cap in the table but means something else here.
const OTHER_MEANINGS: &[(&str, usize, &str)] = &[
    (
        "src/connect/transport.rs",
        2048,
        "bytes of a server's stderr kept",
    ),
    (
        "src/connect/stderr.rs",
        2048,
        "bytes of a server's stderr line logged",
    ),
    (
        "src/serve/surfaces/lists.rs",
        2048,
        "bytes of a resource URI served",
    ),
    ("src/dedup/mod.rs", 512, "slots of a hash table"),
    ("src/assemble/layout.rs", 512, "bytes of a counted piece"),
];

/// Host names that are also ordinary words in strings (`"none"` is a value
/// of several settings, `"cursor"` MCP's pagination field).
const ORDINARY_WORDS: &[&str] = &["none", "cursor"];

/// A host name that means something else in one file.
const OTHER_WORDS: &[(&str, &str, &str)] = &[
    (
        "src/lint/rules/host.rs",
        "codex",
        "the directory ~/.codex in a pattern of sensitive paths",
    ),
    (
        "src/config.rs",
        "vscode",
        "VS Code's config folder, .vscode",
    ),
    (
        "src/bin/mcp-preamble/install.rs",
        "vscode",
        "VS Code's project config, .vscode/mcp.json, which install edits",
    ),
    (
        "src/bin/mcp-preamble/scopes.rs",
        "vscode",
        "VS Code's workspace folder, .vscode, where a workspace scope's file is",
    ),
];

/// The code of a file without comments and `#[cfg(test)]` items, and its
/// string literals apart. In the binary, `///` comments are help text:
/// they count as strings.
struct Scanned {
    code: String,
    strings: Vec<String>,
}

fn scan(text: &str, docs_are_strings: bool) -> Scanned {
    let lexed = lex(text);
    let mut strings = lexed.strings;
    if docs_are_strings {
        strings.extend(lexed.docs);
    }
    Scanned {
        code: lexed.code,
        strings,
    }
}

/// Every number in `text`: digit runs, `_` and (in prose) `,` between
/// groups of digits ignored, not part of a longer word.
fn numbers(text: &str, commas: bool) -> Vec<usize> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit()
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'));
        if !starts {
            i += 1;
            continue;
        }
        let mut digits = String::new();
        while i < b.len() {
            let c = b[i];
            let joins = (c == b'_' || (commas && c == b','))
                && b.get(i + 1).is_some_and(u8::is_ascii_digit);
            if c.is_ascii_digit() {
                digits.push(c as char);
            } else if !joins {
                break;
            }
            i += 1;
        }
        if i < b.len() && (b[i].is_ascii_alphabetic() || b[i] == b'_') {
            // A suffix such as `u8` is fine; a word such as `2fa` is not a number.
            if !matches!(b[i], b'u' | b'i') {
                continue;
            }
        }
        if let Ok(n) = digits.parse() {
            out.push(n);
        }
    }
    out
}

/// Whether `word` is in `text` as a whole word (`[a-z0-9-]` around it).
fn has_word(text: &str, word: &str) -> bool {
    let part = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(part) && !after.is_some_and(part)
    })
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") && p.file_name().unwrap() != "tests.rs" {
            out.push(p);
        }
    }
}

/// Every place outside the table that writes a host fact again.
fn facts_written_again(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let caps: Vec<(Host, usize)> = Host::all()
        .filter_map(|h| match h.profile().cut {
            Cut::Cap(c) => Some((h, c.limit)),
            _ => None,
        })
        .collect();
    let mut found = Vec::new();
    for path in files {
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "src/hosts.rs" {
            continue;
        }
        let scanned = scan(
            &std::fs::read_to_string(&path).unwrap(),
            rel.starts_with("src/bin/"),
        );
        for &(host, limit) in &caps {
            let elsewhere = OTHER_MEANINGS
                .iter()
                .any(|(file, n, _)| *file == rel && *n == limit);
            let in_code = numbers(&scanned.code, false).contains(&limit);
            let in_text = scanned
                .strings
                .iter()
                .any(|s| numbers(s, true).contains(&limit));
            if (in_code && !elsewhere) || in_text {
                found.push(format!("{rel}: {host}'s cap {limit}"));
            }
        }
        if scanned.code.contains("encode_utf16().count()") {
            found.push(format!("{rel}: a length in UTF-16 units (Unit::Utf16)"));
        }
        for host in Host::all() {
            let profile = host.profile();
            for name in std::iter::once(&profile.name).chain(profile.aliases) {
                let other = OTHER_WORDS.iter().any(|(f, w, _)| *f == rel && w == name);
                if ORDINARY_WORDS.contains(name) || other {
                    continue;
                }
                if scanned.strings.iter().any(|s| has_word(s, name)) {
                    found.push(format!("{rel}: the host name {name:?}"));
                }
            }
        }
        // Which host names tools by which rule is the table's to say.
        if !rel.starts_with("src/tool_names/") && scanned.code.contains("NameRule::") {
            found.push(format!("{rel}: a naming rule outside tool_names"));
        }
    }
    found
}

#[test]
fn each_host_fact_is_written_once_in_the_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert_eq!(facts_written_again(root), Vec::<String>::new());
}

#[test]
fn the_scan_finds_a_fact_written_again() {
    // A copy of the gateway's old `--as` table, in a file of its own.
    let dir = std::env::temp_dir().join(format!("mcp-preamble-hosts-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("bin")).unwrap();
    std::fs::write(
        src.join("fit.rs"),
        "fn cap(h: H) -> usize { match h { H::A => 2_048, H::B => 512 } }\n\
         fn measure(t: &str) -> usize { t.encode_utf16().count() }\n\
         const E: &str = \"unknown host (known: plain, claude-code, codex)\";\n\
         #[cfg(test)]\nmod tests { const N: usize = 4000; }\n",
    )
    .unwrap();
    std::fs::write(
        src.join("bin/args.rs"),
        "/// Fit to `claude-code` (2,048 UTF-16 units in all).\nstruct A;\n",
    )
    .unwrap();
    let found = facts_written_again(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        found,
        [
            "src/bin/args.rs: claude-code's cap 2048",
            "src/bin/args.rs: the host name \"claude-code\"",
            "src/fit.rs: claude-code's cap 2048",
            "src/fit.rs: codex's cap 512",
            "src/fit.rs: a length in UTF-16 units (Unit::Utf16)",
            "src/fit.rs: the host name \"claude-code\"",
            "src/fit.rs: the host name \"codex\"",
        ]
    );
}

#[test]
fn numbers_are_read_as_written() {
    assert_eq!(numbers("a 2_048 b 512u16 x2 7z", false), [2048, 512]);
    assert_eq!(numbers("2,048 units, 4000", true), [2048, 4000]);
    assert!(has_word("use codex, or plain", "codex"));
    assert!(!has_word("codex-rs", "codex"));
}
