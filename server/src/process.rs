//! What every front end's process needs and none owns: output that cannot panic, a panic turned into
//! an error, and the async runtime the servers run on. A leaf: it imports no other module of the crate,
//! so `cli`, `lsp` and `mcp` use it without importing one another.

use std::io::Write;

/// Writes to standard output. A reader that went away (`multiedit apply ... | head`) is not an error
/// worth a panic (`print!` would panic): the work is done either way, and the exit code still says how it went.
pub(crate) fn out(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Writes to standard error, with the same tolerance.
pub(crate) fn err(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Runs `f`, turning a panic into an error: a bug met by one request must cost that request, not
/// the session (a panic inside a handler would unwind through the whole connection). Locks are
/// read through poisoning, so the state stays usable.
pub(crate) fn catch_panic<T>(what: &str, f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|payload| {
        let detail = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        format!("multiedit hit an internal error in {what} ({detail}); nothing was changed. Please report it.")
    })
}

/// Runs `serve` to its end on a single-threaded runtime, as `multiedit lsp` and `multiedit mcp` do;
/// `None` when the runtime cannot start (said on stderr, as `name: ...`). The stdin reader may still
/// be parked in a blocking read that only the client's end of the pipe could wake: after the end,
/// nobody needs it, so the runtime is shut down without waiting for it.
pub(crate) fn block_on<F: std::future::Future>(
    name: &str,
    serve: impl FnOnce() -> F,
) -> Option<F::Output> {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            err(&format!("{name}: cannot start the async runtime: {e}\n"));
            return None;
        }
    };
    let output = runtime.block_on(serve());
    runtime.shutdown_background();
    Some(output)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_panic_becomes_an_error() {
        assert_eq!(super::catch_panic("x", || 5), Ok(5));
        let e = super::catch_panic("multiedit.apply", || -> i32 { panic!("boom") }).unwrap_err();
        assert!(e.contains("multiedit.apply") && e.contains("boom"), "{e}");
    }
}
