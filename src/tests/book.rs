//! The book (`docs/`): its generated pages are what the tool prints, every TOML snippet
//! in it loads, and every internal link and anchor leads somewhere.
//!
//! Snippets are fenced by their kind:
//! - ` ```toml `: a whole scenario, loaded and validated as it stands (its sweep
//!   planned, its expectations resolved);
//! - ` ```toml,fragment `: tables merged over [`BASE`] (a table merges key by key, a
//!   list of tables replaces the base's, `[[services]]` replaces `[dependency]`);
//! - ` ```toml,fragment=PATH `: keys of the one table at `PATH` of [`BASE`]
//!   (`fleets.layers`: the first fleet's first layer), each replacing the base's.

use std::path::{Path, PathBuf};

use crate::tests::common::{pinned_section, retrysim};

/// The scenario a fragment is merged into: one dependency, one fleet, one layer with
/// an exponential backoff (so `fleets.*.layers.*.backoff.jitter` can be swept).
const BASE: &str = r#"
duration = "10s"
[dependency]
servers = 10
service_time = "10ms"
[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 100 }
[[fleets.layers]]
max_attempts = 3
backoff = { kind = "exponential", base = "10ms", jitter = "none" }
"#;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every Markdown file of the book, and the two front doors that link into it.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() && !p.is_symlink() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("docs/src"), &mut out);
    out.push(root().join("README.md"));
    out.push(root().join("benches/README.md"));
    out
}

/// A fenced block: its info string, its text and the line its fence opens on.
struct Block {
    info: String,
    text: String,
    line: usize,
}

/// The fenced code blocks of a Markdown text, and its lines outside them.
fn split(text: &str) -> (Vec<Block>, Vec<(usize, String)>) {
    let mut blocks = Vec::new();
    let mut prose = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match (&mut open, fence) {
            (None, true) => {
                open = Some(Block {
                    info: line.trim_start().trim_start_matches('`').trim().to_string(),
                    text: String::new(),
                    line: i + 1,
                })
            }
            (Some(_), true) => blocks.push(open.take().unwrap()),
            (Some(b), false) => {
                b.text.push_str(line);
                b.text.push('\n');
            }
            (None, false) => prose.push((i + 1, line.to_string())),
        }
    }
    (blocks, prose)
}

/// Merges `over` into `base`: tables key by key, anything else replaced.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// The scenario text a snippet stands for (see the module doc).
fn scenario_of(info: &str, text: &str) -> Result<Option<String>, String> {
    let mut words = info.split(',');
    if words.next() != Some("toml") {
        return Ok(None);
    }
    let rest: Vec<&str> = words.collect();
    let fragment = match rest.as_slice() {
        [] => return Ok(Some(text.to_string())),
        ["fragment"] => None,
        [f] => match f.strip_prefix("fragment=") {
            Some(path) => Some(path),
            None => return Err(format!("unknown snippet kind `{info}`")),
        },
        _ => return Err(format!("unknown snippet kind `{info}`")),
    };
    let over: toml::Table = toml::from_str(text).map_err(|e| e.to_string())?;
    let mut base: toml::Table = toml::from_str(BASE).unwrap();
    match fragment {
        None => {
            if over.contains_key("services") {
                base.remove("dependency");
            }
            merge(&mut base, over);
        }
        Some(path) => {
            let mut at = &mut base;
            let parts: Vec<&str> = path.split('.').collect();
            for (i, p) in parts.iter().enumerate() {
                let last = i + 1 == parts.len();
                let v = at
                    .get_mut(*p)
                    .ok_or_else(|| format!("the base scenario has no `{path}`"))?;
                let v = match v {
                    toml::Value::Array(a) => a
                        .first_mut()
                        .ok_or_else(|| format!("`{path}` is empty in the base"))?,
                    v => v,
                };
                if last {
                    let t = v
                        .as_table_mut()
                        .ok_or_else(|| format!("`{path}` is not a table in the base"))?;
                    for (k, x) in over.clone() {
                        t.insert(k, x);
                    }
                    break;
                }
                at = v
                    .as_table_mut()
                    .ok_or_else(|| format!("`{p}` of `{path}` is not a table"))?;
            }
        }
    }
    Ok(Some(toml::to_string(&base).unwrap()))
}

/// Loads a scenario text as `retrysim validate` and `check` would: validated, its sweep
/// planned, its expectations resolved.
fn validate(text: &str) -> Result<(), String> {
    let source = crate::scenario::Source::from_text("snippet.toml", text);
    let loaded = crate::scenario::load(source, &[]).map_err(|e| e.to_string())?;
    let plan = crate::sweep::plan::plan(loaded).map_err(|e| e.to_string())?;
    crate::check::resolve(&plan).map_err(|e| e.to_string())?;
    Ok(())
}

#[test]
fn every_toml_snippet_in_the_book_loads() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let shown = page.strip_prefix(root()).unwrap().display().to_string();
        for b in split(&text).0 {
            match scenario_of(&b.info, &b.text) {
                Ok(None) => {}
                Ok(Some(s)) => {
                    checked += 1;
                    if let Err(e) = validate(&s) {
                        failures.push(format!("{shown}:{}: {e}", b.line));
                    }
                }
                Err(e) => failures.push(format!("{shown}:{}: {e}", b.line)),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 20, "only {checked} snippets found");
}

/// A snippet that does not load fails the test, whole or as a fragment.
#[test]
fn a_snippet_that_does_not_load_is_found() {
    let whole = scenario_of("toml", "duration = \"1s\"\n").unwrap().unwrap();
    assert!(validate(&whole).unwrap_err().contains("fleets"));
    let layer = scenario_of("toml,fragment=fleets.layers", "max_attempts = 0\n")
        .unwrap()
        .unwrap();
    assert!(validate(&layer)
        .unwrap_err()
        .contains("fleets[0].layers[0].max_attempts"));
    let merged = scenario_of("toml,fragment", "[dependency]\nservers = \"many\"\n")
        .unwrap()
        .unwrap();
    assert!(validate(&merged)
        .unwrap_err()
        .contains("dependency.servers"));
    assert!(scenario_of("toml,fragment=nowhere", "a = 1").is_err());
    assert!(scenario_of("toml,ignore", "a = 1").is_err());
    assert_eq!(scenario_of("sh", "ls").unwrap(), None);
}

/// The id mdBook gives a heading: its text without markup, lowercased, spaces as
/// `-`, only letters, digits, `-` and `_` kept.
fn heading_id(heading: &str) -> String {
    let text = link_text(heading);
    text.chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_lowercase().next().unwrap())
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// `[text](target)` as `text`.
fn link_text(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("](") {
        let Some(j) = rest[i..].find(')') else { break };
        out.push_str(&rest[..i].replace('[', ""));
        rest = &rest[i + j + 1..];
    }
    out.push_str(&rest.replace('[', ""));
    out
}

/// The anchors of a Markdown page: its headings' ids (a repeated one gets `-1`, `-2`).
fn anchors(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, line) in split(text).1 {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let id = heading_id(line[hashes..].trim());
            let n = out
                .iter()
                .filter(|a| **a == id || a.starts_with(&format!("{id}-")))
                .count();
            out.push(if n == 0 { id } else { format!("{id}-{n}") });
        }
    }
    out
}

/// The link targets on a line outside code spans: `](target)`.
fn targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, part) in line.split('`').enumerate() {
        if i % 2 == 1 {
            continue;
        }
        let mut rest = part;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            out.push(after[..end].to_string());
            rest = &after[end..];
        }
    }
    out
}

/// The broken internal links of the pages: a relative path that names no file, or an
/// anchor no heading of its page has.
fn broken_links(pages: &[PathBuf]) -> Vec<String> {
    let mut broken = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(page).unwrap();
        let shown = page
            .strip_prefix(root())
            .unwrap_or(page)
            .display()
            .to_string();
        for (n, line) in split(&text).1 {
            for t in targets(&line) {
                if t.starts_with("http://") || t.starts_with("https://") || t.starts_with("mailto:")
                {
                    continue;
                }
                let (path, anchor) = match t.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (t.as_str(), None),
                };
                let target = if path.is_empty() {
                    page.clone()
                } else {
                    page.parent().unwrap().join(path)
                };
                if !target.exists() {
                    broken.push(format!("{shown}:{n}: `{t}`: no file {}", target.display()));
                    continue;
                }
                if let Some(a) = anchor {
                    let is_md = target.extension().is_some_and(|e| e == "md");
                    let text = std::fs::read_to_string(&target).unwrap_or_default();
                    if !is_md || !anchors(&text).iter().any(|x| x == a) {
                        broken.push(format!("{shown}:{n}: `{t}`: no heading `#{a}` there"));
                    }
                }
            }
        }
    }
    broken
}

#[test]
fn every_internal_link_of_the_book_and_the_readme_leads_somewhere() {
    let broken = broken_links(&pages());
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// A missing page, a missing anchor and a link in a code span (not a link).
#[test]
fn a_broken_link_or_anchor_is_found() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a.md");
    std::fs::write(
        d.path().join("b.md"),
        "# The `b.md` page\n\n## Step 2: run\n",
    )
    .unwrap();
    std::fs::write(
        &a,
        "# A\n[ok](b.md#the-bmd-page) [ok](b.md#step-2-run) [ok](#a)\n[bad](c.md) [bad](b.md#nope) `[code](nope.md)`\n```\n[fenced](nope.md)\n```\n",
    )
    .unwrap();
    let broken = broken_links(&[a]);
    assert_eq!(broken.len(), 2, "{broken:?}");
    assert!(broken[0].contains("`c.md`: no file"), "{broken:?}");
    assert!(
        broken[1].contains("`b.md#nope`: no heading `#nope`"),
        "{broken:?}"
    );
}

/// Every page of `docs/src` is in `SUMMARY.md`, so mdBook builds it.
#[test]
fn every_page_of_the_book_is_in_its_summary() {
    let summary = std::fs::read_to_string(root().join("docs/src/SUMMARY.md")).unwrap();
    for page in pages() {
        let Ok(rel) = page.strip_prefix(root().join("docs/src")) else {
            continue;
        };
        let rel = rel.display().to_string();
        if rel != "SUMMARY.md" {
            assert!(
                summary.contains(&format!("]({rel})")),
                "{rel} is not in SUMMARY.md"
            );
        }
    }
}

fn printed(args: &[&str]) -> String {
    let d = tempfile::tempdir().unwrap();
    let o = retrysim(d.path(), args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// The command-line page is the clap definition, as `retrysim man --markdown` prints it.
#[test]
fn the_book_cli_page_is_the_argument_definitions() {
    let want = printed(&["man", "--markdown"]);
    for sub in ["run", "sweep", "check", "search", "presets", "reference"] {
        assert!(want.contains(&format!("## `retrysim {sub}`")), "{sub}");
    }
    pinned_section(
        "reference/cli.md",
        "cli",
        &want,
        "retrysim man --markdown",
        "book::the_book_cli_page",
    );
}

/// The presets page is the preset registry, as `retrysim presets --markdown` prints it.
#[test]
fn the_book_presets_page_is_the_registry() {
    let want = printed(&["presets", "--markdown"]);
    for p in crate::scenario::preset::LAYER_PRESETS {
        assert!(want.contains(&format!("\n## `{}`\n", p.name)), "{}", p.name);
    }
    pinned_section(
        "reference/presets.md",
        "presets",
        &want,
        "retrysim presets --markdown",
        "book::the_book_presets_page",
    );
}

/// `retrysim presets` lists every preset; with a name it prints the keys the preset
/// sets as TOML that a layer accepts; an unknown name is bad input naming the known.
#[test]
fn presets_lists_them_and_prints_one_as_a_layer_table() {
    let all = printed(&["presets"]);
    for p in crate::scenario::preset::LAYER_PRESETS {
        assert!(
            all.lines().any(|l| l.starts_with(&format!("{} ", p.name))),
            "{}",
            p.name
        );
    }
    assert!(all.contains("budget.envoy_retry_budget "), "{all}");
    let grpc = printed(&["presets", "grpc"]);
    assert!(grpc.contains("max_attempts = 4\n"), "{grpc}");
    // What it prints, below a layer header, is a layer that loads.
    let text = format!("{BASE}[[fleets.layers]]\n{grpc}").replace(
        "[[fleets.layers]]\nmax_attempts = 3\nbackoff = { kind = \"exponential\", base = \"10ms\", jitter = \"none\" }\n",
        "",
    );
    validate(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let part = printed(&["presets", "budget.envoy_retry_budget"]);
    assert!(part.contains("[budget]\nkind = \"envoy\"\n"), "{part}");
    let d = tempfile::tempdir().unwrap();
    let o = retrysim(d.path(), &["presets", "grcp"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no preset 'grcp' (known: grpc, envoy,"),
        "{err}"
    );
}

/// `man --markdown` gives every subcommand a section with its usage, and every
/// argument of `run` a row.
#[test]
fn man_markdown_describes_every_subcommand_and_argument() {
    let md = printed(&["man", "--markdown"]);
    for sub in ["run", "sweep", "merge", "validate", "check", "diff", "man"] {
        assert!(md.contains(&format!("## `retrysim {sub}`\n")), "{sub}");
        assert!(md.contains(&format!("Usage: retrysim {sub}")), "{sub}");
    }
    for arg in [
        "`-j, --jobs <N>`",
        "`--set <KEY=VALUE>`",
        "`[SCENARIO]`",
        "`--no-plots`",
    ] {
        assert!(md.contains(&format!("| {arg} |")), "{arg}");
    }
    // A placeholder in prose is not an HTML tag.
    assert!(!md.contains("<subcommand>.1"), "escaped outside code");
}

/// The README's two set-up commands are the ones that work: its run command runs the
/// default, and `.ci/run` runs its test command (with `--locked` added alone).
#[test]
fn the_readme_set_up_commands_are_what_ci_runs() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let (blocks, _) = split(&readme);
    let first = blocks.iter().find(|b| b.info == "sh").expect("a sh block");
    let commands: Vec<&str> = first
        .text
        .lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .collect();
    assert_eq!(
        commands,
        ["cargo run --release -- run", "cargo test --release"]
    );
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.lines()
            .any(|l| l.trim() == "cargo test --release --locked"),
        ".ci/run must run the README's test command"
    );
    // The README stays a front door.
    assert!(
        readme.len() <= 15 * 1024,
        "README.md is {} bytes",
        readme.len()
    );
}

/// The scenario-key page is the schema, as `retrysim reference --markdown` prints it.
#[test]
fn the_book_scenario_page_is_the_schema() {
    let want = printed(&["reference", "--markdown"]);
    for table in [
        "`[[fleets]]`",
        "`[[fleets.layers]]`",
        "`[dependency]`",
        "`[[services]]`",
    ] {
        assert!(want.contains(&format!(" {table}\n")), "{table}");
    }
    // `--json` is the same schema as JSON Schema.
    let json: serde_json::Value = serde_json::from_str(&printed(&["reference", "--json"])).unwrap();
    assert_eq!(json, crate::scenario::reference::schema());
    assert_eq!(json["properties"]["drain"]["default"], "60s");
    pinned_section(
        "reference/scenario.md",
        "scenario",
        &want,
        "retrysim reference --markdown",
        "book::the_book_scenario_page",
    );
}

/// A key the schema gives a default: the table it is in (its path from the top, and
/// the `kind` of that table when it is one of several), its name and the default.
struct Defaulted {
    path: Vec<String>,
    /// Which segments of `path` are lists of tables (`[[fleets]]`).
    lists: Vec<bool>,
    kind: Option<String>,
    table: serde_json::Value,
    key: String,
    default: serde_json::Value,
}

/// `s` with its `$ref` followed and its `null` alternative (an optional key) dropped.
fn resolved<'a>(defs: &'a serde_json::Value, s: &'a serde_json::Value) -> &'a serde_json::Value {
    let s = match s.get("$ref").and_then(|r| r.as_str()) {
        Some(r) => &defs[r.trim_start_matches("#/$defs/")],
        None => s,
    };
    if let Some(alts) = s.get("anyOf").and_then(|a| a.as_array()) {
        let real: Vec<&serde_json::Value> = alts
            .iter()
            .filter(|a| a.get("type").and_then(|t| t.as_str()) != Some("null"))
            .collect();
        if real.len() == 1 {
            return resolved(defs, real[0]);
        }
    }
    s
}

/// Every defaulted key under `s`, a table at `path` (of kind `kind`).
fn defaulted(
    defs: &serde_json::Value,
    s: &serde_json::Value,
    path: &[String],
    lists: &[bool],
    kind: Option<&str>,
    out: &mut Vec<Defaulted>,
) {
    let s = resolved(defs, s);
    if let Some(items) = s.get("items") {
        let mut l = lists.to_vec();
        if let Some(last) = l.last_mut() {
            *last = true;
        }
        return defaulted(defs, items, path, &l, kind, out);
    }
    if let Some(alts) = s.get("oneOf").and_then(|a| a.as_array()) {
        for a in alts {
            if let Some(k) = a.pointer("/properties/kind/const").and_then(|k| k.as_str()) {
                defaulted(defs, a, path, lists, Some(k), out);
            }
        }
        return;
    }
    let Some(props) = s.get("properties").and_then(|p| p.as_object()) else {
        return;
    };
    for (key, prop) in props {
        if let Some(d) = prop.get("default") {
            out.push(Defaulted {
                path: path.to_vec(),
                lists: lists.to_vec(),
                kind: kind.map(str::to_string),
                table: s.clone(),
                key: key.clone(),
                default: d.clone(),
            });
        }
        let mut p = path.to_vec();
        p.push(key.clone());
        let mut l = lists.to_vec();
        l.push(false);
        defaulted(defs, prop, &p, &l, None, out);
    }
}

/// Keys that apply only beside others (the table's path, the key or `*`), and what they
/// need, as TOML merged into the base (a list's first table takes a list's first).
const CONTEXT: &[(&str, &str, &str)] = &[
    ("fleets", "bulkhead_queue", "[[fleets]]\nmax_concurrent = 1"),
    ("fleets", "poison", QUEUE_FLEET),
    ("fleets", "redelivery_delay", QUEUE_FLEET),
    ("fleets", "visibility_timeout", QUEUE_FLEET),
    ("fleets.arrival", "*", QUEUE_FLEET),
    (
        "fleets.layers.hedging",
        "*",
        "[[fleets]]\n[[fleets.layers]]\nmax_attempts = 1\nhedging = { max_attempts = 2 }",
    ),
    ("outages", "*", OUTAGE),
    ("outages.mode", "*", OUTAGE),
    (
        "dependency.concurrency_limit.window",
        "*",
        "[dependency]\nconcurrency_limit = { kind = \"gradient2\" }",
    ),
    (
        "fleets.layers.concurrency_limit.window",
        "*",
        "[[fleets]]\n[[fleets.layers]]\nconcurrency_limit = { kind = \"gradient2\" }",
    ),
];

/// `extra` merged into `base`: tables key by key, a list's first table into the
/// first.
fn merge_first(base: &mut toml::Table, extra: toml::Table) {
    for (k, v) in extra {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(e)) => merge_first(b, e),
            (Some(toml::Value::Array(b)), toml::Value::Array(e)) => {
                if let (Some(toml::Value::Table(b0)), Some(toml::Value::Table(e0))) =
                    (b.first_mut(), e.into_iter().next())
                {
                    merge_first(b0, e0);
                }
            }
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// Keys whose presence turns on their outputs: `criticality` written at its default
/// still asks for the per-class columns.
const SWITCHES: &[(&str, &str)] = &[("fleets", "criticality")];

/// A queue fleet's keys.
const QUEUE_FLEET: &str = "[[fleets]]\nconsumers = 1\narrival = { kind = \"queue\", rate = 10 }";

/// A window outage.
const OUTAGE: &str = "[[outages]]\nstart = \"1s\"\nend = \"2s\"\nmode = { kind = \"fail\" }";

/// A JSON value (a default, a sample) as TOML.
fn toml_of(v: &serde_json::Value) -> toml::Value {
    match v {
        serde_json::Value::String(s) => toml::Value::String(s.clone()),
        serde_json::Value::Bool(b) => toml::Value::Boolean(*b),
        serde_json::Value::Number(n) if n.is_f64() => toml::Value::Float(n.as_f64().unwrap()),
        serde_json::Value::Number(n) => toml::Value::Integer(n.as_i64().unwrap()),
        serde_json::Value::Array(a) => toml::Value::Array(a.iter().map(toml_of).collect()),
        other => panic!("no TOML for the default {other}"),
    }
}

/// A value of a required key that validation accepts where no other key constrains
/// it: its least.
fn sample(defs: &serde_json::Value, s: &serde_json::Value) -> toml::Value {
    let s = resolved(defs, s);
    if let Some(c) = s.get("const") {
        return toml_of(c);
    }
    if let Some(e) = s.get("enum").and_then(|e| e.as_array()) {
        return toml_of(&e[0]);
    }
    if let Some(alts) = s.get("anyOf").or(s.get("oneOf")).and_then(|a| a.as_array()) {
        return sample(defs, &alts[0]);
    }
    let ty = match s.get("type") {
        Some(serde_json::Value::Array(ts)) => ts[0].as_str().unwrap_or_default(),
        Some(t) => t.as_str().unwrap_or_default(),
        None => "",
    };
    match (ty, s.get("format").and_then(|f| f.as_str())) {
        ("string", Some("duration")) => toml::Value::String("1s".into()),
        ("integer", _) => toml::Value::Integer(1),
        ("number", _) => toml::Value::Float(1.0),
        ("boolean", _) => toml::Value::Boolean(false),
        _ => toml::Value::String("x".into()),
    }
}

/// Every default the scenario-key page shows is what validation uses: a scenario with
/// the key written at that default validates to the same scenario as one without it,
/// so a default stated in the schema cannot drift from the constant validation reads.
#[test]
fn every_default_on_the_scenario_page_is_what_validation_uses() {
    let schema = crate::scenario::reference::schema();
    let defs = &schema["$defs"];
    let mut keys = Vec::new();
    defaulted(defs, &schema, &[], &[], None, &mut keys);
    let mut failures = Vec::new();
    let mut checked = 0;
    for d in keys
        .iter()
        .filter(|d| d.path.first().map(String::as_str) != Some("services"))
        // A trace reads its file at load: its defaults are checked in arrival_trace.
        .filter(|d| d.kind.as_deref() != Some("trace"))
    {
        // The base with the table at the key's path, of the key's kind.
        let mut base: toml::Table = toml::from_str(BASE).unwrap();
        // Keys that apply only beside others: what they need.
        for (path, key, needs) in CONTEXT {
            if d.path.join(".") == *path && (*key == "*" || d.key == *key) {
                merge_first(&mut base, toml::from_str(needs).unwrap());
            }
        }
        let mut at = &mut base;
        for (seg, &list) in d.path.iter().zip(&d.lists) {
            let v = at.entry(seg.clone()).or_insert_with(|| {
                let t = toml::Value::Table(toml::Table::new());
                if list {
                    toml::Value::Array(vec![t])
                } else {
                    t
                }
            });
            let v = match v {
                toml::Value::Array(a) => &mut a[0],
                v => v,
            };
            at = v.as_table_mut().unwrap();
        }
        if let Some(k) = &d.kind {
            if at.get("kind").and_then(|v| v.as_str()) != Some(k) {
                at.clear();
                at.insert("kind".into(), toml::Value::String(k.clone()));
            }
        }
        // Keys the parser requires, and those validation requires (their doc says so).
        let props = d.table["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let required = d.table["required"].as_array().cloned().unwrap_or_default();
        for (r, prop) in &props {
            let by_doc = prop["description"]
                .as_str()
                .is_some_and(|t| t.contains("(required") || t.contains("; required"));
            if (by_doc || required.iter().any(|x| x == r.as_str())) && !at.contains_key(r) {
                at.insert(r.clone(), sample(defs, prop));
            }
        }
        at.remove(&d.key);
        let without = toml::to_string(&base).unwrap();
        let mut with_default = base.clone();
        let mut at = &mut with_default;
        for seg in &d.path {
            let v = at.get_mut(seg).unwrap();
            let v = match v {
                toml::Value::Array(a) => &mut a[0],
                v => v,
            };
            at = v.as_table_mut().unwrap();
        }
        at.insert(d.key.clone(), toml_of(&d.default));
        let with = toml::to_string(&with_default).unwrap();
        let shown = format!(
            "{}{}: {} = {}",
            if d.path.is_empty() {
                "(top level)".to_string()
            } else {
                d.path.join(".")
            },
            d.kind
                .as_ref()
                .map_or(String::new(), |k| format!(" (kind = {k:?})")),
            d.key,
            toml_of(&d.default)
        );
        let load = |text: &str| {
            crate::scenario::load(crate::scenario::Source::from_text("d.toml", text), &[])
                .map(|l| format!("{:?}", l.scenario))
                .map_err(|e| e.to_string())
        };
        // A key whose presence is a switch (writing it asks for its outputs): its
        // default must load, and change nothing else, which the twin runs check.
        let switch = SWITCHES.contains(&(d.path.join(".").as_str(), d.key.as_str()));
        match (load(&without), load(&with)) {
            (Ok(a), Ok(b)) if a == b => checked += 1,
            (Ok(_), Ok(_)) if switch => checked += 1,
            (Ok(_), Ok(_)) => failures.push(format!("{shown}: the default changes the scenario")),
            (Err(e), _) => failures.push(format!("{shown}: the base does not load: {e}")),
            (_, Err(e)) => failures.push(format!("{shown}: the default does not load: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 100, "only {checked} defaults checked");
}
