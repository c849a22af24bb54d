//! A patch that does not parse, as its parser found it.

use crate::engine::Refusal;

/// Born in a parser: the text the user reads and, when one line of the patch is to blame, that line
/// (1-based), so a caller can point at it without reading the text. The `InputValidationError: `
/// prefix and the refusal's kind are added in one place, `From<ParseError> for Refusal`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: Option<usize>,
    pub message: String,
}

impl ParseError {
    /// A refusal of the whole text (no block, no hunk, a missing end marker).
    pub fn new(message: impl Into<String>) -> Self {
        ParseError {
            line: None,
            message: message.into(),
        }
    }
    /// A refusal of patch line `line` (1-based), which the message names.
    pub fn at(line: usize, message: impl Into<String>) -> Self {
        ParseError {
            line: Some(line),
            message: message.into(),
        }
    }
}

impl From<ParseError> for Refusal {
    fn from(e: ParseError) -> Refusal {
        Refusal::input(e.message)
    }
}

#[cfg(test)]
impl ParseError {
    /// The line the refusal blames, once checked that its text names the same line.
    pub fn blamed_line(self) -> Option<usize> {
        if let Some(n) = self.line {
            assert!(
                self.message.contains(&format!("line {n}")),
                "line {n} is not the line named in: {}",
                self.message
            );
        }
        self.line
    }
}
