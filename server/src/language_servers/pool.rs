//! The servers a front end has started: `multiedit mcp` keeps each for its session (one per program
//! and project folder, shut down after `IDLE` unused), `multiedit apply` for its one run. A server
//! found dead (it crashed) is started again, once per question: if the new one fails the same way,
//! the question is refused with what the server said.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::started::{Failure, Started};
use super::table::Program;

/// How long a session keeps a server nobody asked anything.
pub(crate) const IDLE: Duration = Duration::from_secs(10 * 60);
/// How long a server is given to shut down before it is killed.
const SHUTDOWN: Duration = Duration::from_secs(2);
/// How long a server that could not start is not tried again: each plan of a session would otherwise
/// wait for it (up to its start bound) to fail the same way.
const RETRY: Duration = Duration::from_secs(30);

type Key = (PathBuf, Vec<String>, PathBuf);

pub(crate) struct Pool {
    servers: tokio::sync::Mutex<HashMap<Key, Arc<Started>>>,
    /// The servers that could not start, when, and why.
    failed: std::sync::Mutex<HashMap<Key, (Instant, Failure)>>,
    /// Kept for a session: the idle servers' reaper starts with the first server.
    session: bool,
    reaper: std::sync::Once,
    /// Bumped whenever any server publishes diagnostics, so that one wait serves them all.
    pub(crate) published: watch::Sender<u64>,
}

impl Pool {
    fn new(session: bool) -> Arc<Pool> {
        Arc::new(Pool {
            servers: tokio::sync::Mutex::new(HashMap::new()),
            failed: std::sync::Mutex::new(HashMap::new()),
            session,
            reaper: std::sync::Once::new(),
            published: watch::channel(0).0,
        })
    }

    /// A pool for one run (`multiedit apply`): `shutdown` ends it.
    pub(crate) fn for_run() -> Arc<Pool> {
        Pool::new(false)
    }

    /// A pool for a session (`multiedit mcp`): servers idle for `IDLE` are shut down.
    pub(crate) fn for_session() -> Arc<Pool> {
        Pool::new(true)
    }

    /// Starts the task that shuts idle servers down (once, from inside the runtime).
    fn reap_idle(self: &Arc<Self>) {
        let weak: Weak<Pool> = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(30)).await;
                let Some(pool) = weak.upgrade() else { return };
                pool.reap(IDLE).await;
            }
        });
    }

    /// Shuts down the servers unused for `idle`, and forgets those that died.
    pub(crate) async fn reap(&self, idle: Duration) {
        let mut gone = Vec::new();
        {
            let mut servers = self.servers.lock().await;
            servers.retain(|_, s| {
                let used = *s.last_used.lock().unwrap_or_else(|p| p.into_inner());
                let keep = s.is_alive() && used.elapsed() < idle;
                if !keep {
                    gone.push(s.clone());
                }
                keep
            });
        }
        for s in gone {
            s.shutdown(SHUTDOWN).await;
        }
    }

    /// Shuts every server down.
    pub(crate) async fn shutdown(&self) {
        let all: Vec<Arc<Started>> = self.servers.lock().await.drain().map(|(_, s)| s).collect();
        for s in all {
            s.shutdown(SHUTDOWN).await;
        }
    }

    /// The running server for `program` in `root`, started if there is none (or it died).
    async fn server(
        self: &Arc<Self>,
        program: &Program,
        root: &Path,
    ) -> Result<Arc<Started>, Failure> {
        if self.session {
            self.reaper.call_once(|| self.reap_idle());
        }
        let key = (
            program.path.clone(),
            program.args.clone(),
            root.to_path_buf(),
        );
        let mut servers = self.servers.lock().await;
        if let Some(s) = servers.get(&key) {
            if s.is_alive() {
                return Ok(s.clone());
            }
            s.kill();
            servers.remove(&key);
        }
        if let Some(why) = self.failed_lately(&key) {
            return Err(why);
        }
        match Started::start(program, root, self.published.clone()).await {
            Ok(started) => {
                let started = Arc::new(started);
                servers.insert(key, started.clone());
                Ok(started)
            }
            Err(why) => {
                self.failed
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(key, (Instant::now(), why.clone()));
                Err(why)
            }
        }
    }

    /// Why the server of `key` could not start, if it failed within `RETRY`.
    fn failed_lately(&self, key: &Key) -> Option<Failure> {
        let mut failed = self.failed.lock().unwrap_or_else(|p| p.into_inner());
        match failed.get(key) {
            Some((at, why)) if at.elapsed() < RETRY => Some(why.clone()),
            _ => {
                failed.remove(key);
                None
            }
        }
    }

    /// Runs `ask` on the server for `program` in `root`; a server that exits meanwhile is started again
    /// and asked once more, and a second exit is the answer.
    pub(crate) async fn ask<T, F, Fut>(
        self: &Arc<Self>,
        program: &Program,
        root: &Path,
        ask: F,
    ) -> Result<(T, Arc<Started>), Failure>
    where
        F: Fn(Arc<Started>) -> Fut,
        Fut: Future<Output = Result<T, Failure>>,
    {
        let first = self.server(program, root).await?;
        match ask(first.clone()).await {
            Err(Failure::Exited { .. }) => {
                first.kill();
                let again = self.server(program, root).await?;
                match ask(again.clone()).await {
                    Ok(v) => Ok((v, again)),
                    Err(Failure::Exited { during, said, .. }) => Err(Failure::Exited {
                        during,
                        said,
                        again: true,
                    }),
                    Err(e) => Err(e),
                }
            }
            Ok(v) => Ok((v, first)),
            Err(e) => Err(e),
        }
    }
}

/// When a server was last asked, for `IDLE`.
pub(crate) fn touch(s: &Started) {
    *s.last_used.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
}

// Linux's /proc says whether the server's process is gone.
#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::language_servers::table::SERVERS;

    /// The fake server of the integration tests, which answers as a well-behaved one does.
    fn fake() -> Program {
        Program {
            spec: &SERVERS[4],
            path: "python3".into(),
            args: vec![concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../tests/language-servers/fake_server.py"
            )
            .into()],
            from: "a test".into(),
            start: Duration::from_secs(10),
            answer: Duration::from_secs(10),
        }
    }

    fn gone(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
            s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z'))
        })
    }

    #[tokio::test]
    async fn a_session_keeps_a_server_until_it_is_idle_and_a_failed_start_is_not_tried_at_once_again(
    ) {
        if std::process::Command::new("python3")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("SKIPPED: no python3 for the fake server");
            return;
        }
        let pool = Pool::for_session();
        let root = std::env::temp_dir();
        let program = fake();
        let ((), first) = pool
            .ask(&program, &root, |_| async { Ok(()) })
            .await
            .unwrap();
        let ((), again) = pool
            .ask(&program, &root, |_| async { Ok(()) })
            .await
            .unwrap();
        assert!(Arc::ptr_eq(&first, &again), "kept between questions");
        let pid = first.pid.expect("a process");
        pool.reap(IDLE).await;
        assert!(first.is_alive() && !gone(pid), "not idle yet");
        pool.reap(Duration::ZERO).await;
        let until = Instant::now() + Duration::from_secs(5);
        while !gone(pid) && Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(gone(pid), "shut down once idle");
        // A program that cannot start is refused at once for a while, not started again.
        let missing = Program {
            path: "/nonexistent/multiedit-test-server".into(),
            ..fake()
        };
        let first = pool.ask(&missing, &root, |_| async { Ok(()) }).await;
        assert!(matches!(first, Err(Failure::Spawn(_))), "{:?}", first.err());
        let t = Instant::now();
        let second = pool.ask(&missing, &root, |_| async { Ok(()) }).await;
        assert_eq!(second.err(), first.err());
        assert!(t.elapsed() < Duration::from_millis(100));
    }
}
