//! Reading files for a plan and writing the results: each file replaced atomically (temporary file in
//! the same folder, fsync, rename), all files of a plan or none, also when the run is killed half-way
//! (`journal`).

use std::collections::BTreeSet;
use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use crate::engine::{Kind, Refusal};

pub mod folders;
pub mod journal;
pub mod plan;
mod private;
pub use journal::{recover, Recovered};
pub use private::refuse_inside as refuse_private;

/// Prefix of the temporary files (`.multiedit-<plan>-<random>.tmp`), so that a later run can remove
/// what a killed run left (`journal`).
pub const TEMP_PREFIX: &str = ".multiedit-";
pub const TEMP_SUFFIX: &str = ".tmp";

fn io_refusal(path: &Path, what: &str, e: &std::io::Error) -> Refusal {
    Refusal::new(Kind::Io, format!("Cannot {what} {}: {}. Nothing was changed.", path.display(), os_error(e)))
}

/// The error as the OS put it. tempfile appends ` at path "<temporary file>"`, a name the caller never
/// sees and that is gone by the time they read the message.
fn os_error(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at path \"") {
        Some(cut) if e.raw_os_error().is_none() && text.ends_with('"') => text[..cut].to_string(),
        _ => text,
    }
}

/// The file's bytes, `None` if it does not exist (nor does a folder of it, or one is a file: a plan
/// may delete that file and create this one). A directory, a dangling symlink, anything but a
/// regular file (a FIFO, a device, a socket, or a link to one) and an unreadable file are refused,
/// without opening the file in a way that could block.
pub fn read(path: &Path) -> Result<Option<Vec<u8>>, Refusal> {
    let meta = match fs::symlink_metadata(path) {
        Err(e) if folders::absent(&e) => return Ok(None),
        Err(e) => return Err(io_refusal(path, "read", &e)),
        Ok(m) => m,
    };
    let link = meta.file_type().is_symlink().then(|| fs::read_link(path).map(|p| p.display().to_string()).unwrap_or_default());
    let meta = match &link {
        None => meta,
        Some(to) => match fs::metadata(path) {
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(Refusal::new(
                    Kind::Io,
                    format!("Cannot edit {}: it is a symbolic link to {to}, which does not exist. Nothing was changed.", path.display()),
                ))
            }
            Err(e) => return Err(io_refusal(path, "read", &e)),
            Ok(m) => m,
        },
    };
    if meta.is_dir() {
        return Err(Refusal::new(
            Kind::Io,
            format!("Cannot edit {}: it is a directory, not a file. Nothing was changed.", path.display()),
        ));
    }
    not_regular(path, &meta, link.as_deref())?;
    read_regular(path).map(Some).map_err(|e| io_refusal(path, "read", &e))
}

/// Refuses anything but a regular file: reading a FIFO blocks, a device may never end, and replacing
/// either by a regular file destroys it. `link`: what the symbolic link `path` points to, if it is one.
fn not_regular(path: &Path, meta: &fs::Metadata, link: Option<&str>) -> Result<(), Refusal> {
    if meta.is_file() {
        return Ok(());
    }
    let what = special_kind(&meta.file_type());
    let is = match link {
        Some(to) => format!("a symbolic link to {to}, which is {what}"),
        None => what.to_string(),
    };
    Err(Refusal::new(
        Kind::Io,
        format!("Cannot edit {}: it is {is}, not a regular file. multiedit reads and writes only regular files; nothing was changed.", path.display()),
    ))
}

#[cfg(unix)]
fn special_kind(t: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "a named pipe (FIFO)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn special_kind(t: &fs::FileType) -> &'static str {
    if t.is_dir() { "a directory" } else { "a special file" }
}

/// Reads a file that must be regular. It is opened without blocking (a FIFO put in its place after the
/// check would otherwise wait for a writer forever) and checked again on the open handle.
pub(crate) fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK | libc::O_NOCTTY);
    let mut file = options.open(path)?;
    let meta = file.metadata()?;
    // A directory fails on its own when read, with the system's words.
    if !meta.is_file() && !meta.is_dir() {
        return Err(std::io::Error::other(format!("it is {}, not a regular file", special_kind(&meta.file_type()))));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::io::Read::read_to_end(&mut file, &mut bytes)?;
    Ok(bytes)
}

/// One file to write: where, the bytes read before (to detect a change under our feet), the new bytes
/// (`None`: the file is deleted), and the permission bits to give it (`None`: an existing file keeps
/// its own; a patch that states a mode sets it).
pub struct Write1 {
    pub path: PathBuf,
    pub before: Option<Vec<u8>>,
    pub after: Option<Vec<u8>>,
    pub mode: Option<u32>,
}

struct Staged {
    target: PathBuf,
    /// `None` for a file the plan deletes. Closed once written (`sync_all` opens it again to flush it):
    /// a plan may hold more files than the process may have open.
    temp: Option<tempfile::TempPath>,
    before: Option<Vec<u8>>,
    /// The permission bits the target had, to put them back if a later rename fails.
    mode: Option<u32>,
    /// Length and hash of the new text, for the journal.
    len: u64,
    hash: String,
}

/// The folder a file is in (`.` for a bare name).
fn folder(path: &Path) -> PathBuf {
    path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf()
}

/// The file a write replaces: symlinks are followed, so the link's target is what changes. A new
/// file is named with the links of its folders resolved, as the journal must name it (its folders
/// may not exist yet: the commit makes them). A deletion names the entry itself, its folders
/// resolved: a symbolic link the plan deletes is removed, as git removes it, never its target.
fn target_of(w: &Write1) -> PathBuf {
    if w.after.is_none() {
        let (Some(dir), Some(name)) = (w.path.parent(), w.path.file_name()) else { return w.path.clone() };
        return fs::canonicalize(dir).map(|d| d.join(name)).unwrap_or(w.path.clone());
    }
    if w.before.is_some() {
        return fs::canonicalize(&w.path).unwrap_or(w.path.clone());
    }
    crate::paths::real_path(&w.path).unwrap_or(w.path.clone())
}

/// The folder steps of a commit (`folders::steps`) for `files`: each file's target, whether it is
/// new, whether it is deleted.
fn steps_of<'a>(files: impl Iterator<Item = (&'a Path, bool, bool)> + Clone) -> Result<folders::Steps, Refusal> {
    let deleted = files.clone().filter(|f| f.2).map(|f| f.0.to_path_buf()).collect();
    folders::steps(files.filter(|f| f.1 && !f.2).map(|f| f.0), &deleted)
}

/// Writes every file or none, also across a crash (see `journal`). Symlinks are followed: the link's
/// target is what changes. Callers run `recover` over the plan's files before reading them. A new
/// file may take the name of a folder the plan empties, or have a folder where the plan deletes a
/// file (`folders`): deletions come first, then the folders, then the new texts.
///
/// Durable in batches: every new text is written, then all are fsynced together, renamed, and each
/// folder fsynced once, rather than one file after another.
pub fn commit(writes: Vec<Write1>) -> Result<(), Refusal> {
    let crash = journal::CrashAt::from_env();
    let targets: Vec<PathBuf> = writes.iter().map(target_of).collect();
    let files = || writes.iter().zip(&targets).map(|(w, t)| (t.as_path(), w.before.is_none(), w.after.is_none()));
    let steps = steps_of(files())?;
    let staging: Vec<PathBuf> = targets.iter().map(|t| steps.staging(t)).collect();
    let begin: Vec<(PathBuf, bool)> = files().map(|(t, new, _)| (t.to_path_buf(), new)).collect();
    let mut journal = journal::Journal::begin(&begin, &staging, journal::CrashAt::from_env())?;
    let prefix = journal.temp_prefix();
    // What the commit syncs at the end: every folder it changed an entry of.
    let mut touched: BTreeSet<PathBuf> = targets.iter().map(|t| folder(t)).chain(staging.iter().cloned()).collect();
    touched.extend(steps.remove.iter().chain(&steps.make).map(|d| folder(d)));
    let mut staged = Vec::with_capacity(writes.len());
    for ((w, target), dir) in writes.into_iter().zip(targets).zip(&staging) {
        let replaces_folder = w.before.is_none() && steps.remove.contains(&target);
        staged.push(stage(w, target, dir, replaces_folder, &prefix)?);
        crash.at("staged", staged.len());
    }
    // One rename is atomic by itself: a single-file plan that makes or removes no folder needs no
    // commit point. The committed record is written now so that it is fsynced with the new texts.
    let record = if staged.len() > 1 || !steps.is_empty() {
        let entries = staged
            .iter()
            .map(|s| journal::Entry {
                target: s.target.clone(),
                temp: s.temp.as_ref().map(|t| t.to_path_buf()),
                new: s.before.is_none(),
                len: Some(s.len),
                hash: Some(s.hash.clone()),
                delete: s.temp.is_none(),
            })
            .collect();
        journal.prepare(entries, &steps, &staged[0].target)?
    } else {
        None
    };
    sync_all(&staged, record.as_ref())?;
    crash.at("synced", 1);
    // From the check to the last rename, other multiedit runs writing in the same folders wait: two
    // runs started together on one file must not both pass the check against the same text.
    let _locks = lock_folders(staged.iter().map(|s| folder(&s.target)).chain(staging.iter().cloned()));
    // The texts were checked against what was read; refuse if anyone changed a file since (or a
    // folder that the commit removes or makes).
    let changed = |path: &Path| {
        Refusal::new(
            Kind::NotApplied,
            format!("{} changed while the plan was being applied. Nothing was changed; run the plan again.", path.display()),
        )
    };
    if !steps.is_empty() && steps_of(staged.iter().map(|s| (s.target.as_path(), s.before.is_none(), s.temp.is_none())))? != steps {
        return Err(changed(&staged[0].target));
    }
    for s in staged.iter().filter(|s| !steps.remove.contains(&s.target)) {
        let now = match read_regular(&s.target) {
            Ok(b) => Some(b),
            Err(e) if folders::absent(&e) => None,
            Err(e) => return Err(io_refusal(&s.target, "re-read", &e)),
        };
        if now != s.before {
            return Err(changed(&s.target));
        }
    }
    if let Some(record) = record {
        journal.commit(record)?;
    }
    let (done, failed) = apply_all(staged, &steps, &crash, &prefix);
    let touched: Vec<PathBuf> = touched.into_iter().collect();
    if let Some(refusal) = failed {
        // The plan had committed; putting back what was already done (then dropping the journal) is
        // the one way left to keep it whole. A crash in the midst of that put-back is the one moment
        // the journal does not cover.
        roll_back(done, &prefix);
        parallel(touched, THREADS, |d| sync_dir(&d));
        return Err(refusal);
    }
    // The renames reach the disk before the journal goes; the deleted files, kept aside until now,
    // go just before it (a crash between: recovery rolls forward, which removes them).
    parallel(touched, THREADS, |d| sync_dir(&d));
    for undo in &done {
        if let Undo::Aside(_, aside) = undo {
            let _ = fs::remove_file(aside);
        }
    }
    journal.finish();
    Ok(())
}

/// How many files are fsynced, and folders renamed into, at a time. The file system then commits them
/// together: on ext4 under load, 500 fsyncs took 1.5-2.5 s one after another and 60-170 ms on 8
/// threads (no better on 32), 500 renames in 20 folders 1.4-1.6 s one after another and 25-45 ms with
/// the folders on 8 threads.
const THREADS: usize = 8;

/// Below this many files a plan's renames are done on this thread: starting a thread costs about as
/// much as a hundred renames (0.1 ms against 1 µs, measured on the median commit of this history).
const RENAMES_ON_ONE_THREAD: usize = 32;

/// `work` on each job, on up to `threads` threads; the results in the jobs' order.
fn parallel<T: Send, R: Send>(jobs: Vec<T>, threads: usize, work: impl Fn(T) -> R + Sync) -> Vec<R> {
    if jobs.len() <= 1 || threads <= 1 {
        return jobs.into_iter().map(work).collect();
    }
    let n = threads.min(jobs.len());
    let mut buckets: Vec<Vec<(usize, T)>> = (0..n).map(|_| Vec::new()).collect();
    for (i, job) in jobs.into_iter().enumerate() {
        buckets[i % n].push((i, job));
    }
    let work = &work;
    let run = move |bucket: Vec<(usize, T)>| bucket.into_iter().map(|(i, job)| (i, work(job))).collect::<Vec<_>>();
    // This thread takes the first bucket: a small plan's two fsyncs cost one thread, not two.
    let mine = buckets.remove(0);
    let mut out: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = buckets.into_iter().map(|bucket| scope.spawn(move || run(bucket))).collect();
        let mut out = run(mine);
        out.extend(handles.into_iter().flat_map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))));
        out
    });
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}

/// One change of the commit, as `roll_back` undoes it.
enum Undo {
    /// A file renamed over or deleted: the target, its old bytes (`None`: it was new) and permission
    /// bits.
    Replaced(PathBuf, Option<Vec<u8>>, Option<u32>),
    /// A folder removed (a new file took its name), with its permission bits.
    Removed(PathBuf, Option<u32>),
    /// A folder made for a new file.
    Made(PathBuf),
    /// A file the plan deletes, moved aside (the target, where it waits): put back as it was, the
    /// same file with its owner, mode and links, if the commit fails.
    Aside(PathBuf, PathBuf),
}

/// The changes of a committed plan, in the order that lets a file and a folder trade names: the
/// deletions, the folders removed (deepest first), the folders made (shallowest first), then the new
/// texts renamed into place. Stops at the first failure; returns what was done, and that failure.
fn apply_all(staged: Vec<Staged>, steps: &folders::Steps, crash: &journal::CrashAt, prefix: &str) -> (Vec<Undo>, Option<Refusal>) {
    let renamed = std::sync::atomic::AtomicUsize::new(0);
    let (deletions, texts): (Vec<Staged>, Vec<Staged>) = staged.into_iter().partition(|s| s.temp.is_none());
    let aside = Aside { steps, prefix, count: std::sync::atomic::AtomicUsize::new(0) };
    let (mut done, failed) = rename_all(deletions, crash, &renamed, &aside);
    if failed.is_some() {
        return (done, failed);
    }
    for (k, dir) in steps.remove.iter().enumerate() {
        let mode = mode_of(dir);
        if let Err(e) = fs::remove_dir(dir) {
            return (done, Some(io_refusal(dir, "remove the folder", &e)));
        }
        done.push(Undo::Removed(dir.clone(), mode));
        crash.at("rmdir", k + 1);
    }
    for (k, dir) in steps.make.iter().enumerate() {
        match fs::create_dir(dir) {
            Ok(()) => done.push(Undo::Made(dir.clone())),
            // Made meanwhile by someone else: theirs, kept.
            Err(e) if e.kind() == ErrorKind::AlreadyExists && dir.is_dir() => {}
            Err(e) => return (done, Some(io_refusal(dir, "create the folder", &e))),
        }
        crash.at("mkdir", k + 1);
    }
    let (more, failed) = rename_all(texts, crash, &renamed, &aside);
    done.extend(more);
    (done, failed)
}

/// Where the files a plan deletes wait for the end of its commit: under a name of the plan's own
/// temporary files (so recovery removes them when it rolls forward), in the file's folder or, when
/// the commit removes that folder, the nearest one of it that stays.
struct Aside<'a> {
    steps: &'a folders::Steps,
    prefix: &'a str,
    count: std::sync::atomic::AtomicUsize,
}

impl Aside<'_> {
    fn path(&self, target: &Path) -> PathBuf {
        let mut dir = folder(target);
        while self.steps.remove.contains(&dir) {
            dir = folder(&dir);
        }
        let n = self.count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        dir.join(format!("{}deleted-{n}{TEMP_SUFFIX}", self.prefix))
    }

    /// Moves `target` aside; refused where that would cross file systems (a folder the commit removes
    /// that is a mount point: removing it would fail too).
    fn put(&self, target: &Path) -> Result<PathBuf, Refusal> {
        let aside = self.path(target);
        match fs::rename(target, &aside) {
            Ok(()) => Ok(aside),
            Err(e) if e.raw_os_error() == Some(libc::EXDEV) => Err(Refusal::new(
                Kind::Io,
                format!(
                    "Cannot delete {}: it is on another file system than {} (its folder is a mount point), where the \
                     commit keeps it until every file is in place. Nothing was changed.",
                    target.display(),
                    folder(&aside).display()
                ),
            )),
            Err(e) => Err(io_refusal(target, "delete", &e)),
        }
    }
}

/// Renames every staged text over its target (and moves aside what the plan deletes), the folders on
/// several threads; stops at the first failure. Returns what was replaced, and that failure.
/// `renamed` counts the targets done, for the test hook.
fn rename_all(
    staged: Vec<Staged>,
    crash: &journal::CrashAt,
    renamed: &std::sync::atomic::AtomicUsize,
    aside: &Aside<'_>,
) -> (Vec<Undo>, Option<Refusal>) {
    let staged_count = staged.len();
    let mut by_folder: std::collections::BTreeMap<PathBuf, Vec<Staged>> = std::collections::BTreeMap::new();
    for s in staged {
        by_folder.entry(folder(&s.target)).or_default().push(s);
    }
    let failed = std::sync::atomic::AtomicBool::new(false);
    let threads = if staged_count < RENAMES_ON_ONE_THREAD { 1 } else { THREADS };
    let results = parallel(by_folder.into_values().collect(), threads, |group| {
        let mut done = Vec::new();
        for s in group {
            if failed.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
            let result = match s.temp {
                None => aside.put(&s.target).map(Some),
                Some(temp) if s.before.is_none() => temp.persist_noclobber(&s.target).map(|_| None).map_err(|e| io_refusal(&s.target, "replace", &e.error)),
                Some(temp) => temp.persist(&s.target).map(|_| None).map_err(|e| io_refusal(&s.target, "replace", &e.error)),
            };
            match result {
                Err(refusal) => {
                    failed.store(true, std::sync::atomic::Ordering::SeqCst);
                    return (done, Some(refusal));
                }
                Ok(Some(aside)) => done.push(Undo::Aside(s.target, aside)),
                Ok(None) => done.push(Undo::Replaced(s.target, s.before, s.mode)),
            }
            crash.at("rename", renamed.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1);
        }
        (done, None)
    });
    let mut done = Vec::new();
    let mut failure = None;
    for (d, f) in results {
        done.extend(d);
        failure = failure.or(f);
    }
    (done, failure)
}

/// fsyncs every staged text, and the prepared journal record, `THREADS` at a time: each text opened
/// again, flushed and closed, so no more than `THREADS` are open at once.
fn sync_all(staged: &[Staged], record: Option<&journal::Prepared>) -> Result<(), Refusal> {
    let texts: Vec<(&Path, &Path)> = staged.iter().filter_map(|s| s.temp.as_ref().map(|t| (s.target.as_path(), t.as_ref()))).collect();
    let flush = |(target, temp): (&Path, &Path)| flush_file(temp).map_err(|e| io_refusal(target, "flush", &e));
    parallel(texts, THREADS, flush).into_iter().collect::<Result<(), Refusal>>()?;
    match record {
        Some(r) => r.file().sync_all().map_err(|e| io_refusal(r.path(), "flush", &e)),
        None => Ok(()),
    }
}

/// Flushes the file at `path` to the disk. Read access is enough for fsync on Unix; Windows asks for
/// write access to flush.
fn flush_file(path: &Path) -> std::io::Result<()> {
    fs::OpenOptions::new().read(true).write(cfg!(windows)).open(path)?.sync_all()
}

/// Undoes what a failed commit did, last first (best effort: each file put back atomically, with the
/// permission bits it had; each folder removed or made again).
fn roll_back(done: Vec<Undo>, prefix: &str) {
    for undo in done.into_iter().rev() {
        match undo {
            Undo::Replaced(path, None, _) => {
                let _ = fs::remove_file(&path);
            }
            Undo::Replaced(path, Some(bytes), mode) => {
                let w = Write1 { path: path.clone(), before: None, after: Some(bytes), mode };
                if let Ok(Staged { temp: Some(temp), .. }) = stage(w, path.clone(), &folder(&path), false, prefix) {
                    if flush_file(&temp).is_ok() {
                        let _ = temp.persist(&path);
                    }
                }
            }
            Undo::Removed(dir, mode) => {
                if fs::create_dir(&dir).is_ok() {
                    if let Some(m) = mode {
                        let _ = set_mode(&dir, m);
                    }
                }
            }
            Undo::Made(dir) => {
                let _ = fs::remove_dir(&dir);
            }
            Undo::Aside(path, aside) => {
                let _ = fs::rename(&aside, &path);
            }
        }
    }
}

/// Writes the new text of `w` to a temporary file in `dir`, beside `target` or in the nearest folder
/// of it that exists (not yet flushed: `sync_all`). The temporary file gets the permission bits the
/// file will have: those `w` states, else the existing file's (and its owner, where we may give it),
/// else those a new file gets from the umask. `replaces_folder`: the target is a folder the commit
/// removes first.
fn stage(w: Write1, target: PathBuf, dir: &Path, replaces_folder: bool, prefix: &str) -> Result<Staged, Refusal> {
    let existing = if replaces_folder { None } else { fs::metadata(&target).ok() };
    if let Some(meta) = &existing {
        not_regular(&w.path, meta, None)?;
    }
    let mode = existing.as_ref().map(mode_bits);
    let Some(after) = w.after else {
        return Ok(Staged { target, temp: None, before: w.before, mode, len: 0, hash: String::new() });
    };
    if w.before.is_some() && existing.as_ref().is_some_and(|m| m.permissions().readonly()) {
        // Renaming over it would succeed (the folder is writable), but the file says: do not write me.
        return Err(Refusal::new(
            Kind::Io,
            format!("Cannot edit {}: the file is read-only. Nothing was changed.", w.path.display()),
        ));
    }
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix).suffix(TEMP_SUFFIX);
    // A new file is created as any program creates one: 0666 less the umask. An existing file's new
    // text starts private (0600, tempfile's default) until it has the file's own bits.
    #[cfg(unix)]
    if existing.is_none() && w.mode.is_none() {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    let mut temp = builder.tempfile_in(dir).map_err(|e| io_refusal(&target, "create a temporary file beside", &e))?;
    temp.write_all(&after).map_err(|e| io_refusal(&target, "write", &e))?;
    if let Some(meta) = &existing {
        keep_owner(temp.as_file(), meta);
    }
    match (w.mode, &existing) {
        (Some(m), _) => set_mode(temp.path(), m).map_err(|e| io_refusal(&target, "set the permissions of", &e))?,
        (None, Some(meta)) => {
            fs::set_permissions(temp.path(), meta.permissions()).map_err(|e| io_refusal(&target, "keep the permissions of", &e))?
        }
        (None, None) => {}
    }
    Ok(Staged { target, temp: Some(temp.into_temp_path()), before: w.before, mode, len: after.len() as u64, hash: journal::digest(&after) })
}

/// The permission bits of the file at `path` (links followed), for a move that keeps them.
pub fn mode_of(path: &Path) -> Option<u32> {
    fs::metadata(path).ok().as_ref().map(mode_bits)
}

#[cfg(unix)]
fn mode_bits(meta: &fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn mode_bits(meta: &fs::Metadata) -> u32 {
    if meta.permissions().readonly() { 0o444 } else { 0o666 }
}

/// Gives the new text the owner of the file it replaces (root editing another user's file must not
/// take it over). Best effort: only a privileged process may, and then it must.
#[cfg(unix)]
fn keep_owner(file: &fs::File, meta: &fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    if let Ok(mine) = file.metadata() {
        if (mine.uid(), mine.gid()) != (meta.uid(), meta.gid()) {
            let _ = std::os::unix::fs::fchown(file, Some(meta.uid()), Some(meta.gid()));
        }
    }
}

#[cfg(not(unix))]
fn keep_owner(_: &fs::File, _: &fs::Metadata) {}

/// Exclusive advisory locks on `folders`, taken in sorted order (so two runs cannot wait on each
/// other) and released when dropped. Best effort: a folder that cannot be locked is not.
fn lock_folders(folders: impl IntoIterator<Item = PathBuf>) -> Vec<fs::File> {
    let mut dirs: Vec<PathBuf> = folders.into_iter().collect();
    dirs.sort();
    dirs.dedup();
    dirs.iter().filter_map(|d| fs::File::open(d).ok()).filter(lock_exclusive).collect()
}

fn lock_exclusive(f: &fs::File) -> bool {
    f.lock().is_ok()
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode & 0o7777))
}

/// Permission bits other than read-only have no meaning here.
#[cfg(not(unix))]
fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    let mut p = fs::metadata(path)?.permissions();
    p.set_readonly(mode & 0o222 == 0);
    fs::set_permissions(path, p)
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
}
