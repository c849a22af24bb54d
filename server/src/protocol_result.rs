//! The result object every front end returns: `multiedit apply --json`, the language server's
//! commands and the MCP tools share it, so a caller parses one shape: per file `file_path`,
//! `edits_applied`, `replacements`, `created`, `tiers`, and when they apply `deleted`, `moved_to`,
//! `offsets` and `mode`.

use serde_json::{json, Value};

use crate::engine::{FileOp, Outcome};

pub fn outcome_json(outcome: &Outcome) -> Value {
    let files: Vec<Value> = outcome
        .files
        .iter()
        .map(|f| {
            let mut file = json!({
                "file_path": f.file_path,
                "edits_applied": f.edits_applied(),
                "replacements": f.replacement_count(),
                "created": f.created,
                "tiers": f.applied.iter().filter_map(|e| e.tier.map(|t| json!({"edit_index": e.edit_index, "tier": t}))).collect::<Vec<_>>(),
            });
            match &f.op {
                FileOp::Edit | FileOp::Create => {}
                FileOp::Delete => file["deleted"] = json!(true),
                FileOp::MoveTo(to) => file["moved_to"] = json!(to),
            }
            // As git writes it: "100755".
            if let Some(m) = f.mode {
                file["mode"] = json!(format!("{m:o}"));
            }
            // Hunks found away from the line they stated, as `patch` reports them.
            let offsets: Vec<Value> = f
                .applied
                .iter()
                .filter(|e| e.offset != 0)
                .map(|e| json!({"edit_index": e.edit_index, "hunk": e.label, "line": e.line, "offset": e.offset}))
                .collect();
            if !offsets.is_empty() {
                file["offsets"] = json!(offsets);
            }
            file
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
