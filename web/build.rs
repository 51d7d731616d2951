//! Embeds every shipped scenario (scenarios/*.toml, scenarios/*/*.toml) and the data
//! files beside them in the playground: a scenario added to scenarios/ is in the
//! page's picker at the next build, with no edit here.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Files of `dir` and of its folders, recursively, sorted, as (path relative to
/// `root` with `/`, absolute path).
fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("a folder entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(root, &p, out);
        } else {
            let rel = p.strip_prefix(root).expect("under the root");
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push((rel.join("/"), p.canonicalize().expect("a path")));
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    let mut scenarios = String::new();
    let mut data = String::new();
    for (rel, abs) in &files {
        let depth = rel.matches('/').count();
        // Each folder, too: a file added to one re-runs this.
        if let Some(parent) = abs.parent() {
            println!("cargo:rerun-if-changed={}", parent.display());
        }
        if rel.ends_with(".toml") && depth <= 1 {
            writeln!(
                scenarios,
                "    ({rel:?}, include_str!({:?})),",
                abs.display()
            )
            .unwrap();
        } else if !rel.ends_with(".md") && !rel.ends_with(".py") {
            writeln!(data, "    ({rel:?}, include_bytes!({:?})),", abs.display()).unwrap();
        }
    }
    let text = format!(
        "/// The shipped scenarios: (path under scenarios/, text), sorted by path.\n\
         pub static SCENARIOS: &[(&str, &str)] = &[\n{scenarios}];\n\
         /// The data files beside them: (path under scenarios/, bytes).\n\
         pub static DATA: &[(&str, &[u8])] = &[\n{data}];\n"
    );
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("shipped.rs");
    std::fs::write(out, text).expect("cannot write shipped.rs");
}
