//! `multiedit.apply` saves what the editor applied where the user had nothing unsaved, so that tests,
//! compilers and git see the edit; never the user's unsaved text, never a buffer typed into after the
//! edit; and the result says per file whether the edit is on disk (`on_disk`, `on_disk_text`).

use crate::support::lsp as lsp_support;

use std::fs;
use std::path::{Path, PathBuf};

use lsp_support::{Editor, Options};
use serde_json::{json, Value};

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap().join("ws");
    fs::create_dir(&ws).unwrap();
    (dir, ws)
}

fn saving_editor(ws: &Path, init: Value) -> Editor {
    let mut o = Options::new(ws);
    o.save_support = true;
    o.init_options = init;
    Editor::start(o)
}

fn edit(old: &str, new: &str) -> Value {
    json!({"old_string": old, "new_string": new})
}

fn on_disk(r: &Value) -> Vec<Value> {
    r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["on_disk"].clone())
        .collect()
}

#[test]
fn clean_buffers_closed_files_and_created_files_are_saved_when_the_editor_can_save() {
    let (_d, ws) = workspace();
    let (open, closed, new) = (ws.join("open.ts"), ws.join("closed.ts"), ws.join("new.ts"));
    fs::write(&open, "let a = 1;\n").unwrap();
    fs::write(&closed, "let b = 2;\n").unwrap();
    let mut ed = saving_editor(&ws, Value::Null);
    ed.open(&open, "let a = 1;\n");
    let r = ed
        .apply(json!({"files": [
            {"file_path": open, "edits": [edit("a = 1", "a = 10")]},
            {"file_path": closed, "edits": [edit("b = 2", "b = 20")]},
            {"file_path": new, "edits": [edit("", "export {};\n")]},
        ]}))
        .expect("applied");
    assert_eq!(
        fs::read_to_string(&open).unwrap(),
        "let a = 10;\n",
        "the clean buffer is saved"
    );
    assert_eq!(fs::read_to_string(&closed).unwrap(), "let b = 20;\n");
    assert_eq!(fs::read_to_string(&new).unwrap(), "export {};\n");
    assert_eq!(on_disk(&r), vec![json!("saved"); 3]);
    assert_eq!(r["on_disk_text"], "Saved: the edits are on disk (3 files).");
    // Asked before the edit about the open buffer only, then to save it at the version the edit made.
    assert_eq!(
        ed.saves_seen[0],
        json!({"phase": "before", "uris": [lsp_support::uri(&open)]})
    );
    let after = &ed.saves_seen[1];
    assert_eq!(after["phase"], "after");
    assert_eq!(after["timeoutMs"], 5000);
    let open_entry = after["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["uri"] == lsp_support::uri(&open))
        .unwrap();
    assert_eq!(
        open_entry["version"], 2,
        "the version the edit left: 1 opened, 2 edited"
    );
}

#[test]
fn a_buffer_with_the_users_unsaved_changes_is_not_saved_and_the_result_says_so() {
    let (_d, ws) = workspace();
    let calc = ws.join("calc.ts");
    fs::write(&calc, "const x = add(1, 2);\n").unwrap();
    let mut ed = saving_editor(&ws, Value::Null);
    // The user typed a comment and did not save.
    ed.open(&calc, "// mine\nconst x = add(1, 2);\n");
    let r = ed
        .apply(json!({"file_path": calc, "edits": [edit("add(1, 2)", "add(1, 3)")]}))
        .expect("applied");
    assert_eq!(
        fs::read_to_string(&calc).unwrap(),
        "const x = add(1, 2);\n",
        "the disk is untouched"
    );
    assert_eq!(
        ed.text(&calc),
        "// mine\nconst x = add(1, 3);\n",
        "the buffer holds both texts"
    );
    assert_eq!(on_disk(&r), vec![json!("user_changes")]);
    assert_eq!(
        r["on_disk_text"],
        "calc.ts has unsaved changes of the user's in the editor, so this edit is not on disk yet: tests, compilers and \
         git will not see it until the file is saved."
    );
    assert_eq!(
        ed.saves_seen.len(),
        1,
        "nothing is asked to be saved: {:?}",
        ed.saves_seen
    );

    // `save: all`, the plan's own, saves it anyway: the user asked for it.
    let r = ed
        .apply(json!({"file_path": calc, "edits": [edit("add(1, 3)", "add(1, 4)")], "save": "all"}))
        .expect("applied");
    assert_eq!(
        fs::read_to_string(&calc).unwrap(),
        "// mine\nconst x = add(1, 4);\n"
    );
    assert_eq!(on_disk(&r), vec![json!("saved")]);
}

#[test]
fn a_buffer_typed_into_right_after_the_edit_is_not_saved() {
    let (_d, ws) = workspace();
    let a = ws.join("a.txt");
    fs::write(&a, "one\ntwo\n").unwrap();
    let mut ed = saving_editor(&ws, Value::Null);
    ed.open(&a, "one\ntwo\n");
    ed.types_before_save
        .push((a.clone(), 0, 0, "typed ".into()));
    let r = ed
        .apply(json!({"file_path": a, "edits": [edit("two", "2")]}))
        .expect("applied");
    assert_eq!(fs::read_to_string(&a).unwrap(), "one\ntwo\n");
    assert_eq!(ed.text(&a), "typed one\n2\n");
    assert_eq!(on_disk(&r), vec![json!("changed_since")]);
    assert_eq!(
        r["on_disk_text"],
        "a.txt was changed in the editor right after the edit, so it was not saved: this edit is not on disk yet; \
         tests, compilers and git will not see it until the file is saved."
    );
}

#[test]
fn format_on_save_reaches_the_agent_through_now_reads() {
    let (_d, ws) = workspace();
    let a = ws.join("a.js");
    fs::write(&a, "x=1;\n").unwrap();
    let mut ed = saving_editor(&ws, Value::Null);
    ed.formats_on_save = Some(lsp_support::format_statements);
    ed.open(&a, "x=1;\n");
    let r = ed
        .apply(json!({"file_path": a, "edits": [edit("x=1;", "a=b;")]}))
        .expect("applied");
    let formatted = lsp_support::format_statements("a=b;\n");
    assert_ne!(formatted, "a=b;\n", "the formatter changes the edit");
    assert_eq!(fs::read_to_string(&a).unwrap(), formatted);
    assert_eq!(on_disk(&r), vec![json!("saved")]);
    assert_eq!(r["now_reads"][0]["text"], formatted.trim_end_matches('\n'));
}

#[test]
fn a_read_only_file_is_reported_not_saved_and_keeps_the_edit_in_the_buffer() {
    use std::os::unix::fs::PermissionsExt;
    let (_d, ws) = workspace();
    let a = ws.join("locked.txt");
    fs::write(&a, "old\n").unwrap();
    fs::set_permissions(&a, fs::Permissions::from_mode(0o444)).unwrap();
    let mut ed = saving_editor(&ws, Value::Null);
    ed.open(&a, "old\n");
    let r = ed
        .apply(json!({"file_path": a, "edits": [edit("old", "new")]}))
        .expect("applied");
    assert_eq!(ed.text(&a), "new\n");
    assert_eq!(fs::read_to_string(&a).unwrap(), "old\n");
    assert_eq!(on_disk(&r), vec![json!("read_only")]);
    assert_eq!(
        r["on_disk_text"],
        "locked.txt could not be saved: the file is read-only. This edit is in the editor only, not on disk: tests, \
         compilers and git will not see it until the file is saved."
    );
}

#[test]
fn save_never_and_an_editor_that_cannot_save_are_said() {
    let (_d, ws) = workspace();
    let a = ws.join("a.txt");
    fs::write(&a, "one\n").unwrap();
    // The initialization option turns saving off.
    let mut ed = saving_editor(&ws, json!({"save": "never"}));
    ed.open(&a, "one\n");
    let r = ed
        .apply(json!({"file_path": a, "edits": [edit("one", "1")]}))
        .expect("applied");
    assert_eq!(fs::read_to_string(&a).unwrap(), "one\n");
    assert_eq!(on_disk(&r), vec![json!("save_off")]);
    assert_eq!(
        r["on_disk_text"],
        "a.txt was not saved (save: never), so this edit is in the editor only, not on disk: tests, compilers and git will \
         not see it until the file is saved."
    );
    assert!(
        ed.saves_seen.is_empty(),
        "nothing asked: {:?}",
        ed.saves_seen
    );
    drop(ed);

    // An editor without the capability is never asked; the result says why the disk lacks the edit.
    let mut ed = Editor::start(Options::new(&ws));
    ed.open(&a, "one\n");
    let r = ed
        .apply(json!({"file_path": a, "edits": [edit("one", "1")]}))
        .expect("applied");
    assert_eq!(fs::read_to_string(&a).unwrap(), "one\n");
    assert_eq!(on_disk(&r), vec![json!("no_save_support")]);
    assert_eq!(
        r["on_disk_text"],
        "a.txt was not saved: multiedit test editor cannot save a file on request (it does not answer multiedit/save), \
         so this edit is in its buffer only, not on disk: tests, compilers and git will not see it until the file is saved."
    );
    assert!(ed.saves_seen.is_empty());
}

#[test]
fn a_moved_file_is_saved_at_its_new_place() {
    let (_d, ws) = workspace();
    let (old, new) = (ws.join("old.txt"), ws.join("new.txt"));
    fs::write(&old, "alpha\nbeta\n").unwrap();
    let mut ed = saving_editor(&ws, Value::Null);
    ed.open(&old, "alpha\nbeta\n");
    let patch = "*** Begin Patch\n*** Update File: old.txt\n*** Move to: new.txt\n@@\n alpha\n-beta\n+gamma\n*** End Patch\n";
    let r = ed
        .apply(json!({"patch": patch, "root": ws}))
        .expect("applied");
    assert!(!old.exists());
    assert_eq!(fs::read_to_string(&new).unwrap(), "alpha\ngamma\n");
    assert_eq!(on_disk(&r), vec![json!("saved")]);
}
