//! The modules of `src/retrieval` form a tree of imports: no module reaches itself through the
//! paths it names (`use super::…`, `crate::retrieval::…`, `super::super::…`, child modules).
//!
//! The test reads the sources, strips comments and literals, and resolves every path of two or
//! more segments that starts with `super`, `self`, `crate::retrieval`, a child module or an
//! imported name to the file module it names (through `use` imports, so a name a parent merely
//! imports counts as an edge to where it comes from). Inline modules (`mod simd { … }`,
//! `#[cfg(test)] mod tests { use super::*; }`) count as part of their file's module.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// A module path below `retrieval` (empty for `retrieval` itself).
type ModPath = Vec<String>;

/// A token of Rust source, comments and literals removed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    /// `::`
    Path,
    Punct(char),
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The tokens of `src`: identifiers, `::` and single punctuation marks; comments, string, char
/// and number literals and lifetimes are dropped.
fn tokens(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = at(i);
        if ch == '/' && at(i + 1) == '/' {
            while i < c.len() && at(i) != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if ch == '"' {
            i += 1;
            while i < c.len() && at(i) != '"' {
                i += if at(i) == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if ch == '\'' {
            if at(i + 1) == '\\' {
                i += 2;
                while i < c.len() && at(i) != '\'' {
                    i += 1;
                }
                i += 1;
            } else if at(i + 2) == '\'' {
                i += 3;
            } else {
                // A lifetime: its name follows as an identifier.
                i += 1;
            }
        } else if ch.is_ascii_digit() {
            while is_ident_char(at(i)) {
                i += 1;
            }
        } else if is_ident_start(ch) {
            let start = i;
            while is_ident_char(at(i)) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            // A raw string: `r"…"`, `r#"…"#`, `br"…"`.
            let mut hashes = 0;
            while at(i + hashes) == '#' {
                hashes += 1;
            }
            if (word == "r" || word == "br") && at(i + hashes) == '"' {
                i += hashes + 1;
                let closes = |i: usize| at(i) == '"' && (1..=hashes).all(|h| at(i + h) == '#');
                while i < c.len() && !closes(i) {
                    i += 1;
                }
                i += hashes + 1;
            } else {
                out.push(Tok::Ident(word));
            }
        } else if ch == ':' && at(i + 1) == ':' {
            out.push(Tok::Path);
            i += 2;
        } else {
            if !ch.is_whitespace() {
                out.push(Tok::Punct(ch));
            }
            i += 1;
        }
    }
    out
}

/// One path named in a file: the module it is named in (inline modules included), its segments
/// (`*` for a glob) and, in a `use`, the name it brings in.
#[derive(Debug, Clone)]
struct Named {
    context: ModPath,
    segments: Vec<String>,
    import: Option<String>,
}

/// What one file holds: the paths it names and the child modules it declares (`mod x;`).
#[derive(Debug, Default)]
struct FileInfo {
    named: Vec<Named>,
    children: BTreeSet<String>,
}

fn ident(t: Option<&Tok>) -> Option<&str> {
    match t {
        Some(Tok::Ident(s)) => Some(s),
        _ => None,
    }
}

/// Reads a path (or `use` tree) starting at `toks[*i]`, prefixed by `prefix`; appends each
/// complete path with the name it brings in (its last segment, or the alias after `as`).
fn read_tree(
    toks: &[Tok],
    i: &mut usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) {
    let mut segments = prefix;
    loop {
        match toks.get(*i) {
            Some(Tok::Ident(s)) => {
                segments.push(s.clone());
                *i += 1;
            }
            Some(Tok::Punct('*')) => {
                segments.push("*".into());
                *i += 1;
                out.push((segments, String::new()));
                return;
            }
            Some(Tok::Punct('{')) => {
                *i += 1;
                while *i < toks.len() && toks.get(*i) != Some(&Tok::Punct('}')) {
                    let before = *i;
                    read_tree(toks, i, segments.clone(), out);
                    if toks.get(*i) == Some(&Tok::Punct(',')) {
                        *i += 1;
                    }
                    if *i == before {
                        *i += 1;
                    }
                }
                *i += 1;
                return;
            }
            _ => break,
        }
        if toks.get(*i) == Some(&Tok::Path) {
            *i += 1;
        } else {
            break;
        }
    }
    let mut name = segments.last().cloned().unwrap_or_default();
    if name == "self" {
        segments.pop();
        name = segments.last().cloned().unwrap_or_default();
    }
    if ident(toks.get(*i)) == Some("as") {
        name = ident(toks.get(*i + 1)).unwrap_or("_").to_owned();
        *i += 2;
    }
    out.push((segments, name));
}

/// The paths named in the file of module `module`, and its child modules.
fn scan(module: &ModPath, src: &str) -> FileInfo {
    let toks = tokens(src);
    let mut info = FileInfo::default();
    // Inline modules open at a brace depth; `pending` waits for the brace of `mod name {`.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut pending: Option<String> = None;
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let context = || {
            let mut m = module.clone();
            m.extend(inline.iter().map(|(n, _)| n.clone()));
            m
        };
        match &toks[i] {
            Tok::Punct('{') => {
                depth += 1;
                if let Some(name) = pending.take() {
                    inline.push((name, depth));
                }
                i += 1;
                continue;
            }
            Tok::Punct('}') => {
                if inline.last().is_some_and(|&(_, d)| d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
                continue;
            }
            Tok::Ident(k) if k == "mod" => {
                if let Some(name) = ident(toks.get(i + 1)) {
                    match toks.get(i + 2) {
                        Some(Tok::Punct('{')) => pending = Some(name.to_owned()),
                        Some(Tok::Punct(';')) if inline.is_empty() => {
                            info.children.insert(name.to_owned());
                        }
                        _ => {}
                    }
                }
                i += 2;
                continue;
            }
            Tok::Ident(_) => {}
            _ => {
                i += 1;
                continue;
            }
        }
        // A path starts here unless it continues one (`a::b`) or is a visibility (`pub(in …)`).
        let prev = if i > 0 { toks.get(i - 1) } else { None };
        let in_visibility = ident(prev) == Some("in");
        if prev == Some(&Tok::Path) || in_visibility {
            i += 1;
            continue;
        }
        let is_use = ident(prev) == Some("use");
        let mut paths = Vec::new();
        let start = i;
        read_tree(&toks, &mut i, Vec::new(), &mut paths);
        if i == start {
            i += 1;
        }
        for (segments, name) in paths {
            if segments.len() < 2 {
                continue;
            }
            let import = (is_use && inline.is_empty() && !name.is_empty()).then_some(name);
            info.named.push(Named {
                context: context(),
                segments,
                import,
            });
        }
    }
    info
}

/// Every file module of `src/retrieval`, by module path.
fn read_modules(dir: &Path, prefix: &ModPath, out: &mut BTreeMap<ModPath, FileInfo>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        let mut module = prefix.clone();
        if path.is_dir() {
            module.push(stem);
            read_modules(&path, &module, out);
            continue;
        }
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        if stem != "mod" {
            module.push(stem);
        }
        let src = fs::read_to_string(&path).expect("source file");
        out.insert(module.clone(), scan(&module, &src));
    }
}

/// The module graph: each file module's names, and where each of its imports comes from.
struct Graph {
    files: BTreeMap<ModPath, FileInfo>,
}

impl Graph {
    fn load() -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/retrieval");
        let mut files = BTreeMap::new();
        read_modules(&root, &Vec::new(), &mut files);
        Self { files }
    }

    /// The file module holding module `m` (inline modules belong to their file's).
    fn file_of(&self, m: &[String]) -> ModPath {
        (0..=m.len())
            .rev()
            .map(|n| m[..n].to_vec())
            .find(|p| self.files.contains_key(p))
            .unwrap_or_default()
    }

    /// The file module that `segments`, named in module `context`, refers to (`None` outside
    /// `retrieval`).
    fn resolve(&self, context: &[String], segments: &[String], hops: usize) -> Option<ModPath> {
        if hops > 16 {
            return None;
        }
        let first = segments.first()?;
        let (mut full, rest): (ModPath, &[String]) = match first.as_str() {
            "crate" => match segments.get(1).map(String::as_str) {
                Some("retrieval") => (Vec::new(), &segments[2..]),
                _ => return None,
            },
            "self" => (context.to_vec(), &segments[1..]),
            "super" => {
                let mut base = context.to_vec();
                let mut n = 0;
                while segments.get(n).map(String::as_str) == Some("super") {
                    base.pop()?;
                    n += 1;
                }
                (base, &segments[n..])
            }
            _ => {
                let file = self.file_of(context);
                let info = self.files.get(&file)?;
                if file.len() == context.len() && info.children.contains(first) {
                    (file, segments)
                } else {
                    let imported = info
                        .named
                        .iter()
                        .find(|n| n.import.as_deref() == Some(first.as_str()))?;
                    let mut via = imported.segments.clone();
                    via.extend(segments[1..].iter().cloned());
                    return self.resolve(&imported.context, &via, hops + 1);
                }
            }
        };
        full.extend(rest.iter().filter(|s| *s != "self").cloned());
        // The longest prefix that is a file module; a name it imports leads on.
        let module = self.file_of(&full);
        if let Some(next) = full.get(module.len()) {
            let info = self.files.get(&module)?;
            if let Some(imported) = info
                .named
                .iter()
                .find(|n| n.import.as_deref() == Some(next.as_str()))
            {
                if let Some(m) = self.resolve(&imported.context, &imported.segments, hops + 1) {
                    return Some(m);
                }
            }
        }
        Some(module)
    }

    /// Every edge between file modules (self-references dropped).
    fn edges(&self) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
        let mut edges: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
        for (module, info) in &self.files {
            let out = edges.entry(module.clone()).or_default();
            for named in &info.named {
                if let Some(to) = self.resolve(&named.context, &named.segments, 0) {
                    if &to != module {
                        out.insert(to);
                    }
                }
            }
        }
        edges
    }
}

fn name(m: &[String]) -> String {
    if m.is_empty() {
        "retrieval".into()
    } else {
        m.join("::")
    }
}

/// A cycle of `edges`, if any, as the modules along it (the first repeated at the end).
fn find_cycle(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Option<Vec<ModPath>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        m: &ModPath,
        edges: &BTreeMap<ModPath, BTreeSet<ModPath>>,
        marks: &mut BTreeMap<ModPath, Mark>,
        stack: &mut Vec<ModPath>,
    ) -> Option<Vec<ModPath>> {
        marks.insert(m.clone(), Mark::Open);
        stack.push(m.clone());
        for to in edges.get(m).into_iter().flatten() {
            match marks.get(to) {
                Some(Mark::Open) => {
                    let from = stack.iter().position(|s| s == to).unwrap_or(0);
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(to.clone());
                    return Some(cycle);
                }
                Some(Mark::Done) => {}
                None => {
                    if let Some(cycle) = visit(to, edges, marks, stack) {
                        return Some(cycle);
                    }
                }
            }
        }
        stack.pop();
        marks.insert(m.clone(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for m in edges.keys() {
        if !marks.contains_key(m) {
            if let Some(cycle) = visit(m, edges, &mut marks, &mut Vec::new()) {
                return Some(cycle);
            }
        }
    }
    None
}

fn describe(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> String {
    let mut s = String::new();
    for (from, tos) in edges {
        let tos: Vec<String> = tos.iter().map(|t| name(t)).collect();
        s.push_str(&format!("  {} -> {}\n", name(from), tos.join(", ")));
    }
    s
}

#[test]
fn retrieval_modules_import_each_other_without_a_loop() {
    let graph = Graph::load();
    assert!(graph.files.len() > 10, "too few modules read");
    let edges = graph.edges();
    let count: usize = edges.values().map(BTreeSet::len).sum();
    println!(
        "{} modules, {count} edges:\n{}",
        edges.len(),
        describe(&edges)
    );
    if let Some(cycle) = find_cycle(&edges) {
        let path: Vec<String> = cycle.iter().map(|m| name(m)).collect();
        panic!(
            "import loop: {}\nall edges:\n{}",
            path.join(" -> "),
            describe(&edges)
        );
    }
}

/// Every module `from` reaches through its imports, itself excluded.
fn reached(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>, from: &ModPath) -> BTreeSet<ModPath> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.clone()];
    while let Some(m) = todo.pop() {
        for to in edges.get(&m).into_iter().flatten() {
            if seen.insert(to.clone()) {
                todo.push(to.clone());
            }
        }
    }
    seen.remove(from);
    seen
}

/// Fails if a module of `lower` (a module and the modules inside it) reaches one of `upper`.
fn assert_below(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>, lower: &str, upper: &[&str]) {
    let inside: Vec<&ModPath> = edges
        .keys()
        .filter(|m| m.first().map(String::as_str) == Some(lower))
        .collect();
    assert!(!inside.is_empty(), "no module {lower}");
    for m in inside {
        for to in reached(edges, m) {
            let top = to.first().map(String::as_str).unwrap_or("retrieval");
            assert!(
                !upper.contains(&top),
                "{} reaches {} (it should sit below it)",
                name(m),
                name(&to)
            );
        }
    }
}

#[test]
fn kernels_and_the_file_format_sit_below_the_index_and_the_search() {
    let edges = Graph::load().edges();
    let kernels = [
        "kernels",
        "kernels::avx2",
        "kernels::avx512",
        "kernels::portable",
    ];
    for k in kernels {
        let path: ModPath = k.split("::").map(str::to_owned).collect();
        assert!(edges.contains_key(&path), "{k} is missing");
    }
    let above = [
        "counting",
        "search",
        "pair",
        "audit",
        "index",
        "persist",
        "retrieval",
    ];
    assert_below(&edges, "kernels", &above);
    let index = [
        "index",
        "dense",
        "store",
        "counting",
        "audit",
        "persist",
        "retrieval",
    ];
    assert_below(&edges, "sections", &index);
    assert_below(&edges, "tiles", &index);
}

/// The tokenizer and resolver on a made-up file.
#[test]
fn paths_are_read_through_trees_comments_and_literals() {
    let src = r##"
        //! Doc mentioning super::ghost::X and crate::retrieval::ghost.
        use super::{a::{self, X}, b::Y as Z};
        use crate::retrieval::c::*;
        /* block super::ghost /* nested */ super::ghost */
        pub(in crate::retrieval) fn f<'a>(s: &'a str) -> char {
            let _ = "super::ghost::Q";
            let _ = r#"super::ghost"#;
            super::super::d::call();
            'x'
        }
        mod inner { use super::*; fn g() { super::super::e::h(); } }
    "##;
    let info = scan(&vec!["m".into()], src);
    let got: Vec<String> = info
        .named
        .iter()
        .map(|n| format!("{}|{}", n.context.join("::"), n.segments.join("::")))
        .collect();
    assert_eq!(
        got,
        [
            "m|super::a",
            "m|super::a::X",
            "m|super::b::Y",
            "m|crate::retrieval::c::*",
            "m|super::super::d::call",
            "m::inner|super::*",
            "m::inner|super::super::e::h",
        ]
    );
    let imports: Vec<Option<&str>> = info.named.iter().map(|n| n.import.as_deref()).collect();
    assert_eq!(
        imports,
        [Some("a"), Some("X"), Some("Z"), None, None, None, None]
    );
}
