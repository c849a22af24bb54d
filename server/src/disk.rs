//! Reading files for a plan and writing the results: each file replaced atomically (temporary file in
//! the same folder, fsync, rename), all files of a plan or none, also when the run is killed half-way
//! (`journal`).
//!
//! Reading: `read` (a plan's files: resolved once, `resolve`, then read in folders opened without
//! following a link, `opened`), `cap` (the most a file may be). Writing: `commit` (the atomic commit
//! of staged files: `stage`, then `changes` after the journal's commit point), with `folders` (the
//! folders it removes and makes), `temp`, `permissions`, `sync` and `parallel`; `plan` (a plan applied
//! on disk), `atomic` (multiedit's own small files), `private` (its private folders).

pub(crate) mod atomic;
mod cap;
mod changes;
mod commit;
pub(crate) mod folders;
pub(crate) mod journal;
mod opened;
mod parallel;
mod permissions;
pub(crate) mod plan;
pub(crate) mod private;
mod read;
mod refusal;
mod stage;
mod sync;
mod temp;

pub(crate) use cap::{read_capped, read_file_capped, read_text_capped, TooBig};
pub use commit::commit;
pub(crate) use journal::{recover, Recovered};
pub(crate) use opened::Opened;
pub(crate) use private::refuse_inside as refuse_private;
pub(crate) use read::{read, read_at, read_in, resolve};
pub use stage::Write1;
