//! The `retrysim` command. The command line (parse the arguments, call the library,
//! print) is the library's `cli` module, src/cli/, run by [`retrysim::cli_main`]. The exit code
//! comes from the kind of error ([`retrysim::Error::exit_code`]): 0 ok, 1 a failed
//! expectation or denied lint, 2 bad input or a run stopped at its limits, 3 a file
//! that could not be written, 4 an internal failure, 130 a sweep interrupted by Ctrl-C.

fn main() {
    std::process::exit(retrysim::cli_main());
}
