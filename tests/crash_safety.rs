//! Crash safety of `multiedit apply`: the process is killed (SIGKILL) at random moments while it writes
//! a plan over three multi-megabyte files in two folders, many times. After every kill each file must
//! be entirely its old text or entirely its new text, byte for byte; and the next complete run must
//! leave no temporary file (`.multiedit-<pid>-*.tmp`) behind in either folder.
//!
//! Across files a kill between two renames can leave one file new and another old: per-file atomicity
//! is what a rename gives, and the test counts how often that happened rather than forbidding it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_multiedit");
/// Kills attempted, and a time budget that ends the loop early on a slow machine.
const KILLS: usize = 40;
const BUDGET: Duration = Duration::from_secs(45);

fn old_text(tag: usize) -> String {
    // ~6 MB with a marker at each end: the plan only changes the markers, so the run's time goes to
    // reading and writing, and a torn write (a prefix, a mix) can never pass for either version.
    let line = "the quick brown fox jumps over the lazy dog, again and again and again\n";
    format!("HEADER {tag} old\n{}TRAILER {tag} old\n", line.repeat(6_000_000 / line.len()))
}

fn new_text(old: &str) -> String {
    old.replace(" old\n", " new\n")
}

fn temps(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with(".multiedit-") && n.ends_with(".tmp")
        })
        .collect()
}

/// A small xorshift generator: the kill times need no crate, and the seed is printed for a replay.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn killed_writes_leave_every_file_old_or_new_and_no_temp_file_after_the_next_run() {
    let root = tempfile::tempdir().unwrap();
    let dirs = [root.path().join("one"), root.path().join("two")];
    for d in &dirs {
        std::fs::create_dir(d).unwrap();
    }
    let files = [dirs[0].join("a.txt"), dirs[0].join("b.txt"), dirs[1].join("c.txt")];
    let olds: Vec<String> = (0..files.len()).map(old_text).collect();
    let news: Vec<String> = olds.iter().map(|o| new_text(o)).collect();
    let plan = serde_json::json!({
        "files": files.iter().map(|f| serde_json::json!({
            "file_path": f,
            "edits": [{"old_string": " old\n", "new_string": " new\n", "expected_replacements": 2}],
        })).collect::<Vec<_>>(),
    });
    let plan_path = root.path().join("plan.json");
    std::fs::write(&plan_path, plan.to_string()).unwrap();

    let reset = || {
        for (f, o) in files.iter().zip(&olds) {
            std::fs::write(f, o).unwrap();
        }
    };
    let run = || {
        let mut c = Command::new(BIN);
        c.arg("apply").arg(&plan_path).stdout(Stdio::null()).stderr(Stdio::null());
        c
    };
    let check_states = |when: &str| -> Vec<bool> {
        files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let now = std::fs::read(f).unwrap();
                if now == olds[i].as_bytes() {
                    false
                } else if now == news[i].as_bytes() {
                    true
                } else {
                    panic!("{when}: {} is neither old nor new ({} bytes)", f.display(), now.len());
                }
            })
            .collect()
    };

    // A complete run, timed: its total span, and when its first temporary file appeared (the write
    // phase starts there). Kills are aimed at both: a quarter over the whole run, the rest within the
    // write phase, where a torn file or a stray temporary file could appear.
    let first_temp = |child: &mut std::process::Child| -> Option<Instant> {
        loop {
            if dirs.iter().any(|d| !temps(d).is_empty()) {
                return Some(Instant::now());
            }
            if child.try_wait().unwrap().is_some() {
                return None;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    };
    reset();
    let start = Instant::now();
    let mut child = run().spawn().unwrap();
    let writing = first_temp(&mut child).expect("the run wrote no temporary file").duration_since(start);
    assert!(child.wait().unwrap().success());
    let full = start.elapsed();
    assert_eq!(check_states("complete run"), [true, true, true]);

    let seed = std::env::var("CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1
    });
    let mut rng = Rng(seed);
    let whole = full.as_micros() as u64 * 12 / 10 + 1;
    let write_span = (full - writing).as_micros() as u64 * 12 / 10 + 1;
    let (mut all_old, mut all_new, mut mixed, mut temps_left, mut kills) = (0, 0, 0, 0, 0);
    let begun = Instant::now();
    while kills < KILLS && begun.elapsed() < BUDGET {
        reset();
        let mut child = run().spawn().unwrap();
        let delay = if rng.next() % 4 == 0 {
            Duration::from_micros(rng.next() % whole)
        } else {
            first_temp(&mut child);
            Duration::from_micros(rng.next() % write_span)
        };
        std::thread::sleep(delay);
        child.kill().unwrap(); // SIGKILL; harmless if it already finished
        child.wait().unwrap();
        kills += 1;
        let states = check_states(&format!("kill {kills} after {delay:?} (CRASH_SEED={seed})"));
        match states.iter().filter(|&&s| s).count() {
            0 => all_old += 1,
            n if n == files.len() => all_new += 1,
            _ => mixed += 1,
        }
        if dirs.iter().any(|d| !temps(d).is_empty()) {
            temps_left += 1;
        }
        // The next complete run applies the plan and removes what the killed one left.
        reset();
        let out = run().output().unwrap();
        assert!(out.status.success(), "run after kill {kills}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(check_states("run after a kill"), [true, true, true]);
        for d in &dirs {
            assert_eq!(temps(d), Vec::<PathBuf>::new(), "temporary files left after the run that followed kill {kills}");
        }
    }
    eprintln!(
        "{kills} kills (full run {full:?}, writing from {writing:?}, CRASH_SEED={seed}): {all_old} all old, \
         {all_new} all new, {mixed} mixed, {temps_left} left temporary files"
    );
    assert!(kills >= 10, "only {kills} kills within the budget");
    // The kills must have landed while the files were being written, or the test proved nothing.
    assert!(temps_left + mixed > 0, "no kill interrupted a write; the files are too small for this machine");
}

#[test]
fn a_file_changed_by_another_program_during_the_write_is_not_overwritten() {
    // The file is read, the plan computed and the new text staged; just before renaming, the file is
    // read again. Another program appends to it while the new text is being staged: the plan must be
    // refused and the other program's change kept.
    let root = tempfile::tempdir().unwrap();
    let f = root.path().join("shared.txt");
    let old = format!("HEADER old\n{}", "some text that another program appends to\n".repeat(400_000));
    let new = old.replacen("HEADER old", "HEADER new", 1);
    let plan_path = root.path().join("plan.json");
    let plan = serde_json::json!({"file_path": f, "edits": [{"old_string": "HEADER old", "new_string": "HEADER new"}]});
    std::fs::write(&plan_path, plan.to_string()).unwrap();
    let (mut refused, mut tries) = (0, 0);
    while refused == 0 && tries < 10 {
        tries += 1;
        std::fs::write(&f, &old).unwrap();
        let mut child = Command::new(BIN).arg("apply").arg(&plan_path).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        while temps(root.path()).is_empty() && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_micros(100));
        }
        use std::io::Write;
        std::fs::OpenOptions::new().append(true).open(&f).unwrap().write_all(b"appended\n").unwrap();
        let out = child.wait_with_output().unwrap();
        let now = std::fs::read_to_string(&f).unwrap();
        match out.status.code() {
            Some(1) => {
                assert_eq!(
                    String::from_utf8_lossy(&out.stderr),
                    format!("{} changed while the plan was being applied. Nothing was changed; run the plan again.\n", f.display())
                );
                assert_eq!(now, format!("{old}appended\n"), "the other program's change was lost");
                refused += 1;
            }
            // Finished before the append, or (the documented window) renamed right after the check.
            Some(0) => assert!(now == format!("{new}appended\n") || now == new, "neither outcome"),
            other => panic!("exit {other:?}: {}", String::from_utf8_lossy(&out.stderr)),
        }
        assert_eq!(temps(root.path()), Vec::<PathBuf>::new());
    }
    assert!(refused > 0, "the append never landed while the new text was being staged ({tries} tries)");
}

#[test]
fn a_file_replaced_by_a_directory_during_the_write_is_refused() {
    // Another program replaces the file by a directory while the new text is being staged.
    let root = tempfile::tempdir().unwrap();
    let f = root.path().join("doomed.txt");
    let old = format!("HEADER old\n{}", "a line of text\n".repeat(1_500_000));
    let plan_path = root.path().join("plan.json");
    let plan = serde_json::json!({"file_path": f, "edits": [{"old_string": "HEADER old", "new_string": "HEADER new"}]});
    std::fs::write(&plan_path, plan.to_string()).unwrap();
    let (mut refused, mut tries) = (0, 0);
    while refused == 0 && tries < 10 {
        tries += 1;
        let _ = std::fs::remove_dir(&f);
        std::fs::write(&f, &old).unwrap();
        let mut child = Command::new(BIN).arg("apply").arg(&plan_path).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
        while temps(root.path()).is_empty() && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_micros(100));
        }
        std::fs::remove_file(&f).unwrap();
        std::fs::create_dir(&f).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(2) => {
                assert_eq!(stderr, format!("Cannot re-read {}: Is a directory (os error 21). Nothing was changed.\n", f.display()));
                refused += 1;
            }
            // The run finished first: then the directory simply replaced the new file.
            Some(0) => {}
            other => panic!("exit {other:?}: {stderr}"),
        }
        assert!(f.is_dir(), "the directory was replaced");
        assert_eq!(temps(root.path()), Vec::<PathBuf>::new());
    }
    assert!(refused > 0, "the directory never appeared while the new text was being staged ({tries} tries)");
}

#[test]
fn two_runs_started_together_never_lose_an_update() {
    // Two plans on one file, run at the same moment (an assistant's parallel tool calls). Each either
    // applies its edit or is refused; both reporting success while one edit is missing is a lost
    // update. Without a lock around the final check and the rename, about one pair in eight lost one.
    let root = tempfile::tempdir().unwrap();
    let f = root.path().join("shared.txt");
    let old = format!("LINE-A old\n{}LINE-B old\n", "filler line of text\n".repeat(300_000));
    let plans: Vec<PathBuf> = ["A", "B"]
        .iter()
        .map(|tag| {
            let p = root.path().join(format!("{tag}.json"));
            let plan = serde_json::json!({"file_path": f, "edits": [{"old_string": format!("LINE-{tag} old"), "new_string": format!("LINE-{tag} new")}]});
            std::fs::write(&p, plan.to_string()).unwrap();
            p
        })
        .collect();
    let (mut both, mut one_refused) = (0, 0);
    for trial in 0..20 {
        std::fs::write(&f, &old).unwrap();
        let children: Vec<_> = plans
            .iter()
            .map(|p| Command::new(BIN).arg("apply").arg(p).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap())
            .collect();
        let codes: Vec<i32> = children.into_iter().map(|c| c.wait_with_output().unwrap().status.code().unwrap()).collect();
        let now = std::fs::read_to_string(&f).unwrap();
        let applied = [now.contains("LINE-A new"), now.contains("LINE-B new")];
        for k in 0..2 {
            assert_eq!(codes[k] == 0, applied[k], "trial {trial}: run {k} exited {} but its edit is {}", codes[k], if applied[k] { "there" } else { "missing" });
            assert!(codes[k] == 0 || codes[k] == 1, "trial {trial}: exit {}", codes[k]);
        }
        match codes.iter().filter(|&&c| c == 0).count() {
            2 => both += 1,
            1 => one_refused += 1,
            _ => panic!("trial {trial}: both refused"),
        }
        assert_eq!(temps(root.path()), Vec::<PathBuf>::new());
    }
    eprintln!("20 pairs of runs: {both} applied one after the other, {one_refused} with one refused as changed meanwhile");
}
