//! The test hook that kills (or stops) a commit at a chosen step, for the crash tests.

/// Test hook, read only by `disk::commit`: `MULTIEDIT_TEST_CRASH_AT=<step>:<n>` kills the process
/// (SIGKILL, as a crash would: no destructor runs) right after the n-th time the commit passes
/// `<step>`; `<step>:<n>:stop` stops it (SIGSTOP) instead, so a test can look at a live writer. The
/// steps, in order: `record` (the first record written to its temporary file, not yet renamed into
/// place), `begin` (the first record written), `staged` (a file of the plan staged: its new
/// text written to its temporary file, or a deletion noted), `synced` (all of them fsynced), `commit`
/// (the committed record renamed: the commit point), `rename` (a target deleted, that is moved
/// aside, the deletions first), `rmdir` (a folder removed), `mkdir` (a folder made), `rename` again (a target replaced, the
/// count going on), `done` (the record removed). A single-file plan that makes or removes no folder
/// does not pass `commit`.
pub(in crate::disk) struct CrashAt(Option<(String, usize, bool)>);

impl CrashAt {
    pub(crate) fn from_env() -> CrashAt {
        let spec = std::env::var("MULTIEDIT_TEST_CRASH_AT").ok();
        CrashAt(spec.and_then(|s| {
            let mut parts = s.split(':');
            let step = parts.next()?.to_string();
            let n = parts.next()?.parse().ok()?;
            Some((step, n, parts.next() == Some("stop")))
        }))
    }

    pub(crate) fn at(&self, step: &str, n: usize) {
        if let Some((s, k, stop)) = &self.0 {
            if s == step && *k == n {
                #[cfg(unix)]
                // SAFETY: kill(2) on our own pid has no memory-safety preconditions.
                unsafe {
                    libc::kill(
                        libc::getpid(),
                        if *stop { libc::SIGSTOP } else { libc::SIGKILL },
                    );
                }
                // No signals elsewhere: an abort ends the process as abruptly (there is no stop).
                #[cfg(not(unix))]
                {
                    let _ = stop;
                    std::process::abort();
                }
            }
        }
    }
}
