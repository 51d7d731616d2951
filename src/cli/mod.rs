//! The command line: [`args`] parses, [`commands`] holds one thin function per
//! subcommand (call the library, print), [`progress`] and [`signal`] are the terminal
//! side of a sweep (a progress bar, Ctrl-C), [`color`] decides `--color`, [`shell`]
//! writes completion scripts, manual pages and the Markdown command reference,
//! [`presets`] prints the preset registry.

pub(crate) mod args;
pub(crate) mod check;
pub(crate) mod color;
pub(crate) mod commands;
pub(crate) mod diff;
pub(crate) mod import;
pub(crate) mod presets;
pub(crate) mod progress;
pub(crate) mod search;
pub(crate) mod shell;
pub(crate) mod signal;

use crate::error::exit;
use clap::{CommandFactory, FromArgMatches};

/// Parses the arguments, runs the command and returns the process exit code.
pub(crate) fn main() -> i32 {
    // `--color` is read before clap parses, so that clap's own help and errors obey it.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let choice = color::init(color::scan(&argv));
    let matches = args::Cli::command().color(choice).get_matches_from(argv);
    let cli = args::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match commands::dispatch(cli) {
        Ok(code) => code,
        Err(e) => report(&e),
    }
}

/// Prints an error on stderr and returns its exit code: a library error's kind
/// decides it; any other error is an internal one.
pub(crate) fn report(e: &anyhow::Error) -> i32 {
    let kind = e.downcast_ref::<crate::Error>();
    match kind {
        // The message says what happened and what to do: it is no error of the input.
        Some(crate::Error::Interrupted(_)) => eprintln!("{e}"),
        _ => eprintln!(
            "{} {}",
            color::err("error:", color::Paint::Red),
            crate::error::chain(e.as_ref())
        ),
    }
    kind.map_or(exit::INTERNAL, crate::Error::exit_code)
}
