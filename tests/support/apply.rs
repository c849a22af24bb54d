//! `multiedit` as a user runs it: the built binary, and `multiedit apply` with a plan or a patch on
//! standard input.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_multiedit")
}

/// Runs `multiedit apply ARGS -` in `cwd` with `input` on standard input.
pub fn apply_text(cwd: &Path, args: &[&str], input: &str) -> Output {
    let mut child = Command::new(bin())
        .current_dir(cwd)
        .arg("apply")
        .args(args)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}
