//! The command line: `multiedit apply`, `multiedit lsp`, `multiedit mcp`.
//!
//! Arguments are parsed by hand: three subcommands and two flags do not justify a parser dependency and
//! its build time.

mod apply;

use std::io::Write;
use std::process::ExitCode;

/// Writes to standard output. A reader that went away (`multiedit apply ... | head`) is not an error
/// worth a panic: the work is done either way, and the exit code still says how it went.
pub(crate) fn out(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Writes to standard error, with the same tolerance.
pub(crate) fn err(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

const USAGE: &str = "\
multiedit: apply MultiEdit edit plans (exact find-and-replace edits, all or nothing)

Usage:
  multiedit apply [--dry-run] [--json] PLAN   apply a plan (PLAN: a JSON file, or - for standard input)
  multiedit lsp                               run the language server on standard input/output
  multiedit mcp                               run the MCP server (tools multiedit, multiedit_preview) on stdio
  multiedit --version | --help

apply exits 0 when the plan was applied, 1 when it was refused (nothing written), 2 on a usage or I/O error.
--dry-run writes nothing and prints a unified diff; --json prints a JSON result object.";

pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("apply") => apply::run(&args[1..]),
        Some("lsp") => crate::lsp::run(&args[1..]),
        Some("mcp") => crate::mcp::run(&args[1..]),
        Some("--version" | "-V") => {
            out(&format!("multiedit {}\n", env!("CARGO_PKG_VERSION")));
            ExitCode::SUCCESS
        }
        Some("--help" | "-h" | "help") => {
            out(&format!("{USAGE}\n"));
            ExitCode::SUCCESS
        }
        _ => usage_error("expected a command"),
    }
}

pub(crate) fn usage_error(what: &str) -> ExitCode {
    err(&format!("multiedit: {what}\n\n{USAGE}\n"));
    ExitCode::from(2)
}
