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

/// Standard input read on a thread of its own, handed to the runtime as it arrives (`Input`), so that
/// the end of input is seen even while the runtime's one thread is busy with a long synchronous step
/// (a plan being prepared): the client has gone, and nobody will read the answer. Once input has
/// ended, the process has `grace` to finish as usual (the runtime then sees the end and the server
/// stops); past it, `gone` runs on this thread (it exits the process). Also when the client has hung
/// up while what it sent last waits unread behind a runtime that took nothing for `grace`. `None`
/// when no thread can be started.
pub(crate) fn stdin_on_thread(
    grace: std::time::Duration,
    gone: impl FnOnce() + Send + 'static,
) -> Option<Input> {
    let (tx, chunks) = tokio::sync::mpsc::channel::<Vec<u8>>(INPUT_CHUNKS);
    let taken = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let input = Input {
        chunks,
        chunk: Vec::new(),
        at: 0,
        taken: taken.clone(),
    };
    std::thread::Builder::new()
        .name("stdin".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            loop {
                let mut buf = vec![0u8; INPUT_CHUNK];
                let n = match std::io::Read::read(&mut stdin, &mut buf) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                buf.truncate(n);
                match hand_over(&tx, buf, &taken, grace) {
                    HandOver::Taken => {}
                    HandOver::Closed => return,
                    HandOver::Stalled => break,
                }
            }
            drop(tx);
            std::thread::sleep(grace);
            gone();
        })
        .ok()?;
    Some(input)
}

/// The chunks read at a time, and how many may wait for the runtime.
const INPUT_CHUNK: usize = 64 * 1024;
const INPUT_CHUNKS: usize = 64;

enum HandOver {
    Taken,
    /// The runtime dropped its end: the server is done with its input.
    Closed,
    /// The client hung up and the runtime took nothing for the grace period.
    Stalled,
}

/// Puts `chunk` in line for the runtime, waiting while the line is full.
fn hand_over(
    tx: &tokio::sync::mpsc::Sender<Vec<u8>>,
    mut chunk: Vec<u8>,
    taken: &std::sync::atomic::AtomicU64,
    grace: std::time::Duration,
) -> HandOver {
    use tokio::sync::mpsc::error::TrySendError;
    let mut waiting: Option<(std::time::Instant, u64)> = None;
    loop {
        match tx.try_send(chunk) {
            Ok(()) => return HandOver::Taken,
            Err(TrySendError::Closed(_)) => return HandOver::Closed,
            Err(TrySendError::Full(back)) => chunk = back,
        }
        let now = taken.load(std::sync::atomic::Ordering::Relaxed);
        match waiting {
            Some((since, n)) if n == now => {
                if since.elapsed() >= grace && stdin_hung_up() {
                    return HandOver::Stalled;
                }
            }
            _ => waiting = Some((std::time::Instant::now(), now)),
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Whether the writing end of standard input was closed (data may still wait in the pipe).
#[cfg(unix)]
fn stdin_hung_up() -> bool {
    let mut fd = libc::pollfd {
        fd: 0,
        events: 0,
        revents: 0,
    };
    // SAFETY: one valid pollfd, and a timeout of 0: poll only reports the state of fd 0.
    let n = unsafe { libc::poll(&mut fd, 1, 0) };
    n > 0 && fd.revents & (libc::POLLHUP | libc::POLLERR) != 0
}

#[cfg(not(unix))]
fn stdin_hung_up() -> bool {
    false
}

/// The runtime's side of `stdin_on_thread`.
pub(crate) struct Input {
    chunks: tokio::sync::mpsc::Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
    /// Chunks taken so far, for the reader's check that the runtime still takes its input.
    taken: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl tokio::io::AsyncRead for Input {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = &mut *self;
        while this.at == this.chunk.len() {
            match std::task::ready!(this.chunks.poll_recv(cx)) {
                Some(chunk) => {
                    this.chunk = chunk;
                    this.at = 0;
                    this.taken
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
                // The end of input.
                None => return std::task::Poll::Ready(Ok(())),
            }
        }
        let n = buf.remaining().min(this.chunk.len() - this.at);
        buf.put_slice(&this.chunk[this.at..this.at + n]);
        this.at += n;
        std::task::Poll::Ready(Ok(()))
    }
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
