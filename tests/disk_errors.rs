//! `multiedit apply` when the disk says no: a read-only file, a read-only folder, a read-only file
//! system, a full disk, a write error, a directory or a dangling symlink where a file should be, a file
//! that is not UTF-8. Each must be one clear refusal (the exact text is checked) with nothing changed:
//! every byte, name and permission in the folder as before, and no temporary file left.
//!
//! The tests that need root (mounting a small tmpfs, running as an unprivileged user) say so and are
//! skipped without it; the write-error test needs nothing (a file-size limit makes the write fail).

use crate::support::disk as disk_support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use disk_support::{is_root, snapshot, Snapshot};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_multiedit");

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn apply_with(plan: &Value, bin: &Path, tweak: impl FnOnce(&mut Command)) -> Run {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let plan_path = dir.path().join("plan.json");
    std::fs::write(&plan_path, plan.to_string()).unwrap();
    std::fs::set_permissions(&plan_path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut cmd = Command::new(bin);
    cmd.arg("apply").arg(&plan_path);
    tweak(&mut cmd);
    let out = cmd.output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn apply(plan: &Value) -> Run {
    apply_with(plan, Path::new(BIN), |_| {})
}

fn edit(path: &Path, old: &str, new: &str) -> Value {
    json!({"file_path": path, "edits": [{"old_string": old, "new_string": new}]})
}

/// Asserts a refusal with exactly `message` (exit 2: an I/O error) and the folder exactly as before.
fn refused(run: &Run, message: &str, root: &Path, before: &Snapshot) {
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (2, format!("{message}\n").as_str()),
        "stdout: {}",
        run.stdout
    );
    assert_eq!(&snapshot(root), before, "the folder changed");
}

/// A small tmpfs mounted on a fresh folder, unmounted on drop; None where mounting is not permitted.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0755"),
                "tmpfs",
            ])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: cannot mount a tmpfs here (needs root)");
            return None;
        }
        Some(Tmpfs { dir })
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn remount(&self, opts: &str) {
        let s = Command::new("mount")
            .args(["-o", &format!("remount,{opts}")])
            .arg(self.path())
            .status()
            .unwrap();
        assert!(s.success());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn read_only_file_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let f = root.path().join("locked.txt");
    std::fs::write(&f, "alpha beta\n").unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = snapshot(root.path());
    let run = apply(&edit(&f, "alpha", "gamma"));
    refused(
        &run,
        &format!(
            "Cannot edit {}: the file is read-only. Nothing was changed.",
            f.display()
        ),
        root.path(),
        &before,
    );
}

#[test]
fn read_only_folder_is_refused() {
    if !is_root() {
        // Without root: the folder's permissions stop us ourselves.
        let root = tempfile::tempdir().unwrap();
        let d = root.path().join("ro");
        std::fs::create_dir(&d).unwrap();
        let f = d.join("f.txt");
        std::fs::write(&f, "alpha\n").unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o555)).unwrap();
        let before = snapshot(root.path());
        let run = apply(&edit(&f, "alpha", "gamma"));
        let msg = format!("Cannot create a temporary file beside {}: Permission denied (os error 13). Nothing was changed.", f.display());
        refused(&run, &msg, root.path(), &before);
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        return;
    }
    // Root ignores folder permissions: run the tool as an unprivileged user on a file it owns, in a
    // folder it may not write.
    let root = tempfile::tempdir().unwrap();
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let d = root.path().join("ro");
    std::fs::create_dir(&d).unwrap();
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o555)).unwrap();
    let f = d.join("f.txt");
    std::fs::write(&f, "alpha\n").unwrap();
    std::os::unix::fs::chown(&f, Some(65534), Some(65534)).unwrap();
    // A copy of the binary the unprivileged user can surely run, whatever the checkout's permissions.
    let bin = root.path().join("multiedit");
    std::fs::copy(BIN, &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let before = snapshot(root.path());
    let run = apply_with(&edit(&f, "alpha", "gamma"), &bin, |c| {
        c.uid(65534).gid(65534);
    });
    let msg = format!("Cannot create a temporary file beside {}: Permission denied (os error 13). Nothing was changed.", f.display());
    refused(&run, &msg, root.path(), &before);
}

#[test]
fn read_only_file_system_is_refused() {
    let Some(fs) = Tmpfs::mount("1m") else { return };
    let f = fs.path().join("f.txt");
    std::fs::write(&f, "alpha\n").unwrap();
    fs.remount("ro");
    let before = snapshot(fs.path());
    let run = apply(&edit(&f, "alpha", "gamma"));
    let msg = format!("Cannot create a temporary file beside {}: Read-only file system (os error 30). Nothing was changed.", f.display());
    refused(&run, &msg, fs.path(), &before);
}

#[test]
fn full_disk_is_refused_and_no_other_file_of_the_plan_changes() {
    let Some(fs) = Tmpfs::mount("64k") else {
        return;
    };
    let elsewhere = tempfile::tempdir().unwrap();
    let other = elsewhere.path().join("other.txt");
    std::fs::write(&other, "one two\n").unwrap();
    let f = fs.path().join("big.txt");
    std::fs::write(&f, format!("MARK\n{}\n", "x".repeat(30_000))).unwrap();
    let (before, before_other) = (snapshot(fs.path()), snapshot(elsewhere.path()));
    // The other file comes first: it is staged, then dropped when the full disk refuses the second.
    let plan = json!({"files": [
        {"file_path": other, "edits": [{"old_string": "one", "new_string": "three"}]},
        {"file_path": f, "edits": [{"old_string": "MARK", "new_string": "y".repeat(60_000)}]},
    ]});
    let run = apply(&plan);
    let msg = format!(
        "Cannot write {}: No space left on device (os error 28). Nothing was changed.",
        f.display()
    );
    refused(&run, &msg, fs.path(), &before);
    assert_eq!(snapshot(elsewhere.path()), before_other);
    // And with room again the same plan goes through.
    fs.remount("size=1m");
    assert_eq!(apply(&plan).code, 0);
    assert!(std::fs::read_to_string(&f).unwrap().starts_with("yyy"));
}

#[test]
fn write_error_is_refused() {
    // A file-size limit (with SIGXFSZ ignored, which exec keeps) makes the write fail with EFBIG: a
    // disk error that needs no privileges.
    let root = tempfile::tempdir().unwrap();
    let f = root.path().join("f.txt");
    std::fs::write(&f, "MARK\n").unwrap();
    let before = snapshot(root.path());
    let plan = edit(&f, "MARK", &"z".repeat(200_000));
    let dir = tempfile::tempdir().unwrap();
    let plan_path = dir.path().join("plan.json");
    std::fs::write(&plan_path, plan.to_string()).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"trap '' XFSZ; ulimit -f 100; exec "$0" apply "$1""#)
        .arg(BIN)
        .arg(&plan_path)
        .output()
        .unwrap();
    let run = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    let msg = format!(
        "Cannot write {}: File too large (os error 27). Nothing was changed.",
        f.display()
    );
    refused(&run, &msg, root.path(), &before);
}

#[test]
fn directory_in_place_of_a_file_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let ok = root.path().join("ok.txt");
    std::fs::write(&ok, "one\n").unwrap();
    let d = root.path().join("was-a-file.txt");
    std::fs::create_dir(&d).unwrap();
    let before = snapshot(root.path());
    for second in [
        json!([{"old_string": "a", "new_string": "b"}]),
        json!([{"old_string": "", "new_string": "new"}]),
    ] {
        let plan = json!({"files": [
            {"file_path": ok, "edits": [{"old_string": "one", "new_string": "two"}]},
            {"file_path": d, "edits": second},
        ]});
        let run = apply(&plan);
        let msg = format!(
            "Cannot edit {}: it is a directory, not a file. Nothing was changed.",
            d.display()
        );
        refused(&run, &msg, root.path(), &before);
    }
}

#[test]
fn dangling_symlink_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let target = root.path().join("gone.txt");
    let link = root.path().join("link.txt");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let before = snapshot(root.path());
    for edits in [
        json!([{"old_string": "a", "new_string": "b"}]),
        json!([{"old_string": "", "new_string": "new"}]),
    ] {
        let run = apply(&json!({"file_path": link, "edits": edits}));
        let msg = format!(
            "Cannot edit {}: it is a symbolic link to {}, which does not exist. Nothing was changed.",
            link.display(),
            target.display()
        );
        refused(&run, &msg, root.path(), &before);
    }
}

#[test]
fn symlink_to_a_file_edits_the_target_and_keeps_the_link() {
    let root = tempfile::tempdir().unwrap();
    let target = root.path().join("real.txt");
    let link = root.path().join("link.txt");
    std::fs::write(&target, "alpha\n").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert_eq!(apply(&edit(&link, "alpha", "beta")).code, 0);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "beta\n");
    assert_eq!(std::fs::metadata(&target).unwrap().mode() & 0o777, 0o640);
}

#[test]
fn file_that_is_not_utf8_is_refused_and_left_alone() {
    let root = tempfile::tempdir().unwrap();
    let f = root.path().join("latin1.txt");
    std::fs::write(&f, b"caf\xe9 alpha\n").unwrap();
    let before = snapshot(root.path());
    let run = apply(&edit(&f, "alpha", "beta"));
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!(
            "Cannot edit {}: it is not valid UTF-8 text (invalid byte at offset 3). The file was left unchanged.\n",
            f.display()
        )
    );
    assert_eq!(snapshot(root.path()), before);
}

/// Sets or clears the immutable attribute; false where the file system or the user cannot.
fn immutable(path: &Path, on: bool) -> bool {
    Command::new("chattr")
        .arg(if on { "+i" } else { "-i" })
        .arg(path)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn a_rename_that_fails_puts_back_the_files_already_replaced() {
    // Every file is staged and checked before the first rename, so only a rename itself can fail
    // after another file was replaced. An immutable file (even root may not replace it) makes the
    // last rename fail: the edited file and the created one must be put back as they were.
    let root = tempfile::tempdir().unwrap();
    let (a, c, b) = (
        root.path().join("a.txt"),
        root.path().join("sub/created.txt"),
        root.path().join("b.txt"),
    );
    std::fs::write(&a, "one\n").unwrap();
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o640)).unwrap();
    std::fs::write(&b, "two\n").unwrap();
    if !immutable(&b, true) {
        eprintln!("skipped: chattr +i is not available here");
        return;
    }
    let before = snapshot(root.path());
    let plan = json!({"files": [
        {"file_path": a, "edits": [{"old_string": "one", "new_string": "ONE"}]},
        {"file_path": c, "edits": [{"old_string": "", "new_string": "new\n"}]},
        {"file_path": b, "edits": [{"old_string": "two", "new_string": "TWO"}]},
    ]});
    let run = apply(&plan);
    immutable(&b, false);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            2,
            format!(
                "Cannot replace {}: Operation not permitted (os error 1). Nothing was changed.\n",
                b.display()
            )
            .as_str()
        )
    );
    // The folder made for the created file is removed too: the commit made it, after its commit point.
    assert_eq!(snapshot(root.path()), before);
    assert_eq!(
        apply(&plan).code,
        0,
        "with b writable again the same plan goes through"
    );
    assert_eq!(std::fs::read_to_string(&c).unwrap(), "new\n");
}

#[test]
fn a_corrupt_journal_is_refused_and_nothing_changes() {
    // A journal in the user's private folder that cannot be read says nothing reliable about which
    // files its plan changed: the run must not guess, and must say which file is in the way and what
    // to do.
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().canonicalize().unwrap();
    let f = dir.join("f.txt");
    std::fs::write(&f, "alpha\n").unwrap();
    let state = tempfile::tempdir().unwrap();
    let private = state.path().join("multiedit");
    std::fs::create_dir(&private).unwrap();
    std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
    let journal = private.join("journal-999999-abc.json");
    std::fs::write(&journal, "{\"multiedit_journal\": 3, \"plan\"").unwrap();
    std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(
        dir.join(".multiedit-999999-abc-XyZ123.tmp"),
        "alpha? beta?\n",
    )
    .unwrap();
    let (before, before_state) = (snapshot(&dir), snapshot(state.path()));
    let run = apply_with(&edit(&f, "alpha", "gamma"), Path::new(BIN), |c| {
        c.env("XDG_STATE_HOME", state.path());
    });
    let msg = format!(
        "Cannot apply the plan: {} is the journal of an interrupted multiedit run, and it is not a journal this \
         version can read (EOF while parsing an object at line 1 column 31). Nothing was changed. Check the files \
         that run was writing (its new texts are in the .multiedit-*.tmp files beside them), then delete the \
         journal and run the plan again.",
        journal.display()
    );
    refused(&run, &msg, &dir, &before);
    assert_eq!(snapshot(state.path()), before_state);
}

/// A file the plan deletes was removed, and written anew from its bytes when a later step failed:
/// owned by whoever ran multiedit (root), a new inode. It is now moved aside until the commit ends and
/// put back itself: the same inode, owner, mode and bytes.
#[test]
fn a_deleted_file_put_back_after_a_failed_commit_is_the_same_file() {
    let root = tempfile::tempdir().unwrap();
    let (gone, b) = (root.path().join("sub/gone.txt"), root.path().join("b.txt"));
    std::fs::create_dir(root.path().join("sub")).unwrap();
    std::fs::write(&gone, "bye\n").unwrap();
    std::fs::set_permissions(&gone, std::fs::Permissions::from_mode(0o640)).unwrap();
    if is_root() {
        std::os::unix::fs::chown(&gone, Some(65534), Some(65534)).unwrap();
    }
    std::fs::write(&b, "two\n").unwrap();
    if !immutable(&b, true) {
        eprintln!("skipped: chattr +i is not available here");
        return;
    }
    let before = snapshot(root.path());
    let inode = std::fs::metadata(&gone).unwrap().ino();
    let diff = "diff --git a/sub/gone.txt b/sub/gone.txt\ndeleted file mode 100640\n--- a/sub/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n\
                --- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-two\n+TWO\n";
    let aux = tempfile::tempdir().unwrap();
    let patch = aux.path().join("change.diff");
    std::fs::write(&patch, diff).unwrap();
    let run = Command::new(BIN)
        .args(["apply", "--root"])
        .arg(root.path())
        .arg(&patch)
        .env("XDG_STATE_HOME", aux.path())
        .output()
        .unwrap();
    immutable(&b, false);
    assert_eq!(
        (
            run.status.code(),
            String::from_utf8_lossy(&run.stderr).as_ref()
        ),
        (
            Some(2),
            format!(
                "Cannot replace {}: Operation not permitted (os error 1). Nothing was changed.\n",
                b.display()
            )
            .as_str()
        )
    );
    assert_eq!(
        snapshot(root.path()),
        before,
        "every name, mode, owner and byte as it was"
    );
    assert_eq!(
        std::fs::metadata(&gone).unwrap().ino(),
        inode,
        "the same file, not a copy"
    );
}
