//! The edit formats assistants emit besides MultiEdit plans, each parsed into the one plan the engine
//! runs: unified diffs (`git diff`, `diff -u`), apply_patch envelopes (`*** Begin Patch`) and
//! SEARCH/REPLACE blocks. A parser only reads text: it never matches, reads files or writes (as
//! codex-rs/apply-patch keeps parser, matcher and applier apart). Where a hunk lies is the engine's
//! business (`engine::Anchor`).
//!
//! `unified.rs`, `envelope.rs`, `blocks.rs`: one parser each (`test_support.rs`: what their unit tests
//! share). This file: the shape they produce, the detection, and the step from a patch (paths as
//! written, often relative) to a plan (absolute paths).

use std::path::{Path, PathBuf};

use crate::engine::{Anchor, Edit, Expect, FileOp, FilePlan, Matching, Options, Plan, Refusal};

mod blocks;
mod envelope;
mod error;
pub mod git_path;
mod patch;
#[cfg(test)]
mod test_support;
mod unified;

pub use blocks::{flavor, Flavor, ROO_REACH};
pub use error::ParseError;
pub use patch::{Format, Hunk, Patch, PatchFile, PatchOp};

/// The text's format: `Some` when one of the formats' markers leads it, `None` when none fits.
///
/// SEARCH/REPLACE blocks are tried first: their SEARCH and REPLACE parts are a file's lines as they
/// are, so a block editing a README or a test that shows a diff or an envelope holds `--- `/`+++ `,
/// `@@ -` or `*** Begin Patch` at line starts. The other two formats prefix every body line
/// (' ', '-', '+'), so a SEARCH marker never starts one of their lines inside a hunk.
pub fn detect(text: &str) -> Option<Format> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        return Some(Format::Plan);
    }
    if blocks::looks_like(text) {
        return Some(Format::SearchReplace);
    }
    if envelope::looks_like(text) {
        return Some(Format::ApplyPatch);
    }
    if unified::looks_like(text) {
        return Some(Format::Diff);
    }
    None
}

/// Parses `text` as `format`. A text that is no format is refused with what each parser expected and
/// where it stopped.
pub fn parse(text: &str, format: Format) -> Result<Patch, Refusal> {
    parse_with(text, format, None)
}

/// Parses `text` as `format`, SEARCH/REPLACE blocks that name no file taking `file_path` (Roo Code
/// sends the path beside its blocks). Only blocks can leave their file out: a `file_path` with
/// another format is refused, never ignored.
pub fn parse_with(text: &str, format: Format, file_path: Option<&str>) -> Result<Patch, Refusal> {
    file_path_fits(format, file_path)?;
    match format {
        Format::Diff => Ok(unified::parse(text)?),
        Format::ApplyPatch => Ok(envelope::parse(text)?),
        Format::SearchReplace => Ok(blocks::parse(text, file_path)?),
        Format::Plan => Err(Refusal::input(
            "a JSON plan is not a patch; parse it with engine::parse_plan",
        )),
    }
}

/// The refusal for a text no parser accepts: each format, and why it did not fit.
pub fn unknown_format(text: &str) -> Refusal {
    let mut why =
        String::from("the text is none of the formats multiedit applies. Tried, in order:");
    let plan = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(_) => "it is JSON but not an object".to_string(),
        Err(e) => format!(
            "not JSON: {}",
            crate::engine::json_error::describe(text, &e)
        ),
    };
    why.push_str(&format!("\n- a MultiEdit JSON plan: {plan}"));
    for f in [Format::ApplyPatch, Format::Diff, Format::SearchReplace] {
        let stop = match parse(text, f) {
            Ok(_) => "it parses, but holds no file".to_string(),
            Err(r) => first_line(&r.message).to_string(),
        };
        why.push_str(&format!("\n- {}: {stop}", f.describe()));
    }
    Refusal::input(why)
}

fn first_line(s: &str) -> &str {
    let s = s
        .strip_prefix(crate::engine::refusal::INPUT_PREFIX)
        .unwrap_or(s);
    s.lines().next().unwrap_or("")
}

/// Turns a patch into the engine's plan: each path resolved against `root` (absolute paths are kept),
/// each hunk an anchored edit. Without a root, a relative path is refused, and so is a path `git
/// apply` refuses as unsafe (`git_path`), in every format.
pub fn to_plan(patch: &Patch, root: Option<&Path>, options: Options) -> Result<Plan, Refusal> {
    let resolve = |p: &str| -> Result<String, Refusal> {
        if let Some(refused) = git_path::refusal_text(p) {
            return Err(Refusal::invalid(refused).in_file(p));
        }
        let path = Path::new(p);
        if path.is_absolute() || p.starts_with("file://") {
            return Ok(p.to_string());
        }
        let Some(root) = root else {
            return Err(Refusal::input(format!(
                "the patch names {p}, a relative path, and there is no root folder to resolve it \
                 against: give `root` (the folder the patch's paths start from)"
            )));
        };
        Ok(join(root, p).to_string_lossy().into_owned())
    };
    let mut files = Vec::with_capacity(patch.files.len());
    for f in &patch.files {
        let file_path = resolve(&f.path)?;
        let op = match &f.op {
            PatchOp::Update => FileOp::Edit,
            PatchOp::Add => FileOp::Create,
            PatchOp::Delete => FileOp::Delete,
            PatchOp::Move(to) => FileOp::MoveTo(resolve(to)?),
        };
        // A diff's bytes are taken as written once they carry a `\r` or change a mark: only a diff
        // with neither may be an LF diff of a CRLF file (or leave a mark out).
        let literal = patch.format == Format::Diff
            && f.hunks
                .iter()
                .any(|h| h.old.contains('\r') || h.new.contains('\r') || changes_bom(h));
        let edits = f
            .hunks
            .iter()
            .map(|h| edit_of(h, &f.path, literal))
            .collect::<Result<Vec<_>, _>>()?;
        // A new file gets git's 100644 from the umask alone.
        let mode = f.mode.filter(|&m| !(f.op == PatchOp::Add && m == 0o100644));
        files.push(FilePlan {
            file_path,
            edits,
            op,
            mode,
            literal,
        });
    }
    let mut seen = std::collections::HashSet::new();
    for f in &files {
        if !seen.insert(f.file_path.as_str()) {
            return Err(Refusal::input(format!(
                "the patch changes {} twice: give each file's hunks in one place",
                f.file_path
            )));
        }
    }
    Ok(Plan {
        files,
        options,
        rename: None,
    })
}

/// A hunk as an anchored edit. A diff of a file that starts with a byte order mark shows the mark in
/// its first line; unless the edit is `literal` (a diff that adds or removes the mark is), the engine
/// keeps a file's mark out of matching, so a hunk that keeps it matches without it, and one that adds
/// or removes it is refused.
fn edit_of(h: &Hunk, path: &str, literal: bool) -> Result<Edit, Refusal> {
    let (mut old, mut new) = (h.old.as_str(), h.new.as_str());
    let mut bom = false;
    if !literal && !old.is_empty() && (old.starts_with(BOM) || new.starts_with(BOM)) {
        match (old.strip_prefix(BOM), new.strip_prefix(BOM)) {
            (Some(o), Some(n)) => {
                (old, new) = (o, n);
                bom = true;
            }
            _ => {
                return Err(Refusal::new(
                    crate::engine::Kind::NotFound,
                    format!(
                        "{} adds or removes the byte order mark at the start of {path}: multiedit keeps a file's mark as it \
                         is. Nothing was changed; change the mark with another tool, or apply the patch with git apply.",
                        crate::engine::sentence(&h.anchor.label)
                    ),
                )
                .in_file(path))
            }
        }
    }
    Ok(Edit {
        old_string: old.to_string(),
        new_string: new.to_string(),
        expect: Expect::One,
        // Without old text a hunk adds lines where its anchor says (after a line, at the end, or, for
        // a diff's `@@ -0,0 +1,n @@`, into a file that exists and is empty); without an anchor it is a
        // new file's content.
        anchor: (!old.is_empty()
            || h.anchor.forward
            || h.anchor.at_end
            || h.anchor.line == Some(0))
        .then(|| {
            Box::new(Anchor {
                bom,
                ..h.anchor.clone()
            })
        }),
        target: None,
    })
}

const BOM: char = '\u{feff}';

/// Whether a hunk adds or removes the byte order mark at the start of the file.
fn changes_bom(h: &Hunk) -> bool {
    !h.old.is_empty() && h.old.starts_with(BOM) != h.new.starts_with(BOM)
}

/// `root` joined with a relative path whose `.` and `..` steps are taken lexically, so the plan shows
/// the path the user means (`/w/src/a.rs`, not `/w/./src/../src/a.rs`). Whether it stays inside the
/// workspace is checked on real paths by the front end, as for any plan.
fn join(root: &Path, rel: &str) -> PathBuf {
    let mut out = root.to_path_buf();
    // A backslash is a character of a Unix file name (`a\\b.txt`), a separator only on Windows.
    let separators: &[char] = if cfg!(windows) { &['/', '\\'] } else { &['/'] };
    for part in rel.split(separators) {
        match part {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            p => out.push(p),
        }
    }
    out
}

/// Refuses a `file_path` given with a format whose text names its own files.
fn file_path_fits(format: Format, file_path: Option<&str>) -> Result<(), Refusal> {
    match (file_path, format) {
        (Some(p), Format::Diff | Format::ApplyPatch | Format::Plan) => Err(Refusal::input(format!(
            "file_path ({p}) names the file of SEARCH/REPLACE blocks that name none, but the text is {}, which names \
             its own files: leave file_path out",
            format.describe()
        ))),
        _ => Ok(()),
    }
}

/// The one entry every front end uses: `text` in whatever format (`None`: detect it), as a plan.
/// Relative paths of a patch resolve against `root`; `matching` applies to patches (a plan names its
/// own). The same as a `PatchRequest` with no `match` and no `file_path`.
pub fn plan_from_text(
    text: &str,
    format: Option<Format>,
    root: Option<&Path>,
    matching: Matching,
) -> Result<(Plan, Format), Refusal> {
    let matching = (matching == Matching::Tolerant).then_some(matching);
    PatchRequest {
        text: text.to_string(),
        format,
        root: root.map(Path::to_path_buf),
        matching,
        file_path: None,
    }
    .plan_and_format(None)
}

/// A patch as the language server's commands, the bridge, the MCP tool and `multiedit apply` take it:
/// `{"patch": TEXT, "format"?, "root"?, "match"?, "file_path"?}`, checked field by field like a plan.
#[derive(Debug, Clone)]
pub struct PatchRequest {
    pub text: String,
    /// `None`: detect it.
    pub format: Option<Format>,
    pub root: Option<PathBuf>,
    /// `None`: not given (exact for a patch; a plan's own for a plan).
    pub matching: Option<Matching>,
    /// The file of SEARCH/REPLACE blocks that name none (relative to the root, or absolute).
    pub file_path: Option<String>,
}

const REQUEST_FIELDS: [&str; 5] = ["patch", "format", "root", "match", "file_path"];

impl PatchRequest {
    /// `extra`: fields the caller handles itself (the MCP tool's `preview`).
    pub fn from_value(value: &serde_json::Value, extra: &[&str]) -> Result<PatchRequest, Refusal> {
        use serde_json::Value;
        let invalid = |what: String| Refusal::input(&what);
        let Value::Object(obj) = value else {
            return Err(invalid(
                "the patch request must be an object: {\"patch\": \"...\"}".into(),
            ));
        };
        for key in obj.keys() {
            if !REQUEST_FIELDS.contains(&key.as_str()) && !extra.contains(&key.as_str()) {
                return Err(invalid(format!(
                    "An unexpected parameter `{key}` was provided with `patch` (allowed: {}{})",
                    REQUEST_FIELDS.join(", "),
                    extra.iter().map(|e| format!(", {e}")).collect::<String>()
                )));
            }
        }
        let text = match obj.get("patch") {
            Some(Value::String(t)) => t.clone(),
            _ => return Err(invalid("`patch` must be a string: the patch's text".into())),
        };
        let format = match obj.get("format") {
            None => None,
            Some(Value::String(name)) if name == "auto" => None,
            Some(Value::String(name)) => Some(Format::from_name(name).ok_or_else(|| {
                invalid(format!("`format` must be one of \"auto\", \"plan\", \"diff\", \"apply-patch\", \"search-replace\" but is \"{name}\""))
            })?),
            Some(_) => return Err(invalid("`format` must be a string".into())),
        };
        let matching = match obj.get("match").map(Value::as_str) {
            None => None,
            Some(Some("exact")) => Some(Matching::Exact),
            Some(Some("tolerant")) => Some(Matching::Tolerant),
            _ => return Err(invalid("`match` must be \"exact\" or \"tolerant\"".into())),
        };
        let root = match obj.get("root") {
            None => None,
            Some(Value::String(r)) => match crate::paths::to_path(r) {
                Ok(p) if p.is_absolute() => Some(p),
                _ => {
                    return Err(invalid(format!(
                        "`root` must be an absolute path or a file:// URI, but is \"{r}\""
                    )))
                }
            },
            Some(_) => {
                return Err(invalid(
                    "`root` must be a string: the folder the patch's paths start from".into(),
                ))
            }
        };
        let file_path = match obj.get("file_path") {
            None => None,
            Some(Value::String(p)) if !p.trim().is_empty() && !p.contains('\0') => Some(p.clone()),
            Some(_) => {
                return Err(invalid(
                    "`file_path` must be a non-empty string: the path of the file the SEARCH/REPLACE blocks edit, relative to `root` or absolute".into(),
                ))
            }
        };
        Ok(PatchRequest {
            text,
            format,
            root,
            matching,
            file_path,
        })
    }

    /// The plan, relative paths resolved against `root`, else `fallback`.
    pub fn plan(&self, fallback: Option<&Path>) -> Result<Plan, Refusal> {
        self.plan_and_format(fallback).map(|(plan, _)| plan)
    }

    /// The plan and the format the text was read as. A JSON plan takes the request's `match` where it
    /// names none of its own; one whose own contradicts it is refused, naming both: a mode the caller
    /// gave is never ignored.
    pub fn plan_and_format(&self, fallback: Option<&Path>) -> Result<(Plan, Format), Refusal> {
        let format = match self.format {
            Some(f) => f,
            None => detect(&self.text).ok_or_else(|| unknown_format(&self.text))?,
        };
        if format == Format::Plan {
            file_path_fits(format, self.file_path.as_deref())?;
            let mut plan = crate::engine::parse_plan(&self.text)?;
            if let Some(asked) = self.matching {
                let own = serde_json::from_str::<serde_json::Value>(&self.text)
                    .ok()
                    .and_then(|v| v.get("match").and_then(|m| m.as_str().map(str::to_string)));
                match own {
                    None => plan.options.matching = asked,
                    Some(own) if own == matching_name(asked) => {}
                    Some(own) => {
                        return Err(Refusal::input(format!(
                            "the plan's own \"match\" is \"{own}\" and the request asks for \"{}\" (--match, or `match` beside the \
                             patch): they contradict each other, so nothing was applied. Give the matching mode once, in the \
                             plan or beside it",
                            matching_name(asked)
                        )))
                    }
                }
            }
            return Ok((plan, format));
        }
        let patch = parse_with(&self.text, format, self.file_path.as_deref())?;
        let root = self.root.as_deref().or(fallback);
        let options = Options {
            matching: self.matching.unwrap_or_default(),
            ..Options::default()
        };
        Ok((to_plan(&patch, root, options)?, format))
    }

    /// The request as JSON, with `root` set: what the MCP server forwards to an editor.
    pub fn to_value(&self, root: &Path) -> serde_json::Value {
        let mut v = serde_json::json!({"patch": self.text, "root": root.to_string_lossy()});
        if let Some(f) = self.format {
            v["format"] = f.name().into();
        }
        if let Some(m) = self.matching {
            v["match"] = matching_name(m).into();
        }
        if let Some(p) = &self.file_path {
            v["file_path"] = p.as_str().into();
        }
        v
    }
}

fn matching_name(m: Matching) -> &'static str {
    match m {
        Matching::Exact => "exact",
        Matching::Tolerant => "tolerant",
    }
}
