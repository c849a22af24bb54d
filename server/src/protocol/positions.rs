//! Positions and URIs between LSP's types and the engine's byte offsets: what the editor's server
//! (`lsp/`) and multiedit's own language-server client (`language_servers/`) both convert, and the
//! symbols and diagnostics code they share. Only protocol knowledge: no editor, no I/O.

use std::path::Path;
use std::str::FromStr;

use ropey::Rope;
use tower_lsp_server::ls_types::{Position, Range, TextEdit, Uri};

use crate::engine::Replacement;
use crate::refusal::{Kind, Refusal};

/// How the `character` of a position counts: UTF-16 code units (the LSP default and all VS Code
/// speaks) or bytes (offered by Neovim and Helix).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    #[default]
    Utf16,
    Utf8,
}

impl Encoding {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Encoding::Utf16 => "utf-16",
            Encoding::Utf8 => "utf-8",
        }
    }
}

/// Char index of an LSP position. Out-of-range positions are clamped as the specification says (a
/// column past the line end means the line end, a line past the end means the end of the text), and a
/// column inside a surrogate pair or a multi-byte character means that character: a bad position from
/// a client must never panic the server.
///
/// The column is resolved inside the line's own slice: two descents of the whole rope per position,
/// so a keystroke costs nearly the same on 10 MB as on 10 KB.
pub(crate) fn position_to_char(rope: &Rope, pos: Position, enc: Encoding) -> usize {
    let line = pos.line as usize;
    if line >= rope.len_lines() {
        return rope.len_chars();
    }
    let start = rope.line_to_char(line);
    let content = line_content(rope, line);
    let col = pos.character as usize;
    start
        + match enc {
            Encoding::Utf16 => content.utf16_cu_to_char(col.min(content.len_utf16_cu())),
            Encoding::Utf8 => content.byte_to_char(col.min(content.len_bytes())),
        }
}

/// Line `line` (which must exist) without its line break.
pub(crate) fn line_content(rope: &Rope, line: usize) -> ropey::RopeSlice<'_> {
    let slice = rope.line(line);
    let mut len = slice.len_chars();
    if len > 0 && slice.char(len - 1) == '\n' {
        len -= 1;
    }
    if len > 0 && slice.char(len - 1) == '\r' {
        len -= 1;
    }
    slice.slice(..len)
}

/// The LSP position of a byte offset (clamped to the text, and to the start of the character it falls in).
pub fn byte_to_position(rope: &Rope, byte: usize, enc: Encoding) -> Position {
    let byte = byte.min(rope.len_bytes());
    let ch = rope.byte_to_char(byte);
    let line = rope.char_to_line(ch);
    let line_start = rope.line_to_char(line);
    let col = match enc {
        Encoding::Utf16 => rope.char_to_utf16_cu(ch) - rope.char_to_utf16_cu(line_start),
        Encoding::Utf8 => rope.char_to_byte(ch) - rope.char_to_byte(line_start),
    };
    Position::new(to_u32(line), to_u32(col))
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Char range of an LSP range; a range whose start lies after its end is read as empty at its end,
/// as VS Code does.
pub(crate) fn range_to_chars(rope: &Rope, range: Range, enc: Encoding) -> std::ops::Range<usize> {
    let end = position_to_char(rope, range.end, enc);
    let start = position_to_char(rope, range.start, enc).min(end);
    start..end
}

/// The engine's replacements (byte offsets into the text the rope holds) as LSP text edits.
pub(crate) fn text_edits(rope: &Rope, reps: &[Replacement], enc: Encoding) -> Vec<TextEdit> {
    reps.iter()
        .map(|r| {
            TextEdit::new(
                Range::new(
                    byte_to_position(rope, r.start, enc),
                    byte_to_position(rope, r.end, enc),
                ),
                r.text.clone(),
            )
        })
        .collect()
}

/// The key under which a document or a plan's file is known, so that the same file matches however
/// a client spells it: `file:///C%3A/x`, `file:///c:/x` and `/c:/x` are one file.
pub(crate) fn path_key(path: &Path) -> String {
    let s = path.to_string_lossy();
    let s = s.replace('\\', "/");
    let b = s.as_bytes();
    // A Windows drive, with or without the slash a file URI puts before it: the letter's case varies.
    let drive_at = if b.len() >= 3 && b[0] == b'/' && b[2] == b':' {
        Some(1)
    } else if b.len() >= 2 && b[1] == b':' {
        Some(0)
    } else {
        None
    };
    match drive_at {
        Some(i) if b[i].is_ascii_alphabetic() => {
            format!("/{}{}", (b[i] as char).to_ascii_lowercase(), &s[i + 1..])
        }
        _ => s,
    }
}

/// The key of a document URI: file URIs by their path, anything else (`untitled:`) by its text.
pub(crate) fn uri_key(uri: &str) -> String {
    if uri.starts_with("file://") {
        if let Ok(p) = crate::paths::to_path(uri) {
            return path_key(&p);
        }
    }
    uri.to_string()
}

pub(crate) fn parse_uri(uri: &str) -> Result<Uri, Refusal> {
    Uri::from_str(uri).map_err(|e| {
        Refusal::new(Kind::Io, format!("Cannot make a URI of {uri}: {e}")).in_file(uri)
    })
}

/// A file URI for a path on disk, for files the editor has not opened. Built from the decoded path
/// even when the plan gave a URI, so a plan's loosely escaped URI still yields a valid one.
pub(crate) fn file_uri(path: &Path, file_path: &str) -> Result<Uri, Refusal> {
    Uri::from_file_path(path).ok_or_else(|| {
        Refusal::new(
            Kind::Io,
            format!("Cannot make a file URI of {}", path.display()),
        )
        .in_file(file_path)
    })
}
