//! Every format assistants emit, through `multiedit apply` as a user runs it: the edge cases each
//! format's own documentation describes (written here as tests), the files on disk after, and the exact
//! refusals with every file unchanged. `tests/git_apply.rs` compares unified diffs with `git apply`.

use std::fs;
use std::path::Path;
use std::process::Output;

use crate::support::apply::apply_text;
use crate::support::disk::folder;

/// `multiedit apply --root ROOT ARGS -` with `patch` on standard input.
fn apply(root: &Path, args: &[&str], patch: &str) -> Output {
    apply_text(
        Path::new("."),
        &[&["--root", root.to_str().unwrap()], args].concat(),
        patch,
    )
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in walk(dir) {
        out.push((
            e.strip_prefix(dir).unwrap().display().to_string(),
            fs::read(&e).unwrap(),
        ));
    }
    out.sort();
    out
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn read(dir: &Path, name: &str) -> String {
    fs::read_to_string(dir.join(name)).unwrap()
}

const APP: &str = "import os\n\ndef handler(event):\n    value = event.get(\"x\")\n    return value\n\ndef other(event):\n    value = event.get(\"x\")\n    return value\n";

#[test]
fn envelope_adds_updates_moves_and_deletes_in_one_change() {
    let dir = folder(&[
        ("app.py", APP),
        ("old/name.py", "a = 1\nb = 2\n"),
        ("gone.txt", "bye\n"),
    ]);
    let patch = "\
*** Begin Patch
*** Add File: docs/notes.md
+# Notes
+
+Written by the patch.
*** Update File: app.py
@@ def other(event):
-    value = event.get(\"x\")
+    value = event.get(\"y\")
     return value
*** Update File: old/name.py
*** Move to: new/name.py
@@
-b = 2
+b = 3
*** Delete File: gone.txt
*** End Patch
";
    let o = apply(dir.path(), &[], patch);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        read(dir.path(), "docs/notes.md"),
        "# Notes\n\nWritten by the patch.\n"
    );
    // `@@ def other(event):` chose the second of two identical bodies.
    assert_eq!(
        read(dir.path(), "app.py"),
        APP.replace(
            "def other(event):\n    value = event.get(\"x\")",
            "def other(event):\n    value = event.get(\"y\")"
        )
    );
    assert_eq!(read(dir.path(), "new/name.py"), "a = 1\nb = 3\n");
    assert!(!dir.path().join("old/name.py").exists() && !dir.path().join("gone.txt").exists());
    let out = stdout(&o);
    assert!(
        out.contains("Moved ") && out.contains("Deleted ") && out.contains("Created the file"),
        "{out}"
    );
}

#[test]
fn envelope_with_a_stale_hunk_changes_no_file() {
    let dir = folder(&[("a.py", "x = 1\n"), ("b.py", "def f():\n    return 2\n")]);
    let before = snapshot(dir.path());
    let patch = "*** Begin Patch\n*** Update File: a.py\n-x = 1\n+x = 10\n*** Update File: b.py\n@@ def f():\n-    return 3\n+    return 4\n*** End Patch\n";
    let o = apply(dir.path(), &[], patch);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(snapshot(dir.path()), before, "nothing written");
    let e = stderr(&o);
    assert!(e.starts_with("Hunk 1 of b.py (after \"def f():\") does not apply: its lines are not in the file.\nLines:\n    return 3\n"), "{e}");
    assert!(
        e.contains("line 2 has \"2\" where old_string has \"3\""),
        "the closest-text hint names the changed word: {e}"
    );
}

#[test]
fn adding_a_file_that_exists_is_refused_in_every_format() {
    let dir = folder(&[("here.txt", "already\n")]);
    let before = snapshot(dir.path());
    for patch in [
        "*** Begin Patch\n*** Add File: here.txt\n+new\n*** End Patch\n",
        "--- /dev/null\n+++ b/here.txt\n@@ -0,0 +1 @@\n+new\n",
    ] {
        let o = apply(dir.path(), &["--json"], patch);
        assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["error"]["kind"], "file_exists", "{v}");
        assert_eq!(
            v["error"]["message"],
            "Cannot create new file - file already exists."
        );
        assert_eq!(snapshot(dir.path()), before);
    }
}

#[test]
fn end_of_file_and_file_order_choose_between_equal_places() {
    let text = "}\nreturn 0\n}\nmiddle\n}\nreturn 0\n}\n";
    let dir = folder(&[("c.txt", text)]);
    let patch = "*** Begin Patch\n*** Update File: c.txt\n@@\n }\n-return 0\n+return 1\n }\n*** End of File\n*** End Patch\n";
    let o = apply(dir.path(), &[], patch);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        read(dir.path(), "c.txt"),
        "}\nreturn 0\n}\nmiddle\n}\nreturn 1\n}\n"
    );

    // Two hunks with the same text: the second comes after the first.
    let dir = folder(&[("c.txt", text)]);
    let patch = "*** Begin Patch\n*** Update File: c.txt\n@@\n-return 0\n+return 1\n@@\n-return 0\n+return 2\n*** End Patch\n";
    let o = apply(dir.path(), &[], patch);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        read(dir.path(), "c.txt"),
        "}\nreturn 1\n}\nmiddle\n}\nreturn 2\n}\n"
    );
}

#[test]
fn search_replace_blocks_across_files_fenced_or_not() {
    let dir = folder(&[
        ("src/a.py", "def a():\n    return 1\n"),
        ("src/b.py", "B = 'b'\n"),
    ]);
    let text = "\
Here are the changes.

src/a.py
```python
<<<<<<< SEARCH
    return 1
=======
    return 2
>>>>>>> REPLACE
```

src/b.py
<<<<<<< SEARCH
B = 'b'
=======
B = 'bb'
>>>>>>> REPLACE

src/c.py
```python
<<<<<<< SEARCH
=======
C = 3
>>>>>>> REPLACE
```
";
    let o = apply(dir.path(), &[], text);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read(dir.path(), "src/a.py"), "def a():\n    return 2\n");
    assert_eq!(read(dir.path(), "src/b.py"), "B = 'bb'\n");
    assert_eq!(read(dir.path(), "src/c.py"), "C = 3\n");

    // The marker variant of Cline and Roo Code.
    let o = apply(
        dir.path(),
        &["--format", "search-replace"],
        "src/a.py\n------- SEARCH\n    return 2\n=======\n    return 3\n+++++++ REPLACE\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read(dir.path(), "src/a.py"), "def a():\n    return 3\n");
}

#[test]
fn a_block_that_matches_twice_is_refused_with_both_lines() {
    let dir = folder(&[("d.py", "x = 1\ny = 2\nx = 1\n")]);
    let before = snapshot(dir.path());
    let o = apply(
        dir.path(),
        &[],
        "d.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 5\n>>>>>>> REPLACE\n",
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(snapshot(dir.path()), before);
    assert!(
        stderr(&o).starts_with(
            "SEARCH/REPLACE block 1 (d.py) matches 2 places (lines 1, 3): add lines around the change so that it matches one place.\nLines:\nx = 1\n"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_diff_hunk_goes_to_the_nearest_of_equal_places_and_a_tie_is_refused() {
    let block = "a\nb\nc\n";
    let text = format!("{block}x\nx\nx\nx\nx\nx\n{block}y\n");
    let dir = folder(&[("e.txt", &text)]);
    // Stated at line 10: the second copy (line 10), not the first (line 1).
    let o = apply(
        dir.path(),
        &[],
        "--- a/e.txt\n+++ b/e.txt\n@@ -10,3 +10,3 @@\n a\n-b\n+B\n c\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        read(dir.path(), "e.txt"),
        format!("{block}x\nx\nx\nx\nx\nx\na\nB\nc\ny\n")
    );

    // Stated halfway between two copies: refused, nothing written.
    let text = "a\nb\nc\nx\nx\nx\na\nb\nc\n";
    let dir = folder(&[("e.txt", text)]);
    let o = apply(
        dir.path(),
        &[],
        "--- a/e.txt\n+++ b/e.txt\n@@ -4,3 +4,3 @@\n a\n-b\n+B\n c\n",
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(read(dir.path(), "e.txt"), text);
    assert!(
        stderr(&o).starts_with("Hunk 1 of e.txt, at line 4 matches lines 1 and 7, both 3 lines from line 4 where it is expected"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_crlf_file_takes_an_lf_diff_and_keeps_its_line_endings() {
    let dir = folder(&[("w.txt", "one\r\ntwo\r\nthree\r\n")]);
    let o = apply(
        dir.path(),
        &[],
        "--- a/w.txt\n+++ b/w.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read(dir.path(), "w.txt"), "one\r\nTWO\r\nthree\r\n");
}

/// A diff that carries `\r` is taken byte for byte, as git apply takes it: it converts line endings
/// either way, and its CRLF lines do not match an LF file.
#[test]
fn a_diff_that_carries_cr_changes_exactly_those_bytes() {
    let dir = folder(&[("w.txt", "one\r\ntwo\r\n"), ("u.txt", "one\ntwo\n")]);
    let to_lf = "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n-one\r\n-two\r\n+one\n+two\n";
    let to_crlf = "--- a/u.txt\n+++ b/u.txt\n@@ -1,2 +1,2 @@\n-one\n+one\r\n two\n";
    let o = apply(dir.path(), &[], &format!("{to_lf}{to_crlf}"));
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        (read(dir.path(), "w.txt"), read(dir.path(), "u.txt")),
        ("one\ntwo\n".into(), "one\r\ntwo\n".into())
    );
    // Now w.txt is LF: the CRLF lines of a diff are not its lines.
    let stale = "--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n-one\r\n+ONE\r\n two\r\n";
    let o = apply(dir.path(), &[], stale);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).starts_with(
            "Hunk 1 of w.txt, at line 1 does not apply: its lines are not in the file."
        ),
        "{}",
        stderr(&o)
    );
    assert_eq!(read(dir.path(), "w.txt"), "one\ntwo\n");
}

#[test]
fn tolerant_matching_takes_a_hunk_with_other_indentation_or_refuses() {
    let file = "fn main() {\n\tlet a = 1;\n\tlet b = 2;\n}\n";
    let patch = "--- a/m.rs\n+++ b/m.rs\n@@ -1,4 +1,4 @@\n fn main() {\n     let a = 1;\n-    let b = 2;\n+    let b = 3;\n }\n";
    let dir = folder(&[("m.rs", file)]);
    let o = apply(dir.path(), &[], patch);
    assert_eq!(o.status.code(), Some(1), "exact mode refuses");
    assert_eq!(read(dir.path(), "m.rs"), file);
    let o = apply(dir.path(), &["--match", "tolerant"], patch);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        read(dir.path(), "m.rs"),
        "fn main() {\n\tlet a = 1;\n\tlet b = 3;\n}\n",
        "the file's tabs kept"
    );
}

#[test]
fn a_text_in_no_format_says_what_was_tried() {
    let dir = folder(&[]);
    let o = apply(dir.path(), &[], "please change the greeting to hello\n");
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.starts_with("InputValidationError: the text is none of the formats multiedit applies. Tried, in order:\n- a MultiEdit JSON plan: not JSON"), "{e}");
    for f in [
        "an apply_patch envelope: ",
        "a unified diff: ",
        "SEARCH/REPLACE blocks: ",
    ] {
        assert!(e.contains(f), "{f} in {e}");
    }
}

#[test]
fn a_relative_path_that_climbs_out_of_the_root_stays_a_path_the_user_can_read() {
    let dir = folder(&[("in/x.txt", "1\n")]);
    let o = apply(
        &dir.path().join("in"),
        &["--dry-run"],
        "--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-1\n+2\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!("{}", dir.path().join("in/x.txt").display())),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        read(dir.path(), "in/x.txt"),
        "1\n",
        "a dry run writes nothing"
    );
}

mod no_input_crashes {
    use multiedit::engine::{apply_plan, Matching};
    use multiedit::formats::plan_from_text;
    use proptest::prelude::*;

    /// Texts made of the formats' own markers and hunk lines, in any order: every one is parsed or
    /// refused, never a panic, and a plan that comes out runs on a small text without one either.
    fn fragments() -> impl Strategy<Value = String> {
        let pieces = vec![
            "*** Begin Patch\n",
            "*** End Patch\n",
            "*** Update File: a.txt\n",
            "*** Add File: b.txt\n",
            "*** Delete File: a.txt\n",
            "*** Move to: c.txt\n",
            "*** End of File\n",
            "@@\n",
            "@@ x\n",
            "diff --git a/a.txt b/a.txt\n",
            "--- a/a.txt\n",
            "+++ b/a.txt\n",
            "--- /dev/null\n",
            "+++ /dev/null\n",
            "@@ -1,2 +1,2 @@\n",
            "@@ -0,0 +1 @@\n",
            "@@ -3 +3,2 @@\n",
            "rename from a.txt\n",
            "rename to c.txt\n",
            "\\ No newline at end of file\n",
            "a.txt\n",
            "<<<<<<< SEARCH\n",
            "=======\n",
            ">>>>>>> REPLACE\n",
            "------- SEARCH\n",
            "+++++++ REPLACE\n",
            "```\n",
            " x\n",
            "-x\n",
            "+y\n",
            "x\n",
            "\n",
            "\r\n",
            "é😀\n",
        ];
        prop::collection::vec(prop::sample::select(pieces), 0..24).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]
        #[test]
        fn parsed_or_refused(text in fragments()) {
            if let Ok((plan, _)) = plan_from_text(&text, None, Some(std::path::Path::new("/w")), Matching::Exact) {
                let texts: Vec<Option<&str>> = plan.files.iter().map(|_| Some("x\ny\nx\n")).collect();
                let _ = apply_plan(&plan, &texts);
            }
        }
    }
}

#[test]
fn a_backslash_is_part_of_a_unix_file_name_and_a_lone_cr_ends_a_last_line() {
    let dir = folder(&[("a\\b.txt", "one\n"), ("cr.txt", "a\nb\nc\r")]);
    let patch = "\
--- \"a/a\\\\b.txt\"
+++ \"b/a\\\\b.txt\"
@@ -1 +1 @@
-one
+two
--- a/cr.txt
+++ b/cr.txt
@@ -1,3 +1,3 @@
 a
-b
+B
 c\r
\\ No newline at end of file
";
    let o = apply(dir.path(), &[], patch);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read(dir.path(), "a\\b.txt"), "two\n");
    assert!(!dir.path().join("a").exists(), "no folder `a` was made");
    assert_eq!(read(dir.path(), "cr.txt"), "a\nB\nc\r");
}

#[test]
fn an_envelope_or_block_edits_a_last_line_without_newline_and_keeps_it_so() {
    let dir = folder(&[("n.py", "x = 1\ny = 2")]);
    let o = apply(
        dir.path(),
        &[],
        "*** Begin Patch\n*** Update File: n.py\n@@\n x = 1\n-y = 2\n+y = 3\n*** End Patch\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read(dir.path(), "n.py"), "x = 1\ny = 3");
    let o = apply(
        dir.path(),
        &[],
        "n.py\n<<<<<<< SEARCH\ny = 3\n=======\ny = 4\nz = 5\n>>>>>>> REPLACE\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read(dir.path(), "n.py"), "x = 1\ny = 4\nz = 5");
}

#[test]
fn a_byte_order_mark_in_a_diff_is_matched_only_where_the_file_has_one_and_changed_only_when_the_diff_says_so(
) {
    let bom = "\u{feff}";
    let diff = format!("--- a/b.txt\n+++ b/b.txt\n@@ -1,3 +1,3 @@\n {bom}a\n-b\n+B\n c\n");
    let dir = folder(&[("b.txt", &format!("{bom}a\nb\nc\n"))]);
    let o = apply(dir.path(), &[], &diff);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read(dir.path(), "b.txt"), format!("{bom}a\nB\nc\n"));

    let dir = folder(&[("b.txt", "a\nb\nc\n")]);
    let o = apply(dir.path(), &[], &diff);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).starts_with("Hunk 1 of b.txt, at line 1 does not apply: it starts with a byte order mark, and the file has none."), "{}", stderr(&o));
    assert_eq!(read(dir.path(), "b.txt"), "a\nb\nc\n");

    let removes = format!("--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n-{bom}a\n+a\n b\n");
    let dir = folder(&[("b.txt", &format!("{bom}a\nb\n"))]);
    let o = apply(dir.path(), &[], &removes);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        read(dir.path(), "b.txt"),
        "a\nb\n",
        "the mark removed, as git apply removes it"
    );
    let adds = format!("--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n-a\n+{bom}a\n b\n");
    let o = apply(dir.path(), &[], &adds);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        read(dir.path(), "b.txt"),
        format!("{bom}a\nb\n"),
        "the mark added back"
    );
}

#[test]
fn a_pure_rename_or_a_lone_delete_is_a_change_of_its_own() {
    let dir = folder(&[("a.txt", "x\n"), ("gone.txt", "bye\n")]);
    let rename =
        "diff --git a/a.txt b/c.txt\nsimilarity index 100%\nrename from a.txt\nrename to c.txt\n";
    let o = apply(dir.path(), &[], rename);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        format!(
            "Moved {} to {}.\n",
            dir.path().join("a.txt").display(),
            dir.path().join("c.txt").display()
        )
    );
    assert_eq!(read(dir.path(), "c.txt"), "x\n");
    assert!(!dir.path().join("a.txt").exists());
    let o = apply(
        dir.path(),
        &[],
        "*** Begin Patch\n*** Delete File: gone.txt\n*** End Patch\n",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!dir.path().join("gone.txt").exists());
}

// apply_patch envelopes as Codex reads them (its scenarios and unit tests, restated here with other
// files and words).

/// Applies `patch` in a folder holding `files` and returns the folder, or panics with the refusal.
fn applied(files: &[(&str, &str)], args: &[&str], patch: &str) -> tempfile::TempDir {
    let dir = folder(files);
    let o = apply(dir.path(), args, patch);
    assert!(o.status.success(), "{}", stderr(&o));
    dir
}

/// Applies `patch`, expects a refusal with exit code 1 and nothing changed, and returns its text.
fn refused(files: &[(&str, &str)], patch: &str) -> String {
    refused_in(files, patch).1
}

fn refused_in(files: &[(&str, &str)], patch: &str) -> (tempfile::TempDir, String) {
    let dir = folder(files);
    let before = snapshot(dir.path());
    let o = apply(dir.path(), &[], patch);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(snapshot(dir.path()), before, "nothing written");
    (dir, stderr(&o))
}

#[test]
fn a_hunk_of_only_added_lines_appends_or_follows_its_at_line() {
    let notes = "apples\npears\n";
    // `@@` alone: at the end of the file, as Codex appends a function a model adds.
    let dir = applied(
        &[("n.txt", notes)],
        &[],
        "*** Begin Patch\n*** Update File: n.txt\n@@\n+plums\n+figs\n*** End Patch\n",
    );
    assert_eq!(read(dir.path(), "n.txt"), "apples\npears\nplums\nfigs\n");
    // With `*** End of File`, and without any `@@` in the first hunk.
    let dir = applied(
        &[("n.txt", notes)],
        &[],
        "*** Begin Patch\n*** Update File: n.txt\n+plums\n*** End of File\n*** End Patch\n",
    );
    assert_eq!(read(dir.path(), "n.txt"), "apples\npears\nplums\n");
    // `@@ <line>`: right after that line.
    let dir = applied(
        &[("n.txt", notes)],
        &[],
        "*** Begin Patch\n*** Update File: n.txt\n@@ apples\n+kiwis\n*** End Patch\n",
    );
    assert_eq!(read(dir.path(), "n.txt"), "apples\nkiwis\npears\n");
    // A last line without a newline gets one before the added lines, and the file still ends without one.
    let dir = applied(
        &[("n.txt", "apples\npears")],
        &[],
        "*** Begin Patch\n*** Update File: n.txt\n@@\n+plums\n*** End Patch\n",
    );
    assert_eq!(read(dir.path(), "n.txt"), "apples\npears\nplums");
    // An added block does not move where the next hunk starts looking: a later hunk may change lines
    // above it (the order Codex accepts).
    let patch = "*** Begin Patch\n*** Update File: n.txt\n@@\n+cherries\n@@\n apples\n-pears\n+quinces\n*** End Patch\n";
    let dir = applied(&[("n.txt", notes)], &[], patch);
    assert_eq!(read(dir.path(), "n.txt"), "apples\nquinces\ncherries\n");
    // The line it names must be there.
    let e = refused(
        &[("n.txt", notes)],
        "*** Begin Patch\n*** Update File: n.txt\n@@ bananas\n+kiwis\n*** End Patch\n",
    );
    assert!(e.starts_with("Hunk 1 of n.txt (after \"bananas\") does not apply: the file has no line \"bananas\", the line the hunk says it follows."), "{e}");
}

#[test]
fn envelope_markers_with_spaces_blank_lines_and_an_add_after_an_update() {
    let files = [("w.txt", "red\ngreen\n")];
    // Spaces before `*** Begin Patch` and `*** Update File:`, after `*** End Patch`.
    let dir = applied(
        &files,
        &[],
        " *** Begin Patch\n   *** Update File: w.txt  \n@@\n-green\n+blue\n*** End Patch  \n",
    );
    assert_eq!(read(dir.path(), "w.txt"), "red\nblue\n");
    // A blank line before `*** End Patch` is spacing, not a line the file must have.
    let dir = applied(
        &files,
        &[],
        "*** Begin Patch\n*** Update File: w.txt\n@@\n-red\n+pink\n\n*** End Patch\n",
    );
    assert_eq!(read(dir.path(), "w.txt"), "pink\ngreen\n");
    // ...but it is context where the file has it.
    let dir = applied(
        &[("w.txt", "red\nred\n\n")],
        &[],
        "*** Begin Patch\n*** Update File: w.txt\n@@\n-red\n+pink\n\n*** End Patch\n",
    );
    assert_eq!(read(dir.path(), "w.txt"), "red\npink\n\n");
    // An update that only adds lines, then a new file, in one patch.
    let patch = "*** Begin Patch\n*** Update File: w.txt\n@@\n+yellow\n\n*** Add File: more/x.txt\n+orange\n*** End Patch\n";
    let dir = applied(&files, &[], patch);
    assert_eq!(read(dir.path(), "w.txt"), "red\ngreen\nyellow\n");
    assert_eq!(read(dir.path(), "more/x.txt"), "orange\n");
    // A rename without a hunk moves the file as it is.
    let dir = applied(
        &files,
        &[],
        "*** Begin Patch\n*** Update File: w.txt\n*** Move to: sub/v.txt\n*** End Patch\n",
    );
    assert_eq!(read(dir.path(), "sub/v.txt"), "red\ngreen\n");
    assert!(!dir.path().join("w.txt").exists());
}

#[test]
fn heredoc_wrappers_are_taken_off_when_well_formed_and_refused_when_not() {
    let files = [("h.txt", "one\n")];
    let body = "*** Begin Patch\n*** Update File: h.txt\n@@\n-one\n+two\n*** End Patch\n";
    for (open, close) in [
        ("<<EOF", "EOF"),
        ("<<'EOF'", "EOF"),
        ("<<\"EOF\"", "EOF"),
        ("apply_patch <<'PATCH'", "PATCH"),
        ("cd . && apply_patch <<-END", "END"),
    ] {
        let dir = applied(&files, &[], &format!("{open}\n{body}{close}\n"));
        assert_eq!(read(dir.path(), "h.txt"), "two\n", "{open}");
    }
    assert_eq!(
        refused(&files, &format!("<<\"EOF'\n{body}EOF\n")),
        "InputValidationError: line 1 of the patch (`<<\"EOF'`) opens a shell heredoc whose delimiter (`\"EOF'`) has \
         unmatched quotes: write `<<'EOF'`, `<<\"EOF\"` or `<<EOF`, or send the envelope alone, without the shell command\n"
    );
    assert_eq!(
        refused(&files, &format!("apply_patch <<'EOF'\n{body}")),
        "InputValidationError: the shell heredoc opened at line 1 of the patch (`apply_patch <<'EOF'`) is not closed: put \
         a line `EOF` right after `*** End Patch`, or send the envelope alone, without the shell command\n"
    );
    // A heredoc whose body never ends the envelope is refused for that.
    let e = refused(
        &files,
        "<<EOF\n*** Begin Patch\n*** Update File: h.txt\nEOF\n",
    );
    assert!(e.starts_with("InputValidationError: the envelope begun at line 2 (`*** Begin Patch`) has no `*** End Patch` line"), "{e}");
}

#[test]
fn deleting_a_directory_is_a_refusal_not_an_io_error() {
    let patch = "*** Begin Patch\n*** Update File: other.txt\n@@\n-a\n+b\n*** Delete File: dir\n*** End Patch\n";
    // Exit code 1, as for a missing file; every file unchanged.
    let (dir, e) = refused_in(&[("dir/inside.txt", "kept\n"), ("other.txt", "a\n")], patch);
    let want = format!("Cannot delete {}: it is a directory, and a patch deletes only files. Nothing was changed.\n", dir.path().join("dir").display());
    assert_eq!(e, want);
}

#[test]
fn envelope_hunks_climb_codexs_ladder_under_tolerant_and_name_the_tier() {
    // The file as an editor left it: curly quotes and an en dash, trailing spaces, four-space indentation.
    let file = "title = “Report” – draft\nbody = 1   \nclass A:\n    nested = 2\n    more = 3\n";
    let patch = "*** Begin Patch\n*** Update File: l.py\n@@\n-title = \"Report\" - draft\n+title = \"Final\" - draft\n@@\n-body = 1\n+body = 10\n@@ class A:\n-  nested = 2\n-  more = 3\n+  nested = 20\n+  more = 3\n*** End Patch\n";
    // Exact is the default: refused, nothing written.
    let e = refused(&[("l.py", file)], patch);
    assert!(
        e.starts_with("Hunk 1 of l.py does not apply: its lines are not in the file."),
        "{e}"
    );
    let dir = folder(&[("l.py", file)]);
    let o = apply(dir.path(), &["--match", "tolerant", "--json"], patch);
    assert!(o.status.success(), "{}", stderr(&o));
    // What the hunks change is written; what they keep is the file's (the dash, the quotes' style).
    assert_eq!(
        read(dir.path(), "l.py"),
        "title = “Final” – draft\nbody = 10\nclass A:\n    nested = 20\n    more = 3\n"
    );
    let out: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let tiers: Vec<&str> = out["files"][0]["tiers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tier"].as_str().unwrap())
        .collect();
    assert_eq!(tiers, ["quotes", "line_trimmed", "indentation"]);
    assert!(
        out["message"].as_str().unwrap().contains(
            "3. Applied hunk 3 of l.py (after \"class A:\") (matched ignoring indentation)"
        ),
        "{out}"
    );
    // The typographic spaces Codex folds too (an en space, a non-breaking hyphen, an ideographic space).
    let file = "price:\u{2002}10 € net\nfull\u{2011}time\u{3000}only\n";
    let patch = "*** Begin Patch\n*** Update File: p.txt\n@@\n-price: 10 € net\n-full-time only\n+price: 12 € net\n+full-time only\n*** End Patch\n";
    let dir = applied(&[("p.txt", file)], &["--match", "tolerant"], patch);
    assert_eq!(
        read(dir.path(), "p.txt"),
        "price:\u{2002}12 € net\nfull\u{2011}time\u{3000}only\n"
    );
}

// SEARCH/REPLACE blocks as Aider reads them (its test_editblock.py, restated with other files).

const CALC: &str = "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n\ndef mul(a, b):\n    return a * b\n";

#[test]
fn block_file_names_inside_fences_decorated_or_in_a_code_block_of_their_own() {
    let block = "<<<<<<< SEARCH\n    return a - b\n=======\n    return b - a\n>>>>>>> REPLACE\n";
    let want = CALC.replace("a - b", "b - a");
    for written in [
        format!("Here:\n```python\ncalc.py\n{block}```\n"),
        format!("# calc.py\n```python\n{block}```\n"),
        format!("Here:\n ```python\ncalc.py\n```\n```python\n{block}```\n"),
        format!("**`calc.py`**\n\n```\n{block}```\n"),
    ] {
        let dir = applied(&[("calc.py", CALC)], &[], &written);
        assert_eq!(read(dir.path(), "calc.py"), want, "{written}");
    }
}

#[test]
fn several_blocks_for_one_file_in_one_fence_with_prose_between() {
    let patch = "Two changes:\n\n```text\ncalc.py\n<<<<<<< SEARCH\ndef add(a, b):\n=======\ndef plus(a, b):\n>>>>>>> REPLACE\n\n...\n\n<<<<<<< SEARCH\ndef mul(a, b):\n=======\ndef times(a, b):\n>>>>>>> REPLACE\n```\nDone.\n";
    let dir = applied(&[("calc.py", CALC)], &[], patch);
    assert_eq!(
        read(dir.path(), "calc.py"),
        CALC.replace("def add", "def plus")
            .replace("def mul", "def times")
    );
}

#[test]
fn dots_in_search_and_replace_leave_out_text_each_part_matched_in_order() {
    let patch = "calc.py\n<<<<<<< SEARCH\ndef add(a, b):\n    return a + b\n...\ndef mul(a, b):\n    return a * b\n=======\ndef add(a, b):\n    return a + b + 0\n...\ndef mul(a, b):\n    return a * b * 1\n>>>>>>> REPLACE\n";
    let dir = applied(&[("calc.py", CALC)], &[], patch);
    assert_eq!(
        read(dir.path(), "calc.py"),
        CALC.replace("a + b\n", "a + b + 0\n")
            .replace("a * b\n", "a * b * 1\n"),
        "sub() left as it was"
    );
    // A part that is in the file twice is refused, as Aider refuses it.
    let patch = "calc.py\n<<<<<<< SEARCH\ndef add(a, b):\n...\n    return a * b\n=======\ndef add(x, y):\n...\n    return a * b\n>>>>>>> REPLACE\n";
    let dir = applied(&[("calc.py", CALC)], &[], patch);
    assert_eq!(
        read(dir.path(), "calc.py"),
        CALC.replace("def add(a, b)", "def add(x, y)"),
        "an unchanged part is not an edit"
    );
    // Lines added where SEARCH has nothing to place them by: Aider appends them to the file; refused.
    let e = refused(&[("calc.py", CALC)], "calc.py\n<<<<<<< SEARCH\n...\ndef sub(a, b):\n=======\n# helpers\n...\ndef sub(a, b):\n>>>>>>> REPLACE\n");
    assert_eq!(
        e,
        "InputValidationError: SEARCH/REPLACE block 1 (calc.py) adds lines before its first `...` line where its SEARCH \
         has none, so nothing says where they go: put the lines they follow or precede in SEARCH and in REPLACE\n"
    );
    // `...` lines that differ between the halves are the file's own text (a Python stub), matched whole.
    let stub = "class P:\n    def run(self):\n        ...\n";
    let dir = applied(&[("p.py", stub)], &[], "p.py\n<<<<<<< SEARCH\n    def run(self):\n        ...\n=======\n    def run(self):\n        return 1\n>>>>>>> REPLACE\n");
    assert_eq!(
        read(dir.path(), "p.py"),
        "class P:\n    def run(self):\n        return 1\n"
    );
}

#[test]
fn a_spurious_blank_first_search_line_is_dropped_only_when_the_block_misses() {
    // The file has no blank line before `def sub`: the block is matched without it, and the blank line
    // REPLACE repeats is not added either.
    let patch = "calc.py\n<<<<<<< SEARCH\n\ndef sub(a, b):\n    return a - b\n=======\n\ndef sub(a, b):\n    return b - a\n>>>>>>> REPLACE\n";
    let file = CALC.replace("\n\ndef sub", "\ndef sub");
    let dir = applied(&[("calc.py", &file)], &[], patch);
    assert_eq!(read(dir.path(), "calc.py"), file.replace("a - b", "b - a"));
    // Where the file has the blank line, the block is matched as written.
    let dir = applied(&[("calc.py", CALC)], &[], patch);
    assert_eq!(read(dir.path(), "calc.py"), CALC.replace("a - b", "b - a"));
}

#[test]
fn a_search_lacking_part_of_the_indentation_gets_exactly_that_back_under_tolerant() {
    let file = "class Ledger:\n    def total(self):\n        s = 0\n        return s\n";
    // One space of eight written, the deeper new line four more: eight and twelve in the file.
    let patch = "ledger.py\n<<<<<<< SEARCH\n s = 0\n return s\n=======\n s = 0\n for x in self.items:\n     s += x\n return s\n>>>>>>> REPLACE\n";
    assert!(refused(&[("ledger.py", file)], patch)
        .starts_with("SEARCH/REPLACE block 1 (ledger.py) does not apply"));
    let dir = applied(&[("ledger.py", file)], &["--match", "tolerant"], patch);
    assert_eq!(
        read(dir.path(), "ledger.py"),
        "class Ledger:\n    def total(self):\n        s = 0\n        for x in self.items:\n            s += x\n        return s\n"
    );
}

#[test]
fn envelopes_codex_rejects_are_refused_with_every_file_unchanged() {
    let files = [("kept.txt", "same\n")];
    let cases = [
        ("*** Begin Patch\n*** End Patch\n", "InputValidationError: the patch holds no file change"),
        ("*** Begin Patch\n*** Update File: kept.txt\n@@\n*** End Patch\n", "InputValidationError: hunk 1 of kept.txt (line 3 of the patch) has no '-' or '+' line"),
        ("*** Begin Patch\n*** Update File: kept.txt\n@@\n-other\n+new\n*** End Patch\n", "Hunk 1 of kept.txt does not apply: its lines are not in the file."),
        ("*** Begin Patch\n*** Update File: absent.txt\n@@\n-a\n+b\n*** End Patch\n", "File does not exist: "),
        ("*** Begin Patch\n*** Delete File: absent.txt\n*** End Patch\n", "File does not exist: "),
        ("*** Begin Patch\n*** Rename File: kept.txt\n*** End Patch\n", "InputValidationError: line 2 of the patch (`*** Rename File: kept.txt`) is not an apply_patch marker"),
        // A failure after a change that would succeed: nothing is written (Codex keeps the first file).
        ("*** Begin Patch\n*** Add File: made.txt\n+x\n*** Update File: absent.txt\n@@\n-a\n+b\n*** End Patch\n", "File does not exist: "),
    ];
    for (patch, start) in cases {
        let e = refused(&files, patch);
        assert!(e.starts_with(start), "{patch}: {e}");
    }
}

#[test]
fn a_move_whose_hunk_only_states_its_lines_moves_the_file_when_they_are_there() {
    // Codex moves the file; the context lines are checked, not written.
    let patch = "*** Begin Patch\n*** Update File: old/name.py\n*** Move to: new/name.py\n@@\n a = 1\n b = 2\n*** End Patch\n";
    let dir = applied(&[("old/name.py", "a = 1\nb = 2\n")], &[], patch);
    assert_eq!(read(dir.path(), "new/name.py"), "a = 1\nb = 2\n");
    assert!(!dir.path().join("old/name.py").exists());
    let dir = folder(&[("old/name.py", "a = 1\nb = 2\n")]);
    let o = apply(dir.path(), &["--dry-run"], patch);
    assert!(stdout(&o).ends_with(&format!("Applied 1 edit to {p}/old/name.py:\n1. Checked hunk 1 of old/name.py\nMoved {p}/old/name.py to {p}/new/name.py.\n", p = dir.path().display())), "{}", stdout(&o));
    // Lines that are not there refuse the move, nothing moved.
    let e = refused(&[("old/name.py", "a = 1\nb = 3\n")], patch);
    assert!(
        e.starts_with("Hunk 1 of old/name.py does not apply: its lines are not in the file."),
        "{e}"
    );
    // Without a move, a hunk of only context still changes nothing and is refused.
    let e = refused(
        &[("n.py", "a = 1\n")],
        "*** Begin Patch\n*** Update File: n.py\n@@\n a = 1\n*** End Patch\n",
    );
    assert!(e.contains("has no '-' or '+' line, only context"), "{e}");
}

#[test]
fn under_tolerant_a_hunk_that_only_removes_lines_writes_nothing_but_the_files_own_lines() {
    // Codex's trimmed tier: the removed line's indentation differs from the file's, and so does the
    // context's relative depth, but nothing is re-indented: the kept lines are the file's.
    let file = "def f():\n    x = 1\n      y = 2\n    return x\n";
    let patch = "*** Begin Patch\n*** Update File: b.py\n@@\n     x = 1\n-    y = 2\n     return x\n*** End Patch\n";
    let dir = applied(&[("b.py", file)], &["--match", "tolerant"], patch);
    assert_eq!(
        read(dir.path(), "b.py"),
        "def f():\n    x = 1\n    return x\n"
    );
    // Exact mode refuses it.
    let dir = folder(&[("b.py", file)]);
    assert_eq!(apply(dir.path(), &[], patch).status.code(), Some(1));
    assert_eq!(read(dir.path(), "b.py"), file);
}

#[test]
fn a_series_that_restores_one_file_applies_the_others_as_git_apply_does() {
    // The first diff adds a line to keep.txt and changes other.txt; the second removes that line.
    let series = "\
diff --git a/keep.txt b/keep.txt
--- a/keep.txt
+++ b/keep.txt
@@ -1,3 +1,4 @@
 a
 b
+new
 c
diff --git a/other.txt b/other.txt
--- a/other.txt
+++ b/other.txt
@@ -1 +1 @@
-x
+y
diff --git a/keep.txt b/keep.txt
--- a/keep.txt
+++ b/keep.txt
@@ -1,4 +1,3 @@
 a
 b
-new
 c
";
    let dir = folder(&[("keep.txt", "a\nb\nc\n"), ("other.txt", "x\n")]);
    let o = apply(dir.path(), &[], series);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        (read(dir.path(), "keep.txt"), read(dir.path(), "other.txt")),
        ("a\nb\nc\n".to_string(), "y\n".to_string())
    );
    assert!(
        stdout(&o).contains("Together they leave the file as it was: nothing was written to it."),
        "{}",
        stdout(&o)
    );
    // A series that restores every file it touches changes nothing: refused, as a plan that changes
    // nothing is.
    let restore_only: String = series
        .split("diff --git a/other.txt")
        .next()
        .unwrap()
        .to_string()
        + &series[series.rfind("diff --git a/keep.txt").unwrap()..];
    let e = refused(&[("keep.txt", "a\nb\nc\n")], &restore_only);
    assert_eq!(
        e,
        "Original and edited file match exactly. Failed to apply edit.\n"
    );
}
