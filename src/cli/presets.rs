//! `retrysim presets`: the preset registry ([`crate::scenario::preset`]) on the
//! terminal: every preset and what it is, one preset's keys as TOML, or with
//! `--markdown` the book's presets page.

use crate::error::exit;
use crate::scenario::preset::{Preset, LAYER_PRESETS, PART_ONLY_PRESETS};
use crate::Error;
use anyhow::Result;

/// Prints the presets: all of them in a table, `name`'s keys, or the Markdown page.
pub(crate) fn presets(name: Option<&str>, markdown: bool) -> Result<i32> {
    if markdown {
        print!("{}", crate::export::markdown::presets());
        return Ok(exit::OK);
    }
    let Some(name) = name else {
        let width = all()
            .map(|(part, p)| shown(part, p).len())
            .max()
            .unwrap_or(0);
        for (part, p) in all() {
            println!("{:<width$}  {}", shown(part, p), p.about.replace('`', ""));
        }
        return Ok(exit::OK);
    };
    // A layer preset by its name; a part-only preset by `part.name`, or its name alone
    // when no layer preset has it.
    let found = all()
        .find(|(part, p)| shown(*part, p) == name)
        .or_else(|| all().find(|(_, p)| p.name == name));
    let Some((part, p)) = found else {
        let known: Vec<String> = all().map(|(part, p)| shown(part, p)).collect();
        return Err(Error::bad_input(format!(
            "no preset '{}' (known: {})",
            crate::scenario::error::shown(name),
            known.join(", ")
        ))
        .into());
    };
    match part {
        None => {
            println!(
                "# preset = \"{}\" sets these keys of a layer; keys written beside it win.",
                p.name
            );
            comment(p);
            println!("{}", p.toml.trim());
        }
        Some(part) => {
            println!(
                "# {part} = {{ preset = \"{}\" }} is this table; keys written in it win.",
                p.name
            );
            comment(p);
            println!("[{part}]\n{}", p.toml.trim());
        }
    }
    Ok(exit::OK)
}

/// The name `retrysim presets` lists and takes: `grpc`, `budget.envoy_retry_budget`.
fn shown(part: Option<&str>, p: &Preset) -> String {
    match part {
        Some(part) => format!("{part}.{}", p.name),
        None => p.name.to_string(),
    }
}

/// The preset's `about` and `source` as TOML comments.
fn comment(p: &Preset) {
    println!("# {}", p.about.replace('`', ""));
    println!("# source: {}", p.source);
}

/// Every preset: the layer presets (part `None`), then those of one part only.
fn all() -> impl Iterator<Item = (Option<&'static str>, &'static Preset)> {
    LAYER_PRESETS
        .iter()
        .map(|p| (None, p))
        .chain(PART_ONLY_PRESETS.iter().map(|(part, p)| (Some(*part), p)))
}
