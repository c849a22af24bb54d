//! The delta in the words a model reads: new errors first, at their lines after the edit, then what
//! was resolved, then what could not be compared and why.

use super::delta::{shown, Delta, Item};
use super::options::{Options, Report};

/// Files named in one sentence of the text; the rest are counted.
const NAMES_SHOWN: usize = 10;

impl Delta {
    /// The compact text a model reads: what the edit changed, then what could not be compared and why.
    pub(crate) fn text(&self, options: Options, folders: &[std::path::PathBuf]) -> String {
        let say = Say { options, folders };
        let mut lines = self.changed(&say);
        lines.extend(self.not_compared(&say));
        lines.join("\n")
    }

    /// The lines of what the edit introduced and resolved, and of the files not open before it.
    fn changed(&self, say: &Say<'_>) -> Vec<String> {
        let warnings = say.options.report == Report::Warnings;
        let what = say.what();
        let mut lines = Vec::new();
        let [introduced, resolved, present] = self.shown(say.options.max);
        if !self.introduced.is_empty() {
            let label = if warnings {
                "New errors and warnings"
            } else {
                "New errors"
            };
            lines.push(format!(
                "{label}:{}",
                say.list(&self.introduced, introduced)
            ));
        } else if self.checked > 0 {
            lines.push(format!("No new {what}."));
        }
        if resolved > 0 {
            lines.push(format!("Resolved:{}", say.list(&self.resolved, resolved)));
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
                say.names(&with),
                say.list(&self.present, present)
            ));
        }
        let clean: Vec<String> = self
            .fresh
            .iter()
            .filter(|f| !self.present.iter().any(|i| &i.file_path == *f))
            .cloned()
            .collect();
        if !clean.is_empty() {
            lines.push(format!(
                "No {what} in {} after the edit.",
                say.names(&clean)
            ));
        }
        lines
    }

    /// The lines of what was left out or could not be compared, and why.
    fn not_compared(&self, say: &Say<'_>) -> Vec<String> {
        let mut lines = Vec::new();
        let omitted = self.omitted(say.options.max);
        if omitted > 0 {
            lines.push(format!(
                "... and {omitted} more (structured result: diagnostics)."
            ));
        }
        if !self.pending.is_empty() {
            lines.push(format!(
                "Diagnostics still pending after {} ms (not checked): {}.",
                say.options.settle.as_millis(),
                say.names(&self.pending)
            ));
        }
        if !self.quiet.is_empty() {
            lines.push(format!(
                "No diagnostics update for {} after the edit: taken as unchanged.",
                say.names(&self.quiet)
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
                say.names(&self.differs)
            ));
        }
        if !self.unchecked.is_empty() {
            lines.push(format!(
                "No diagnostics for {}: no language server checks it.",
                say.names(&self.unchecked)
            ));
        }
        lines
    }
}

/// How the text names things: the options it reports under, the folders its paths are shown in.
struct Say<'a> {
    options: Options,
    folders: &'a [std::path::PathBuf],
}

impl Say<'_> {
    /// "errors", or "errors or warnings".
    fn what(&self) -> &'static str {
        if self.options.report == Report::Warnings {
            "errors or warnings"
        } else {
            "errors"
        }
    }

    /// The first `n` items: on the line itself when one, else one per line below.
    fn list(&self, items: &[Item], n: usize) -> String {
        let texts: Vec<String> = items
            .iter()
            .take(n)
            .map(|i| i.to_text(self.folders))
            .collect();
        if texts.len() == 1 {
            format!(" {}", texts[0])
        } else {
            texts.iter().map(|t| format!("\n  {t}")).collect()
        }
    }

    /// Files by name, cut after `NAMES_SHOWN`: a many-file plan's lists name the files with errors,
    /// not every quiet one.
    fn names(&self, files: &[String]) -> String {
        let mut out = files
            .iter()
            .take(NAMES_SHOWN)
            .map(|p| shown(p, self.folders))
            .collect::<Vec<_>>()
            .join(", ");
        if files.len() > NAMES_SHOWN {
            out.push_str(&format!(" and {} more", files.len() - NAMES_SHOWN));
        }
        out
    }
}
