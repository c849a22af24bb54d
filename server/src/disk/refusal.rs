//! An I/O error as the refusal a caller reads: what could not be done to which file, in the OS's words.

use std::path::Path;

use super::cap::TooBig;
use crate::refusal::{Kind, Refusal};

pub(super) fn io_refusal(path: &Path, what: &str, e: &std::io::Error) -> Refusal {
    if let Some(big) = TooBig::of(e) {
        return big.refusal(path);
    }
    Refusal::new(
        Kind::Io,
        format!(
            "Cannot {what} {}: {}. Nothing was changed.",
            path.display(),
            os_error(e)
        ),
    )
}

/// The error as the OS put it. tempfile appends ` at path "<temporary file>"`, a name the caller never
/// sees and that is gone by the time they read the message.
pub(super) fn os_error(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at path \"") {
        Some(cut) if e.raw_os_error().is_none() && text.ends_with('"') => text[..cut].to_string(),
        _ => text,
    }
}
