//! A whole-file write (`{"file_path", "content", "sha256"?}`): the request, and the rule that guards
//! it. Creating a file needs no hash; replacing one needs the sha256 of the text the caller read, as
//! the user sees it (an editor's buffer with its unsaved changes, else the disk), so that a write made
//! from an older text, or from the disk behind the user's unsaved changes, is refused rather than
//! wiping what the caller never saw. The language server (`lsp/prepare.rs`, for `multiedit.apply`)
//! and `multiedit mcp` on disk (`mcp/write.rs`) both check it here; the engine turns the text into
//! line changes (`engine::write_file`).

use crate::result::sha256;
use serde_json::Value;

use crate::engine::{self, Edit, FilePlan, Outcome, Plan};
use crate::paths;
use crate::refusal::{Kind, Refusal};

/// "3 lines", "1 line": a text's lines as multiedit_read counts them.
fn lines(text: &str) -> String {
    crate::result::plural(text.split_inclusive('\n').count(), "line")
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WriteRequest {
    pub(crate) file_path: String,
    pub(crate) content: String,
    /// The hash of the text the caller read (`None`: it means to create the file).
    pub(crate) sha256: Option<String>,
}

/// Whether a request object is a write: `content` where a plan has `edits`.
pub(crate) fn is_write(v: &Value) -> bool {
    v.get("content").is_some()
        && v.get("edits").is_none()
        && v.get("files").is_none()
        && v.get("patch").is_none()
}

impl WriteRequest {
    pub(crate) fn from_value(v: &Value) -> Result<WriteRequest, Refusal> {
        let Some(obj) = v.as_object() else {
            return Err(Refusal::input(
                "a write is an object: {\"file_path\", \"content\", \"sha256\"}",
            ));
        };
        if let Some(k) = obj
            .keys()
            .find(|k| !["file_path", "content", "sha256"].contains(&k.as_str()))
        {
            return Err(Refusal::input(format!(
                "a write takes file_path, content and sha256; `{k}` is not one of them"
            )));
        }
        let string = |name: &str| match obj.get(name) {
            Some(Value::String(s)) => Ok(Some(s.clone())),
            None => Ok(None),
            Some(other) => Err(Refusal::input(format!(
                "`{name}` must be a string, not {other}"
            ))),
        };
        let file_path = string("file_path")?.ok_or_else(|| {
            Refusal::input("`file_path` is missing: give the file's absolute path")
        })?;
        let content = string("content")?.ok_or_else(|| {
            Refusal::input("`content` is missing: give the whole new text of the file")
        })?;
        if !paths::to_path(&file_path)?.is_absolute() {
            return Err(Refusal::input(format!(
                "`file_path` must be an absolute path, not {file_path}"
            )));
        }
        let sha256 = string("sha256")?.map(|h| h.trim().to_ascii_lowercase());
        if let Some(h) = &sha256 {
            if h.len() != 64 || !h.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(Refusal::input(format!("`sha256` must be 64 hexadecimal digits (as multiedit_read shows it), not {h:?}")));
            }
        }
        Ok(WriteRequest {
            file_path,
            content,
            sha256,
        })
    }

    /// The write as a one-file plan, for what every plan goes through (confinement, the workspace, the
    /// journal's recovery, the editor's labels): one edit whose new text is the content.
    pub(crate) fn plan(&self) -> Plan {
        Plan {
            files: vec![FilePlan::edit(
                self.file_path.clone(),
                vec![Edit::new("", &self.content)],
            )],
            options: Default::default(),
            rename: None,
        }
    }

    /// What the write does to the file whose text the user sees is `current` (`None`: it does not
    /// exist), or why it is refused. `unsaved`: whether that text is an editor's with changes the disk
    /// lacks, asked only to explain a refusal.
    pub(crate) fn outcome(
        &self,
        current: Option<&str>,
        unsaved: impl FnOnce() -> bool,
    ) -> Result<Outcome, Refusal> {
        let path = &self.file_path;
        // A refusal never gives the hash to send: sent back unread, it would replace what the caller
        // never saw (the user's newer line). It says the file changed, how long it is, and to read it.
        let reread = "Read it with multiedit_read (which shows the editor's unsaved changes too), then make your change to the \
                      text it shows and write that, with the sha256 it shows.";
        match (current, &self.sha256) {
            (None, Some(_)) => {
                return Err(Refusal::of(
                    engine::Kind::FileNotFound,
                    format!("File does not exist: {path}. Nothing was written. To create it, send no sha256."),
                )
                .in_file(path))
            }
            (Some(text), None) => {
                return Err(Refusal::new(
                    Kind::Stale,
                    format!("{path} exists ({}): to replace it, give the sha256 of its text as you read it with multiedit_read. Nothing was written.", lines(text)),
                )
                .in_file(path)
                .with_hint(Some(reread.into())))
            }
            (Some(text), Some(given)) if sha256(text) != *given => {
                let why = if unsaved() {
                    "The editor holds unsaved changes to this file that the disk lacks; the sha256 is of the text the user sees there. "
                } else {
                    ""
                };
                return Err(Refusal::new(
                    Kind::Stale,
                    format!("{path} changed since you read it (or you read another text): the sha256 you gave is not of its text, which now has {}. Nothing was written.", lines(text)),
                )
                .in_file(path)
                .with_hint(Some(format!("{why}{reread}"))));
            }
            _ => {}
        }
        Ok(Outcome {
            files: vec![engine::write_file(current, path, &self.content)?],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_request_names_what_to_fix() {
        let r = |v: Value| WriteRequest::from_value(&v).unwrap_err().message;
        assert_eq!(
            r(json!({"file_path": "a.txt", "content": ""})),
            "InputValidationError: `file_path` must be an absolute path, not a.txt"
        );
        assert_eq!(r(json!({"file_path": "/a", "content": "", "sha256": "abc"})), "InputValidationError: `sha256` must be 64 hexadecimal digits (as multiedit_read shows it), not \"abc\"");
        assert_eq!(
            r(json!({"file_path": "/a", "content": 3})),
            "InputValidationError: `content` must be a string, not 3"
        );
        assert_eq!(r(json!({"file_path": "/a", "content": "", "mode": 1})), "InputValidationError: a write takes file_path, content and sha256; `mode` is not one of them");
        assert!(
            is_write(&json!({"file_path": "/a", "content": ""}))
                && !is_write(&json!({"file_path": "/a", "edits": []}))
        );
    }

    #[test]
    fn replacing_needs_the_hash_of_the_text_the_user_sees() {
        let w = |sha: Option<&str>| WriteRequest {
            file_path: "/w/a".into(),
            content: "new\n".into(),
            sha256: sha.map(str::to_string),
        };
        let old = "old\n";
        assert!(w(Some(&sha256(old))).outcome(Some(old), || false).is_ok());
        let stale = w(Some(&sha256("older\n")))
            .outcome(Some(old), || true)
            .unwrap_err();
        assert_eq!(stale.kind, Kind::Stale);
        // What changed and how to catch up, never the hash to send: sent back unread, it would
        // replace what the caller never saw.
        assert_eq!(stale.message, "/w/a changed since you read it (or you read another text): the sha256 you gave is not of its text, which now has 1 line. Nothing was written.");
        assert_eq!(stale.hint.as_deref(), Some("The editor holds unsaved changes to this file that the disk lacks; the sha256 is of the text the user sees there. Read it with multiedit_read (which shows the editor's unsaved changes too), then make your change to the text it shows and write that, with the sha256 it shows."));
        let unhashed = w(None).outcome(Some("a\nb\nc"), || false).unwrap_err();
        assert_eq!(unhashed.kind, Kind::Stale);
        assert_eq!(unhashed.message, "/w/a exists (3 lines): to replace it, give the sha256 of its text as you read it with multiedit_read. Nothing was written.");
        assert_eq!(unhashed.hint.as_deref(), Some("Read it with multiedit_read (which shows the editor's unsaved changes too), then make your change to the text it shows and write that, with the sha256 it shows."));
        for r in [&stale, &unhashed] {
            let said = r.full_text();
            assert!(
                !said.contains(&sha256(old)) && !said.contains(&sha256("a\nb\nc")),
                "{said}"
            );
        }
        assert_eq!(
            w(Some(&sha256(old)))
                .outcome(None, || false)
                .unwrap_err()
                .kind,
            Kind::Engine(engine::Kind::FileNotFound)
        );
        assert!(w(None).outcome(None, || false).unwrap().files[0].created);
    }
}
