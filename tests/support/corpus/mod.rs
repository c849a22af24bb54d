//! The corpus test's material: this repository's history (`history`), converted images (`images`), the
//! edits derived from them (`derive`) and the mistakes assistants make in them (`sloppy`).

pub mod derive;
pub mod history;
pub mod images;
pub mod sloppy;
