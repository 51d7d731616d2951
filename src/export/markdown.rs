//! Reference tables as Markdown, for the book: the column dictionary (one table per
//! results file: column, unit, kind, description), the lints, and the presets (what
//! each expands to, and its source).

use crate::explain::lint::Rule;
use crate::metrics::columns::Entry;
use crate::scenario::preset::{Preset, LAYER_PRESETS, PARTS, PART_ONLY_PRESETS};

/// Escapes text for a Markdown table cell: `|` everywhere, a tag-like `<` outside code
/// spans (so `attempts_layer_<i>` in prose is not read as an HTML tag).
fn cell(text: &str) -> String {
    prose(text).replace('|', "\\|")
}

/// Escapes what would start an HTML tag (`<name`) outside code spans, for Markdown
/// prose (the book's generated pages).
pub(crate) fn prose(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, part) in text.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 {
            out.push_str(part);
        } else {
            out.push_str(&no_tags(part));
        }
    }
    out
}

/// The dictionary as Markdown: a `## `file`` heading (a section of the book's columns page) and a table per file, in the
/// entries' order.
pub(crate) fn dictionary(entries: &[Entry]) -> String {
    let mut out = String::new();
    let mut file = None;
    for e in entries {
        if file != Some(e.file) {
            if file.is_some() {
                out.push('\n');
            }
            file = Some(e.file);
            out.push_str(&format!(
                "## `{}`\n\n| column | unit | kind | description |\n| --- | --- | --- | --- |\n",
                e.file
            ));
        }
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            e.column,
            cell(e.unit),
            e.kind,
            cell(&e.description)
        ));
    }
    out
}

/// A preset's keys as one TOML line per key, as a layer table holds them.
fn preset_keys(p: &Preset) -> String {
    p.toml.trim().to_string() + "\n"
}

/// A part-only preset's table as the one line a layer writes: `budget = { ... }`.
fn part_line(part: &str, p: &Preset) -> String {
    let t: toml::Table = toml::from_str(p.toml).expect("preset TOML parses");
    let fields: Vec<String> = t.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    format!("{part} = {{ {} }}\n", fields.join(", "))
}

/// The presets as Markdown (`retrysim presets --markdown`, the book's presets page): a
/// table of the layer presets, then per preset what it is, the keys it sets (a TOML
/// fragment of a layer, checked by the book's snippet test) and its source; then the
/// part presets, and those no layer preset sets.
pub(crate) fn presets() -> String {
    let mut out = String::from("| preset | what it is |\n| --- | --- |\n");
    for p in LAYER_PRESETS {
        out.push_str(&format!(
            "| [`{}`](#{}) | {} |\n",
            p.name,
            p.name,
            cell(p.about)
        ));
    }
    for p in LAYER_PRESETS {
        out.push_str(&format!(
            "\n## `{}`\n\n{}\n\n`preset = \"{}\"` sets these keys of the layer:\n\n```toml,fragment=fleets.layers\n{}```\n\nSource: {}.\n",
            p.name,
            prose(p.about),
            p.name,
            preset_keys(p),
            prose(p.source)
        ));
    }
    out.push_str("\n## Part presets\n\n| part | `{ preset = \"NAME\" }` names |\n| --- | --- |\n");
    for part in PARTS {
        let names: Vec<String> = crate::scenario::preset::names(part)
            .into_iter()
            .map(|n| format!("`{n}`"))
            .collect();
        out.push_str(&format!("| `{part}` | {} |\n", names.join(", ")));
    }
    out.push_str(
        "\nA part preset of a layer preset's name is that preset's table of the part, above.\n",
    );
    for (part, p) in PART_ONLY_PRESETS {
        out.push_str(&format!(
            "\n### `{part} = {{ preset = \"{}\" }}`\n\n{}\n\n```toml,fragment=fleets.layers\n{}```\n\nSource: {}.\n",
            p.name,
            prose(p.about),
            part_line(part, p),
            prose(p.source)
        ));
    }
    out
}

/// The lint table as Markdown (id, why, fires when), as `retrysim lints --markdown`
/// prints it and the book's lints page shows it.
pub(crate) fn lints(rules: &[Rule]) -> String {
    let mut out = String::from("| id | why | fires when |\n| --- | --- | --- |\n");
    for r in rules {
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            r.id,
            cell(r.why),
            cell(r.fires_when)
        ));
    }
    out
}

/// `<` as `&lt;` where Markdown would read it as the start of an HTML tag (before a
/// letter, `/`, `!` or `?`); `a < b` and `a > b` stay as written.
fn no_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let tag = c == '<'
            && chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?'));
        if tag {
            out.push_str("&lt;");
        } else {
            out.push(c);
        }
    }
    out
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn dictionary_example() {
        use crate::export::markdown::dictionary;
        use crate::metrics::columns::Entry;
        let e = |column: &str| Entry {
            file: "herd.csv",
            column: column.into(),
            unit: "s",
            kind: "measure",
            description: "a | b".into(),
        };
        let md = dictionary(&[e("t")]);
        assert_eq!(md, "## `herd.csv`\n\n| column | unit | kind | description |\n| --- | --- | --- | --- |\n| `t` | s | measure | a \\| b |\n");
    }

    #[test]
    fn lints_example() {
        use crate::explain::lint::{LINTS, TOO_MANY_ATTEMPTS};
        use crate::export::markdown::lints;
        let md = lints(&LINTS);
        assert!(md.starts_with("| id | why | fires when |\n| --- | --- | --- |\n"));
        assert!(md.contains(&format!(
            "| `{}` | {} | {} |\n",
            TOO_MANY_ATTEMPTS.id, TOO_MANY_ATTEMPTS.why, TOO_MANY_ATTEMPTS.fires_when
        )));
        assert_eq!(md.lines().count(), 2 + LINTS.len());
    }
}
