//! The command line described for the shell: `retrysim completions SHELL` (a
//! completion script from the clap definition, by clap_complete), `retrysim man`
//! (roff manual pages, by clap_mangen) and `retrysim man --markdown` (the book's
//! command-line reference), so all of them always match the arguments.

use std::io::Write;
use std::path::Path;

use crate::error::exit;
use crate::Error;
use anyhow::Result;
use clap::CommandFactory;

use super::args::Cli;

/// Prints the completion script of `shell` on stdout.
pub(crate) fn completions(shell: clap_complete::Shell) -> Result<i32> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "retrysim", &mut out);
    write_stdout(&out)?;
    Ok(exit::OK)
}

/// The top page, `retrysim.1`, in roff.
pub(crate) fn page() -> Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut out)
        .map_err(|e| Error::Internal(e.into()))?;
    Ok(out)
}

/// The command-line reference as Markdown (`retrysim man --markdown`): the top
/// command and each subcommand with its usage, its arguments (short and long names,
/// value names, help, default, possible values) and its examples, read from the
/// clap definition. The book's `reference/cli.md` is this text, checked by a test.
pub(crate) fn markdown() -> String {
    let mut cmd = Cli::command();
    // Subcommand names and usages need the names their parent gives them.
    cmd.build();
    let mut out = String::new();
    command_markdown(&mut out, &mut cmd.clone(), true);
    let subs: Vec<clap::Command> = cmd
        .get_subcommands()
        .filter(|s| s.get_name() != "help" && !s.is_hide_set())
        .cloned()
        .collect();
    out.push_str("| command | what it does |\n| --- | --- |\n");
    for s in &subs {
        let name = s.get_display_name().unwrap_or(s.get_name());
        out.push_str(&format!(
            "| [`{}`](#{}) | {} |\n",
            s.get_name(),
            name.to_lowercase(),
            cell(&first_line(s.get_about()))
        ));
    }
    out.push('\n');
    for mut s in subs {
        command_markdown(&mut out, &mut s, false);
    }
    out
}

/// One command's section: heading, what it does, usage, arguments, examples.
fn command_markdown(out: &mut String, cmd: &mut clap::Command, top: bool) {
    let name = cmd
        .get_display_name()
        .unwrap_or(cmd.get_name())
        .replace('-', " ");
    out.push_str(&format!("## `{name}`\n\n"));
    let about = cmd
        .get_long_about()
        .or(cmd.get_about())
        .map(|a| a.to_string())
        .unwrap_or_default();
    if !about.is_empty() {
        out.push_str(&format!("{}\n\n", text(&about)));
    }
    let usage = cmd.render_usage().to_string();
    out.push_str(&format!("```text\n{}\n```\n\n", usage.trim_end()));
    let args: Vec<&clap::Arg> = cmd
        .get_arguments()
        .filter(|a| {
            let own = !matches!(a.get_id().as_str(), "help" | "version");
            // A global option is described once, under `retrysim`.
            own && !a.is_hide_set() && (top || !a.is_global_set())
        })
        .collect();
    if !args.is_empty() {
        out.push_str("| argument | description |\n| --- | --- |\n");
        for a in args {
            out.push_str(&format!(
                "| `{}` | {} |\n",
                synopsis(a).replace('|', "\\|"),
                describe(a)
            ));
        }
        out.push('\n');
    }
    if top {
        out.push_str(
            "Every command also takes `-h`/`--help` (`--help` says more than `-h`); `retrysim` takes `-V`/`--version`.\n\n",
        );
    }
    if let Some(after) = cmd.get_after_help().map(|a| a.to_string()) {
        if let Some(examples) = after.trim().strip_prefix("Examples:") {
            out.push_str("Examples:\n\n```sh\n");
            for l in examples.lines().map(str::trim).filter(|l| !l.is_empty()) {
                out.push_str(l);
                out.push('\n');
            }
            out.push_str("```\n\n");
        } else {
            out.push_str(&format!("{}\n\n", text(&after)));
        }
    }
}

/// An argument as the usage writes it: `-j, --jobs <N>`, `<SCENARIO>...`, `--force`.
fn synopsis(a: &clap::Arg) -> String {
    let values: Vec<String> = a
        .get_value_names()
        .map(|v| v.iter().map(|n| format!("<{n}>")).collect())
        .unwrap_or_else(|| vec![format!("<{}>", a.get_id().as_str().to_uppercase())]);
    let many = a.get_num_args().is_some_and(|n| n.max_values() > 1)
        || matches!(a.get_action(), clap::ArgAction::Append);
    if a.is_positional() {
        // As clap's usage writes it: `[SCENARIO]`, `<DIR>...`.
        let v = values
            .iter()
            .map(|n| n.trim_matches(['<', '>']))
            .collect::<Vec<_>>()
            .join(" ");
        let v = if a.is_required_set() {
            format!("<{v}>")
        } else {
            format!("[{v}]")
        };
        return if many { format!("{v}...") } else { v };
    }
    let mut s = match (a.get_short(), a.get_long()) {
        (Some(c), Some(l)) => format!("-{c}, --{l}"),
        (Some(c), None) => format!("-{c}"),
        (None, Some(l)) => format!("--{l}"),
        (None, None) => String::new(),
    };
    if a.get_action().takes_values() {
        s.push(' ');
        s.push_str(&values.join(" "));
    }
    s
}

/// An argument's help, then its default and its possible values.
fn describe(a: &clap::Arg) -> String {
    let mut d = a
        .get_long_help()
        .or(a.get_help())
        .map(|h| cell(&h.to_string()))
        .unwrap_or_default();
    if !d.is_empty() && !d.ends_with(['.', '!', '?', ')']) {
        d.push('.');
    }
    if a.is_required_set() && !a.is_positional() {
        d.push_str(" Required.");
    }
    if a.get_action().takes_values() {
        let defaults: Vec<String> = a
            .get_default_values()
            .iter()
            .map(|v| format!("`{}`", v.to_string_lossy()))
            .collect();
        if !defaults.is_empty() {
            d.push_str(&format!(" Default: {}.", defaults.join(", ")));
        }
        let possible: Vec<String> = a
            .get_possible_values()
            .iter()
            .filter(|p| !p.is_hide_set())
            .map(|p| match p.get_help() {
                Some(h) => format!("`{}` ({})", p.get_name(), cell(&uncap(&h.to_string()))),
                None => format!("`{}`", p.get_name()),
            })
            .collect();
        if !possible.is_empty() {
            d.push_str(&format!(" One of: {}.", possible.join(", ")));
        }
    }
    d.trim().to_string()
}

/// A possible value's help as a parenthesis: without its capital and final full stop.
fn uncap(h: &str) -> String {
    let h = h.trim().trim_end_matches('.');
    let mut c = h.chars();
    match c.next() {
        // Keep acronyms (`PNG bitmaps`, `JSON`).
        Some(f) if c.clone().next().is_some_and(char::is_lowercase) => {
            f.to_lowercase().collect::<String>() + c.as_str()
        }
        _ => h.to_string(),
    }
}

/// The first line of a help text.
fn first_line(s: Option<&clap::builder::StyledStr>) -> String {
    s.map(|s| s.to_string())
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Help text as a Markdown paragraph: a tag-like `<` outside code spans escaped, so a
/// placeholder such as `output/<name>/` is not read as HTML.
fn text(s: &str) -> String {
    crate::export::markdown::prose(s)
}

/// Help text as one table cell: one line, `|` escaped.
fn cell(s: &str) -> String {
    let joined: Vec<&str> = s.split_whitespace().collect();
    text(&joined.join(" ")).replace('|', "\\|")
}

/// Largest manual page `man --out` reads to see whether it wrote it (its pages are a
/// few KiB).
const MAX_PAGE_BYTES: u64 = 1 << 20;

/// Prints the command-line reference as Markdown on stdout.
pub(crate) fn man_markdown() -> Result<i32> {
    write_stdout(markdown().as_bytes())?;
    Ok(exit::OK)
}

/// Prints `retrysim.1` on stdout, or writes it and one `retrysim-<subcommand>.1` per
/// subcommand into `out` (created if missing).
pub(crate) fn man(out: Option<&Path>, quiet: bool) -> Result<i32> {
    let Some(dir) = out else {
        write_stdout(&page()?)?;
        return Ok(exit::OK);
    };
    let io = |e: std::io::Error| Error::Io(format!("{}: {e}", dir.display()).into());
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut cmd = Cli::command();
    // Subcommand pages need the names their parent gives them (`retrysim-run`).
    cmd.build();
    let mut pages = vec![cmd.clone()];
    // clap's own `help` subcommand gets no page: `man retrysim` covers it.
    pages.extend(
        cmd.get_subcommands()
            .filter(|s| s.get_name() != "help")
            .cloned(),
    );
    let mut rendered = Vec::with_capacity(pages.len());
    for c in &pages {
        let name = c.get_display_name().unwrap_or(c.get_name()).to_owned();
        let mut roff = Vec::new();
        clap_mangen::Man::new(c.clone())
            .render(&mut roff)
            .map_err(|e| Error::Internal(e.into()))?;
        let path = dir.join(format!("{name}.1"));
        // Replace only a page of ours (an earlier `man --out`), and check every page
        // before writing any, so a refusal leaves the folder as it was.
        if std::fs::metadata(&path).is_ok() {
            let ours = format!(".TH {name} 1");
            let old = crate::export::read::read(&path, MAX_PAGE_BYTES).map_err(|e| {
                Error::BadInput(
                    format!(
                        "{}: exists and cannot be read as a manual page ({e}); \
                         refusing to replace it: choose another --out folder",
                        path.display()
                    )
                    .into(),
                )
            })?;
            if !String::from_utf8_lossy(&old).contains(&ours) {
                return Err(Error::BadInput(
                    format!(
                        "{}: exists and is not a retrysim manual page (no '{ours}'); \
                         refusing to overwrite it: choose another --out folder",
                        path.display()
                    )
                    .into(),
                )
                .into());
            }
        }
        rendered.push((path, roff));
    }
    // Every page is written under a temporary name before any is renamed into place:
    // a page that cannot be written leaves none written.
    let page_err = |path: &Path| {
        let path = path.to_path_buf();
        move |e: std::io::Error| Error::Io(format!("{}: {e}", path.display()).into())
    };
    let mut written = Vec::with_capacity(rendered.len());
    for (path, roff) in &rendered {
        let mut f = crate::export::AtomicFile::create(path).map_err(page_err(path))?;
        f.write_all(roff).map_err(page_err(path))?;
        written.push((path, f));
    }
    for (path, f) in written {
        f.commit().map_err(page_err(path))?;
    }
    if !quiet {
        println!("wrote {} manual pages to {}/", pages.len(), dir.display());
    }
    Ok(exit::OK)
}

/// Writes to stdout; a closed pipe (`| head`) is no error.
fn write_stdout(bytes: &[u8]) -> Result<()> {
    let mut o = std::io::stdout().lock();
    match o.write_all(bytes).and_then(|()| o.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Error::Io(format!("stdout: {e}").into()).into())
        }
        _ => Ok(()),
    }
}
