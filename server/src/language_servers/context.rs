//! What a front end (`multiedit mcp`, `multiedit apply`) hands over with a plan: the servers it keeps,
//! its folders, and the gate its requests pass.

use std::path::PathBuf;
use std::sync::Arc;

use super::pool::Pool;
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
