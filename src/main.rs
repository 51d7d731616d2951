//! The `retrysim` command: parse, run, report; exit 0 (ok), 1 (a failed expectation),
//! 2 (bad input).

fn main() {
    std::process::exit(retrysim::cli::main());
}
