//! The result object every front end returns: `multiedit apply --json` and the language server's
//! commands share it, so a caller parses one shape.

use serde_json::{json, Value};

use crate::engine::Outcome;

pub fn outcome_json(outcome: &Outcome) -> Value {
    let files: Vec<Value> = outcome
        .files
        .iter()
        .map(|f| {
            json!({
                "file_path": f.file_path,
                "edits_applied": f.edits_applied(),
                "replacements": f.replacement_count(),
                "created": f.created,
                "tiers": f.applied.iter().filter_map(|e| e.tier.map(|t| json!({"edit_index": e.edit_index, "tier": t}))).collect::<Vec<_>>(),
            })
        })
        .collect();
    let failed: Vec<Value> = outcome.failed().map(|r| serde_json::to_value(r).expect("serializable")).collect();
    json!({
        "ok": true,
        "message": outcome.message(),
        "files": files,
        "edits_failed": failed,
    })
}
