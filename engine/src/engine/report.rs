//! The success texts, in the words of seed 000: `Applied 3 edits to /path:\n1. Replaced "a" with "b"`.

use super::apply::{EditReport, FileChange, Outcome};
use super::plan::FileOp;

/// Strings longer than this are cut in the report: a 2,000-line new_string should not flood the caller.
const SHOWN_CHARS: usize = 200;

fn shown(s: &str) -> String {
    match s.char_indices().nth(SHOWN_CHARS) {
        None => s.to_string(),
        Some((cut, _)) => format!(
            "{}… ({} more characters)",
            &s[..cut],
            s[cut..].chars().count()
        ),
    }
}

fn edit_line(e: &EditReport) -> String {
    let n = e.edit_index + 1;
    if e.created {
        return format!("{n}. Created the file");
    }
    if let Some(summary) = &e.summary {
        return if e.numbered {
            format!("{n}. {summary}")
        } else {
            format!("- {summary}")
        };
    }
    if let Some(label) = &e.label {
        let verb = if e.replacements == 0 {
            "Checked"
        } else {
            "Applied"
        };
        let mut line = format!("{n}. {verb} {label}");
        if e.offset != 0 {
            let lines = if e.offset.abs() == 1 { "line" } else { "lines" };
            line.push_str(&format!(
                ", found at line {} (offset {:+} {lines})",
                e.line.unwrap_or(0),
                e.offset
            ));
        }
        if let Some(t) = e.tier {
            line.push_str(&format!(" (matched {})", t.describe()));
        }
        return line;
    }
    let mut line = format!(
        "{n}. Replaced \"{}\" with \"{}\"",
        shown(&e.old_string),
        shown(&e.new_string)
    );
    if let Some(t) = e.tier {
        line.push_str(&format!(" (matched {})", t.describe()));
    }
    line
}

impl FileChange {
    pub fn message(&self) -> String {
        let applied = self.applied.len();
        let plural = if self.edit_count == 1 {
            "edit"
        } else {
            "edits"
        };
        let what = match &self.op {
            FileOp::Edit | FileOp::Create => None,
            FileOp::Delete => Some(format!("Deleted {}", self.file_path)),
            FileOp::MoveTo(to) => Some(format!("Moved {} to {to}", self.file_path)),
        };
        let what = match (what, self.mode) {
            (what, None) => what,
            (None, Some(m)) => Some(format!("Set the mode of {} to {m:o}", self.file_path)),
            (Some(what), Some(m)) => Some(format!("{what}, with mode {m:o}")),
        };
        if let (Some(what), 0) = (&what, self.edit_count) {
            return format!("{what}.");
        }
        let mut out = if self.failed.is_empty() {
            format!(
                "Applied {applied} {} to {}:",
                if applied == 1 { "edit" } else { "edits" },
                self.file_path
            )
        } else {
            format!(
                "Applied {applied} of {} {plural} to {}:",
                self.edit_count, self.file_path
            )
        };
        for e in &self.applied {
            out.push('\n');
            out.push_str(&edit_line(e));
        }
        if let Some(b) = self.line_breaks {
            out.push_str(&format!("\nLine breaks written {}.", b.describe()));
        }
        if self.replacements.is_empty()
            && !self.created
            && !self.applied.is_empty()
            && self.op == FileOp::Edit
            && self.mode.is_none()
        {
            out.push_str("\nTogether they leave the file as it was: nothing was written to it.");
        }
        if let Some(what) = what {
            out.push_str(&format!("\n{what}."));
        }
        if !self.failed.is_empty() {
            out.push_str("\nFailed edits:");
            for r in &self.failed {
                out.push_str(&format!(
                    "\n{}. {}",
                    r.edit_index.map_or(0, |i| i + 1),
                    r.full_text()
                ));
            }
        }
        out
    }
}

impl Outcome {
    pub fn message(&self) -> String {
        self.files
            .iter()
            .map(FileChange::message)
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}
