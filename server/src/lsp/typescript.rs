//! The extension's half of the wire contract, generated: `extension-vscode/src/lsp_ext.generated.ts`
//! holds every type, request method, command name and refusal kind multiedit adds to LSP, written from
//! the Rust types themselves (their JSON Schemas, with `schemars`), so the two sides cannot drift. The
//! test fails when the committed file is not what the types give; `MULTIEDIT_BLESS=1 cargo test -p
//! multiedit --lib typescript` rewrites it, and the extension's type check then fails wherever it reads a
//! field or value that is gone. `lsp_ext.ts` re-exports it beside the request types the client uses.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use schemars::JsonSchema;
use serde_json::{Map, Value};
use tower_lsp_server::ls_types::request::Request;

use super::capabilities::{APPLY, PREVIEW, READ, SYMBOLS};
use crate::engine;
use crate::protocol::ext::*;
use crate::refusal::{Kind, Refusal};
use crate::result::{PlanResult, ReadResult, RefusalData, SymbolsResult};

/// Every type the extension reads or writes on the wire, so that each lands in the schema's `$defs`.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct Wire {
    plan_result: PlanResult,
    read_result: ReadResult,
    symbols_result: SymbolsResult,
    save_params: SaveParams,
    save_answer: SaveAnswer,
    approve_params: ApproveParams,
    approve_answer: ApproveAnswer,
    diagnostics_params: DiagnosticsParams,
    diagnostics_answer: DiagnosticsAnswer,
    symbols_params: SymbolsParams,
    symbols_answer: SymbolsAnswer,
    rename_params: RenameParams,
    rename_answer: RenameAnswer,
    call_options: CallOptions,
    initialization_options: InitializationOptions,
}

/// The methods, commands and constants written beside the types.
fn constants() -> Vec<(&'static str, String, &'static str)> {
    vec![
        ("SERVER_APPLY", APPLY.into(), "Apply a plan, patch or write: `[request, CallOptions?]`, answered with a PlanResult."),
        ("SERVER_PREVIEW", PREVIEW.into(), "The same checks, nothing applied: answered with a PlanResult holding the diff and the edit."),
        ("SERVER_READ", READ.into(), "Files as the editor holds them: `[{file_path} | {files}]`, answered with a ReadResult."),
        ("SERVER_SYMBOLS", SYMBOLS.into(), "A file's outline: `[{file_path}]`, answered with a SymbolsResult."),
        ("APPROVE_METHOD", ApproveRequest::METHOD.into(), "Server to editor: one approval for a whole plan (ApproveParams, ApproveAnswer)."),
        ("SAVE_METHOD", SaveRequest::METHOD.into(), "Server to editor: which documents are dirty, then save them (SaveParams, SaveAnswer)."),
        ("DIAGNOSTICS_METHOD", DiagnosticsRequest::METHOD.into(), "Server to editor: the diagnostics before and after an edit (DiagnosticsParams, DiagnosticsAnswer)."),
        ("SYMBOLS_METHOD", SymbolsRequest::METHOD.into(), "Server to editor: a document's symbols (SymbolsParams, SymbolsAnswer)."),
        ("RENAME_METHOD", RenameRequest::METHOD.into(), "Server to editor: a rename's edit, unapplied (RenameParams, RenameAnswer)."),
    ]
}

/// The TypeScript file, from the types' schemas.
pub(crate) fn typescript() -> String {
    let mut schema = serde_json::to_value(schemars::schema_for!(Wire)).expect("a schema");
    let defs = schema["$defs"]
        .take()
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut out = String::from(
        "// Generated from server/src/protocol/ext.rs and server/src/result.rs by server/src/lsp/typescript.rs:\n\
         // do not edit. `MULTIEDIT_BLESS=1 cargo test -p multiedit --lib typescript` writes it again.\n\
         /* eslint-disable */\n\n",
    );
    for (name, value, doc) in constants() {
        let _ = writeln!(
            out,
            "/** {doc} */\nexport const {name} = {};\n",
            Value::String(value)
        );
    }
    let named: BTreeMap<&String, &Value> = defs.iter().filter(|(n, _)| is_name(n)).collect();
    for (name, def) in named {
        if let Some(doc) = def["description"].as_str() {
            out.push_str(&jsdoc(doc, ""));
        }
        match object_body(def, &defs, "") {
            Some(body) => {
                let _ = writeln!(out, "export interface {name} {body}\n");
            }
            None => {
                let _ = writeln!(out, "export type {name} = {};\n", ts(def, &defs, ""));
            }
        }
    }
    out
}

/// A definition's name the file may use as one (generic instances, `OrBool<…>`, are written inline).
fn is_name(name: &str) -> bool {
    name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn jsdoc(text: &str, indent: &str) -> String {
    let text = text.replace("*/", "*\\/");
    if !text.contains('\n') {
        return format!("{indent}/** {text} */\n");
    }
    let mut out = format!("{indent}/**\n");
    for line in text.lines() {
        let _ = writeln!(out, "{indent} * {line}");
    }
    out + &format!("{indent} */\n")
}

/// `{ field: T; other?: U; }` for a schema of an object with properties; `None` otherwise.
fn object_body(schema: &Value, defs: &Map<String, Value>, indent: &str) -> Option<String> {
    let props = schema["properties"].as_object()?;
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let inner = format!("{indent}  ");
    let mut out = String::from("{\n");
    for (field, sub) in props {
        if let Some(doc) = sub["description"].as_str() {
            out.push_str(&jsdoc(doc, &inner));
        }
        let optional = if required.contains(&field.as_str()) {
            ""
        } else {
            "?"
        };
        let _ = writeln!(out, "{inner}{field}{optional}: {};", ts(sub, defs, &inner));
    }
    out.push_str(indent);
    out.push('}');
    Some(out)
}

/// A schema as a TypeScript type.
fn ts(schema: &Value, defs: &Map<String, Value>, indent: &str) -> String {
    if schema == &Value::Bool(true)
        || schema
            .as_object()
            .is_some_and(|o| o.keys().all(|k| k == "description"))
    {
        return "unknown".into();
    }
    if let Some(r) = schema["$ref"].as_str() {
        let name = r.trim_start_matches("#/$defs/");
        return match defs.get(name) {
            Some(def) if !is_name(name) => ts(def, defs, indent),
            _ => name.to_string(),
        };
    }
    if let Some(c) = schema.get("const") {
        return c.to_string();
    }
    if let Some(values) = schema["enum"].as_array() {
        return values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(" | ");
    }
    for (list, join) in [("oneOf", " | "), ("anyOf", " | "), ("allOf", " & ")] {
        if let Some(parts) = schema[list].as_array() {
            let parts: Vec<String> = parts.iter().map(|p| ts(p, defs, indent)).collect();
            return parts.join(join);
        }
    }
    if let Some(body) = object_body(schema, defs, indent) {
        return body;
    }
    let one = |t: &str| -> String {
        match t {
            "string" => "string".into(),
            "integer" | "number" => "number".into(),
            "boolean" => "boolean".into(),
            "null" => "null".into(),
            "array" => format!("{}[]", wrap(&ts(&schema["items"], defs, indent))),
            "object" => match schema.get("additionalProperties") {
                Some(v) if v.is_object() => format!("Record<string, {}>", ts(v, defs, indent)),
                _ => "Record<string, unknown>".into(),
            },
            _ => "unknown".into(),
        }
    };
    match &schema["type"] {
        Value::String(t) => one(t),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .map(one)
            .collect::<Vec<_>>()
            .join(" | "),
        _ => "unknown".into(),
    }
}

/// A union wrapped in parentheses, for `T[]`.
fn wrap(t: &str) -> String {
    if t.contains(" | ") || t.contains(" & ") {
        format!("({t})")
    } else {
        t.to_string()
    }
}

#[test]
fn the_extensions_generated_wire_types_are_these_types() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../extension-vscode/src/lsp_ext.generated.ts");
    let now = typescript();
    if std::env::var_os("MULTIEDIT_BLESS").is_some() {
        std::fs::write(&path, &now).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == now,
        "{} is not what the wire types in server/src/protocol/ext.rs and server/src/result.rs give: run \
         `MULTIEDIT_BLESS=1 cargo test -p multiedit --lib typescript`, then `npm run typecheck` in \
         extension-vscode to see what the change breaks there.",
        path.display()
    );
}

/// `RefusalData` names exactly the fields a refusal travels with, and `RefusalKind` every kind.
#[test]
fn the_refusal_shape_is_the_engines() {
    let full = Refusal::of(engine::Kind::NotFound, "m")
        .at(1)
        .in_file("/f")
        .with_hint(Some("h".into()));
    let sent: Vec<String> = serde_json::to_value(&full)
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let shape = serde_json::to_value(schemars::schema_for!(RefusalData)).unwrap();
    let named: Vec<String> = shape["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(sent, named);
    for kind in Kind::all() {
        assert_eq!(serde_json::to_value(kind).unwrap(), kind.as_str());
    }
}
