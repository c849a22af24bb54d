//! The delta in the words a model reads: new errors first, at their lines after the edit, then what
//! was resolved, then what could not be compared and why.

use super::delta::{shown, Delta, Item};
use super::options::{Options, Report};

/// Files named in one sentence of the text; the rest are counted.
const NAMES_SHOWN: usize = 10;

impl Delta {
    /// The compact text a model reads.
    pub(crate) fn text(&self, options: Options, folders: &[std::path::PathBuf]) -> String {
        let warnings = options.report == Report::Warnings;
        let what = if warnings {
            "errors or warnings"
        } else {
            "errors"
        };
        let mut lines = Vec::new();
        let [introduced, resolved, present] = self.shown(options.max);
        let list = |items: &[Item], n: usize| -> String {
            let texts: Vec<String> = items.iter().take(n).map(|i| i.to_text(folders)).collect();
            if texts.len() == 1 {
                format!(" {}", texts[0])
            } else {
                texts.iter().map(|t| format!("\n  {t}")).collect()
            }
        };
        // A many-file plan's lists are cut: a model needs the files with errors, not every quiet one.
        let names = |files: &[String]| {
            let mut out = files
                .iter()
                .take(NAMES_SHOWN)
                .map(|p| shown(p, folders))
                .collect::<Vec<_>>()
                .join(", ");
            if files.len() > NAMES_SHOWN {
                out.push_str(&format!(" and {} more", files.len() - NAMES_SHOWN));
            }
            out
        };
        if !self.introduced.is_empty() {
            let label = if warnings {
                "New errors and warnings"
            } else {
                "New errors"
            };
            lines.push(format!("{label}:{}", list(&self.introduced, introduced)));
        } else if self.checked > 0 {
            lines.push(format!("No new {what}."));
        }
        if resolved > 0 {
            lines.push(format!("Resolved:{}", list(&self.resolved, resolved)));
        }
        if present > 0 {
            let with: Vec<String> = self
                .fresh
                .iter()
                .filter(|f| self.present.iter().any(|i| &i.file_path == *f))
                .cloned()
                .collect();
            lines.push(format!(
                "Now in {} (not open before the edit, so not compared):{}",
                names(&with),
                list(&self.present, present)
            ));
        }
        let clean: Vec<String> = self
            .fresh
            .iter()
            .filter(|f| !self.present.iter().any(|i| &i.file_path == *f))
            .cloned()
            .collect();
        if !clean.is_empty() {
            lines.push(format!("No {what} in {} after the edit.", names(&clean)));
        }
        let omitted = self.omitted(options.max);
        if omitted > 0 {
            lines.push(format!(
                "... and {omitted} more (structured result: diagnostics)."
            ));
        }
        if !self.pending.is_empty() {
            lines.push(format!(
                "Diagnostics still pending after {} ms (not checked): {}.",
                options.settle.as_millis(),
                names(&self.pending)
            ));
        }
        if !self.quiet.is_empty() {
            lines.push(format!(
                "No diagnostics update for {} after the edit: taken as unchanged.",
                names(&self.quiet)
            ));
        }
        if !self.differs.is_empty() {
            let why = if self.on_disk {
                "the file changed on disk after its language server was told of it, before the write"
            } else {
                "the text changed after the editor applied the plan (typed since)"
            };
            lines.push(format!(
                "Diagnostics not compared for {}: {why}.",
                names(&self.differs)
            ));
        }
        if !self.unchecked.is_empty() {
            lines.push(format!(
                "No diagnostics for {}: no language server checks it.",
                names(&self.unchecked)
            ));
        }
        lines.join("\n")
    }
}
