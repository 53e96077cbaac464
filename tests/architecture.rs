//! The crate's import structure: the pipeline stages form layers, and no
//! file imports (directly or through others) a file that imports it back.
//!
//! `LAYERS` below is the architecture in one list, lowest layer first (see
//! ARCHITECTURE.md). A module may import from its own folder and from lower
//! layers only; inside the crate every import names the module that defines
//! the item (`crate::report::Assembly`, never `crate::Assembly` through a
//! root re-export). Adding a module means adding it to a layer here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules of `src/`, by layer: lowest first. Modules in one row
/// may not import each other.
const LAYERS: &[&[&str]] = &[
    &["support"],
    // Secret and URL redaction: regex and serde_json only.
    &["redact"],
    // The host table: read by the lint, the gateway and the tool names.
    &["error", "text", "hosts"],
    &["sanitize", "tokens", "tool_names", "rewrite", "schema"],
    &["markdown", "limits"],
    &["model", "segment"],
    &[
        "wire",
        "config",
        "visibility",
        "dedup",
        "template",
        "server_key",
    ],
    &["tool_policy"],
    &["pin"],
    &["report"],
    &["budget"],
    &["assemble"],
    &["settings"],
    &["policy"],
    &["lint"],
    &["hub"],
    &["connect"],
    &["serve"],
    &["testing"],
    // A facade: a public module that only re-exports.
    &["files"],
    // The deprecated root names of 0.1.
    &["moved"],
];

/// A source file's imports: the files it names through `crate::`, `super::`
/// and `self::` paths, outside comments and `#[cfg(test)]` modules.
struct Graph {
    files: BTreeMap<String, BTreeSet<String>>,
    /// `(file, path)` for each `crate::Name` that goes through a root re-export.
    through_root: Vec<(String, String)>,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if p.file_name().unwrap() != "bin" {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|e| e == "rs") && p.file_name().unwrap() != "tests.rs" {
            // (`tests.rs` files are `#[cfg(test)] mod tests;` bodies.)
            out.push(p);
        }
    }
}

/// `src/a/b.rs` and `src/a/b/mod.rs` are module `a::b`; `lib.rs` is the root.
fn module_of(rel: &str) -> Vec<String> {
    let stem = rel.trim_end_matches(".rs");
    let mut segs: Vec<String> = stem.split('/').map(str::to_owned).collect();
    if matches!(segs.last().map(String::as_str), Some("mod" | "lib")) {
        segs.pop();
    }
    segs
}

/// The code of a file without comments, string contents, and `#[cfg(test)]` items.
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if text[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if text[i..].starts_with("/*") {
            i += text[i..].find("*/").map_or(b.len() - i, |e| e + 2);
        } else if text[i..].starts_with("r#\"") {
            i += 3 + text[i + 3..].find("\"#").map_or(b.len() - i - 3, |e| e + 2);
            out.push_str("\"\"");
        } else if b[i] == b'\'' && text[i + 1..].starts_with('\\') {
            // A char literal with an escape: '\n', '\'', '\u{..}'.
            i += 2 + text[i + 2..].find('\'').map_or(b.len() - i - 2, |e| e + 1);
        } else if b[i] == b'\'' && text[i + 1..].chars().nth(1) == Some('\'') {
            i += 2 + text[i + 1..].chars().next().unwrap().len_utf8();
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if text[i..].starts_with("#[cfg(test)]") {
            // Skip the attribute and the item it marks (up to its matching brace or `;`).
            i += "#[cfg(test)]".len();
            let mut depth = 0usize;
            while i < b.len() {
                match b[i] {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            i += 1;
                            break;
                        }
                    }
                    b';' if depth == 0 => {
                        i += 1;
                        break;
                    }
                    _ => {}
                }
                i += 1;
            }
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// Every path in `code` that starts with `crate::`, `super::` or `self::`,
/// with `use` groups (`use crate::{a::X, b::{Y, Z}}`) expanded.
fn paths_in(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(pos) = code[from..].find(start) {
            let at = from + pos;
            from = at + start.len();
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
                || code[..at].ends_with("(in ")
            {
                continue; // part of a longer path, or a `pub(in crate::x)` visibility
            }
            expand(&code[at..], String::new(), &mut out);
        }
    }
    out
}

/// The code without `pub use` statements: a module's facade re-exporting
/// its children's items is not an import of them.
fn without_reexports(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(pos) = rest.find("pub") {
        let tail = &rest[pos..];
        let after_vis = if let Some(t) = tail.strip_prefix("pub(") {
            t.find(')').map(|e| &t[e + 1..])
        } else {
            tail.strip_prefix("pub")
        };
        match after_vis
            .map(str::trim_start)
            .filter(|t| t.starts_with("use "))
        {
            Some(_) => {
                out.push_str(&rest[..pos]);
                rest = &tail[tail.find(';').map_or(tail.len(), |e| e + 1)..];
            }
            None => {
                out.push_str(&rest[..pos + 3]);
                rest = &rest[pos + 3..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The submodules a file declares (`mod x;`, `pub mod x;`, `pub(crate) mod x;`).
fn children_of(code: &str) -> Vec<String> {
    code.lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix("mod ").or_else(|| {
                l.split_once(" mod ")
                    .filter(|(v, _)| v.starts_with("pub"))
                    .map(|(_, r)| r)
            })?;
            let name = rest.strip_suffix(';')?.trim();
            name.chars()
                .all(|c| c.is_alphanumeric() || c == '_')
                .then(|| name.to_owned())
        })
        .collect()
}

/// Reads one path (possibly with a `{...}` group) from the start of `s`.
fn expand(s: &str, prefix: String, out: &mut Vec<String>) {
    let mut path = prefix;
    let mut chars = s.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            path.push(c);
            chars.next();
        } else if c == '{' && path.ends_with("::") {
            // Split the group at top-level commas.
            let inner = &s[i + 1..];
            let mut depth = 0;
            let mut last = 0;
            for (j, d) in inner.char_indices() {
                match d {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        expand(inner[last..j].trim_start(), path.clone(), out);
                        return;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(inner[last..j].trim_start(), path.clone(), out);
                        last = j + 1;
                    }
                    _ => {}
                }
            }
            return;
        } else {
            break;
        }
    }
    out.push(path);
}

fn graph() -> Graph {
    let src = src_dir();
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    let files: BTreeMap<Vec<String>, String> = paths
        .iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (module_of(&rel), rel)
        })
        .collect();
    let mut graph = Graph {
        files: BTreeMap::new(),
        through_root: Vec::new(),
    };
    for (module, rel) in &files {
        let text = std::fs::read_to_string(src.join(rel)).unwrap();
        let is_mod = rel.ends_with("mod.rs") || rel == "lib.rs";
        let mut deps = BTreeSet::new();
        let code = without_reexports(&code_of(&text));
        let mut found = paths_in(&code);
        // `use child::X` names a submodule declared here without `self::`.
        for child in children_of(&code) {
            found.extend(
                paths_in(&code.replace(&format!("{child}::"), &format!("self::{child}::")))
                    .into_iter()
                    .filter(|p| p.starts_with(&format!("self::{child}"))),
            );
        }
        found.sort();
        found.dedup();
        for path in found {
            let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
            let mut base: Vec<String> = match segs.first().copied() {
                Some("crate") => Vec::new(),
                Some("self") if is_mod => module.clone(),
                Some("self") => module.clone(),
                Some("super") if is_mod => module[..module.len().saturating_sub(1)].to_vec(),
                Some("super") => module[..module.len().saturating_sub(1)].to_vec(),
                _ => continue,
            };
            segs.remove(0);
            while segs.first() == Some(&"super") {
                base.pop();
                segs.remove(0);
            }
            // The longest prefix that is a file is the file the item lives in.
            let mut target = base.clone();
            for s in &segs {
                let mut next = target.clone();
                next.push((*s).to_owned());
                if files.contains_key(&next) {
                    target = next;
                } else {
                    break;
                }
            }
            if target.is_empty()
                && !segs.is_empty()
                && !files.contains_key(&vec![segs[0].to_owned()])
            {
                if segs[0] != "self" && segs[0] != "__private" {
                    graph.through_root.push((rel.clone(), path.clone()));
                }
                continue;
            }
            if let Some(dep) = files.get(&target).filter(|dep| *dep != rel) {
                deps.insert(dep.clone());
            }
        }
        graph.files.insert(rel.clone(), deps);
    }
    graph
}

fn top(rel: &str) -> &str {
    rel.split('/').next().unwrap().trim_end_matches(".rs")
}

/// Every strongly connected set of files with more than one file (Tarjan).
fn loops(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'g> {
        g: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    impl<'g> T<'g> {
        fn visit(&mut self, v: &'g str) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on.insert(v);
            for w in self.g.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let l = self.low[w].min(self.low[v]);
                    self.low.insert(v, l);
                } else if self.on.contains(w) {
                    let l = self.index[w].min(self.low[v]);
                    self.low.insert(v, l);
                }
            }
            if self.low[v] == self.index[v] {
                let mut scc = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    scc.push(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    scc.sort();
                    self.out.push(scc);
                }
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|row| row.contains(&module))
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let g = graph();
    let found = loops(&g.files);
    assert!(
        found.is_empty(),
        "import loops between files:\n{}",
        found
            .iter()
            .map(|l| l.join(" <-> "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn imports_point_down_the_layers() {
    let g = graph();
    let mut wrong = Vec::new();
    for (file, deps) in &g.files {
        let from = top(file);
        if from == "lib" {
            continue;
        }
        let Some(lf) = layer_of(from) else {
            wrong.push(format!(
                "{file}: module `{from}` is in no layer of tests/architecture.rs"
            ));
            continue;
        };
        for dep in deps {
            let to = top(dep);
            if to == from || to == "lib" {
                continue;
            }
            match layer_of(to) {
                Some(lt) if lt < lf => {}
                Some(_) => wrong.push(format!(
                    "{file} imports {dep}: `{to}` is not below `{from}`"
                )),
                None => wrong.push(format!("{dep}: module `{to}` is in no layer")),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_import_goes_through_a_root_reexport() {
    let g = graph();
    let list: Vec<String> = g
        .through_root
        .iter()
        .map(|(f, p)| format!("{f}: {p}"))
        .collect();
    assert!(
        list.is_empty(),
        "imports through crate-root re-exports (name the defining module):\n{}",
        list.join("\n")
    );
}

#[test]
fn the_checks_see_a_back_import() {
    // A lower layer importing a higher one is a loop the checks must report.
    let mut g = graph();
    let text = code_of("use crate::assemble::Assembler;\nfn f() {}\n");
    assert_eq!(paths_in(&text), ["crate::assemble::Assembler"]);
    g.files
        .entry("assemble/mod.rs".into())
        .or_default()
        .insert("sanitize.rs".into());
    g.files
        .entry("sanitize.rs".into())
        .or_default()
        .insert("assemble/mod.rs".into());
    assert!(!loops(&g.files).is_empty());
    assert!(layer_of("sanitize") < layer_of("assemble"));
}

#[test]
fn use_groups_are_expanded() {
    let code = code_of(
        "use crate::{a::X, b::{c::Y, Z}};\n// use crate::gone::Q;\nlet s = \"crate::nope\";\n",
    );
    assert_eq!(
        paths_in(&code),
        ["crate::a::X", "crate::b::c::Y", "crate::b::Z"]
    );
}
