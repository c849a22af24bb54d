//! What would start for a project and why, or why not: the lines `multiedit doctor` and `multiedit
//! setup --language-servers` print. Nothing is started or run to find out.

use std::path::Path;

use super::consent::{self, Consent};
use super::options;
use super::table::{self, Missing, SERVERS};

/// The lines for `project`, and whether one of them is a problem to fix (a record that cannot be
/// trusted, a configuration file that cannot be used).
pub(crate) fn describe(project: &Path) -> (String, bool) {
    let mut out = String::new();
    let mut problem = false;
    let record = consent::record_path()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "the state folder".into());
    let (allowed, root) = match consent::of(project) {
        Consent::Allowed(at) => {
            out.push_str(&format!(
                "  allowed for {} (recorded in {record}); each starts when a plan, an outline or a diagnostics check \
                 needs it and no editor holds the files\n",
                at.display()
            ));
            (true, at)
        }
        Consent::Refused(at) => {
            out.push_str(&format!(
                "  not allowed: `multiedit setup --no-language-servers` was run for {} (recorded in {record}); none \
                 starts\n",
                at.display()
            ));
            (false, project.to_path_buf())
        }
        Consent::Unset => {
            out.push_str(&format!(
                "  not allowed: none starts for {} until you run `multiedit setup --language-servers` in it (a language \
                 server can run the project's own code: allow it only for a project you trust)\n",
                project.display()
            ));
            (false, project.to_path_buf())
        }
        Consent::Unreadable(why) => {
            problem = true;
            out.push_str(&format!("  not allowed: {why}\n"));
            (false, project.to_path_buf())
        }
    };
    let verb = if allowed { "starts" } else { "would start" };
    for spec in SERVERS {
        let line = match table::find(spec, &root, allowed) {
            Ok(program) => {
                let command = std::iter::once(program.path.display().to_string())
                    .chain(program.args.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(" ");
                let mut line = format!("{verb} `{command}` (found {})", program.from);
                if spec.key == "typescript" {
                    match options::tsserver_beside(&program.path) {
                        Some(ts) => line.push_str(&format!(
                            ", with the TypeScript beside it ({}), not the project's",
                            ts.display()
                        )),
                        None => line.push_str(
                            ", which finds no TypeScript beside it and would use the project's own node_modules/typescript",
                        ),
                    }
                }
                line
            }
            Err(Missing::NotFound { program, looked }) => {
                format!("none: found no {program} {looked} ({})", spec.install)
            }
            Err(Missing::BadConfig(why)) => {
                problem = true;
                format!("none: {why}")
            }
        };
        out.push_str(&format!("  {}: {line}\n", spec.languages));
    }
    (out, problem)
}
