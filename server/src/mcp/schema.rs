//! The plan's JSON Schema: one canonical file (`server/schema/plan.schema.json`), compiled into the
//! binary as both tools' `inputSchema`. The VS Code extension's two copies (its `*.multiedit.json`
//! validation schema and its language-model tool's `inputSchema`) must equal it; `tests/mcp.rs`
//! fails when they drift.
//!
//! The schema keeps to the keywords every MCP client passes on to its model (type, properties,
//! required, items, enum, description, minItems, minimum): no `$ref`/`$defs`, no `oneOf`/`anyOf`,
//! no `additionalProperties`, no `default`, which Gemini's function declarations and some other
//! clients reject. The engine checks the rest and names the field to fix.

use std::sync::{Arc, OnceLock};

use rmcp::model::JsonObject;

/// The canonical plan schema, as text.
pub const PLAN_SCHEMA: &str = include_str!("../../schema/plan.schema.json");

/// The plan schema as the JSON object MCP tools carry (parsed once).
pub(crate) fn plan() -> Arc<JsonObject> {
    static SCHEMA: OnceLock<Arc<JsonObject>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| object(PLAN_SCHEMA, "plan.schema.json"))
        .clone()
}

/// The canonical patch schema (`multiedit_patch`, and the VS Code tool's patch input), as text.
pub const PATCH_SCHEMA: &str = include_str!("../../schema/patch.schema.json");

/// The patch schema as an MCP tool's input schema.
pub(crate) fn patch() -> Arc<JsonObject> {
    static SCHEMA: OnceLock<Arc<JsonObject>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| object(PATCH_SCHEMA, "patch.schema.json"))
        .clone()
}

/// `multiedit_read`'s input: files, each with an optional line offset and limit.
pub(crate) const READ_SCHEMA: &str = include_str!("../../schema/read.schema.json");

pub(crate) fn read() -> Arc<JsonObject> {
    static SCHEMA: OnceLock<Arc<JsonObject>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| object(READ_SCHEMA, "read.schema.json"))
        .clone()
}

/// `multiedit_write`'s input: the file, its whole new text, the hash of the text it replaces.
pub(crate) const WRITE_SCHEMA: &str = include_str!("../../schema/write.schema.json");

pub(crate) fn write() -> Arc<JsonObject> {
    static SCHEMA: OnceLock<Arc<JsonObject>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| object(WRITE_SCHEMA, "write.schema.json"))
        .clone()
}

/// `multiedit_symbols`' input: the file.
pub const SYMBOLS_SCHEMA: &str = include_str!("../../schema/symbols.schema.json");

pub(crate) fn symbols() -> Arc<JsonObject> {
    static SCHEMA: OnceLock<Arc<JsonObject>> = OnceLock::new();
    SCHEMA
        .get_or_init(|| object(SYMBOLS_SCHEMA, "symbols.schema.json"))
        .clone()
}

fn object(text: &str, name: &str) -> Arc<JsonObject> {
    match serde_json::from_str(text) {
        Ok(serde_json::Value::Object(o)) => Arc::new(o),
        _ => panic!("server/schema/{name} must be a JSON object"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_object_schema_in_portable_keywords() {
        for schema in [
            super::plan(),
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
