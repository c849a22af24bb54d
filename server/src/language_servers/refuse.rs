//! The refusals of plans, outlines and renames that need a language server where no editor holds the
//! files: `needs_editor` for a project the user has not allowed servers for (saying how to allow
//! it), `no_language_server` where none was found or none could start (naming the one looked for),
//! `not_applied` for a server that did not answer in time.

use std::path::Path;
use std::time::Duration;

use super::consent::Consent;
use super::started::Failure;
use super::table::{self, Missing, Program};
use crate::engine;
use crate::refusal::{Kind, Refusal};

/// A duration as a refusal says it: "20 s", "500 ms".
fn said(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// Why `project` has no server, for the refusals below.
fn not_allowed_why(project: &Path, consent: &Consent) -> String {
    let project = project.display();
    match consent {
        Consent::Refused(at) => format!(
            "{project} is not allowed (`multiedit setup --no-language-servers` was run in {})",
            at.display()
        ),
        Consent::Unreadable(why) => format!(
            "{project} is not allowed: the record of allowed projects cannot be used ({why})"
        ),
        Consent::Allowed(_) | Consent::Unset => format!("{project} is not allowed"),
    }
}

/// `what` (a sentence's subject: "Edit 2 names the symbol Calculator/add, which", "The rename to
/// sum") needs a server, and `project` is not allowed one.
pub(crate) fn not_allowed(what: &str, project: &Path, consent: &Consent) -> Refusal {
    Refusal::of(
        engine::Kind::NeedsEditor,
        format!(
            "{what} is resolved by the language servers of an editor running multiedit lsp, or by one multiedit starts \
             itself, which it does only for a project whose user allowed it (a language server can run the project's own \
             code), and {}. Nothing was changed. To allow it, run `multiedit setup --language-servers` in {}; or open the \
             project in an editor with multiedit (VS Code with the MultiEdit extension, Neovim with multiedit lsp and its \
             symbols handler) and send the plan through it; or address the text with old_string.",
            not_allowed_why(project, consent),
            project.display()
        ),
    )
}

/// The outline of `file` needs a server, no editor was reached (`reason`), and `project` is not
/// allowed one.
pub(crate) fn outline_not_allowed(
    file: &str,
    reason: &str,
    project: &Path,
    consent: &Consent,
) -> Refusal {
    Refusal::of(
        engine::Kind::NeedsEditor,
        format!(
            "The outline of {file} comes from the language servers of an editor running multiedit lsp, and none was \
             reached: {reason}. multiedit starts one itself only for a project whose user allowed it (a language server \
             can run the project's own code), and {}. Nothing was read. To allow it, run `multiedit setup \
             --language-servers` in {}; or open the project in VS Code with the MultiEdit extension, or in Neovim with \
             multiedit lsp and its symbols handler, then ask again.",
            not_allowed_why(project, consent),
            project.display()
        ),
    )
    .in_file(file)
}

/// No server for `file`: none for its type, or none found.
pub(crate) fn none_for(file: &str, missing: Option<(&table::Spec, &Missing)>) -> Refusal {
    let message = match missing {
        None => {
            let path = Path::new(file);
            let kind = match path.extension() {
                Some(e) => format!(".{} files", e.to_string_lossy()),
                None => format!(
                    "files named like {}",
                    path.file_name().unwrap_or_default().to_string_lossy()
                ),
            };
            format!(
                "No language server for {file}: multiedit starts none for {kind} (it starts one for {}). Nothing was \
                 changed. Address the text with old_string.",
                table::languages()
            )
        }
        Some((spec, Missing::NotFound { program, looked })) => format!(
            "No language server for {file}: multiedit starts {program} for {} files and found none {looked}. Nothing was \
             changed. Install it ({}), or name its command in {}; or address the text with old_string.",
            spec.languages,
            spec.install,
            table::user_config()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "~/.config/multiedit/language-servers.json".into())
        ),
        Some((_, Missing::BadConfig(why))) => {
            format!("No language server for {file}: {why}. Nothing was changed.")
        }
    };
    Refusal::new(Kind::NoLanguageServer, message)
}

/// A server that failed `file`'s question.
pub(crate) fn failed(program: &Program, root: &Path, file: &str, failure: &Failure) -> Refusal {
    let name = program.spec.program;
    let path = program.path.display();
    let config = table::user_config()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "~/.config/multiedit/language-servers.json".into());
    let quoted = |said: &str| {
        if said.is_empty() {
            String::new()
        } else {
            format!(" (it said: {said})")
        }
    };
    let (kind, message) = match failure {
        Failure::Spawn(why) => (
            Kind::NoLanguageServer,
            format!("{name} could not be started for {file}: {why}. Nothing was changed. Install it again, or name another command in {config}."),
        ),
        Failure::Exited { during, said, .. } if during == "initialize" => (
            Kind::NoLanguageServer,
            format!(
                "{name} ({path}) exited as it started, before it answered initialize{}. Nothing was changed. Check that it \
                 runs, or name another command in {config}; or address the text with old_string.",
                quoted(said)
            ),
        ),
        Failure::Exited { during, said, again } => (
            Kind::NoLanguageServer,
            format!(
                "{name} ({path}) exited while answering {during} for {file}{}{}. Nothing was changed. Address the text with \
                 old_string, or try again once it is fixed.",
                if *again { ", and again once started anew" } else { "" },
                quoted(said)
            ),
        ),
        Failure::TimedOut { during, after } if during == "initialize" => (
            Kind::NoLanguageServer,
            format!(
                "{name} ({path}) did not answer initialize within {} for {}, so it was stopped. Nothing was changed. A large \
                 project may need longer: set startTimeoutMs for it in {config}; or address the text with old_string.",
                said(*after),
                root.display()
            ),
        ),
        Failure::TimedOut { during, after } => (
            Kind::Engine(engine::Kind::NotApplied),
            format!(
                "{name} did not answer {during} for {file} within {} (it may still be loading the project). Nothing was \
                 changed; try again.",
                said(*after)
            ),
        ),
        Failure::Answered { during, message } if during == "initialize" => (
            Kind::NoLanguageServer,
            format!(
                "{name} ({path}) refused to start for {} (it said: {message}). Nothing was changed.",
                root.display()
            ),
        ),
        Failure::Answered { during, message } => (
            Kind::Engine(engine::Kind::NotApplied),
            format!("{name} could not answer {during} for {file} (it said: {message}). Nothing was changed."),
        ),
    };
    Refusal::new(kind, message)
}
