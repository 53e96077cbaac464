//! The crate's import structure: the pipeline stages form layers, and no
//! file imports (directly or through others) a file that imports it back;
//! the binary (`src/bin/mcp-preamble/`) is held to the same rules. And no
//! function is longer than [`MAX_FN_LINES`].
//!
//! `LAYERS` below is the architecture in one list, lowest layer first (see
//! ARCHITECTURE.md); `BIN_LAYERS` is the binary's. A module may import from
//! its own folder and from lower layers only; inside the crate every import
//! names the module that defines the item (`crate::report::Assembly`, never
//! `crate::Assembly` through a root re-export). A `pub use` is an import too,
//! unless a module re-exports from its own folder (its facade), and an
//! import through a facade (`super::Gateway` re-exported by `mod.rs`) counts
//! for the file that defines the item too. `SERVE_FLOORS` does for the
//! inside of `src/serve/` what `LAYERS` does for `src/`. Adding a module
//! means adding it to a layer (or a floor) here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::lexer::{ident_before, lex};

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
    // With the policy file (`settings/file.rs`).
    &["settings"],
    &["lint"],
    &["hub"],
    // Review state shared in Redis: pins read and written as the lock's.
    &["state"],
    &["connect"],
    &["serve"],
    &["testing"],
    // A facade: a public module that only re-exports.
    &["files"],
];

/// The gateway's floors inside `src/serve/`, lowest first, checked like
/// [`LAYERS`] for the modules under `serve::`: an entry names a folder or one
/// file in it, and the longest entry that holds a module is its floor (so
/// `serve::gateway::fit` sits below the rest of `serve::gateway`). A module
/// imports from its own entry and from lower floors; entries in one row may
/// not import each other. The facade (`serve/mod.rs`) may import any floor;
/// a module on no floor is an error, so a new file has to be placed.
const SERVE_FLOORS: &[&[&str]] = &[
    // The live upstreams: the one send, the direct post, the event-stream reader.
    &["serve::upstream"],
    // The host a gateway serves (`ServeAs`), then the names and the counts.
    &["serve::gateway::fit"],
    &[
        "serve::gateway::names",
        "serve::gateway::metrics",
        "serve::gateway::rpc",
    ],
    // Prompts, resources, skills, subscriptions, notifications.
    &["serve::surfaces"],
    // The decisions: the handler, calls, the view.
    &["serve::gateway"],
    // Every inbound byte: stdio, HTTP, the gate, sessions, replicas, auth.
    &["serve::front"],
    // The gateway's entry points: a front started over it.
    &["serve::gateway::serving"],
    &["serve::wrap"],
];
/// The binary's modules, by layer: lowest first. `main.rs` is its root and
/// may call any of them.
const BIN_LAYERS: &[&[&str]] = &[
    // The flags' value parsers, under clap's types.
    &["parse"],
    &["error", "args", "source"],
    // Everything printed goes through `emit`.
    &["emit"],
    &["memory", "progress", "state", "jsonlog"],
    // Reading files, connecting to a config's servers.
    &["load"],
    // Where the pins are: a lock file or a shared state (`--state`).
    &["review"],
    // The signals that stop `wrap` and `serve`.
    &["stop"],
    // `serve --listen`'s listener, gate and options.
    &["listen"],
    // Reloading a running gateway: the policy, the lock, the server config.
    &["reload"],
    // What a host's model reads (`show`, `preview --as`).
    &["show"],
    // The commands; `snapshot` warns about aliases as `lint` does, `pin`
    // writes the lock as `snapshot` writes its files.
    &["lint", "preview", "serve"],
    &["snapshot"],
    // `pin --review` and `--approve DIGEST`.
    &["approve"],
    &["pin"],
    // `wrap` loads the policy and the log as `serve` does; `install`
    // edits host configs through the JSONC scanner.
    &["jsonc"],
    // Each host's config scopes: its files and the servers objects in one.
    &["scopes"],
    &["wrap", "install"],
];

/// The longest a function may be, from its `fn` line to its closing brace.
const MAX_FN_LINES: usize = 80;

/// Items longer than [`MAX_FN_LINES`] that are data, not logic: `(file, name, why)`.
const LONG_DATA: &[(&str, &str, &str)] = &[
    (
        "redact/scan.rs",
        "SECRET_PATTERNS",
        "a table of credential patterns, one `p(..)` row each",
    ),
    (
        "lint/rules/host.rs",
        "HOST_PATTERNS",
        "a table of MCP006 phrases (text acting on the host), one `p(..)` row each",
    ),
];

/// A source file's imports: the files it names through `crate::`, `super::`
/// and `self::` paths, outside comments and `#[cfg(test)]` modules.
struct Graph {
    files: BTreeMap<String, BTreeSet<String>>,
    /// `(file, path)` for each `crate::Name` that goes through a root re-export.
    through_root: Vec<(String, String)>,
    /// Files declared only for tests (`#[cfg(test)]` then `mod x;`).
    test_only: BTreeSet<String>,
}

/// The library's sources (`src/` without `src/bin/`).
fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The binary's sources.
fn bin_dir() -> PathBuf {
    src_dir().join("bin").join("mcp-preamble")
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

/// `src/a/b.rs` and `src/a/b/mod.rs` are module `a::b`; `lib.rs` (or the
/// binary's `main.rs`) is the root.
fn module_of(rel: &str) -> Vec<String> {
    let stem = rel.trim_end_matches(".rs");
    let mut segs: Vec<String> = stem.split('/').map(str::to_owned).collect();
    if matches!(segs.last().map(String::as_str), Some("mod"))
        || matches!(segs.as_slice(), [root] if root == "lib" || root == "main")
    {
        segs.pop();
    }
    segs
}

fn is_root(rel: &str) -> bool {
    rel == "lib.rs" || rel == "main.rs"
}

/// The code of a file without comments, string contents, and `#[cfg(test)]`
/// items; their newlines stay, so lines keep their numbers.
fn code_of(text: &str) -> String {
    lex(text).code
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

/// The code split in two: without its `pub use` statements, and those
/// statements alone (a re-export is an import too, unless it is a facade
/// over the module's own folder; [`graph_from`] tells which).
fn split_reexports(code: &str) -> (String, String) {
    let mut out = String::with_capacity(code.len());
    let mut reexports = String::new();
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
                let end = tail.find(';').map_or(tail.len(), |e| e + 1);
                reexports.push_str(&tail[..end]);
                reexports.push('\n');
                rest = &tail[end..];
            }
            None => {
                out.push_str(&rest[..pos + 3]);
                rest = &rest[pos + 3..];
            }
        }
    }
    out.push_str(rest);
    (out, reexports)
}

/// The paths `code` names: [`paths_in`], and `child::X` for each submodule
/// declared in the file (named without `self::`).
fn imports_in(code: &str, children: &[String]) -> Vec<String> {
    let mut found = paths_in(code);
    for child in children {
        found.extend(
            paths_in(&code.replace(&format!("{child}::"), &format!("self::{child}::")))
                .into_iter()
                .filter(|p| p.starts_with(&format!("self::{child}"))),
        );
    }
    found.sort();
    found.dedup();
    found
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

/// The import graph of the sources under `dir` (`src/bin/` left out).
fn graph_of(dir: &Path) -> Graph {
    let mut paths = Vec::new();
    rust_files(dir, &mut paths);
    let sources: BTreeMap<String, String> = paths
        .iter()
        .map(|p| {
            let rel = p
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            (rel, std::fs::read_to_string(p).unwrap())
        })
        .collect();
    graph_from(&sources)
}

/// The library's import graph.
fn graph() -> Graph {
    graph_of(&src_dir())
}

/// The import graph of `sources`: each file's text by its path under the root.
fn graph_from(sources: &BTreeMap<String, String>) -> Graph {
    let files: BTreeMap<Vec<String>, String> = sources
        .keys()
        .map(|rel| (module_of(rel), rel.clone()))
        .collect();
    let codes: BTreeMap<&Vec<String>, String> = files
        .iter()
        .map(|(module, rel)| (module, code_of(&sources[rel])))
        .collect();
    let tree = Tree {
        uses: codes
            .iter()
            .map(|(module, code)| ((*module).clone(), uses_in(code, &children_of(code))))
            .collect(),
        files: files.clone(),
    };
    let mut graph = Graph {
        files: BTreeMap::new(),
        through_root: Vec::new(),
        test_only: BTreeSet::new(),
    };
    for (module, rel) in &files {
        if let Some(parent) = files.get(&module[..module.len().saturating_sub(1)]) {
            let name = module.last().map_or("", String::as_str);
            if sources[parent].contains(&format!("#[cfg(test)]\nmod {name};")) {
                graph.test_only.insert(rel.clone());
            }
        }
        let code = &codes[module];
        let children = children_of(code);
        let (plain, reexports) = split_reexports(code);
        let found = imports_in(&plain, &children)
            .into_iter()
            .map(|p| (p, false))
            .chain(
                imports_in(&reexports, &children)
                    .into_iter()
                    .map(|p| (p, true)),
            );
        let mut deps = BTreeSet::new();
        for (path, reexport) in found {
            let target = match tree.resolve(module, &path) {
                Resolved::File(target) => target,
                Resolved::ThroughRoot => {
                    graph.through_root.push((rel.clone(), path));
                    continue;
                }
                Resolved::Outside => continue,
            };
            // The file named, and the one that defines the item if that differs.
            for target in std::iter::once(target).chain(tree.definer(module, &path, 0)) {
                // A facade re-exporting from its own folder does not import it.
                if reexport && target.len() > module.len() && target.starts_with(module) {
                    continue;
                }
                if let Some(dep) = files.get(&target).filter(|dep| *dep != rel) {
                    deps.insert(dep.clone());
                }
            }
        }
        graph.files.insert(rel.clone(), deps);
    }
    graph
}

/// What a path names, seen from its file.
enum Resolved {
    /// The module of the file the item lives in.
    File(Vec<String>),
    /// A `crate::Name` through a root re-export.
    ThroughRoot,
    /// Not a file of this tree (`self::` at the root, `crate::__private`).
    Outside,
}

/// The files of a tree by module, and the names each one's `use`
/// statements bind (`(name, path)`, the path from `crate`, `self` or `super`).
/// An import counts for the file it names and for the file that defines
/// the item, so an import through a facade is seen both ways.
struct Tree {
    files: BTreeMap<Vec<String>, String>,
    uses: BTreeMap<Vec<String>, Vec<(String, String)>>,
}

impl Tree {
    /// What a path found in `module` names.
    fn resolve(&self, module: &[String], path: &str) -> Resolved {
        match self.locate(module, path) {
            Ok((target, _)) => Resolved::File(target),
            Err(other) => other,
        }
    }

    /// The file that defines what a path found in `module` names, when the
    /// file it names only imports it (`super::Gateway` where `mod.rs` says
    /// `pub use gateway::Gateway`): a facade must not hide a loop.
    fn definer(&self, module: &[String], path: &str, depth: usize) -> Option<Vec<String>> {
        let (target, name) = self.locate(module, path).ok()?;
        let (_, from) = self
            .uses
            .get(&target)?
            .iter()
            .find(|(bound, _)| Some(bound.as_str()) == name)?;
        if target.is_empty() || depth >= 8 {
            return None;
        }
        self.definer(&target, from, depth + 1)
            .or_else(|| match self.resolve(&target, from) {
                Resolved::File(file) => Some(file),
                _ => None,
            })
    }

    /// The longest prefix of `path` that is a file, and the name after it.
    fn locate<'p>(
        &self,
        module: &[String],
        path: &'p str,
    ) -> Result<(Vec<String>, Option<&'p str>), Resolved> {
        let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        let mut base: Vec<String> = match segs.first().copied() {
            Some("crate") => Vec::new(),
            Some("self") => module.to_vec(),
            Some("super") => module[..module.len().saturating_sub(1)].to_vec(),
            _ => return Err(Resolved::Outside),
        };
        segs.remove(0);
        while segs.first() == Some(&"super") {
            base.pop();
            segs.remove(0);
        }
        // The longest prefix that is a file is the file the item lives in.
        let mut target = base;
        let mut named = 0;
        for s in &segs {
            let mut next = target.clone();
            next.push((*s).to_owned());
            if self.files.contains_key(&next) {
                target = next;
                named += 1;
            } else {
                break;
            }
        }
        if target.is_empty()
            && !segs.is_empty()
            && !self.files.contains_key(&vec![segs[0].to_owned()])
        {
            return Err(if segs[0] == "self" || segs[0] == "__private" {
                Resolved::Outside
            } else {
                Resolved::ThroughRoot
            });
        }
        Ok((target, segs.get(named).copied()))
    }
}

/// The names `code`'s `use` statements bind, each with the path it names
/// (from `crate`, `self` or `super`; a child module's name gets `self::`);
/// names from other crates, globs and `_` are left out.
fn uses_in(code: &str, children: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(pos) = code[from..].find("use ") {
        let at = from + pos;
        from = at + 4;
        if ident_before(&code[..at]) {
            continue;
        }
        let Some(end) = code[from..].find(';') else {
            break;
        };
        let body = code[from..from + end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let mut leaves = Vec::new();
        use_leaves(&body.replace(" as ", "@").replace(' ', ""), "", &mut leaves);
        for leaf in leaves {
            let (path, alias) = leaf
                .split_once('@')
                .map_or((leaf.as_str(), None), |(p, a)| (p, Some(a)));
            let path = path.strip_suffix("::self").unwrap_or(path);
            let name = alias.unwrap_or_else(|| path.rsplit("::").next().unwrap_or(path));
            let first = path.split("::").next().unwrap_or_default();
            let path = if ["crate", "self", "super"].contains(&first) {
                path.to_owned()
            } else if children.iter().any(|c| c == first) {
                format!("self::{path}")
            } else {
                continue;
            };
            if name != "*" && name != "_" {
                out.push((name.to_owned(), path));
            }
        }
    }
    out
}

/// The paths of one `use` body (`a::{b::X, c::{self, Y@Z}}`, no blanks, `@`
/// for `as`), each in full.
fn use_leaves(body: &str, prefix: &str, out: &mut Vec<String>) {
    let Some(open) = body.find('{') else {
        if !body.is_empty() {
            out.push(format!("{prefix}{body}"));
        }
        return;
    };
    let prefix = format!("{prefix}{}", &body[..open]);
    let inner = &body[open + 1..body.rfind('}').unwrap_or(body.len()).max(open + 1)];
    let (mut depth, mut last) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                use_leaves(&inner[last..i], &prefix, out);
                last = i + 1;
            }
            _ => {}
        }
    }
    use_leaves(&inner[last..], &prefix, out);
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

fn layer_of(layers: &[&[&str]], module: &str) -> Option<usize> {
    layers.iter().position(|row| row.contains(&module))
}

/// Each import that does not point down `layers`, and each module in none.
fn against_layers(g: &Graph, layers: &[&[&str]]) -> Vec<String> {
    let mut wrong = Vec::new();
    for (file, deps) in &g.files {
        if is_root(file) {
            continue;
        }
        let from = top(file);
        let Some(lf) = layer_of(layers, from) else {
            wrong.push(format!("{file}: module `{from}` is in no layer"));
            continue;
        };
        for dep in deps {
            let to = top(dep);
            if to == from || is_root(dep) {
                continue;
            }
            match layer_of(layers, to) {
                Some(lt) if lt < lf => {}
                Some(_) => wrong.push(format!(
                    "{file} imports {dep}: `{to}` is not below `{from}`"
                )),
                None => wrong.push(format!("{dep}: module `{to}` is in no layer")),
            }
        }
    }
    wrong
}

/// The floor holding `module`: the row and entry of the longest entry that
/// is a prefix of its path.
fn floor_of<'f>(floors: &[&[&'f str]], module: &[String]) -> Option<(usize, &'f str)> {
    let mut best: Option<(usize, &'f str, usize)> = None;
    for (row, entries) in floors.iter().enumerate() {
        for &entry in entries.iter() {
            let segs: Vec<&str> = entry.split("::").collect();
            let holds = segs.len() <= module.len() && segs.iter().zip(module).all(|(a, b)| a == b);
            if holds && best.is_none_or(|(_, _, n)| segs.len() > n) {
                best = Some((row, entry, segs.len()));
            }
        }
    }
    best.map(|(row, entry, _)| (row, entry))
}

/// Each import between modules under `folder` (a top-level module) that
/// does not point down `floors`, and each module on no floor. The folder's
/// own facade is not on a floor: it may import them all; a module only
/// tests declare needs none.
fn against_floors(g: &Graph, folder: &str, floors: &[&[&str]]) -> Vec<String> {
    let inside = |module: &[String]| module.len() > 1 && module[0] == folder;
    let mut wrong = Vec::new();
    for (file, deps) in &g.files {
        let from = module_of(file);
        if !inside(&from) || g.test_only.contains(file) {
            continue;
        }
        let Some((row, entry)) = floor_of(floors, &from) else {
            wrong.push(format!("{file}: `{}` is on no floor", from.join("::")));
            continue;
        };
        for dep in deps {
            let to = module_of(dep);
            match floor_of(floors, &to).filter(|_| inside(&to)) {
                Some((_, other)) if other == entry => {}
                Some((below, _)) if below < row => {}
                Some((_, other)) => wrong.push(format!(
                    "{file} imports {dep}: `{other}` is not below `{entry}`"
                )),
                // Outside the folder (LAYERS' business), its facade, or on no floor (said above).
                None => {}
            }
        }
    }
    // An entry that holds no module places nothing: a typo or a move.
    for entry in floors.iter().flat_map(|row| row.iter()) {
        let segs: Vec<&str> = entry.split("::").collect();
        let holds = |file: &String| {
            let m = module_of(file);
            m.len() >= segs.len() && segs.iter().zip(&m).all(|(a, b)| a == b)
        };
        if !g.files.keys().any(holds) {
            wrong.push(format!("`{entry}` holds no module"));
        }
    }
    wrong
}

fn describe(found: &[Vec<String>]) -> String {
    found
        .iter()
        .map(|l| l.join(" <-> "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let found = loops(&graph().files);
    assert!(
        found.is_empty(),
        "import loops between files:\n{}",
        describe(&found)
    );
}

#[test]
fn no_file_of_the_binary_imports_a_file_that_imports_it_back() {
    let found = loops(&graph_of(&bin_dir()).files);
    assert!(
        found.is_empty(),
        "import loops between the binary's files:\n{}",
        describe(&found)
    );
}

#[test]
fn imports_point_down_the_layers() {
    let wrong = against_layers(&graph(), LAYERS);
    assert!(
        wrong.is_empty(),
        "imports against LAYERS in tests/architecture/layers.rs:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_binarys_imports_point_down_its_layers() {
    let wrong = against_layers(&graph_of(&bin_dir()), BIN_LAYERS);
    assert!(
        wrong.is_empty(),
        "imports against BIN_LAYERS in tests/architecture/layers.rs:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_gateways_imports_point_down_its_floors() {
    let wrong = against_floors(&graph(), "serve", SERVE_FLOORS);
    assert!(
        wrong.is_empty(),
        "imports against SERVE_FLOORS in tests/architecture/layers.rs:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_import_goes_through_a_root_reexport() {
    for (dir, g) in [
        ("src", graph()),
        ("src/bin/mcp-preamble", graph_of(&bin_dir())),
    ] {
        let list: Vec<String> = g
            .through_root
            .iter()
            .map(|(f, p)| format!("{dir}/{f}: {p}"))
            .collect();
        assert!(
            list.is_empty(),
            "imports through crate-root names (name the defining module):\n{}",
            list.join("\n")
        );
    }
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
    assert!(layer_of(LAYERS, "sanitize") < layer_of(LAYERS, "assemble"));
}

#[test]
fn the_checks_see_a_loop_in_the_binary() {
    // `load` prints through `emit` and `progress`; `emit` reading `load`
    // again would close the loop the binary once had.
    let mut g = graph_of(&bin_dir());
    assert!(g.files["load.rs"].contains("emit.rs"));
    assert!(g.files["main.rs"].contains("preview.rs"));
    g.files.get_mut("emit.rs").unwrap().insert("load.rs".into());
    assert_eq!(loops(&g.files), [["emit.rs", "load.rs", "progress.rs"]]);
    assert_eq!(
        against_layers(&g, BIN_LAYERS),
        ["emit.rs imports load.rs: `load` is not below `emit`"]
    );
}

#[test]
fn a_reexport_is_an_import_unless_from_its_own_folder() {
    let sources: BTreeMap<String, String> = [
        // `a` imports `b`, which re-exports from `a`: a loop.
        ("lib.rs", "mod a;\nmod b;\nmod c;\npub use a::X;\n"),
        ("a.rs", "use crate::b::Y;\npub struct X;\n"),
        ("b.rs", "pub use crate::a::X as Y;\n"),
        // `c` re-exports its child, which imports `c`: a facade, no loop.
        ("c/mod.rs", "mod d;\npub use d::Z;\npub struct W;\n"),
        ("c/d.rs", "use super::W;\npub struct Z(W);\n"),
    ]
    .into_iter()
    .map(|(f, s)| (f.to_owned(), s.to_owned()))
    .collect();
    let g = graph_from(&sources);
    assert_eq!(g.files["b.rs"], BTreeSet::from(["a.rs".to_owned()]));
    assert_eq!(g.files["c/mod.rs"], BTreeSet::new());
    assert_eq!(g.files["lib.rs"], BTreeSet::new());
    assert_eq!(loops(&g.files), [["a.rs", "b.rs"]]);
    assert!(g.through_root.is_empty());
}

/// Sources by path, for the checks' own tests.
fn tree_of(files: &[(&str, &str)]) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(f, s)| ((*f).to_owned(), (*s).to_owned()))
        .collect()
}

#[test]
fn a_loop_through_a_folders_mod_rs_is_seen() {
    // The gateway's loop at 17eae7d: `prompts.rs` names `super::Gateway`,
    // which `serve/mod.rs` only re-exports from `gateway.rs`.
    let g = graph_from(&tree_of(&[
        ("lib.rs", "mod serve;\n"),
        (
            "serve/mod.rs",
            "mod catalog;\nmod gateway;\nmod prompts;\npub use gateway::Gateway;\n\
             pub(crate) use self::catalog::{Catalog as Index};\npub struct Config;\n",
        ),
        (
            "serve/gateway.rs",
            "use super::catalog::Catalog;\npub struct Gateway(Catalog);\n",
        ),
        (
            "serve/catalog.rs",
            "use super::prompts;\npub struct Catalog;\nfn f() { prompts::list(); }\n",
        ),
        (
            "serve/prompts.rs",
            "use super::{Config, Gateway};\nimpl Gateway {\n    pub fn list(_: super::Index) {}\n}\n",
        ),
    ]));
    // Each name goes to the file that defines it; `Config` is the facade's own.
    assert_eq!(
        g.files["serve/prompts.rs"],
        BTreeSet::from(["serve/catalog.rs", "serve/gateway.rs", "serve/mod.rs"].map(str::to_owned))
    );
    assert_eq!(
        loops(&g.files),
        [["serve/catalog.rs", "serve/gateway.rs", "serve/prompts.rs"]]
    );
    // The facade's own re-exports stay free.
    assert_eq!(g.files["serve/mod.rs"], BTreeSet::new());
}

#[test]
fn the_floors_see_a_back_import_a_file_below_its_folder_and_an_unplaced_module() {
    let floors: &[&[&str]] = &[
        &["serve::upstream"],
        &["serve::gateway::fit"],
        &["serve::gateway"],
        &["serve::front"],
    ];
    let g = graph_from(&tree_of(&[
        ("lib.rs", "mod serve;\n"),
        (
            "serve/mod.rs",
            "mod front;\nmod gateway;\nmod stray;\nmod upstream;\npub use front::Listener;\n\
             #[cfg(test)]\nmod checks;\n",
        ),
        // Test code needs no floor.
        ("serve/checks.rs", "use super::front::Listener;\n"),
        ("serve/upstream/mod.rs", "mod send;\npub use send::send;\n"),
        // Up from the lowest floor to the highest.
        (
            "serve/upstream/send.rs",
            "use crate::serve::front::Listener;\npub fn send() {}\n",
        ),
        (
            "serve/gateway/mod.rs",
            "mod fit;\nmod handler;\npub use handler::Gateway;\n",
        ),
        // `fit` may use the upstreams, not the rest of its own folder.
        (
            "serve/gateway/fit.rs",
            "use crate::serve::upstream::send;\nuse super::handler::Config;\npub fn fit() {}\n",
        ),
        // The rest of the folder may use `fit`, below it.
        (
            "serve/gateway/handler.rs",
            "use super::fit::fit;\npub struct Gateway;\npub struct Config;\n",
        ),
        (
            "serve/front.rs",
            "use crate::serve::gateway::Gateway;\npub struct Listener;\n",
        ),
        ("serve/stray.rs", "pub fn nothing() {}\n"),
    ]));
    // `crate::serve::gateway::Gateway` is handler.rs's, re-exported by the folder.
    assert!(g.files["serve/front.rs"].contains("serve/gateway/handler.rs"));
    assert_eq!(
        against_floors(&g, "serve", floors),
        [
            "serve/gateway/fit.rs imports serve/gateway/handler.rs: \
             `serve::gateway` is not below `serve::gateway::fit`",
            "serve/stray.rs: `serve::stray` is on no floor",
            "serve/upstream/send.rs imports serve/front.rs: `serve::front` is not below `serve::upstream`",
        ]
    );
    // An entry that places nothing is reported too.
    let typo: &[&[&str]] = &[&["serve::upstreams"]];
    assert!(
        against_floors(&g, "serve", typo)
            .contains(&"`serve::upstreams` holds no module".to_owned())
    );
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

/// Each function (`fn`) and each static's initializer in `code`: its name,
/// first line (1-based) and length in lines.
fn items_of(code: &str) -> Vec<(String, usize, usize)> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    for keyword in ["fn", "static"] {
        let mut from = 0;
        while let Some(pos) = code[from..].find(keyword) {
            let at = from + pos;
            from = at + keyword.len();
            let after = &code[from..];
            let name: String = after
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            // A keyword, not part of a word or `'static`, followed by a name.
            if ident_before(&code[..at])
                || code[..at].ends_with('\'')
                || !after.starts_with(char::is_whitespace)
                || name.is_empty()
                || name == "mut"
            {
                continue;
            }
            let Some(end) = item_end(b, from, keyword == "fn") else {
                continue;
            };
            let first = code[..at].matches('\n').count() + 1;
            let last = code[..end].matches('\n').count() + 1;
            out.push((name, first, last - first + 1));
        }
    }
    out
}

/// Where the item starting at `from` ends: a function at its body's closing
/// brace (`None` without a body), a static at its `;`.
fn item_end(b: &[u8], from: usize, is_fn: bool) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_body = false;
    for (i, &c) in b.iter().enumerate().skip(from) {
        match c {
            b'{' if is_fn && depth == 0 => {
                in_body = true;
                depth += 1;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if in_body && depth == 0 {
                    return Some(i);
                }
            }
            b';' if depth == 0 => return (!is_fn).then_some(i),
            _ => {}
        }
    }
    None
}

#[test]
fn no_function_is_longer_than_80_lines() {
    let mut paths = Vec::new();
    rust_files(&src_dir(), &mut paths);
    rust_files(&bin_dir(), &mut paths);
    let mut long = Vec::new();
    for p in &paths {
        let rel = p
            .strip_prefix(src_dir())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let code = code_of(&std::fs::read_to_string(p).unwrap());
        for (name, line, lines) in items_of(&code) {
            let data = LONG_DATA.iter().any(|(f, n, _)| *f == rel && *n == name);
            if lines > MAX_FN_LINES && !data {
                long.push(format!("src/{rel}:{line}: `{name}` is {lines} lines"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "over {MAX_FN_LINES} lines (split it; a data table goes in LONG_DATA with its reason):\n{}",
        long.join("\n")
    );
}

#[test]
fn the_length_check_measures_bodies() {
    let code = code_of(
        "static T: &[u8] = &[\n1,\n2,\n];\nfn short(x: [u8; 2]) -> u8 {\n    let s = \"}\";\n    x[0]\n}\n\
         trait A { fn f(&self); }\n#[cfg(test)]\nmod tests {\nfn hidden() {}\n}\n",
    );
    assert_eq!(
        items_of(&code),
        [("short".to_owned(), 5, 4), ("T".to_owned(), 1, 4)]
    );
    // Every allow-listed table exists, and is long.
    for (file, name, _) in LONG_DATA {
        let code = code_of(&std::fs::read_to_string(src_dir().join(file)).unwrap());
        let lines = items_of(&code)
            .into_iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, _, lines)| lines);
        assert!(
            lines.is_some_and(|l| l > MAX_FN_LINES),
            "{file}: `{name}` is no longer a long table: take it out of LONG_DATA"
        );
    }
}
