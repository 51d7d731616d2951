//! `--color auto|always|never`: whether clap's help and errors, the progress bar and
//! the coloured words of the output (PASS/FAIL, `error:`) carry ANSI colours. `auto`
//! colours a stream only when it is a terminal and `NO_COLOR` is unset or empty
//! (<https://no-color.org>); `always` and `never` are what they say, whatever
//! `NO_COLOR` holds.

use std::io::IsTerminal;
use std::sync::OnceLock;

/// The `--color` choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    /// Colour a terminal unless `NO_COLOR` is set.
    #[default]
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Which of stdout and stderr get colours, decided once at start-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Streams {
    /// Colours on stdout.
    pub stdout: bool,
    /// Colours on stderr.
    pub stderr: bool,
}

static STREAMS: OnceLock<Streams> = OnceLock::new();

/// Whether `NO_COLOR` asks for no colour: set and not empty.
fn no_color(value: Option<std::ffi::OsString>) -> bool {
    value.is_some_and(|v| !v.is_empty())
}

/// The streams that get colours for a choice, given `NO_COLOR` and which streams are
/// terminals.
pub(crate) fn decide(
    choice: ColorChoice,
    no_color_env: Option<std::ffi::OsString>,
    terminals: Streams,
) -> Streams {
    match choice {
        ColorChoice::Always => Streams {
            stdout: true,
            stderr: true,
        },
        ColorChoice::Never => Streams {
            stdout: false,
            stderr: false,
        },
        ColorChoice::Auto if no_color(no_color_env) => Streams {
            stdout: false,
            stderr: false,
        },
        ColorChoice::Auto => terminals,
    }
}

/// The `--color` value of the raw arguments (the last one wins), read before clap
/// parses them so that clap's own help and errors follow it; an unknown value is
/// `auto` here and clap's error later.
pub(crate) fn scan(args: &[std::ffi::OsString]) -> ColorChoice {
    let mut choice = ColorChoice::Auto;
    let mut it = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(a) = it.next() {
        if a == "--" {
            break;
        }
        let value = if a == "--color" {
            it.next().map(|v| v.into_owned())
        } else {
            a.strip_prefix("--color=").map(str::to_owned)
        };
        match value.as_deref() {
            Some("always") => choice = ColorChoice::Always,
            Some("never") => choice = ColorChoice::Never,
            Some("auto") => choice = ColorChoice::Auto,
            _ => {}
        }
    }
    choice
}

/// Decides the colours of this process once, from the choice, `NO_COLOR` and the
/// terminals, and tells the progress bar's terminal library; returns clap's choice.
pub(crate) fn init(choice: ColorChoice) -> clap::ColorChoice {
    let terminals = Streams {
        stdout: std::io::stdout().is_terminal(),
        stderr: std::io::stderr().is_terminal(),
    };
    let s = *STREAMS.get_or_init(|| decide(choice, std::env::var_os("NO_COLOR"), terminals));
    console::set_colors_enabled(s.stdout);
    console::set_colors_enabled_stderr(s.stderr);
    // clap writes help on stdout and errors on stderr; it colours both or neither.
    match choice {
        ColorChoice::Auto if s.stdout || s.stderr => clap::ColorChoice::Auto,
        ColorChoice::Auto | ColorChoice::Never => clap::ColorChoice::Never,
        ColorChoice::Always => clap::ColorChoice::Always,
    }
}

fn streams() -> Streams {
    STREAMS.get().copied().unwrap_or(Streams {
        stdout: false,
        stderr: false,
    })
}

/// An ANSI colour of the output's coloured words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Paint {
    /// A pass, a success.
    Green,
    /// A failure, an error.
    Red,
}

fn paint(text: &str, p: Paint, on: bool) -> String {
    if !on {
        return text.to_owned();
    }
    let code = match p {
        Paint::Green => "32",
        Paint::Red => "1;31",
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}

/// `text` coloured for stdout (unchanged when stdout gets no colours).
pub(crate) fn out(text: &str, p: Paint) -> String {
    paint(text, p, streams().stdout)
}

/// `text` coloured for stderr (unchanged when stderr gets no colours).
pub(crate) fn err(text: &str, p: Paint) -> String {
    paint(text, p, streams().stderr)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTY: Streams = Streams {
        stdout: true,
        stderr: true,
    };

    #[test]
    fn auto_follows_the_terminals_and_no_color() {
        let none = Streams {
            stdout: false,
            stderr: false,
        };
        assert_eq!(decide(ColorChoice::Auto, None, TTY), TTY);
        assert_eq!(decide(ColorChoice::Auto, Some("1".into()), TTY), none);
        // An empty NO_COLOR is no request (no-color.org).
        assert_eq!(decide(ColorChoice::Auto, Some("".into()), TTY), TTY);
        assert_eq!(decide(ColorChoice::Always, Some("1".into()), none), TTY);
        assert_eq!(decide(ColorChoice::Never, None, TTY), none);
    }

    #[test]
    fn scan_reads_both_spellings_and_the_last_wins() {
        let a = |v: &[&str]| {
            v.iter()
                .map(Into::into)
                .collect::<Vec<std::ffi::OsString>>()
        };
        assert_eq!(scan(&a(&["retrysim", "run"])), ColorChoice::Auto);
        assert_eq!(
            scan(&a(&["retrysim", "--color", "never", "run"])),
            ColorChoice::Never
        );
        assert_eq!(
            scan(&a(&["retrysim", "run", "--color=always"])),
            ColorChoice::Always
        );
        assert_eq!(
            scan(&a(&[
                "retrysim",
                "--color=always",
                "run",
                "--color",
                "never"
            ])),
            ColorChoice::Never
        );
        assert_eq!(
            scan(&a(&["retrysim", "run", "--", "--color=always"])),
            ColorChoice::Auto
        );
        assert_eq!(paint("FAIL", Paint::Red, true), "\x1b[1;31mFAIL\x1b[0m");
        assert_eq!(paint("FAIL", Paint::Red, false), "FAIL");
    }
}
