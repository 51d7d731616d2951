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

use crate::common::{pinned_section, retrysim};

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
    let source = retrysim::scenario::Source::from_text("snippet.toml", text);
    let loaded = retrysim::scenario::load(source, &[]).map_err(|e| e.to_string())?;
    let plan = retrysim::sweep::plan::plan(loaded).map_err(|e| e.to_string())?;
    retrysim::check::resolve(&plan).map_err(|e| e.to_string())?;
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
    for sub in ["run", "sweep", "check", "search", "presets"] {
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
    for p in retrysim::scenario::preset::LAYER_PRESETS {
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
    for p in retrysim::scenario::preset::LAYER_PRESETS {
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
