//! Reading files for a plan and writing the results: each file replaced atomically (temporary file in
//! the same folder, fsync, rename), all files of a plan or none, also when the run is killed half-way
//! (`journal`).

use std::collections::BTreeSet;
use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use cap_fs_ext::DirExt;

use crate::engine::{Kind, Refusal};

pub(crate) mod atomic;
pub(crate) mod folders;
pub(crate) mod journal;
mod opened;
pub(crate) mod plan;
pub(crate) mod private;

pub(crate) use journal::{recover, Recovered};
pub(crate) use opened::Opened;
pub(crate) use private::refuse_inside as refuse_private;

/// Prefix of the temporary files (`.multiedit-<plan>-<random>.tmp`), so that a later run can remove
/// what a killed run left (`journal`).
pub(crate) const TEMP_PREFIX: &str = ".multiedit-";
pub(crate) const TEMP_SUFFIX: &str = ".tmp";

fn io_refusal(path: &Path, what: &str, e: &std::io::Error) -> Refusal {
    if let Some(big) = TooBig::of(e) {
        return big.refusal(path);
    }
    Refusal::new(
        Kind::Io,
        format!(
            "Cannot {what} {}: {}. Nothing was changed.",
            path.display(),
            os_error(e)
        ),
    )
}

/// The most multiedit reads of one file: the most its text may be (`engine::MAX_TEXT`, 256 MiB), since
/// the engine holds the text, its replacements and its result in memory. A larger file is refused from
/// its metadata, before anything is allocated: a sparse file of a terabyte costs no disk, and reading
/// it aborted the process.
pub(crate) const MAX_READ: u64 = crate::engine::MAX_TEXT as u64;

/// A file past `MAX_READ`: its size when its metadata said so, or that it grew past the cap while it
/// was read. Carried inside an `io::Error` (`read_in`, `read_capped`), so every reader refuses it with
/// the one text `refusal` builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooBig {
    /// The size the metadata gave; `None` when the file grew past the cap after it was looked at.
    len: Option<u64>,
}

impl TooBig {
    /// The `TooBig` an error carries, if it is one.
    pub(crate) fn of(e: &std::io::Error) -> Option<TooBig> {
        e.get_ref()?.downcast_ref::<TooBig>().copied()
    }

    fn error(len: Option<u64>) -> std::io::Error {
        std::io::Error::other(TooBig { len })
    }

    /// The refusal of the file `path` (kind `too_large`, as the engine's refusal of a text that would
    /// grow past the same cap: it is the file, not the disk, that is wrong, and running again cannot help).
    pub(crate) fn refusal(self, path: &Path) -> Refusal {
        Refusal::new(
            Kind::TooLarge,
            format!(
                "Cannot read {}: {self}. Nothing was changed.",
                path.display()
            ),
        )
    }
}

impl std::fmt::Display for TooBig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.len {
            Some(len) => write!(
                f,
                "it is {} ({len} bytes), more than the 256 MiB multiedit reads",
                human_size(len)
            ),
            None => f.write_str("it grew past the 256 MiB multiedit reads while it was read"),
        }
    }
}

impl std::error::Error for TooBig {}

/// `len` bytes in binary units with one decimal: `1.0 TiB`, `300.0 MiB`.
fn human_size(len: u64) -> String {
    const UNITS: [&str; 6] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = len as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{len} bytes")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Reads all of `file`, refusing (`TooBig`) one whose metadata says it is longer than `MAX_READ`
/// before anything is allocated, and reading at most one byte past the cap, so that a file that grows
/// between the look and the read is refused too.
pub(crate) fn read_capped(file: impl std::io::Read, len: u64) -> std::io::Result<Vec<u8>> {
    read_up_to(file, len, MAX_READ)
}

fn read_up_to(file: impl std::io::Read, len: u64, cap: u64) -> std::io::Result<Vec<u8>> {
    if len > cap {
        return Err(TooBig::error(Some(len)));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    std::io::Read::read_to_end(&mut std::io::Read::take(file, cap + 1), &mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(TooBig::error(None));
    }
    Ok(bytes)
}

/// `std::fs::read` with the cap: the file at `path` (links followed), refused past `MAX_READ`. For
/// the files multiedit reads besides a plan's (agents' configuration, its own records).
pub(crate) fn read_file_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = fs::File::open(path)?;
    let len = file.metadata()?.len();
    read_capped(file, len)
}

/// `std::fs::read_to_string` with the cap (`read_file_capped`).
pub(crate) fn read_text_capped(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_file_capped(path)?).map_err(|_| {
        std::io::Error::new(ErrorKind::InvalidData, "stream did not contain valid UTF-8")
    })
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
/// without opening the file in a way that could block; so is a file larger than `MAX_READ`
/// (`too_large`), from its metadata.
pub(crate) fn read(path: &Path) -> Result<Option<Vec<u8>>, Refusal> {
    read_at(path, None)
}

/// `read` of the file a plan names `path`, whose bytes are read at `real`, the path it resolved to
/// once (`resolve`): never resolved again, so a link swapped in since cannot lead the read elsewhere.
pub(crate) fn read_at(path: &Path, real: Option<&Path>) -> Result<Option<Vec<u8>>, Refusal> {
    let meta = match fs::symlink_metadata(path) {
        Err(e) if folders::absent(&e) => return Ok(None),
        Err(e) => return Err(io_refusal(path, "read", &e)),
        Ok(m) => m,
    };
    let link = meta.file_type().is_symlink().then(|| {
        fs::read_link(path)
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    });
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
            format!(
                "Cannot edit {}: it is a directory, not a file. Nothing was changed.",
                path.display()
            ),
        ));
    }
    not_regular(path, &meta, link.as_deref())?;
    let real = match real {
        Some(r) => r.to_path_buf(),
        None => fs::canonicalize(path).map_err(|e| io_refusal(path, "read", &e))?,
    };
    let (dir, name) = Opened::default()
        .parent(&real)
        .map_err(|e| io_refusal(path, "read", &e))?;
    read_in(&dir, name)
        .map(Some)
        .map_err(|e| io_refusal(path, "read", &e))
}

/// Where a plan's `path` is, resolved once, as the kernel resolves it (links followed): the file an
/// edit changes (a link's target), the entry a deletion removes (`entry`: the link itself, its
/// folders resolved), the path a new file takes. Everything after uses this path, folder by folder,
/// without following a link (`opened`). Unresolvable: the path as given (reading it then says why).
pub(crate) fn resolve(path: &Path, entry: bool) -> PathBuf {
    let resolved = if entry {
        match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => fs::canonicalize(folder_or_here(dir))
                .map(|d| d.join(name))
                .ok(),
            _ => None,
        }
    } else {
        fs::canonicalize(path)
            .ok()
            .or_else(|| crate::paths::real_path(path).ok())
    };
    resolved.unwrap_or_else(|| path.to_path_buf())
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
    if t.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

/// Reads a file that must be regular, at `path` with its links resolved: its folders are opened
/// without following a link (`opened`), and so is the file itself, so that nothing swapped in since
/// the path was resolved can lead the read elsewhere. It is opened without blocking (a FIFO put in
/// its place after the check would otherwise wait for a writer forever) and checked again on the open
/// handle.
pub(crate) fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(ErrorKind::InvalidInput.into());
    };
    let dir = Opened::default().dir(&fs::canonicalize(folder_or_here(dir))?)?;
    read_in(&dir, name)
}

/// `dir`, or the current folder for the empty parent of a bare name.
fn folder_or_here(dir: &Path) -> &Path {
    if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    }
}

/// `read_regular` of the file `name` in the open folder `dir`, refused past `MAX_READ` (`read_capped`):
/// every read of a plan's file, by every front end, comes here.
pub(crate) fn read_in(dir: &cap_std::fs::Dir, name: &std::ffi::OsStr) -> std::io::Result<Vec<u8>> {
    let mut file = dir
        .open_with(name, opened::no_follow().read(true))?
        .into_std();
    let meta = file.metadata()?;
    // A directory fails on its own when read, with the system's words.
    if !meta.is_file() && !meta.is_dir() {
        return Err(std::io::Error::other(format!(
            "it is {}, not a regular file",
            special_kind(&meta.file_type())
        )));
    }
    read_capped(&mut file, meta.len())
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
    temp: Option<Temp>,
    before: Option<Vec<u8>>,
    /// The permission bits the target had, to put them back if a later rename fails.
    mode: Option<u32>,
    /// Length and hash of the new text, for the journal.
    len: u64,
    hash: String,
}

/// A new text waiting under a temporary name in an open folder: removed if dropped before its rename.
struct Temp {
    dir: std::sync::Arc<cap_std::fs::Dir>,
    name: std::ffi::OsString,
    /// Where it is, for the journal.
    path: PathBuf,
    renamed: bool,
}

impl Temp {
    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = self.dir.remove_file(&self.name);
        }
    }
}

/// The folder a file is in (`.` for a bare name).
fn folder(path: &Path) -> PathBuf {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// The file a write replaces: its path as the caller resolved it (`resolve`), taken as it is. It is
/// not resolved again: a link on it now was swapped in since, and the commit, which follows none,
/// refuses it.
fn target_of(w: &Write1) -> PathBuf {
    w.path.clone()
}

/// The folder steps of a commit (`folders::steps`) for `files`: each file's target, whether it is
/// new, whether it is deleted.
fn steps_of<'a>(
    files: impl Iterator<Item = (&'a Path, bool, bool)> + Clone,
) -> Result<folders::Steps, Refusal> {
    let deleted = files
        .clone()
        .filter(|f| f.2)
        .map(|f| f.0.to_path_buf())
        .collect();
    folders::steps(files.filter(|f| f.1 && !f.2).map(|f| f.0), &deleted)
}

/// Writes every file or none, also across a crash (see `journal`). Each `Write1::path` is resolved
/// already (`resolve`: a link's target for an edit, the link itself for a deletion). Callers run `recover` over the plan's files before reading them. A new
/// file may take the name of a folder the plan empties, or have a folder where the plan deletes a
/// file (`folders`): deletions come first, then the folders, then the new texts.
///
/// Durable in batches: every new text is written, then all are fsynced together, renamed, and each
/// folder fsynced once, rather than one file after another.
pub fn commit(writes: Vec<Write1>) -> Result<(), Refusal> {
    let crash = journal::CrashAt::from_env();
    let targets: Vec<PathBuf> = writes.iter().map(target_of).collect();
    let files = || {
        writes
            .iter()
            .zip(&targets)
            .map(|(w, t)| (t.as_path(), w.before.is_none(), w.after.is_none()))
    };
    let steps = steps_of(files())?;
    let staging: Vec<PathBuf> = targets.iter().map(|t| steps.staging(t)).collect();
    let begin: Vec<(PathBuf, bool)> = files().map(|(t, new, _)| (t.to_path_buf(), new)).collect();
    let mut journal = journal::Journal::begin(&begin, &staging, journal::CrashAt::from_env())?;
    let prefix = journal.temp_prefix();
    let opened = Opened::default();
    // What the commit syncs at the end: every folder it changed an entry of.
    let mut touched: BTreeSet<PathBuf> = targets
        .iter()
        .map(|t| folder(t))
        .chain(staging.iter().cloned())
        .collect();
    touched.extend(steps.remove.iter().chain(&steps.make).map(|d| folder(d)));
    let mut staged = Vec::with_capacity(writes.len());
    for ((w, target), dir) in writes.into_iter().zip(targets).zip(&staging) {
        staged.push(stage(w, target, dir, &prefix, &opened)?);
        crash.at("staged", staged.len());
    }
    // One rename is atomic by itself: a single-file plan that makes or removes no folder needs no
    // commit point. The committed record is written now so that it is fsynced with the new texts.
    let record = if staged.len() > 1 || !steps.is_empty() {
        let entries = staged
            .iter()
            .map(|s| journal::Entry {
                target: s.target.clone(),
                temp: s.temp.as_ref().map(|t| t.path().to_path_buf()),
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
    sync_all(&staged, record.as_ref(), &opened)?;
    crash.at("synced", 1);
    // From the check to the last rename, other multiedit runs writing in the same folders wait: two
    // runs started together on one file must not both pass the check against the same text.
    let _locks = lock_in(
        &opened,
        staged
            .iter()
            .map(|s| folder(&s.target))
            .chain(staging.iter().cloned()),
    );
    // The texts were checked against what was read; refuse if anyone changed a file since (or a
    // folder that the commit removes or makes).
    let changed = |path: &Path| {
        Refusal::new(
            Kind::NotApplied,
            format!("{} changed while the plan was being applied. Nothing was changed; run the plan again.", path.display()),
        )
    };
    if !steps.is_empty()
        && steps_of(
            staged
                .iter()
                .map(|s| (s.target.as_path(), s.before.is_none(), s.temp.is_none())),
        )? != steps
    {
        return Err(changed(&staged[0].target));
    }
    for s in staged.iter().filter(|s| !steps.remove.contains(&s.target)) {
        let now = match recheck(&opened, s) {
            Ok(b) => Some(b),
            Err(e) if folders::absent(&e) => None,
            // Grown past the cap since it was read: not the text the plan was checked on.
            Err(e) if TooBig::of(&e).is_some() => return Err(changed(&s.target)),
            Err(e) => return Err(io_refusal(&s.target, "re-read", &e)),
        };
        if now != s.before {
            return Err(changed(&s.target));
        }
    }
    if let Some(record) = record {
        journal.commit(record)?;
    }
    let (done, failed) = apply_all(staged, &steps, &crash, &prefix, &opened);
    let touched: Vec<PathBuf> = touched.into_iter().collect();
    if let Some(refusal) = failed {
        // The plan had committed; putting back what was already done (then dropping the journal) is
        // the one way left to keep it whole. A crash in the midst of that put-back is the one moment
        // the journal does not cover.
        roll_back(done, &prefix, &opened);
        parallel(touched, THREADS, |d| sync_in(&opened, &d));
        return Err(refusal);
    }
    // The renames reach the disk before the journal goes; the deleted files, kept aside until now,
    // go just before it (a crash between: recovery rolls forward, which removes them).
    parallel(touched, THREADS, |d| sync_in(&opened, &d));
    for undo in &done {
        if let Undo::Aside(_, aside) = undo {
            if let Ok((dir, name)) = opened.parent(aside) {
                let _ = dir.remove_file_or_symlink(name);
            }
        }
    }
    journal.finish();
    Ok(())
}

/// The text of a staged file now, read in its open folder. A symbolic link the plan deletes was read
/// through (its target's text is what the plan checked): so is it here, on the target resolved anew.
fn recheck(opened: &Opened, s: &Staged) -> std::io::Result<Vec<u8>> {
    let (dir, name) = opened.parent(&s.target)?;
    if s.temp.is_none()
        && dir
            .symlink_metadata(name)
            .is_ok_and(|m| m.file_type().is_symlink())
    {
        return read_regular(&fs::canonicalize(&s.target)?);
    }
    read_in(&dir, name)
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
fn parallel<T: Send, R: Send>(
    jobs: Vec<T>,
    threads: usize,
    work: impl Fn(T) -> R + Sync,
) -> Vec<R> {
    if jobs.len() <= 1 || threads <= 1 {
        return jobs.into_iter().map(work).collect();
    }
    let n = threads.min(jobs.len());
    let mut buckets: Vec<Vec<(usize, T)>> = (0..n).map(|_| Vec::new()).collect();
    for (i, job) in jobs.into_iter().enumerate() {
        buckets[i % n].push((i, job));
    }
    let work = &work;
    let run = move |bucket: Vec<(usize, T)>| {
        bucket
            .into_iter()
            .map(|(i, job)| (i, work(job)))
            .collect::<Vec<_>>()
    };
    // This thread takes the first bucket: a small plan's two fsyncs cost one thread, not two.
    let mine = buckets.remove(0);
    let mut out: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = buckets
            .into_iter()
            .map(|bucket| scope.spawn(move || run(bucket)))
            .collect();
        let mut out = run(mine);
        out.extend(handles.into_iter().flat_map(|h| {
            h.join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        }));
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
fn apply_all(
    staged: Vec<Staged>,
    steps: &folders::Steps,
    crash: &journal::CrashAt,
    prefix: &str,
    opened: &Opened,
) -> (Vec<Undo>, Option<Refusal>) {
    let renamed = std::sync::atomic::AtomicUsize::new(0);
    let (deletions, texts): (Vec<Staged>, Vec<Staged>) =
        staged.into_iter().partition(|s| s.temp.is_none());
    let aside = Aside {
        steps,
        prefix,
        count: std::sync::atomic::AtomicUsize::new(0),
        opened,
    };
    let (mut done, failed) = rename_all(deletions, crash, &renamed, &aside);
    if failed.is_some() {
        return (done, failed);
    }
    for (k, dir) in steps.remove.iter().enumerate() {
        let removed = opened.parent(dir).and_then(|(parent, name)| {
            let mode = parent
                .open_dir_nofollow(name)
                .and_then(|d| opened::as_file(&d)?.metadata())
                .ok()
                .as_ref()
                .map(mode_bits);
            parent.remove_dir(name).map(|()| mode)
        });
        match removed {
            Ok(mode) => done.push(Undo::Removed(dir.clone(), mode)),
            Err(e) => return (done, Some(io_refusal(dir, "remove the folder", &e))),
        }
        opened.forget(dir);
        crash.at("rmdir", k + 1);
    }
    for (k, dir) in steps.make.iter().enumerate() {
        match opened
            .parent(dir)
            .and_then(|(parent, name)| parent.create_dir(name))
        {
            Ok(()) => done.push(Undo::Made(dir.clone())),
            // Made meanwhile by someone else (perhaps a link to elsewhere): the world changed since
            // the plan was checked.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                let message = format!("{} appeared while the plan was being applied. Nothing was changed; run the plan again.", dir.display());
                return (done, Some(Refusal::new(Kind::NotApplied, message)));
            }
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
    opened: &'a Opened,
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
        let moved = self.opened.parent(target).and_then(|(dir, name)| {
            let (to, to_name) = self.opened.parent(&aside)?;
            opened::rename_new(&dir, name, &to, to_name)
        });
        match moved {
            Ok(()) => Ok(aside),
            Err(e) if cross_device(&e) => Err(Refusal::new(
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

/// The rename would cross file systems (EXDEV; Windows says ERROR_NOT_SAME_DEVICE, 17).
fn cross_device(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    return e.raw_os_error() == Some(libc::EXDEV);
    #[cfg(not(unix))]
    return e.raw_os_error() == Some(17);
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
    let mut by_folder: std::collections::BTreeMap<PathBuf, Vec<Staged>> =
        std::collections::BTreeMap::new();
    for s in staged {
        by_folder.entry(folder(&s.target)).or_default().push(s);
    }
    let failed = std::sync::atomic::AtomicBool::new(false);
    let threads = if staged_count < RENAMES_ON_ONE_THREAD {
        1
    } else {
        THREADS
    };
    let results = parallel(by_folder.into_values().collect(), threads, |group| {
        let mut done = Vec::new();
        for s in group {
            if failed.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
            let result = match s.temp {
                None => aside.put(&s.target).map(Some),
                Some(mut temp) => {
                    let renamed = aside.opened.parent(&s.target).and_then(|(dir, name)| {
                        if s.before.is_none() {
                            opened::rename_new(&temp.dir, &temp.name, &dir, name)
                        } else {
                            temp.dir.rename(&temp.name, &dir, name)
                        }
                    });
                    temp.renamed = renamed.is_ok();
                    renamed
                        .map(|()| None)
                        .map_err(|e| io_refusal(&s.target, "replace", &e))
                }
            };
            match result {
                Err(refusal) => {
                    failed.store(true, std::sync::atomic::Ordering::SeqCst);
                    return (done, Some(refusal));
                }
                Ok(Some(aside)) => done.push(Undo::Aside(s.target, aside)),
                Ok(None) => done.push(Undo::Replaced(s.target, s.before, s.mode)),
            }
            crash.at(
                "rename",
                renamed.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1,
            );
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
fn sync_all(
    staged: &[Staged],
    record: Option<&journal::Prepared>,
    _opened: &Opened,
) -> Result<(), Refusal> {
    let texts: Vec<(&Path, &Temp)> = staged
        .iter()
        .filter_map(|s| s.temp.as_ref().map(|t| (s.target.as_path(), t)))
        .collect();
    let flush = |(target, temp): (&Path, &Temp)| {
        flush_in(&temp.dir, &temp.name).map_err(|e| io_refusal(target, "flush", &e))
    };
    parallel(texts, THREADS, flush)
        .into_iter()
        .collect::<Result<(), Refusal>>()?;
    match record {
        Some(r) => r
            .file()
            .sync_all()
            .map_err(|e| io_refusal(r.path(), "flush", &e)),
        None => Ok(()),
    }
}

/// Flushes the file `name` of the open folder `dir` to the disk. Read access is enough for fsync on
/// Unix; Windows asks for write access to flush.
fn flush_in(dir: &cap_std::fs::Dir, name: &std::ffi::OsStr) -> std::io::Result<()> {
    dir.open_with(name, opened::no_follow().read(true).write(cfg!(windows)))?
        .sync_all()
}

/// Undoes what a failed commit did, last first (best effort: each file put back atomically, with the
/// permission bits it had; each folder removed or made again).
fn roll_back(done: Vec<Undo>, prefix: &str, opened: &Opened) {
    for undo in done.into_iter().rev() {
        let _ = put_back(undo, prefix, opened);
    }
}

fn put_back(undo: Undo, prefix: &str, opened: &Opened) -> std::io::Result<()> {
    match undo {
        Undo::Replaced(path, None, _) => {
            let (dir, name) = opened.parent(&path)?;
            dir.remove_file(name)
        }
        Undo::Replaced(path, Some(bytes), mode) => {
            let w = Write1 {
                path: path.clone(),
                before: None,
                after: Some(bytes),
                mode,
            };
            if let Ok(Staged {
                temp: Some(mut temp),
                ..
            }) = stage(w, path.clone(), &folder(&path), prefix, opened)
            {
                flush_in(&temp.dir, &temp.name)?;
                let (dir, name) = opened.parent(&path)?;
                temp.dir.rename(&temp.name, &dir, name)?;
                temp.renamed = true;
            }
            Ok(())
        }
        Undo::Removed(path, mode) => {
            let (dir, name) = opened.parent(&path)?;
            dir.create_dir(name)?;
            if let Some(m) = mode {
                set_mode(&opened::as_file(&dir.open_dir_nofollow(name)?)?, m)?;
            }
            Ok(())
        }
        Undo::Made(path) => {
            let (dir, name) = opened.parent(&path)?;
            opened.forget(&path);
            dir.remove_dir(name)
        }
        Undo::Aside(path, aside) => {
            let (from, from_name) = opened.parent(&aside)?;
            let (to, name) = opened.parent(&path)?;
            from.rename(from_name, &to, name)
        }
    }
}

/// Writes the new text of `w` to a temporary file in `dir`, beside `target` or in the nearest folder
/// of it that exists (not yet flushed: `sync_all`). The temporary file gets the permission bits the
/// file will have: those `w` states, else the existing file's (and its owner, where we may give it),
/// else those a new file gets from the umask.
fn stage(
    w: Write1,
    target: PathBuf,
    dir: &Path,
    prefix: &str,
    opened: &Opened,
) -> Result<Staged, Refusal> {
    // What is at the target now, looked at in its open folder. A deletion moves the entry aside as it
    // is (a link included); a folder where a new file goes is the folder steps' business.
    let existing = if w.after.is_none() {
        None
    } else {
        match opened
            .parent(&target)
            .and_then(|(d, name)| d.open_with(name, opened::no_follow().read(true)))
        {
            Ok(f) => Some(
                f.into_std()
                    .metadata()
                    .map_err(|e| io_refusal(&target, "examine", &e))?,
            ),
            Err(e) if folders::absent(&e) => None,
            Err(e) => return Err(io_refusal(&w.path, "read", &e)),
        }
    };
    let existing = existing.filter(|m| !(m.is_dir() && w.before.is_none()));
    if let Some(meta) = &existing {
        not_regular(&w.path, meta, None)?;
    }
    let mode = existing.as_ref().map(mode_bits);
    let Some(after) = w.after else {
        return Ok(Staged {
            target,
            temp: None,
            before: w.before,
            mode,
            len: 0,
            hash: String::new(),
        });
    };
    if w.before.is_some()
        && existing
            .as_ref()
            .is_some_and(|m| m.permissions().readonly())
    {
        // Renaming over it would succeed (the folder is writable), but the file says: do not write me.
        return Err(Refusal::new(
            Kind::Io,
            format!(
                "Cannot edit {}: the file is read-only. Nothing was changed.",
                w.path.display()
            ),
        ));
    }
    let in_dir = opened
        .dir(dir)
        .map_err(|e| io_refusal(&target, "create a temporary file beside", &e))?;
    // A new file is created as any program creates one: 0666 less the umask. An existing file's new
    // text starts private (0600) until it has the file's own bits.
    let create_mode = if existing.is_none() && w.mode.is_none() {
        0o666
    } else {
        0o600
    };
    let (file, name) = create_temp(&in_dir, prefix, create_mode)
        .map_err(|e| io_refusal(&target, "create a temporary file beside", &e))?;
    let temp = Temp {
        dir: in_dir,
        path: dir.join(&name),
        name,
        renamed: false,
    };
    let mut file = file.into_std();
    file.write_all(&after)
        .map_err(|e| io_refusal(&target, "write", &e))?;
    if let Some(meta) = &existing {
        keep_owner(&file, meta);
    }
    match (w.mode, &existing) {
        (Some(m), _) => {
            set_mode(&file, m).map_err(|e| io_refusal(&target, "set the permissions of", &e))?
        }
        (None, Some(meta)) => file
            .set_permissions(meta.permissions())
            .map_err(|e| io_refusal(&target, "keep the permissions of", &e))?,
        (None, None) => {}
    }
    Ok(Staged {
        target,
        temp: Some(temp),
        before: w.before,
        mode,
        len: after.len() as u64,
        hash: journal::digest(&after),
    })
}

/// A new file `<prefix><random>.tmp` in the open folder `dir`, created with `mode` (less the umask),
/// never over anything already there.
fn create_temp(
    dir: &cap_std::fs::Dir,
    prefix: &str,
    mode: u32,
) -> std::io::Result<(cap_std::fs::File, std::ffi::OsString)> {
    let mut options = opened::no_follow();
    options.write(true).create_new(true);
    #[cfg(unix)]
    cap_std::fs::OpenOptionsExt::mode(&mut options, mode);
    #[cfg(not(unix))]
    let _ = mode;
    loop {
        let mut random = [0u8; 6];
        getrandom::fill(&mut random).map_err(std::io::Error::other)?;
        let letters: String = random
            .iter()
            .map(|b| {
                char::from(
                    b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                        [usize::from(*b) % 62],
                )
            })
            .collect();
        let name = std::ffi::OsString::from(format!("{prefix}{letters}{TEMP_SUFFIX}"));
        match dir.open_with(&name, &options) {
            Ok(f) => return Ok((f, name)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// The permission bits of the file at `path` (links followed), for a move that keeps them.
pub(crate) fn mode_of(path: &Path) -> Option<u32> {
    fs::metadata(path).ok().as_ref().map(mode_bits)
}

#[cfg(unix)]
fn mode_bits(meta: &fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn mode_bits(meta: &fs::Metadata) -> u32 {
    if meta.permissions().readonly() {
        0o444
    } else {
        0o666
    }
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
    lock_in(
        &Opened::default(),
        folders.into_iter().filter_map(|d| fs::canonicalize(d).ok()),
    )
}

/// `lock_folders` through the open folders of a commit. Each folder is locked once, however many
/// of its names lead to it.
fn lock_in(opened: &Opened, folders: impl IntoIterator<Item = PathBuf>) -> Vec<fs::File> {
    let mut dirs: Vec<PathBuf> = folders.into_iter().collect();
    dirs.sort();
    dirs.dedup();
    dirs.iter()
        .filter_map(|d| opened.dir(d).and_then(|d| opened::as_file(&d)).ok())
        .filter(lock_exclusive)
        .collect()
}

fn lock_exclusive(f: &fs::File) -> bool {
    f.lock().is_ok()
}

/// Sets the permission bits of an open file or folder (never through a path a link could redirect).
#[cfg(unix)]
fn set_mode(file: &fs::File, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    file.set_permissions(fs::Permissions::from_mode(mode & 0o7777))
}

/// Permission bits other than read-only have no meaning here.
#[cfg(not(unix))]
fn set_mode(file: &fs::File, mode: u32) -> std::io::Result<()> {
    let mut p = file.metadata()?.permissions();
    p.set_readonly(mode & 0o222 == 0);
    file.set_permissions(p)
}

fn sync_dir(dir: &Path) {
    if let Ok(dir) = fs::canonicalize(dir) {
        sync_in(&Opened::default(), &dir)
    }
}

/// fsyncs the open folder `dir` (best effort).
pub(crate) fn sync_in(opened: &Opened, dir: &Path) {
    if let Ok(d) = opened.dir(dir).and_then(|d| opened::as_file(&d)) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_past_the_cap_is_refused_from_its_size_or_when_it_grows_while_read() {
        let refusal = |e: std::io::Error| TooBig::of(&e).unwrap().refusal(Path::new("/p/big"));
        let r = refusal(read_capped(std::io::empty(), 1 << 40).unwrap_err());
        assert_eq!(r.kind, Kind::TooLarge);
        assert_eq!(
            r.message,
            "Cannot read /p/big: it is 1.0 TiB (1099511627776 bytes), more than the 256 MiB multiedit reads. Nothing was changed."
        );
        // Said 4 bytes, then gave more than the cap: refused once one byte past it is read.
        let grew = read_up_to(std::io::repeat(b'x'), 4, 10).unwrap_err();
        assert_eq!(
            refusal(grew).message,
            "Cannot read /p/big: it grew past the 256 MiB multiedit reads while it was read. Nothing was changed."
        );
        assert_eq!(read_up_to(&b"0123456789"[..], 4, 10).unwrap().len(), 10);
        assert_eq!(io_refusal(Path::new("/p/big"), "read", &TooBig::error(Some(300 << 20))).message,
            "Cannot read /p/big: it is 300.0 MiB (314572800 bytes), more than the 256 MiB multiedit reads. Nothing was changed.");
        assert_eq!(human_size(1023), "1023 bytes");
        assert_eq!(human_size(1536), "1.5 KiB");
    }
}
