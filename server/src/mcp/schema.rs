//! The tools' input schemas. Each is one canonical file (`server/schema/*.schema.json`), which the VS
//! Code extension's copies must equal (`tests/mcp.rs` fails when they drift). MCP serves a compact
//! form of each (`compact`): the same structure, so it accepts exactly the inputs the canonical one
//! accepts, with the canonical descriptions replaced by the short ones of a table here: every
//! definition of every tool goes into every request of most agents, so `tools/list` is kept under
//! 8 KB (`tests/mcp.rs` `tools_list_stays_within_its_budget`).
//!
//! The schemas keep to the keywords every MCP client passes on to its model (type, properties,
//! required, items, enum, description, minItems, minimum): no `$ref`/`$defs`, no `oneOf`/`anyOf`,
//! no `additionalProperties`, no `default`, which Gemini's function declarations and some other
//! clients reject. The engine checks the rest and names the field to fix.

use std::sync::{Arc, OnceLock};

use rmcp::model::JsonObject;
use serde_json::Value;

/// The canonical plan schema, as text.
pub const PLAN_SCHEMA: &str = include_str!("../../schema/plan.schema.json");
/// The canonical patch schema (`multiedit_patch`, and the VS Code tool's patch input), as text.
pub const PATCH_SCHEMA: &str = include_str!("../../schema/patch.schema.json");
/// `multiedit_read`'s input: files, each with an optional line offset and limit.
pub const READ_SCHEMA: &str = include_str!("../../schema/read.schema.json");
/// `multiedit_write`'s input: the file, its whole new text, the hash of the text it replaces.
pub const WRITE_SCHEMA: &str = include_str!("../../schema/write.schema.json");
/// `multiedit_symbols`' input: the file.
pub const SYMBOLS_SCHEMA: &str = include_str!("../../schema/symbols.schema.json");

/// The short descriptions MCP serves, by JSON pointer into the canonical schema; a description the
/// table leaves out is not served (the tool's own description says it).
type Short = &'static [(&'static str, &'static str)];

const PLAN_SHORT: Short = &[
    ("/properties/file_path", "Absolute path of the file."),
    ("/properties/edits", "The edits for file_path, applied in order."),
    (
        "/properties/edits/items/properties/old_string",
        "Exact text to replace, copied from the file; once unless replace_all. Empty in a missing file's first \
         edit: create it.",
    ),
    ("/properties/edits/items/properties/new_string", "The replacement, taken literally."),
    ("/properties/edits/items/properties/replace_all", "Replace every occurrence."),
    (
        "/properties/edits/items/properties/symbol",
        "Instead of old_string: a symbol's name path (Class/method; /name: top level; name[1]: the second of several).",
    ),
    ("/properties/edits/items/properties/replace", "With symbol: replace it whole, or its body."),
    ("/properties/edits/items/properties/insert", "With symbol: insert new_string before or after it."),
    ("/properties/files", "Several files instead of file_path and edits: each {file_path, edits}."),
    ("/properties/rename", "Rename a symbol everywhere, through its language server, before the edits."),
    ("/properties/rename/properties/file_path", "A file holding the symbol."),
    ("/properties/rename/properties/symbol", "Its name path; or line and column (1-based)."),
    ("/properties/mode", "partial: apply the edits that match, report the others."),
    ("/properties/dialect", "claude-code: every edit must also match the original text."),
    ("/properties/match", "tolerant: accept one certain near match (whitespace, indentation, quotes)."),
];

const PATCH_SHORT: Short = &[
    ("/properties/patch", "The patch's text."),
    ("/properties/format", "auto (default) tells them apart."),
    (
        "/properties/root",
        "Absolute folder the patch's relative paths start from.",
    ),
    (
        "/properties/file_path",
        "For SEARCH/REPLACE blocks that name no file: the file.",
    ),
    (
        "/properties/match",
        "tolerant: also across whitespace, indentation, quotes, when certain.",
    ),
    (
        "/properties/preview",
        "true: only the diff, nothing changed.",
    ),
];

const READ_SHORT: Short = &[
    (
        "/properties/file_path",
        "Absolute path of the file (or give files).",
    ),
    (
        "/properties/files",
        "Several files, each {file_path, offset, limit}.",
    ),
    ("/properties/offset", "First line to show (1-based)."),
    ("/properties/limit", "How many lines (default 2000)."),
];

const WRITE_SHORT: Short = &[
    ("/properties/file_path", "Absolute path of the file."),
    ("/properties/content", "Its whole new text."),
    (
        "/properties/sha256",
        "To replace a file: the sha256 of its text as you last read it. Leave out to create.",
    ),
];

const SYMBOLS_SHORT: Short = &[("/properties/file_path", "Absolute path of the file.")];

/// The plan schema as MCP serves it (`multiedit`), parsed once.
pub(crate) fn plan() -> Arc<JsonObject> {
    static SCHEMA: OnceLock<Arc<JsonObject>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| compact(PLAN_SCHEMA, PLAN_SHORT))
        .clone()
}

/// `multiedit_preview`'s input: the plan `multiedit` takes, not sent a second time.
pub(crate) fn preview() -> Arc<JsonObject> {
    static SCHEMA: OnceLock<Arc<JsonObject>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let schema = serde_json::json!({"type": "object", "description": "The plan, exactly as multiedit takes it."});
            Arc::new(schema.as_object().cloned().unwrap_or_default())
        })
        .clone()
}

pub(crate) fn patch() -> Arc<JsonObject> {
    static SCHEMA: OnceLock<Arc<JsonObject>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| compact(PATCH_SCHEMA, PATCH_SHORT))
        .clone()
}

pub(crate) fn read() -> Arc<JsonObject> {
    static SCHEMA: OnceLock<Arc<JsonObject>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| compact(READ_SCHEMA, READ_SHORT))
        .clone()
}

pub(crate) fn write() -> Arc<JsonObject> {
    static SCHEMA: OnceLock<Arc<JsonObject>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| compact(WRITE_SCHEMA, WRITE_SHORT))
        .clone()
}

pub(crate) fn symbols() -> Arc<JsonObject> {
    static SCHEMA: OnceLock<Arc<JsonObject>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| compact(SYMBOLS_SCHEMA, SYMBOLS_SHORT))
        .clone()
}

/// The canonical schema `text` with every description taken out, then those of `short` put in.
fn compact(text: &str, short: Short) -> Arc<JsonObject> {
    let mut schema: Value = serde_json::from_str(text).expect("a canonical schema is JSON");
    strip_descriptions(&mut schema);
    for (pointer, description) in short {
        if let Some(Value::Object(o)) = schema.pointer_mut(pointer) {
            o.insert("description".into(), Value::String((*description).into()));
        }
    }
    match schema {
        Value::Object(o) => Arc::new(o),
        _ => panic!("a canonical schema is a JSON object"),
    }
}

/// `schema` without any description: its structure, which alone decides what it accepts.
pub fn strip_descriptions(schema: &mut Value) {
    if let Value::Object(o) = schema {
        o.remove("description");
        if let Some(Value::Object(props)) = o.get_mut("properties") {
            props.values_mut().for_each(strip_descriptions);
        }
        if let Some(items) = o.get_mut("items") {
            strip_descriptions(items);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_object_schema_in_portable_keywords() {
        for schema in [
            super::plan(),
            super::preview(),
            super::patch(),
            super::read(),
            super::write(),
            super::symbols(),
        ] {
            portable(&schema);
        }
    }

    fn portable(schema: &serde_json::Map<String, serde_json::Value>) {
        assert_eq!(
            schema["type"], "object",
            "MCP input schemas are object schemas at top level"
        );
        fn walk(v: &serde_json::Value, at: &str) {
            const ALLOWED: &[&str] = &[
                "type",
                "description",
                "properties",
                "required",
                "items",
                "enum",
                "minItems",
                "minimum",
            ];
            if let serde_json::Value::Object(o) = v {
                for (k, sub) in o {
                    if at.ends_with("/properties") {
                        walk(sub, &format!("{at}/{k}"));
                        continue;
                    }
                    assert!(
                        ALLOWED.contains(&k.as_str()),
                        "keyword `{k}` at {at} is not portable across MCP clients"
                    );
                    walk(sub, &format!("{at}/{k}"));
                }
            }
        }
        walk(&serde_json::Value::Object(schema.clone()), "");
    }
}

#[cfg(test)]
mod compact_tests {
    use super::*;

    /// The compact schemas accept exactly what the canonical ones accept: the same structure once
    /// descriptions are left out, and every short description sits where the canonical one has one.
    #[test]
    fn compact_schemas_have_the_canonical_structure() {
        for (canonical, short, served) in [
            (PLAN_SCHEMA, PLAN_SHORT, plan()),
            (PATCH_SCHEMA, PATCH_SHORT, patch()),
            (READ_SCHEMA, READ_SHORT, read()),
            (WRITE_SCHEMA, WRITE_SHORT, write()),
            (SYMBOLS_SCHEMA, SYMBOLS_SHORT, symbols()),
        ] {
            let full: Value = serde_json::from_str(canonical).unwrap();
            for (pointer, _) in short {
                assert!(
                    full.pointer(pointer)
                        .and_then(|v| v.get("description"))
                        .is_some(),
                    "{pointer} names no described field of the canonical schema"
                );
            }
            let (mut a, mut b) = (full, Value::Object((*served).clone()));
            strip_descriptions(&mut a);
            strip_descriptions(&mut b);
            assert_eq!(a, b);
        }
    }
}
