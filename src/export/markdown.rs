//! The column dictionary as Markdown: one table per results file (column, unit, kind,
//! description), as the README's column reference shows it.

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
