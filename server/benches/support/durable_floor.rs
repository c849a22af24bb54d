//! The least a durable apply of a commit costs, as a process of its own: the cli bench compiles this
//! file with rustc and times it beside `multiedit apply` and `git apply` (`durable-floor`).
//!
//! It is given the outcome and only makes it durable, in the batched order issue 19 names: every new
//! text written to a temporary file beside its target, all fsynced together, renamed over the targets,
//! each folder fsynced once. It parses, matches and checks nothing, keeps no journal (so a plan over
//! several files is not atomic under a crash) and reads each old file only because any tool must. What
//! a real apply costs above it is the patch's work and the crash safety.
//!
//! Arguments: pairs `TARGET SOURCE`: the new text of TARGET is SOURCE's; `-` deletes TARGET.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

fn main() {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let mut staged: Vec<(File, PathBuf, PathBuf)> = Vec::new();
    let mut deleted = Vec::new();
    let mut folders = BTreeSet::new();
    for pair in args.chunks(2) {
        let [target, source] = pair else { panic!("arguments come in pairs: TARGET SOURCE") };
        let folder = target.parent().unwrap_or(Path::new(".")).to_path_buf();
        let _old = fs::read(target);
        if source.as_os_str() == "-" {
            deleted.push(target.clone());
        } else {
            if !folder.is_dir() {
                fs::create_dir_all(&folder).expect("make the folder");
                folders.insert(folder.parent().unwrap_or(Path::new(".")).to_path_buf());
            }
            let text = fs::read(source).expect("read the new text");
            let temp = folder.join(format!(".floor-{}.tmp", staged.len()));
            let mut f = OpenOptions::new().write(true).create_new(true).mode(0o644).open(&temp).expect("create the temporary file");
            f.write_all(&text).expect("write the new text");
            staged.push((f, temp, target.clone()));
        }
        folders.insert(folder);
    }
    in_parallel(staged.iter().map(|(f, _, _)| f).collect(), |f| f.sync_all().expect("fsync a new text"));
    for (_, temp, target) in &staged {
        fs::rename(temp, target).expect("rename into place");
    }
    for target in &deleted {
        fs::remove_file(target).expect("delete");
    }
    let folders: Vec<File> = folders.iter().map(|d| File::open(d).expect("open a folder")).collect();
    in_parallel(folders.iter().collect(), |d| d.sync_all().expect("fsync a folder"));
}

/// One thread per job besides this one, as a small batch of fsyncs is best done.
fn in_parallel<T: Sync>(jobs: Vec<&T>, work: impl Fn(&T) + Sync) {
    let Some((mine, rest)) = jobs.split_first() else { return };
    std::thread::scope(|scope| {
        for job in rest {
            let work = &work;
            scope.spawn(move || work(job));
        }
        work(mine);
    });
}
