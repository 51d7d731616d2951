//! The column dictionary as Markdown: one table per results file (column, unit, kind,
//! description), as the README's column reference shows it; and the lint table, as
//! its Lints section shows it.

use crate::explain::lint::Rule;
use crate::metrics::columns::Entry;

/// Escapes text for a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// The dictionary as Markdown: a `#### `file`` heading and a table per file, in the
/// entries' order.
///
/// ```
/// use retrysim::export::markdown::dictionary;
/// use retrysim::metrics::columns::Entry;
/// let e = |column: &str| Entry {
///     file: "herd.csv",
///     column: column.into(),
///     unit: "s",
///     kind: "measure",
///     description: "a | b".into(),
/// };
/// let md = dictionary(&[e("t")]);
/// assert_eq!(md, "#### `herd.csv`\n\n| column | unit | kind | description |\n| --- | --- | --- | --- |\n| `t` | s | measure | a \\| b |\n");
/// ```
pub fn dictionary(entries: &[Entry]) -> String {
    let mut out = String::new();
    let mut file = None;
    for e in entries {
        if file != Some(e.file) {
            if file.is_some() {
                out.push('\n');
            }
            file = Some(e.file);
            out.push_str(&format!(
                "#### `{}`\n\n| column | unit | kind | description |\n| --- | --- | --- | --- |\n",
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

/// The lint table as Markdown (id, why, fires when), as `retrysim lints --markdown`
/// prints it and the README's Lints section shows it.
///
/// ```
/// use retrysim::explain::lint::{LINTS, TOO_MANY_ATTEMPTS};
/// use retrysim::export::markdown::lints;
/// let md = lints(&LINTS);
/// assert!(md.starts_with("| id | why | fires when |\n| --- | --- | --- |\n"));
/// assert!(md.contains(&format!("| `{}` | {} | {} |\n", TOO_MANY_ATTEMPTS.id, TOO_MANY_ATTEMPTS.why, TOO_MANY_ATTEMPTS.fires_when)));
/// assert_eq!(md.lines().count(), 2 + LINTS.len());
/// ```
pub fn lints(rules: &[Rule]) -> String {
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
