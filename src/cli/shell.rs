//! The command line described for the shell: `retrysim completions SHELL` (a
//! completion script from the clap definition, by clap_complete) and `retrysim man`
//! (roff manual pages, by clap_mangen), so both always match the arguments.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use clap::CommandFactory;
use retrysim::error::exit;
use retrysim::Error;

use super::args::Cli;

/// Prints the completion script of `shell` on stdout.
pub fn completions(shell: clap_complete::Shell) -> Result<i32> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "retrysim", &mut out);
    write_stdout(&out)?;
    Ok(exit::OK)
}

/// The top page, `retrysim.1`, in roff.
pub fn page() -> Result<Vec<u8>> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut out)
        .map_err(|e| Error::Internal(e.into()))?;
    Ok(out)
}

/// Largest manual page `man --out` reads to see whether it wrote it (its pages are a
/// few KiB).
const MAX_PAGE_BYTES: u64 = 1 << 20;

/// Prints `retrysim.1` on stdout, or writes it and one `retrysim-<subcommand>.1` per
/// subcommand into `out` (created if missing).
pub fn man(out: Option<&Path>, quiet: bool) -> Result<i32> {
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
            let old = retrysim::export::read::read(&path, MAX_PAGE_BYTES).map_err(|e| {
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
        let mut f = retrysim::export::AtomicFile::create(path).map_err(page_err(path))?;
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
