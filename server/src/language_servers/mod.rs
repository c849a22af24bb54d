//! Language servers on demand: where no editor holds a plan's files (`multiedit mcp` writing on disk,
//! `multiedit apply`), multiedit starts the language server for each file's language itself, over
//! stdio, as an editor would, so that symbol edits, renames, `multiedit_symbols` and the diagnostics
//! delta mean the same thing there as through an editor. Only for a project the user allowed
//! (`consent.rs`): a language server can run the project's code.
//!
//! | module | holds |
//! |---|---|
//! | `context.rs` | what a front end hands over with a plan (its folders, its gate) |
//! | `table.rs` | the servers by file type, where each is found, the configuration files |
//! | `options.rs` | what each server is told, to limit what of a project it runs |
//! | `consent.rs` | the per-project opt-in, in the user's state folder |
//! | `rpc.rs` | JSON-RPC with `Content-Length` framing over the server's stdio |
//! | `started.rs` | one started server: initialize, documents, symbols, rename, diagnostics |
//! | `pool.rs` | the servers of a session or a run: reuse, idle shutdown, one restart after a crash |
//! | `ask.rs` | a plan's questions (`gather`) and a file's outline |
//! | `watch.rs` | the diagnostics before and after the write |
//! | `run.rs` | a plan on disk with all of it (`apply`) |
//! | `refuse.rs` | the refusals' words |
//! | `status.rs` | what would start for a project, for `doctor` and `setup` |

mod ask;
pub(crate) mod consent;
mod context;
pub(crate) mod options;
mod pool;
mod refuse;
mod rpc;
mod run;
mod started;
pub(crate) mod status;
pub(crate) mod table;
mod watch;

pub(crate) use ask::outline;
pub(crate) use context::{Context, Front};
pub(crate) use pool::Pool;
pub(crate) use run::{apply, needs_servers};
