//! Paths: relative paths are refused with a message naming the field; spaces, non-ASCII names and
//! `file://` URIs with percent-escapes work in the CLI; in the language server nothing outside the
//! workspace folders can be edited, whichever way the path tries to get there (`..`, percent-encoded
//! `..`, a symlinked file, a symlinked folder, a link chain, a file to be created behind a link).

use crate::support::lsp as lsp_support;

use std::fs;
use std::path::{Path, PathBuf};

use lsp_support::{Editor, Options};
use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
use serde_json::{json, Value};

/// What a URI path must escape (RFC 3986: everything but unreserved characters and `/`).
const URI_PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'[')
    .add(b']')
    .add(b'^')
    .add(b'|')
    .add(b'\\');

fn file_uri(path: &Path) -> String {
    format!(
        "file://{}",
        utf8_percent_encode(path.to_str().unwrap(), URI_PATH)
    )
}

/// Runs `multiedit apply --json` on a plan given on standard input.
fn apply(plan: &Value) -> (i32, Value) {
    let out = crate::support::apply::apply_text(Path::new("."), &["--json"], &plan.to_string());
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    (out.status.code().unwrap(), v)
}

fn edit(old: &str, new: &str) -> Value {
    json!({"old_string": old, "new_string": new})
}

#[test]
fn relative_paths_are_refused_naming_the_field() {
    let issue = "InputValidationError: MultiEdit failed due to the following issue:\n";
    for (plan, field, path) in [
        (
            json!({"file_path": "src/main.rs", "edits": [edit("a", "b")]}),
            "file_path",
            "src/main.rs",
        ),
        (
            json!({"file_path": "./x.txt", "edits": [edit("a", "b")]}),
            "file_path",
            "./x.txt",
        ),
        (
            json!({"file_path": "../x.txt", "edits": [edit("a", "b")]}),
            "file_path",
            "../x.txt",
        ),
        (
            json!({"file_path": "~/x.txt", "edits": [edit("a", "b")]}),
            "file_path",
            "~/x.txt",
        ),
        (
            json!({"files": [{"file_path": "/tmp/ok.txt", "edits": [edit("a", "b")]},
                             {"file_path": "rel.txt", "edits": [edit("a", "b")]}]}),
            "files[1].file_path",
            "rel.txt",
        ),
    ] {
        let (code, out) = apply(&plan);
        assert_eq!(code, 1, "{out}");
        assert_eq!(out["error"]["kind"], "invalid_plan");
        assert_eq!(
            out["error"]["message"],
            format!("{issue}`{field}` must be an absolute path (starting with /) or a file:// URI, but is \"{path}\"")
        );
    }
    let (code, out) = apply(&json!({"file_path": "", "edits": [edit("a", "b")]}));
    assert_eq!(code, 1);
    assert_eq!(
        out["error"]["message"],
        format!("{issue}`file_path` is empty: give the absolute path of the file to edit")
    );
}

#[test]
fn spaces_and_non_ascii_names_work() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("dossier à espaces");
    fs::create_dir(&dir).unwrap();
    let f = dir.join("naïve 文件 😀 'q'.txt");
    fs::write(&f, "alpha\n").unwrap();
    let (code, out) = apply(&json!({"file_path": f, "edits": [edit("alpha", "beta")]}));
    assert_eq!(code, 0, "{out}");
    assert_eq!(fs::read_to_string(&f).unwrap(), "beta\n");
    assert_eq!(out["files"][0]["file_path"], f.to_str().unwrap());
    // Created in a folder that does not exist yet, with a name in three scripts.
    let created = dir.join("новый каталог").join("ملف جديد.txt");
    let (code, out) = apply(&json!({"file_path": created, "edits": [edit("", "hello\n")]}));
    assert_eq!(code, 0, "{out}");
    assert_eq!(fs::read_to_string(&created).unwrap(), "hello\n");
}

#[test]
fn file_uris_with_percent_escapes_work() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("a b#c%d");
    fs::create_dir(&dir).unwrap();
    let f = dir.join("é ü [1].txt");
    fs::write(&f, "alpha\n").unwrap();
    let u = file_uri(&f);
    assert!(
        u.contains("%20") && u.contains("%C3%A9") && u.contains("%23") && u.contains("%25"),
        "{u}"
    );
    let (code, out) = apply(&json!({"file_path": u, "edits": [edit("alpha", "beta")]}));
    assert_eq!(code, 0, "{out}");
    assert_eq!(fs::read_to_string(&f).unwrap(), "beta\n");
    // file://localhost/ is the same file; a created file's URI works too.
    let local = u.replacen("file://", "file://localhost", 1);
    let (code, out) = apply(&json!({"file_path": local, "edits": [edit("beta", "gamma")]}));
    assert_eq!(code, 0, "{out}");
    assert_eq!(fs::read_to_string(&f).unwrap(), "gamma\n");
    let created = dir.join("new file é.txt");
    let (code, out) = apply(&json!({"file_path": file_uri(&created), "edits": [edit("", "x")]}));
    assert_eq!(code, 0, "{out}");
    assert_eq!(fs::read_to_string(&created).unwrap(), "x");
}

#[test]
fn bad_uris_are_refused_naming_the_problem() {
    for (u, expected) in [
        ("file://server/share/x.txt", "`file_path` file://server/share/x.txt names a file on another host; only local file:// URIs can be edited"),
        ("file:///tmp/%FF.txt", "`file_path` file:///tmp/%FF.txt has percent-escapes that are not UTF-8"),
        ("file:///tmp/a%00b.txt", "`file_path` file:///tmp/a%00b.txt contains a NUL character"),
    ] {
        let (code, out) = apply(&json!({"file_path": u, "edits": [edit("a", "b")]}));
        assert_eq!(code, 1, "{out}");
        assert_eq!((out["error"]["kind"].as_str(), out["error"]["message"].as_str()), (Some("invalid_plan"), Some(expected)));
    }
}

// ---- the language server: confinement to the workspace folders ----

struct Ws {
    _dir: tempfile::TempDir,
    root: PathBuf,
    ws: PathBuf,
    outside: PathBuf,
}

fn layout() -> Ws {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let ws = root.join("ws");
    fs::create_dir(&ws).unwrap();
    let outside = root.join("secret.txt");
    fs::write(&outside, "secret\n").unwrap();
    Ws {
        _dir: dir,
        root,
        ws,
        outside,
    }
}

fn refused_outside(ed: &mut Editor, plan: Value) -> String {
    let e = ed
        .apply(plan.clone())
        .expect_err(&format!("must be refused: {plan}"));
    assert_eq!(e["data"]["kind"], "outside_workspace", "{e}");
    assert_eq!(e["code"], -32803, "{e}");
    e["data"]["message"].as_str().unwrap().to_string()
}

#[test]
fn server_refuses_every_way_out_of_the_workspace() {
    let w = layout();
    let sub = w.ws.join("sub");
    fs::create_dir(&sub).unwrap();
    let file_link = w.ws.join("link-to-secret.txt");
    std::os::unix::fs::symlink(&w.outside, &file_link).unwrap();
    let chain = w.ws.join("chain.txt");
    std::os::unix::fs::symlink(&file_link, &chain).unwrap();
    let dir_link = sub.join("up");
    std::os::unix::fs::symlink(&w.root, &dir_link).unwrap();
    let relative_link = w.ws.join("rel.txt");
    std::os::unix::fs::symlink("../secret.txt", &relative_link).unwrap();
    let mut ed = Editor::start(Options::new(&w.ws));
    let change = json!([edit("secret", "pwned")]);
    let ws = w.ws.display().to_string();
    for path in [
        format!("{ws}/../secret.txt"),
        format!("{ws}/sub/../../secret.txt"),
        format!("{ws}/nonexistent/../../secret.txt"),
        format!("file://{ws}/%2E%2E/secret.txt"),
        format!("file://{ws}/sub%2F..%2F..%2Fsecret.txt"),
        file_link.display().to_string(),
        chain.display().to_string(),
        relative_link.display().to_string(),
        dir_link.join("secret.txt").display().to_string(),
    ] {
        let msg = refused_outside(&mut ed, json!({"file_path": path, "edits": change}));
        assert!(msg.contains(&ws), "names the workspace: {msg}");
    }
    // Creating files: through `..`, through a linked folder, in a new folder behind a link.
    for path in [
        w.ws.join("../planted.txt"),
        dir_link.join("planted.txt"),
        dir_link.join("new-dir/planted.txt"),
    ] {
        refused_outside(
            &mut ed,
            json!({"file_path": path, "edits": [edit("", "x")]}),
        );
    }
    // Through a folder that does not exist, then `..` and a link out: the kernel refuses such a path
    // (the folder is missing), and so does the server, naming the folder; read textually it would be
    // `ws/sub/up/planted.txt`, inside, and an editor creating it would follow `up` out.
    for (path, edits) in [
        (
            format!("{ws}/missing/../sub/up/planted.txt"),
            json!([edit("", "x")]),
        ),
        (format!("{ws}/missing/../sub/up/secret.txt"), change.clone()),
        (
            format!("{ws}/missing/deeper/../../sub/up/secret.txt"),
            change.clone(),
        ),
    ] {
        let msg = refused_outside(&mut ed, json!({"file_path": path, "edits": edits}));
        assert_eq!(
            msg,
            format!(
                "Cannot edit {path}: {ws}/missing does not exist, and the `..` after it cannot be resolved (the system \
                 refuses a path through a missing folder), so it cannot be shown to lie inside the workspace folders \
                 ({ws}). Nothing was changed. To allow files outside the workspace, start the server with the \
                 initialization option {{\"allowOutsideWorkspace\": true}}."
            )
        );
    }
    // A link to a folder deeper inside: `..` after it stays inside for the kernel (`deep/../..` is the
    // workspace) but leaves it read as a URI (dot segments first): refused, as an editor may read it so.
    let deep = w.ws.join("sub/deeper");
    fs::create_dir(&deep).unwrap();
    std::os::unix::fs::symlink(&deep, w.ws.join("deep")).unwrap();
    refused_outside(
        &mut ed,
        json!({"file_path": format!("{ws}/deep/../../secret.txt"), "edits": change}),
    );
    // A multi-file plan with one file outside changes nothing, not even the file inside.
    let inside = w.ws.join("inside.txt");
    fs::write(&inside, "inside\n").unwrap();
    refused_outside(
        &mut ed,
        json!({"files": [
            {"file_path": inside, "edits": [edit("inside", "changed")]},
            {"file_path": file_link, "edits": change},
        ]}),
    );
    assert_eq!(fs::read_to_string(&inside).unwrap(), "inside\n");
    assert_eq!(fs::read_to_string(&w.outside).unwrap(), "secret\n");
    assert!(!w.root.join("planted.txt").exists() && !w.root.join("new-dir").exists());
    assert!(!w.ws.join("missing").exists());
    // A prefix of the folder's name is not the folder: /x/ws-other is outside /x/ws.
    let sibling = w.root.join("ws-other");
    fs::create_dir(&sibling).unwrap();
    fs::write(sibling.join("f.txt"), "secret\n").unwrap();
    refused_outside(
        &mut ed,
        json!({"file_path": sibling.join("f.txt"), "edits": change}),
    );
    // And what is inside still works, through a link that stays inside and with `..` that stays inside.
    let inner_link = w.ws.join("inner-link.txt");
    std::os::unix::fs::symlink(&inside, &inner_link).unwrap();
    ed.apply(json!({"file_path": inner_link, "edits": [edit("inside", "edited")]}))
        .expect("a link inside the workspace");
    ed.apply(
        json!({"file_path": format!("{ws}/sub/../inside.txt"), "edits": [edit("edited", "again")]}),
    )
    .expect("`..` that stays inside");
    assert_eq!(fs::read_to_string(&inside).unwrap(), "again\n");
    assert!(fs::symlink_metadata(&inner_link)
        .unwrap()
        .file_type()
        .is_symlink());
}

#[test]
fn server_edits_files_with_spaces_non_ascii_and_percent_escapes_in_the_workspace() {
    let w = layout();
    let dir = w.ws.join("dossier à espaces");
    fs::create_dir(&dir).unwrap();
    let f = dir.join("naïve 文件 😀 #1.txt");
    fs::write(&f, "alpha\n").unwrap();
    let mut ed = Editor::start(Options::new(&w.ws));
    ed.apply(json!({"file_path": f, "edits": [edit("alpha", "beta")]}))
        .expect("a plain path");
    ed.apply(json!({"file_path": file_uri(&f), "edits": [edit("beta", "gamma")]}))
        .expect("a percent-encoded URI");
    assert_eq!(fs::read_to_string(&f).unwrap(), "gamma\n");
}
