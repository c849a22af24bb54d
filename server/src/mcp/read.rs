//! `multiedit_read`: files as the user sees them. Through an editor that holds them, the buffers with
//! their unsaved changes (the editor's `multiedit.read`); else the disk. Numbered as `cat -n` numbers
//! lines, the form agents' own read tools use and their models strip before an `old_string`; each file
//! says whether the editor's text is the disk's and carries a content hash.

use std::path::PathBuf;

use rmcp::model::CallToolResult;
use serde::Serialize;
use serde_json::{json, Value};

use crate::engine::{self};
use crate::refusal::Refusal;
use crate::result::{Place, ReadFile};
use crate::{disk, paths};

/// Lines shown per file when the call gives no limit.
pub(crate) const DEFAULT_LIMIT: usize = 2000;
/// A longer line is cut, so that one minified line cannot fill a model's context.
pub(crate) const MAX_LINE: usize = 2000;

/// One file asked for, with the lines to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Wanted {
    pub(crate) file_path: String,
    pub(crate) path: PathBuf,
    /// 1-based first line.
    pub(crate) offset: usize,
    pub(crate) limit: usize,
}

fn count(v: Option<&Value>, name: &str, default: usize) -> Result<usize, Refusal> {
    match v {
        None => Ok(default),
        Some(n) => n
            .as_u64()
            .filter(|&n| n >= 1)
            .map(|n| n as usize)
            .ok_or_else(|| {
                Refusal::input(format!(
                    "`{name}` must be a whole number of at least 1, not {n}"
                ))
            }),
    }
}

/// The call's files: `file_path` (with `offset`, `limit`) or `files: [{file_path, offset?, limit?}]`.
pub(crate) fn request(args: &Value) -> Result<Vec<Wanted>, Refusal> {
    let one = |v: &Value, at: &str| -> Result<Wanted, Refusal> {
        let file_path = match v.get("file_path") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(Refusal::input(format!(
                    "`{at}file_path` must be a string, not {other}"
                )))
            }
            None => {
                return Err(Refusal::input(format!(
                    "`{at}file_path` is missing: give the file's absolute path"
                )))
            }
        };
        let path = paths::to_path(&file_path)?;
        if !path.is_absolute() {
            return Err(Refusal::input(format!(
                "`{at}file_path` must be an absolute path, not {file_path}"
            )));
        }
        let offset = count(v.get("offset"), &format!("{at}offset"), 1)?;
        let limit = count(v.get("limit"), &format!("{at}limit"), DEFAULT_LIMIT)?;
        Ok(Wanted {
            file_path,
            path,
            offset,
            limit,
        })
    };
    if let Some(obj) = args.as_object() {
        if let Some(k) = obj
            .keys()
            .find(|k| !["file_path", "files", "offset", "limit"].contains(&k.as_str()))
        {
            return Err(Refusal::input(format!("multiedit_read takes file_path (with offset and limit) or files; `{k}` is not one of them")));
        }
    }
    match (args.get("file_path"), args.get("files")) {
        (Some(_), None) => Ok(vec![one(args, "")?]),
        (None, Some(Value::Array(list))) if !list.is_empty() => {
            if args.get("offset").is_some() || args.get("limit").is_some() {
                return Err(Refusal::input("with `files`, give each file its own offset and limit"));
            }
            list.iter().enumerate().map(|(i, f)| one(f, &format!("files[{i}]."))).collect()
        }
        _ => Err(Refusal::input(
            "multiedit_read takes {\"file_path\": \"/abs/path\"} (with \"offset\" and \"limit\") or {\"files\": [{\"file_path\": \"/abs/path\"}, ...]}",
        )),
    }
}

/// The files read from disk: no editor holds them. Each path is resolved once and confined again on
/// what it resolved to, then read there without following a link (`disk::read_at`): a folder swapped
/// for a link since the first check cannot lead the read outside `confine`.
pub(crate) fn from_disk(
    wanted: &[Wanted],
    confine: Option<&paths::Folders>,
    what: &str,
    opt_out: &str,
) -> Result<Vec<ReadFile>, Refusal> {
    wanted
        .iter()
        .map(|w| {
            let real = disk::resolve(&w.path, false);
            if let Some(folders) = confine {
                folders.confine_read(&w.file_path, &real, what, opt_out)?;
            }
            let bytes = disk::read_at(&w.path, Some(&real))
                .map_err(|r| r.in_file(&w.file_path))?
                .ok_or_else(|| not_found(&w.file_path))?;
            let text = engine::decode(&w.file_path, &bytes)?.to_string();
            Ok(ReadFile {
                file_path: w.file_path.clone(),
                text,
                source: Place::Disk,
                differs_from_disk: false,
            })
        })
        .collect()
}

pub(crate) fn not_found(file_path: &str) -> Refusal {
    Refusal::of(
        engine::Kind::FileNotFound,
        format!("File does not exist: {file_path}. Nothing was read."),
    )
    .in_file(file_path)
}

/// SHA-256 of the text, in hex: what a whole-file write gives back (`crate::write`).
pub(crate) fn hash(text: &str) -> String {
    crate::result::sha256(text)
}

#[derive(Serialize)]
struct Shown<'a> {
    file_path: &'a str,
    source: Place,
    differs_from_disk: bool,
    sha256: String,
    total_lines: usize,
    first_line: usize,
    last_line: usize,
}

/// The tool's answer: per file a header, then its lines numbered; `editor` names where the text came
/// from when an editor answered.
pub(crate) fn render(
    files: &[ReadFile],
    wanted: &[Wanted],
    editor: Option<&str>,
) -> CallToolResult {
    let mut text = String::new();
    let mut shown = Vec::new();
    for (file, want) in files.iter().zip(wanted) {
        let lines: Vec<&str> = if file.text.is_empty() {
            Vec::new()
        } else {
            file.text
                .strip_suffix('\n')
                .unwrap_or(&file.text)
                .split('\n')
                .collect()
        };
        let total = lines.len();
        let first = want.offset.min(total + 1);
        let last = (first + want.limit - 1).min(total);
        let from = source_words(file, editor);
        let hash = hash(&file.text);
        let range = range_words(want, first, last, total);
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!(
            "{} ({from}; {range}; sha256 {hash})\n",
            file.file_path
        ));
        push_numbered(&mut text, &lines, first, last);
        shown.push(Shown {
            file_path: &file.file_path,
            source: file.source,
            differs_from_disk: file.differs_from_disk,
            sha256: hash,
            total_lines: total,
            first_line: first,
            last_line: last,
        });
    }
    let mut structured = json!({"ok": true, "files": shown});
    if let Some(e) = editor {
        structured["editor"] = json!(e);
    }
    super::render::result(text, structured, false)
}

/// Where a file's text came from, in its header.
fn source_words(file: &ReadFile, editor: Option<&str>) -> String {
    match (file.source, editor) {
        (Place::Editor, Some(e)) if file.differs_from_disk => {
            format!("as {e} holds it, with changes that are not saved: the disk has an older text")
        }
        (Place::Editor, Some(e)) => format!("as {e} holds it, the same as on disk"),
        _ => "from disk (no editor holds it)".to_string(),
    }
}

/// Which of a file's `total` lines are shown (`first` to `last`, as `want` asked), in its header.
fn range_words(want: &Wanted, first: usize, last: usize, total: usize) -> String {
    if total == 0 {
        "empty".to_string()
    } else if first == 1 && last == total {
        format!("{total} line{}", if total == 1 { "" } else { "s" })
    } else if first > total {
        format!("{total} lines; offset {} is past the end", want.offset)
    } else {
        format!(
            "lines {first}-{last} of {total}{}",
            if last < total {
                format!("; read on with offset {}", last + 1)
            } else {
                String::new()
            }
        )
    }
}

/// Lines `first` to `last` (1-based) of `lines` added to `text`, each after its number, one longer
/// than `MAX_LINE` characters cut there.
fn push_numbered(text: &mut String, lines: &[&str], first: usize, last: usize) {
    for (i, line) in lines
        .iter()
        .enumerate()
        .take(last)
        .skip(first.saturating_sub(1))
    {
        let line = line.strip_suffix('\r').unwrap_or(line);
        match line.char_indices().nth(MAX_LINE) {
            Some((cut, _)) => text.push_str(&format!(
                "{:>6}\t{}… ({} more characters)\n",
                i + 1,
                &line[..cut],
                line[cut..].chars().count()
            )),
            None => text.push_str(&format!("{:>6}\t{line}\n", i + 1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(r: &CallToolResult) -> String {
        r.content[0].as_text().unwrap().text.clone()
    }

    fn want(offset: usize, limit: usize) -> Wanted {
        Wanted {
            file_path: "/w/a.ts".into(),
            path: "/w/a.ts".into(),
            offset,
            limit,
        }
    }

    #[test]
    fn lines_are_numbered_as_cat_n_numbers_them() {
        let file = ReadFile {
            file_path: "/w/a.ts".into(),
            text: "one\r\ntwo\nthree\n".into(),
            source: Place::Editor,
            differs_from_disk: true,
        };
        let r = render(
            std::slice::from_ref(&file),
            &[want(1, 2000)],
            Some("Neovim"),
        );
        assert_eq!(
            text(&r),
            format!(
                "/w/a.ts (as Neovim holds it, with changes that are not saved: the disk has an older text; 3 lines; sha256 {})\n     1\tone\n     2\ttwo\n     3\tthree\n",
                hash("one\r\ntwo\nthree\n")
            )
        );
        let part = render(std::slice::from_ref(&file), &[want(2, 1)], None);
        assert!(text(&part).starts_with("/w/a.ts (from disk (no editor holds it); lines 2-2 of 3; read on with offset 3; sha256 "), "{}", text(&part));
        assert!(text(&part).ends_with(")\n     2\ttwo\n"), "{}", text(&part));
        let s = part.structured_content.unwrap();
        assert_eq!(
            (
                s["files"][0]["first_line"].as_u64(),
                s["files"][0]["last_line"].as_u64(),
                s["files"][0]["total_lines"].as_u64()
            ),
            (Some(2), Some(2), Some(3))
        );
    }

    #[test]
    fn the_request_names_what_to_fix() {
        assert_eq!(
            request(&json!({"file_path": "/w/a", "limit": 0}))
                .unwrap_err()
                .message,
            "InputValidationError: `limit` must be a whole number of at least 1, not 0"
        );
        assert_eq!(
            request(&json!({"file_path": "a.txt"})).unwrap_err().message,
            "InputValidationError: `file_path` must be an absolute path, not a.txt"
        );
        assert_eq!(
            request(&json!({"files": [{"file_path": "/a"}], "limit": 3}))
                .unwrap_err()
                .message,
            "InputValidationError: with `files`, give each file its own offset and limit"
        );
        let w = request(&json!({"files": [{"file_path": "/a", "offset": 5}, {"file_path": "/b"}]}))
            .unwrap();
        assert_eq!(
            (w[0].offset, w[0].limit, w[1].offset),
            (5, DEFAULT_LIMIT, 1)
        );
    }

    #[test]
    fn the_hash_is_sha256() {
        assert_eq!(
            hash(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
