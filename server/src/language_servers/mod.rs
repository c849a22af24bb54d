//! Language servers on demand: where no editor holds a plan's files (`multiedit mcp` writing on disk,
//! `multiedit apply`), multiedit starts the language server for each file's language itself, over
//! stdio, as an editor would, so that symbol edits, renames, `multiedit_symbols` and the diagnostics
//! delta mean the same thing there as through an editor. Only for a project the user allowed
//! (`consent.rs`): a language server can run the project's code.
//!
//! | module | holds |
//! |---|---|
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
pub(crate) mod options;
mod pool;
mod refuse;
mod rpc;
mod run;
mod started;
pub(crate) mod status;
pub(crate) mod table;
mod watch;

use std::path::PathBuf;
use std::sync::Arc;

pub(crate) use ask::outline;
pub(crate) use pool::Pool;
pub(crate) use run::{apply, needs_servers};

use crate::gate::{self, Allow, Gate, OptOut, Who};
use crate::paths::Folders;

/// Which front end asks: the words of its refusals differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Front {
    /// `multiedit mcp`: an agent.
    Mcp,
    /// `multiedit apply`: the user.
    Cli,
}

/// What a front end hands over with a plan.
pub(crate) struct Context {
    pub(crate) pool: Arc<Pool>,
    /// The front end's folders (`multiedit mcp`'s roots, else where it started; `multiedit apply`'s
    /// `--root`, else the current folder): the project a refusal suggests allowing, and the folders
    /// the diagnostics' paths are shown relative to.
    pub(crate) folders: Vec<PathBuf>,
    /// The folders plans may touch (`None`: anywhere).
    pub(crate) confine: Option<Arc<Folders>>,
    pub(crate) front: Front,
    pub(crate) allow: Allow,
}

impl Context {
    pub(crate) fn gate(&self) -> Gate<'_> {
        Gate {
            who: match self.front {
                Front::Mcp => Who::Agent,
                Front::Cli => Who::Person,
            },
            allow: self.allow,
            folders: self.confine.as_deref(),
        }
    }

    pub(crate) fn opt_out(&self) -> &'static OptOut {
        match self.front {
            Front::Mcp => &gate::MCP_OPT_OUT,
            Front::Cli => &gate::CLI_OPT_OUT,
        }
    }
}
