//! The most multiedit reads of one file, and the reads that hold to it: a file past the cap is
//! refused from its metadata, before anything is allocated (`TooBig`).

use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use crate::engine;
use crate::refusal::Refusal;

/// The most multiedit reads of one file: the most its text may be (`engine::MAX_TEXT`, 256 MiB), since
/// the engine holds the text, its replacements and its result in memory. A larger file is refused from
/// its metadata, before anything is allocated: a sparse file of a terabyte costs no disk, and reading
/// it aborted the process.
pub(crate) const MAX_READ: u64 = crate::engine::MAX_TEXT as u64;

/// A file past `MAX_READ`: its size when its metadata said so, or that it grew past the cap while it
/// was read. Carried inside an `io::Error` (`read::read_in`, `read_capped`), so every reader refuses it with
/// the one text `refusal` builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooBig {
    /// The size the metadata gave; `None` when the file grew past the cap after it was looked at.
    len: Option<u64>,
}

impl TooBig {
    /// The `TooBig` an error carries, if it is one.
    pub(crate) fn of(e: &std::io::Error) -> Option<TooBig> {
        e.get_ref()?.downcast_ref::<TooBig>().copied()
    }

    fn error(len: Option<u64>) -> std::io::Error {
        std::io::Error::other(TooBig { len })
    }

    /// The refusal of the file `path` (kind `too_large`, as the engine's refusal of a text that would
    /// grow past the same cap: it is the file, not the disk, that is wrong, and running again cannot help).
    pub(crate) fn refusal(self, path: &Path) -> Refusal {
        Refusal::of(
            engine::Kind::TooLarge,
            format!(
                "Cannot read {}: {self}. Nothing was changed.",
                path.display()
            ),
        )
    }
}

impl std::fmt::Display for TooBig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.len {
            Some(len) => write!(
                f,
                "it is {} ({len} bytes), more than the 256 MiB multiedit reads",
                human_size(len)
            ),
            None => f.write_str("it grew past the 256 MiB multiedit reads while it was read"),
        }
    }
}

impl std::error::Error for TooBig {}

/// `len` bytes in binary units with one decimal: `1.0 TiB`, `300.0 MiB`.
fn human_size(len: u64) -> String {
    const UNITS: [&str; 6] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = len as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{len} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Reads all of `file`, refusing (`TooBig`) one whose metadata says it is longer than `MAX_READ`
/// before anything is allocated, and reading at most one byte past the cap, so that a file that grows
/// between the look and the read is refused too.
pub(crate) fn read_capped(file: impl std::io::Read, len: u64) -> std::io::Result<Vec<u8>> {
    read_up_to(file, len, MAX_READ)
}

fn read_up_to(file: impl std::io::Read, len: u64, cap: u64) -> std::io::Result<Vec<u8>> {
    if len > cap {
        return Err(TooBig::error(Some(len)));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    std::io::Read::read_to_end(&mut std::io::Read::take(file, cap + 1), &mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(TooBig::error(None));
    }
    Ok(bytes)
}

/// `std::fs::read` with the cap: the file at `path` (links followed), refused past `MAX_READ`. For
/// the files multiedit reads besides a plan's (agents' configuration, its own records).
pub(crate) fn read_file_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = fs::File::open(path)?;
    let len = file.metadata()?.len();
    read_capped(file, len)
}

/// `std::fs::read_to_string` with the cap (`read_file_capped`).
pub(crate) fn read_text_capped(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_file_capped(path)?).map_err(|_| {
        std::io::Error::new(ErrorKind::InvalidData, "stream did not contain valid UTF-8")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::disk::refusal::io_refusal;

    #[test]
    fn a_file_past_the_cap_is_refused_from_its_size_or_when_it_grows_while_read() {
        let refusal = |e: std::io::Error| TooBig::of(&e).unwrap().refusal(Path::new("/p/big"));
        let r = refusal(read_capped(std::io::empty(), 1 << 40).unwrap_err());
        assert_eq!(r.kind, crate::engine::Kind::TooLarge);
        assert_eq!(
            r.message,
            "Cannot read /p/big: it is 1.0 TiB (1099511627776 bytes), more than the 256 MiB multiedit reads. Nothing was changed."
        );
        // Said 4 bytes, then gave more than the cap: refused once one byte past it is read.
        let grew = read_up_to(std::io::repeat(b'x'), 4, 10).unwrap_err();
        assert_eq!(
            refusal(grew).message,
            "Cannot read /p/big: it grew past the 256 MiB multiedit reads while it was read. Nothing was changed."
        );
        assert_eq!(read_up_to(&b"0123456789"[..], 4, 10).unwrap().len(), 10);
        assert_eq!(io_refusal(Path::new("/p/big"), "read", &TooBig::error(Some(300 << 20))).message,
            "Cannot read /p/big: it is 300.0 MiB (314572800 bytes), more than the 256 MiB multiedit reads. Nothing was changed.");
        assert_eq!(human_size(1023), "1023 bytes");
        assert_eq!(human_size(1536), "1.5 KiB");
    }
}
