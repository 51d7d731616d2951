//! The layering of the library (README, Architecture): which top-level module of
//! `src/` may use which. Every path out of a module in `src/**/*.rs` is read (a
//! `crate::` path, alone or as a `use crate::{...}` group, and a `super::` chain,
//! resolved from the file's module path and the inline modules around it; comments
//! and string literals left out), mapped to the top-level module it reaches (a name
//! the crate root re-exports to the module it comes from), and a forbidden direction
//! fails, naming the file and the line:
//!
//! - `model` ↛ `scenario`: the model knows nothing of files;
//! - `model` ↛ `explain`: a mechanism's folder gives explain its text, explain calls it;
//! - `metrics` ↛ `scenario`: it measures runs of the model;
//! - `plot` ↛ `scenario`: a folder is drawn from its own files, never by reading its
//!   scenario again;
//! - `engine` ↛ anything else: the generic core knows no model;
//! - nothing ↛ `cli`: the command line calls the library, never the other way;
//! - nothing ↛ the facade: `api` and the crate root's re-exports of it
//!   (`crate::load_scenario`, `crate::Overrides`) are the library's entry points for
//!   the command line and other crates, not for the modules below them.
//!
//! The command line (`src/cli/`, a private module run by `cli_main`, and `src/main.rs`)
//! is the facade's user, above every layer, and is not read; nor are
//! unit-test modules (`#[cfg(test)] mod tests`) and the white-box tests (`src/tests/`),
//! which may build what they test from any module.

use std::collections::BTreeMap;
use std::path::Path;

/// One use of a top-level module from another: where, and the path as written.
#[derive(Debug, Clone, PartialEq)]
struct Edge {
    /// The file, relative to the crate root.
    file: String,
    /// 1-based line.
    line: usize,
    /// The top-level module of the file (`""`: the crate root).
    from: String,
    /// The top-level module the path reaches.
    to: String,
    /// The path as written, up to the name that decided `to`.
    path: String,
}

/// What the crate root holds: its modules, and each re-exported name's module.
#[derive(Debug, Default)]
struct Root {
    modules: Vec<String>,
    reexports: BTreeMap<String, String>,
}

/// Why a direction is forbidden, if it is.
fn forbidden(from: &str, to: &str) -> Option<&'static str> {
    if from == to {
        return None;
    }
    match (from, to) {
        (_, "api") => Some("nothing inside the crate uses the facade (api and the crate root's re-exports of it): use what it calls"),
        (_, "cli") => Some("the command line is above every module: it calls them, nothing calls it"),
        ("model", "scenario") => Some("the model knows nothing of scenario files"),
        ("model", "explain") => Some("a mechanism's folder gives explain its text (a function returning the lines); explain calls it, never the other way"),
        ("metrics", "scenario") => Some("metrics measure runs of the model, not scenario files"),
        ("plot", "scenario") => Some("a folder is drawn from its own files (the manifest's [plot] table), never by reading its scenario again"),
        ("engine", _) => Some("the engine is the generic core: it uses nothing else of the crate"),
        _ => None,
    }
}

/// `text` with its comments, string literals and character literals blanked out
/// (newlines kept, so lines still count), lifetimes left alone.
fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let prev_ident = i > 0 && ident(c[i - 1]);
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if !prev_ident && (c[i] == 'r' || (c[i] == 'b' && c.get(i + 1) == Some(&'r'))) && {
            let mut j = i + if c[i] == 'b' { 2 } else { 1 };
            while c.get(j) == Some(&'#') {
                j += 1;
            }
            c.get(j) == Some(&'"')
        } {
            // A raw string: r"...", r#"..."#, br"...".
            let mut j = i + if c[i] == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while c[j] == '#' {
                hashes += 1;
                j += 1;
            }
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let close: Vec<char> = close.chars().collect();
            let mut k = j + 1;
            while k < c.len() && c[k..].iter().take(close.len()).ne(close.iter()) {
                k += 1;
            }
            let end = (k + close.len()).min(c.len());
            for &ch in &c[i..end] {
                blank(&mut out, ch);
            }
            i = end;
        } else if c[i] == '"' {
            blank(&mut out, c[i]);
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    blank(&mut out, c[i]);
                    i += 1;
                }
                if i < c.len() {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
            if i < c.len() {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '\'' {
            // A character literal ('x', '\n', '\u{1F600}'), or a lifetime ('a).
            let end = if c.get(i + 1) == Some(&'\\') {
                (i + 3..c.len()).find(|&k| c[k] == '\'')
            } else if c.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(e) => {
                    for &ch in &c[i..=e] {
                        blank(&mut out, ch);
                    }
                    i = e + 1;
                }
                None => {
                    out.push(c[i]);
                    i += 1;
                }
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// A token of code: a name, `::`, or one punctuation character; with its line.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name(String),
    Path,
    Punct(char),
}

fn tokens(code: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch.is_alphanumeric() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push((Tok::Name(c[start..i].iter().collect()), line));
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push((Tok::Path, line));
            i += 2;
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

/// The first names of the items of a `{ ... }` group starting at `toks[at]`, with
/// their lines (`self` left out: it names the group's own module).
fn group_heads(toks: &[(Tok, usize)], at: usize) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut expect_head = true;
    for (t, line) in &toks[at..] {
        match t {
            Tok::Punct('{') => {
                depth += 1;
                if depth == 1 {
                    expect_head = true;
                }
            }
            Tok::Punct('}') => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            Tok::Punct(',') if depth == 1 => expect_head = true,
            Tok::Name(n) if depth == 1 && expect_head => {
                expect_head = false;
                if n != "self" {
                    out.push((n.clone(), *line));
                }
            }
            _ => {
                if depth == 1 {
                    expect_head = false;
                }
            }
        }
    }
    out
}

/// Where a `#[cfg(test)] mod name { ... }` starting at `toks[at]` ends (the index
/// after its closing brace), if one starts there: unit tests may build what they test
/// from any module (a scenario from its text, say); the layering is of the library.
fn test_module_end(toks: &[(Tok, usize)], at: usize) -> Option<usize> {
    let want = [
        Tok::Punct('#'),
        Tok::Punct('['),
        Tok::Name("cfg".into()),
        Tok::Punct('('),
        Tok::Name("test".into()),
        Tok::Punct(')'),
        Tok::Punct(']'),
        Tok::Name("mod".into()),
    ];
    let head = toks.get(at..at + want.len())?;
    if head.iter().map(|t| &t.0).ne(want.iter()) {
        return None;
    }
    let open = at + want.len() + 1;
    if toks.get(open).map(|t| &t.0) != Some(&Tok::Punct('{')) {
        return None;
    }
    let mut depth = 0usize;
    for (k, (t, _)) in toks.iter().enumerate().skip(open) {
        match t {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                depth -= 1;
                if depth == 0 {
                    return Some(k + 1);
                }
            }
            _ => {}
        }
    }
    Some(toks.len())
}

/// The module path of a file under `src/`: `plot/sweep.rs` is `[plot, sweep]`,
/// `plot/mod.rs` `[plot]`, `lib.rs` `[]`.
fn module_path(rel: &str) -> Vec<String> {
    let stem = rel.trim_end_matches(".rs");
    let mut parts: Vec<String> = stem.split('/').map(String::from).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// Every path out of the file `rel` (relative to `src/`) whose text is `text`: the
/// top-level module each reaches, or the error of a path that cannot be resolved.
fn edges_of(rel: &str, text: &str, root: &Root) -> Vec<Result<Edge, String>> {
    let file_mod = module_path(rel);
    let from = file_mod.first().cloned().unwrap_or_default();
    let toks = tokens(&code_only(text));
    let mut out = Vec::new();
    // The inline modules around a token: (name, the brace depth inside it).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let top_of = |name: &str, line: usize, path: String| -> Result<Edge, String> {
        let to = if root.modules.iter().any(|m| m == name) {
            name.to_string()
        } else if let Some(m) = root.reexports.get(name) {
            m.clone()
        } else {
            return Err(format!(
                "src/{rel}:{line}: cannot tell which module `{path}` is in"
            ));
        };
        Ok(Edge {
            file: format!("src/{rel}"),
            line,
            from: from.clone(),
            to,
            path,
        })
    };
    let mut i = 0;
    while i < toks.len() {
        if let Some(end) = test_module_end(&toks, i) {
            i = end;
            continue;
        }
        let (t, line) = &toks[i];
        match t {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Name(m) if m == "mod" => {
                if let (Some((Tok::Name(name), _)), Some((Tok::Punct('{'), _))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    depth += 1;
                    inline.push((name.clone(), depth));
                    i += 3;
                    continue;
                }
            }
            Tok::Name(c) if c == "crate" && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Path) => {
                // `path::crate` cannot be; `$crate` is this crate too.
                match toks.get(i + 2) {
                    Some((Tok::Name(n), l)) => out.push(top_of(n, *l, format!("crate::{n}"))),
                    Some((Tok::Punct('{'), _)) => {
                        for (n, l) in group_heads(&toks, i + 2) {
                            out.push(top_of(&n, l, format!("crate::{{{n}, ..}}")));
                        }
                    }
                    _ => out.push(Err(format!("src/{rel}:{line}: `crate::` leads nowhere"))),
                }
            }
            Tok::Name(s)
                if s == "super"
                    && !(i > 0 && toks[i - 1].0 == Tok::Path)
                    && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Path) =>
            {
                let mut k = i;
                let mut ups = 0;
                while toks.get(k).map(|t| &t.0) == Some(&Tok::Name("super".into()))
                    && toks.get(k + 1).map(|t| &t.0) == Some(&Tok::Path)
                {
                    ups += 1;
                    k += 2;
                }
                let mut here = file_mod.clone();
                here.extend(inline.iter().map(|(n, _)| n.clone()));
                if ups > here.len() {
                    out.push(Err(format!(
                        "src/{rel}:{line}: `{}` climbs above the crate root",
                        "super::".repeat(ups)
                    )));
                    i = k;
                    continue;
                }
                here.truncate(here.len() - ups);
                let chain = "super::".repeat(ups);
                let heads: Vec<(String, usize)> = match toks.get(k) {
                    Some((Tok::Name(n), l)) => vec![(n.clone(), *l)],
                    Some((Tok::Punct('{'), _)) => group_heads(&toks, k),
                    _ => Vec::new(),
                };
                for (n, l) in heads {
                    match here.first() {
                        // Still inside a top-level module: that is where it goes.
                        Some(top) => out.push(Ok(Edge {
                            file: format!("src/{rel}"),
                            line: l,
                            from: from.clone(),
                            to: top.clone(),
                            path: format!("{chain}{n}"),
                        })),
                        // At the crate root: the name is a module or a re-export.
                        None => out.push(top_of(&n, l, format!("{chain}{n}"))),
                    }
                }
                i = k;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The crate root's modules (`mod x;`) and re-exports (`pub use x::{a, b};`,
/// `pub use x::a;`), from `src/lib.rs`.
fn root_of(lib: &str) -> Root {
    let toks = tokens(&code_only(lib));
    let mut root = Root::default();
    let name = |i: usize| match toks.get(i) {
        Some((Tok::Name(n), _)) => Some(n.clone()),
        _ => None,
    };
    for i in 0..toks.len() {
        match name(i).as_deref() {
            Some("mod") => {
                if let (Some(m), Some((Tok::Punct(';'), _))) = (name(i + 1), toks.get(i + 2)) {
                    root.modules.push(m);
                }
            }
            Some("use") if i > 0 && name(i - 1).as_deref() == Some("pub") => {
                let Some(m) = name(i + 1) else { continue };
                if toks.get(i + 2).map(|t| &t.0) != Some(&Tok::Path) {
                    continue;
                }
                match toks.get(i + 3) {
                    Some((Tok::Punct('{'), _)) => {
                        for (n, _) in group_heads(&toks, i + 3) {
                            root.reexports.insert(n, m.clone());
                        }
                    }
                    Some((Tok::Name(n), _)) => {
                        root.reexports.insert(n.clone(), m.clone());
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    root
}

/// Every `.rs` file under `dir`, relative to `src/`, sorted; the binary's left out.
fn library_files(src: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p
                .strip_prefix(src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if rel == "main.rs" || rel == "cli" || rel == "tests" {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else if rel.ends_with(".rs") {
                out.push(rel);
            }
        }
    }
    out.sort();
    out
}

/// The forbidden uses among `edges`, one line each; unresolved paths too.
fn violations(edges: &[Result<Edge, String>]) -> Vec<String> {
    edges
        .iter()
        .filter_map(|e| match e {
            Err(e) => Some(e.clone()),
            Ok(e) => forbidden(&e.from, &e.to).map(|why| {
                format!(
                    "{}:{}: {} uses {} (`{}`): {why}",
                    e.file, e.line, e.from, e.to, e.path
                )
            }),
        })
        .collect()
}

#[test]
fn no_module_of_the_library_uses_one_it_must_not() {
    let crate_root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = crate_root.join("src");
    let root = root_of(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let files = library_files(&src);
    let mut edges = Vec::new();
    for rel in &files {
        let text = std::fs::read_to_string(src.join(rel)).unwrap();
        edges.extend(edges_of(rel, &text, &root));
    }
    // It read the crate: its modules and the facade's re-exports, every file, and
    // the paths between modules in them.
    for m in ["api", "engine", "model", "plot", "scenario", "metrics"] {
        assert!(root.modules.iter().any(|x| x == m), "lib.rs: no module {m}");
    }
    assert_eq!(
        root.reexports.get("load_scenario").map(String::as_str),
        Some("api")
    );
    assert!(files.len() > 100, "{} files", files.len());
    let between = edges.iter().flatten().filter(|e| e.from != e.to).count();
    assert!(between > 300, "only {between} uses between modules");
    let found = violations(&edges);
    assert!(
        found.is_empty(),
        "{} forbidden uses between modules (README, Architecture):\n{}",
        found.len(),
        found.join("\n")
    );
}

/// A root like the crate's: its modules, and `load_scenario`, `Overrides` and
/// `Error` re-exported from `api` and `error`.
fn synthetic_root() -> Root {
    root_of(
        "pub mod api;\nmod cli;\npub mod engine;\npub mod error;\npub mod export;\npub mod model;\npub mod plot;\npub mod scenario;\npub mod metrics;\n\
         pub use api::{load_scenario, Overrides};\npub use error::Error;\n",
    )
}

#[test]
fn the_checker_flags_each_forbidden_direction_however_it_is_written() {
    let root = synthetic_root();
    let flagged = |rel: &str, text: &str| violations(&edges_of(rel, text, &root));
    // Each way of writing a path out, from a module that may not take it.
    for (rel, text, line, to) in [
        (
            "model/limits.rs",
            "use crate::scenario::Source;\n",
            1,
            "scenario",
        ),
        (
            "model/a.rs",
            "\nfn f() { crate::scenario::load(x) }\n",
            2,
            "scenario",
        ),
        (
            "model/a.rs",
            "use crate::{engine::Nanos,\n  scenario::{self, Loaded}};\n",
            2,
            "scenario",
        ),
        (
            "plot/sweep.rs",
            "use super::super::scenario::Source;\n",
            1,
            "scenario",
        ),
        (
            "plot/mod.rs",
            "use super::{scenario, engine};\n",
            1,
            "scenario",
        ),
        (
            "metrics/columns/catalog.rs",
            "use super::super::super::scenario;\n",
            1,
            "scenario",
        ),
        (
            "model/x.rs",
            "fn f() {}\nmod tests {\n    use super::super::super::scenario::Y;\n}\n",
            3,
            "scenario",
        ),
        ("engine/queue.rs", "use crate::model::Event;\n", 1, "model"),
        (
            "check/run.rs",
            "use crate::api::{load_scenario, Overrides};\n",
            1,
            "api",
        ),
        ("search.rs", "use crate::load_scenario;\n", 1, "api"),
        ("sweep/mod.rs", "fn f(o: crate::Overrides) {}\n", 1, "api"),
        ("run.rs", "use super::api;\n", 1, "api"),
        ("sweep/run.rs", "fn f() { crate::cli::main(); }\n", 1, "cli"),
    ] {
        let found = flagged(rel, text);
        assert_eq!(found.len(), 1, "{rel}: {text:?} gave {found:?}");
        assert!(
            found[0].starts_with(&format!("src/{rel}:{line}: "))
                && found[0].contains(&format!(" uses {to} (`")),
            "{rel}: {text:?} gave {found:?}"
        );
    }
}

#[test]
fn the_checker_lets_allowed_paths_comments_and_strings_be() {
    let root = synthetic_root();
    for (rel, text) in [
        // Inside its own module, however far up.
        ("model/backoff/grpc.rs", "use super::super::config::Layer;\nuse crate::model::x;\n"),
        // An inline module's `super` is the file's module.
        ("plot/sweep.rs", "mod tests {\n    use super::super::scenario_free;\n}\n"),
        // Allowed directions.
        ("scenario/mod.rs", "pub use crate::model::config::Scenario;\n"),
        ("plot/mod.rs", "use crate::{export::manifest, metrics::columns};\n"),
        ("diff.rs", "fn f() -> crate::Error {}\n"),
        // Words, not paths.
        ("model/a.rs", "// use crate::scenario;\n/* crate::api::x /* nested */ crate::scenario */\n"),
        ("plot/a.rs", "let s = \"crate::scenario::x\";\nlet r = r#\"use crate::api;\"#;\nlet c = '\"'; let q = crate_::scenario;\n"),
        ("engine/a.rs", "fn f<'a>(x: &'a str) -> char { '{' }\nfn g() { 'l: loop { break 'l; } }\n"),
    ] {
        let found = violations(&edges_of(rel, text, &root));
        assert!(found.is_empty(), "{rel}: {text:?} gave {found:?}");
    }
    // A unit-test module may use any module; the code after it is read again.
    let text = "#[cfg(test)]\nmod tests {\n    use crate::scenario::load;\n    fn f() { if x { y } }\n}\nuse crate::scenario::Source;\n";
    let found = violations(&edges_of("model/a.rs", text, &root));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("src/model/a.rs:6: "), "{found:?}");
    // A name the crate root neither declares nor re-exports is not silently passed.
    let found = violations(&edges_of("plot/a.rs", "use crate::nowhere::X;\n", &root));
    assert_eq!(
        found,
        ["src/plot/a.rs:1: cannot tell which module `crate::nowhere` is in"]
    );
}

/// The modules the crate root makes public: the entry points, the error type, the
/// engine and the entry modules whose requests and results are data. Everything else
/// is `pub(crate)`, so that `unreachable_pub` names any `pub` item no user can reach.
const PUBLIC_MODULES: &[&str] = &["api", "check", "engine", "error", "search", "dev_hooks"];

/// The `pub mod` declarations of `lib`, by name.
fn public_modules(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|r| r.trim_end_matches(';').trim().to_string())
        .collect()
}

#[test]
fn the_crate_root_makes_public_only_the_entry_modules() {
    let lib = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs")).unwrap();
    let public = public_modules(&lib);
    let extra: Vec<_> = public
        .iter()
        .filter(|m| !PUBLIC_MODULES.contains(&m.as_str()))
        .collect();
    assert!(
        extra.is_empty(),
        "src/lib.rs makes {extra:?} public: the public API is the entry points (re-export what a user needs at the crate root); keep the module pub(crate)"
    );
    assert!(public.contains(&"api".to_string()), "{public:?}");
    // The dev hooks are behind their feature (and the unit tests).
    let hooks = lib
        .find("pub mod dev_hooks;")
        .expect("the dev hooks module");
    assert!(
        lib[..hooks].trim_end().ends_with("#[doc(hidden)]")
            && lib[..hooks].contains("#[cfg(any(test, feature = \"dev-hooks\"))]"),
        "dev_hooks must stay behind the dev-hooks feature"
    );
    // The checker reads what it is given.
    assert_eq!(
        public_modules("pub mod api;\npub(crate) mod model;\npub mod scenario;\n"),
        ["api", "scenario"]
    );
}
