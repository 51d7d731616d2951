//! The `retrysim` command: parse the arguments, call the library, print. The exit code
//! comes from the kind of error ([`retrysim::Error::exit_code`]): 0 ok, 1 a failed
//! expectation or denied lint, 2 bad input or a run stopped at its limits, 3 a file
//! that could not be written, 4 an internal failure, 130 a sweep interrupted by Ctrl-C.

mod cli;

fn main() {
    std::process::exit(cli::main());
}
