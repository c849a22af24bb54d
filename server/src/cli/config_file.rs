//! Editing the agents' configuration files in place. JSON files: the new or updated entry is spliced
//! into the original text, so every other byte (the user's other servers, unknown keys, key order, formatting) stays as it was.
//! A file that is not plain JSON (comments, trailing commas) is refused and left unchanged: we could
//! not promise to keep what we do not parse. TOML (Codex CLI) goes through `toml_edit`, which keeps
//! comments and formatting. Files are written whole: a temporary file beside them, renamed over.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use super::agents::SERVER_NAME;

/// What a step of `setup` says, and whether it wrote a file (or, in a dry run, would have): the
/// caller adds a note about what the written files name only when one was.
#[derive(Debug, Default)]
pub(crate) struct Said {
    pub(crate) text: String,
    pub(crate) wrote: bool,
}

impl Said {
    /// A file written (or, in a dry run, that would have been).
    pub(crate) fn wrote(text: String) -> Said {
        Said { text, wrote: true }
    }

    /// Nothing written: all there already, or left as it was.
    pub(crate) fn left(text: String) -> Said {
        Said { text, wrote: false }
    }

    pub(crate) fn and(mut self, next: Said) -> Said {
        self.text.push_str(&next.text);
        self.wrote |= next.wrote;
        self
    }
}

/// The file `path` names, links followed, and its text (`None`: it does not exist yet). Refused, with
/// `or_else` (what the user may do instead) at the end: a link to nothing, a file that is not UTF-8 or
/// cannot be read, and, for a project's file (`project`: the project's folder), a link in the project
/// that leads outside it (`inside_project`), before anything is read.
///
/// The path returned is resolved (every link followed, as the kernel follows them, for a file not
/// made yet too): the file is read there, and `write_atomic` writes there, each folder opened without
/// following a link, so a link swapped in after this check is refused rather than followed.
pub(super) fn load(
    path: &Path,
    project: Option<&Path>,
    or_else: &str,
) -> Result<(PathBuf, Option<String>), String> {
    if let Some(project) = project {
        inside_project(path, project, or_else)?;
    }
    // Write through a symbolic link (dotfiles kept elsewhere) rather than replacing it; a link to
    // nothing is the user's (a dotfile not checked out yet, say), and a file put in its place would
    // hide it.
    let path = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(_) => match std::fs::read_link(path) {
            Ok(target) => {
                return Err(format!(
                    "{} is a symbolic link to {}, which does not exist; left unchanged. Create the file it points \
                     to (or remove the link) and run setup again, or {or_else}",
                    path.display(),
                    target.display(),
                ))
            }
            // Not there yet: where it will be, its folders' links followed.
            Err(_) => crate::paths::real_path(path).map_err(|why| {
                format!("{} cannot be written: {why}; left unchanged. Fix or remove the link and run setup again, or {or_else}", path.display())
            })?,
        },
    };
    let shown = path.display();
    let text = match read_resolved(&path) {
        Ok(bytes) => Some(
            String::from_utf8(bytes)
                .map_err(|_| format!("{shown} is not UTF-8 text; left unchanged"))?,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {shown} ({e}); left unchanged")),
    };
    Ok((path, text))
}

/// The bytes of the file at a resolved path, read as `write_atomic` writes: its folders opened
/// without following a link, the file opened without following one nor blocking (a FIFO is refused).
pub(super) fn read_resolved(path: &Path) -> std::io::Result<Vec<u8>> {
    let (dir, name) = crate::disk::Opened::default().parent(path)?;
    crate::disk::read_in(&dir, name)
}

/// Refuses a project's file (`path`, in the folder `project`) that a symbolic link of the project
/// leads outside it: the file itself or a folder on its way (`.claude`), resolved as the kernel
/// resolves it, must lie inside the project's real path. A cloned repository may ship such a link
/// (`opencode.json` -> a file of the user's, `.claude` -> a folder elsewhere), and setup would read
/// and rewrite what it points to. Links that stay inside the project are followed: both ends are the
/// project's, and the file setup writes is one of the project's. A user's own files (`--user`: their
/// dotfiles, often links into a dotfiles repository) are not checked.
pub(super) fn inside_project(path: &Path, project: &Path, or_else: &str) -> Result<(), String> {
    let root = std::fs::canonicalize(project).map_err(|e| {
        format!(
            "cannot resolve the project folder {} ({e}); nothing written",
            project.display()
        )
    })?;
    let rel = path.strip_prefix(project).map_err(|_| {
        format!(
            "{} is not inside the project folder {}; nothing written",
            path.display(),
            project.display()
        )
    })?;
    let (mut real, mut shown) = (root.clone(), project.to_path_buf());
    let mut rest = rel.components();
    while let Some(c) = rest.next() {
        let std::path::Component::Normal(name) = c else {
            continue;
        };
        shown.push(name);
        let next = real.join(name);
        let is_link = std::fs::symlink_metadata(&next).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            real = next;
            continue;
        }
        let target = std::fs::read_link(&next).unwrap_or_default();
        // Where the kernel takes it; a link to nothing, where it points.
        let to = std::fs::canonicalize(&next)
            .or_else(|_| crate::paths::real_path(&real.join(&target)))
            .unwrap_or_else(|_| crate::paths::lexical(&real.join(&target)));
        if to.starts_with(&root) {
            real = to;
            continue;
        }
        let mut lands = to;
        lands.extend(rest);
        let what = if shown == path {
            format!("{} is a symbolic link", path.display())
        } else {
            format!(
                "{} is inside {}, a symbolic link",
                path.display(),
                shown.display()
            )
        };
        return Err(format!(
            "{what} to {}, which leads outside the project ({}); setup does not write through such a link (a \
             cloned repository may hold one to make setup change a file of yours elsewhere), so nothing was read \
             or written at {}. Remove the link and run setup again (setup then makes the file in the project), or \
             {or_else}",
            target.display(),
            root.display(),
            lands.display(),
        ));
    }
    Ok(())
}

/// Refuses a file made read-only: it was made so on purpose, and renaming over it would succeed all
/// the same (the folder is writable, and root passes every check).
pub(super) fn writable(path: &Path, or_else: &str) -> Result<(), String> {
    match read_only_mode(path) {
        Some(mode) => Err(format!("{} is read-only (mode {mode:04o}); left unchanged. Make it writable and run setup again, or {or_else}", path.display())),
        None => Ok(()),
    }
}

/// The permission bits of a file nobody may write, if `path` is one.
fn read_only_mode(path: &Path) -> Option<u32> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.permissions().readonly() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Some(meta.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    Some(0o444)
}

/// The changed lines of `new` against `old`, `-`/`+` prefixed, with a line of context around each.
pub(super) fn line_diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &a, &b);
    let mut said = String::new();
    for op in ops {
        match op {
            similar::DiffOp::Equal { old_index, len, .. } => {
                if len <= 2 {
                    for l in &a[old_index..old_index + len] {
                        let _ = writeln!(said, "    {l}");
                    }
                } else {
                    let _ = writeln!(said, "    {}", a[old_index]);
                    let _ = writeln!(said, "    ...");
                    let _ = writeln!(said, "    {}", a[old_index + len - 1]);
                }
            }
            similar::DiffOp::Delete {
                old_index, old_len, ..
            } => {
                for l in &a[old_index..old_index + old_len] {
                    let _ = writeln!(said, "  - {l}");
                }
            }
            similar::DiffOp::Insert {
                new_index, new_len, ..
            } => {
                for l in &b[new_index..new_index + new_len] {
                    let _ = writeln!(said, "  + {l}");
                }
            }
            similar::DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                for l in &a[old_index..old_index + old_len] {
                    let _ = writeln!(said, "  - {l}");
                }
                for l in &b[new_index..new_index + new_len] {
                    let _ = writeln!(said, "  + {l}");
                }
            }
        }
    }
    said
}

/// Writes `text` to `path` whole, keeping the old file's permissions. `path` is resolved (as `load`
/// returns it); the folders it lacks are made. No folder on the way is followed if it became a link
/// since (`disk::atomic::write_resolved`).
pub(super) fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    crate::disk::atomic::write_resolved(
        path,
        text.as_bytes(),
        crate::disk::atomic::Mode::KeepOrShared,
    )
}

/// A JSON object's members in file order, each value kept as its original text.
pub(super) struct Members<'a>(pub(super) Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut members = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, &'de RawValue>()? {
                    members.push((k, v));
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(V)
    }
}

/// Where `inner` (a slice of `outer`) starts in `outer`.
pub(super) fn offset_in(outer: &str, inner: &str) -> usize {
    inner.as_ptr() as usize - outer.as_ptr() as usize
}

/// The indentation of the line holding byte `at`.
pub(super) fn indent_at(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// `value` as JSON text to put at `indent` (its first line follows a key already on that line),
/// indented by `unit` per level; `type`, `command`, `args` first. `compact`: on one line, as in a
/// minified file.
pub(super) fn render(value: &Value, unit: &str, indent: &str, compact: bool) -> String {
    const FIRST: [&str; 4] = ["type", "command", "args", "enabled"];
    let rank = |k: &str| FIRST.iter().position(|f| *f == k).unwrap_or(FIRST.len());
    let (nl, sep) = if compact { ("", ":") } else { ("\n", ": ") };
    let inner = if compact {
        String::new()
    } else {
        format!("{indent}{unit}")
    };
    let close = if compact { "" } else { indent };
    match value {
        Value::Object(m) if !m.is_empty() => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_by_key(|k| (rank(k), k.as_str()));
            let members: Vec<String> = keys
                .iter()
                .map(|k| {
                    format!(
                        "{inner}{}{sep}{}",
                        Value::from(k.as_str()),
                        render(&m[k.as_str()], unit, &inner, compact)
                    )
                })
                .collect();
            format!("{{{nl}{}{nl}{close}}}", members.join(&format!(",{nl}")))
        }
        Value::Array(a) if !a.is_empty() && a.iter().all(|v| !v.is_object() && !v.is_array()) => {
            // Short lists of strings stay on one line: ["mcp"].
            let items: Vec<String> = a.iter().map(Value::to_string).collect();
            format!("[{}]", items.join(if compact { "," } else { ", " }))
        }
        Value::Array(a) if !a.is_empty() => {
            let items: Vec<String> = a
                .iter()
                .map(|v| format!("{inner}{}", render(v, unit, &inner, compact)))
                .collect();
            format!("[{nl}{}{nl}{close}]", items.join(&format!(",{nl}")))
        }
        other => other.to_string(),
    }
}

/// Adds `text` as the last member of the object whose text is `object` (a slice of `whole`), or
/// replaces nothing: returns the new text of `whole`. `members`: the object's members as parsed.
/// A chunk of new lines in the file's line breaks: CRLF in a file that has them.
pub(super) fn eol(chunk: String, crlf: bool) -> String {
    if crlf {
        chunk.replace('\n', "\r\n")
    } else {
        chunk
    }
}

pub(super) fn insert_member(
    whole: &str,
    object: &str,
    members: &Members,
    name: &str,
    value: &Value,
) -> String {
    let crlf = whole.contains("\r\n");
    let start = offset_in(whole, object);
    let end = start + object.len(); // just past the closing brace
    let inner = &object[1..object.len() - 1];
    let compact = !members.0.is_empty() && !inner.contains('\n');
    let key = serde_json::to_string(name).expect("serializable");
    let (unit, base) = detect_indent(whole, start);
    let mut new = String::with_capacity(whole.len() + 200);
    match members.0.last() {
        Some((_, last)) => {
            let after_last = offset_in(whole, last.get()) + last.get().len();
            if compact {
                new.push_str(&whole[..after_last]);
                let _ = write!(new, ",{key}:{}", render(value, "", "", true));
                new.push_str(&whole[after_last..]);
            } else {
                let indent = indent_at(whole, offset_in(whole, last.get())).to_string();
                new.push_str(&whole[..after_last]);
                new.push_str(&eol(
                    format!(",\n{indent}{key}: {}", render(value, &unit, &indent, false)),
                    crlf,
                ));
                new.push_str(&whole[after_last..]);
            }
        }
        None => {
            // An empty object `{}` (perhaps with whitespace): written out afresh.
            let indent = format!("{base}{unit}");
            new.push_str(&whole[..start]);
            new.push_str(&eol(
                format!(
                    "{{\n{indent}{key}: {}\n{base}}}",
                    render(value, &unit, &indent, false)
                ),
                crlf,
            ));
            new.push_str(&whole[end..]);
        }
    }
    new
}

/// The file's indentation unit (from its first indented line; two spaces if none) and the
/// indentation of the line holding byte `at`.
pub(super) fn detect_indent(text: &str, at: usize) -> (String, String) {
    let unit = text
        .lines()
        .map(|l| &l[..l.len() - l.trim_start_matches([' ', '\t']).len()])
        .find(|i| !i.is_empty())
        .unwrap_or("  ")
        .to_string();
    (unit, indent_at(text, at).to_string())
}

pub(super) fn refuse_parse(e: serde_json::Error, text: &str) -> String {
    let comments = text.contains("//") || text.contains("/*");
    if comments {
        format!(
            "is not plain JSON ({e}): it looks like JSON with comments, which multiedit cannot change without losing them"
        )
    } else {
        format!("is not valid JSON ({e})")
    }
}

/// Returns `old` (a JSON object's text, or empty for a new file) with `servers_key.multiedit` set to
/// `entry(existing entry)`. Every other byte is kept.
pub(crate) fn merge_json(
    old: &str,
    servers_key: &str,
    entry: impl Fn(Option<&Value>) -> Value,
) -> Result<String, String> {
    if old.trim().is_empty() {
        let doc = json!({ servers_key: { SERVER_NAME: entry(None) } });
        return Ok(format!("{}\n", render(&doc, "  ", "", false)));
    }
    // Checked first as a whole: duplicate-free, plain JSON, an object.
    let whole: Value = serde_json::from_str(old).map_err(|e| refuse_parse(e, old))?;
    let Value::Object(top) = &whole else {
        return Err("does not hold a JSON object".into());
    };
    let top_members: Members = serde_json::from_str(old).map_err(|e| refuse_parse(e, old))?;
    if top_members.0.len() != top.len() {
        return Err("has a key twice".into());
    }
    let top_text = old.trim();
    let new_text = match top_members.0.iter().rev().find(|(k, _)| k == servers_key) {
        None => {
            let doc = json!({ SERVER_NAME: entry(None) });
            insert_member(old, top_text, &top_members, servers_key, &doc)
        }
        Some((_, raw)) => {
            let servers_text = raw.get();
            let Ok(servers) = serde_json::from_str::<Members>(servers_text) else {
                return Err(format!("has a \"{servers_key}\" that is not a JSON object"));
            };
            match servers.0.iter().rev().find(|(k, _)| k == SERVER_NAME) {
                Some((_, current)) => {
                    let current_value: Value =
                        serde_json::from_str(current.get()).expect("parsed above");
                    let wanted = entry(Some(&current_value));
                    if wanted == current_value {
                        return Ok(old.to_string());
                    }
                    replaced(old, servers_text, current.get(), &wanted)
                }
                None => insert_member(old, servers_text, &servers, SERVER_NAME, &entry(None)),
            }
        }
    };
    merged_safely(&whole, &new_text, servers_key)?;
    Ok(new_text)
}

/// `old` with the entry whose text is `current` (a slice of `old`, inside the servers object whose
/// text is `servers_text`) replaced by `wanted`, written in the indentation around it, on one line
/// where the entry and the object up to it were on one.
fn replaced(old: &str, servers_text: &str, current: &str, wanted: &Value) -> String {
    let at = offset_in(old, current);
    let indent = indent_at(old, at).to_string();
    let (unit, _) = detect_indent(old, at);
    let compact = !current.contains('\n') && !old[offset_in(old, servers_text)..at].contains('\n');
    let rendered = eol(
        render(wanted, &unit, &indent, compact),
        old.contains("\r\n"),
    );
    format!("{}{rendered}{}", &old[..at], &old[at + current.len()..])
}

/// What was written (`new_text`) must parse, and hold everything that was there (`whole`) but our
/// entry.
fn merged_safely(whole: &Value, new_text: &str, servers_key: &str) -> Result<(), String> {
    let check: Value =
        serde_json::from_str(new_text).map_err(|e| format!("could not be merged safely ({e})"))?;
    let mut expect = whole.clone();
    let mut got = check.clone();
    for v in [&mut expect, &mut got] {
        if let Some(s) = v.get_mut(servers_key).and_then(Value::as_object_mut) {
            s.remove(SERVER_NAME);
        }
        if v.get(servers_key)
            .is_some_and(|s| s.as_object().is_some_and(|m| m.is_empty()))
        {
            v.as_object_mut().expect("object").remove(servers_key);
        }
    }
    if expect != got
        || check
            .get(servers_key)
            .and_then(|s| s.get(SERVER_NAME))
            .is_none()
    {
        return Err("could not be merged safely".into());
    }
    Ok(())
}

/// Returns `old` (Codex CLI's config.toml) with `[mcp_servers.multiedit]` running `exe mcp`; keeps
/// comments, formatting and the other members of an existing entry.
pub(crate) fn merge_toml(old: &str, exe: &str) -> Result<String, String> {
    let mut doc: toml_edit::DocumentMut = old.parse().map_err(|e: toml_edit::TomlError| {
        format!(
            "is not valid TOML ({})",
            e.to_string().trim().replace('\n', " ")
        )
    })?;
    let servers = doc.entry("mcp_servers").or_insert_with(|| {
        let mut t = toml_edit::Table::new();
        t.set_implicit(true);
        toml_edit::Item::Table(t)
    });
    let Some(servers) = servers.as_table_like_mut() else {
        return Err("has an mcp_servers that is not a table".into());
    };
    let current = servers.get(SERVER_NAME).and_then(|i| i.as_table_like());
    let same = current.is_some_and(|t| {
        t.get("command").and_then(|c| c.as_str()) == Some(exe)
            && t.get("args")
                .and_then(|a| a.as_array())
                .is_some_and(|a| a.len() == 1 && a.get(0).and_then(|v| v.as_str()) == Some("mcp"))
    });
    if same {
        return Ok(old.to_string());
    }
    if servers.get(SERVER_NAME).is_none() {
        servers.insert(SERVER_NAME, toml_edit::Item::Table(toml_edit::Table::new()));
    }
    let Some(entry) = servers
        .get_mut(SERVER_NAME)
        .and_then(|i| i.as_table_like_mut())
    else {
        return Err(format!(
            "has an mcp_servers.{SERVER_NAME} that is not a table"
        ));
    };
    entry.insert("command", toml_edit::value(exe));
    let mut args = toml_edit::Array::new();
    args.push("mcp");
    entry.insert("args", toml_edit::value(args));
    let mut text = doc.to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    // toml_edit writes the lines it adds with LF; a file whose every line break is CRLF keeps CRLF.
    let crlf = old.contains("\r\n") && old.matches('\n').count() == old.matches("\r\n").count();
    if crlf {
        text = text.replace("\r\n", "\n").replace('\n', "\r\n");
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(_: Option<&Value>) -> Value {
        json!({"command": "/bin/multiedit", "args": ["mcp"]})
    }

    #[test]
    fn json_keeps_every_other_byte() {
        let old = "{\n    \"theme\": \"dark\",\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"}\n    }\n}\n";
        let new = merge_json(old, "mcpServers", entry).unwrap();
        assert_eq!(
            new,
            "{\n    \"theme\": \"dark\",\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"},\n        \"multiedit\": {\n            \"command\": \"/bin/multiedit\",\n            \"args\": [\"mcp\"]\n        }\n    }\n}\n"
        );
        assert_eq!(merge_json(&new, "mcpServers", entry).unwrap(), new);
        let new = merge_json("{\"a\":1}", "servers", entry).unwrap();
        assert_eq!(new, "{\"a\":1,\"servers\":{\"multiedit\":{\"command\":\"/bin/multiedit\",\"args\":[\"mcp\"]}}}");
        let new = merge_json("{}\n", "servers", entry).unwrap();
        let v: Value = serde_json::from_str(&new).unwrap();
        assert_eq!(v["servers"]["multiedit"]["command"], "/bin/multiedit");
        let new = merge_json("{\"servers\": {}}", "servers", entry).unwrap();
        let v: Value = serde_json::from_str(&new).unwrap();
        assert_eq!(v["servers"]["multiedit"]["args"][0], "mcp");
        let new = merge_json(
            "{\"servers\": {\"multiedit\": {\"command\": \"/old\", \"env\": {}}}}",
            "servers",
            |e| {
                let mut e = e.cloned().unwrap_or(json!({}));
                e["command"] = json!("/new");
                e
            },
        )
        .unwrap();
        assert_eq!(
            new,
            "{\"servers\": {\"multiedit\": {\"command\":\"/new\",\"env\":{}}}}"
        );
        let new = merge_json(
            "{\n  \"servers\": {\n    \"multiedit\": {\"command\": \"/old\"}\n  }\n}",
            "servers",
            entry,
        )
        .unwrap();
        assert_eq!(new, "{\n  \"servers\": {\n    \"multiedit\": {\n      \"command\": \"/bin/multiedit\",\n      \"args\": [\"mcp\"]\n    }\n  }\n}");
    }

    #[test]
    fn json_with_comments_or_errors_is_refused() {
        assert!(merge_json("{\n // mine\n \"a\": 1\n}", "servers", entry)
            .unwrap_err()
            .contains("comments"));
        assert!(merge_json("{\"a\": 1,}", "servers", entry)
            .unwrap_err()
            .contains("not valid JSON"));
        assert!(merge_json("[1]", "servers", entry)
            .unwrap_err()
            .contains("object"));
        assert!(merge_json("{\"servers\": 3}", "servers", entry)
            .unwrap_err()
            .contains("not a JSON object"));
    }

    #[test]
    fn toml_keeps_comments() {
        let old =
            "# my settings\nmodel = \"o3\" # inline\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let new = merge_toml(old, "/bin/multiedit").unwrap();
        assert!(new.starts_with(old), "{new}");
        assert!(
            new.contains(
                "[mcp_servers.multiedit]\ncommand = \"/bin/multiedit\"\nargs = [\"mcp\"]\n"
            ),
            "{new}"
        );
        assert_eq!(merge_toml(&new, "/bin/multiedit").unwrap(), new);
        let fresh = merge_toml("", "/bin/multiedit").unwrap();
        assert_eq!(
            fresh,
            "[mcp_servers.multiedit]\ncommand = \"/bin/multiedit\"\nargs = [\"mcp\"]\n"
        );
        assert!(merge_toml("a = ", "/x")
            .unwrap_err()
            .contains("not valid TOML"));
    }

    #[test]
    fn crlf_files_keep_crlf() {
        let old = "{\r\n  \"mcpServers\": {\r\n    \"other\": {\"command\": \"x\"}\r\n  }\r\n}\r\n";
        let new = merge_json(old, "mcpServers", entry).unwrap();
        assert_eq!(
            new.matches('\n').count(),
            new.matches("\r\n").count(),
            "{new:?}"
        );
        assert!(new.starts_with("{\r\n  \"mcpServers\": {\r\n    \"other\": {\"command\": \"x\"},\r\n    \"multiedit\": {\r\n"), "{new:?}");
        let new = merge_json("{\r\n  \"a\": 1\r\n}\r\n", "servers", entry).unwrap();
        assert_eq!(
            new.matches('\n').count(),
            new.matches("\r\n").count(),
            "{new:?}"
        );
        let old = "# mine\r\nmodel = \"o3\"\r\n";
        let new = merge_toml(old, "/bin/multiedit").unwrap();
        assert!(new.starts_with(old), "{new:?}");
        assert_eq!(
            new.matches('\n').count(),
            new.matches("\r\n").count(),
            "{new:?}"
        );
    }
}
