//! The journal that makes a multi-file commit whole under a crash: the record a commit writes in the
//! private folder (`record.rs`) and renames at its commit point (`writer.rs`), the recovery a later run
//! does when it meets one (`recovery.rs`), and the tests' crash hook (`crash.rs`). The protocol, step
//! by step, and the tests that hold it: docs/guarantees.md, "The journal".

mod crash;
mod record;
mod recovery;
mod writer;

pub(in crate::disk) use crash::CrashAt;
pub(in crate::disk) use record::{digest, Entry};
pub(crate) use recovery::{recover, recover_into, Recovered};
pub(in crate::disk) use writer::{Journal, Prepared};
