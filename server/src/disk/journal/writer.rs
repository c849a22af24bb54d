//! A plan's journal as its writer keeps it: the first record written when the commit begins, the
//! committed one prepared and renamed into place at its commit point, the record removed at its end.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::crash::CrashAt;
use super::record::{
    record_name, record_temp_prefix, start_time, temp_prefix, Entry, Record, FORMAT, FORMAT_FOLDERS,
};
use crate::disk::folders::{self, folder};
use crate::disk::private;
use crate::disk::refusal::io_refusal;
use crate::disk::sync::sync_dir;
use crate::disk::temp::TEMP_SUFFIX;
use crate::refusal::{Kind, Refusal};

/// A plan's journal as its writer keeps it.
pub(in crate::disk) struct Journal {
    record: Record,
    /// Where the record is, once written (`None`: a single-file plan where no private folder could be
    /// made; it goes without).
    path: Option<PathBuf>,
    crash: CrashAt,
}

impl Journal {
    /// Writes the first record, for `targets` (each with whether it is new) whose temporary files go
    /// in `staging`. A plan over several files needs it (`Err` when no private folder can hold it); a
    /// single-file plan goes on without one.
    pub(crate) fn begin(
        targets: &[(PathBuf, bool)],
        staging: &[PathBuf],
        crash: CrashAt,
    ) -> Result<Journal, Refusal> {
        let pid = std::process::id();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let plan = format!("{pid}-{:x}", now.as_nanos() & 0xffff_ffff_ffff);
        let folders: BTreeSet<PathBuf> = targets
            .iter()
            .map(|(t, _)| folder(t))
            .chain(staging.iter().cloned())
            .collect();
        let files = targets
            .iter()
            .map(|(t, new)| Entry {
                target: t.clone(),
                temp: None,
                new: *new,
                len: None,
                hash: None,
                delete: false,
            })
            .collect();
        let record = Record {
            multiedit_journal: FORMAT,
            plan,
            pid,
            started: start_time(pid),
            time: now.as_secs(),
            committed: false,
            folders: folders.into_iter().collect(),
            files,
            remove_dirs: Vec::new(),
            make_dirs: Vec::new(),
            root: None,
        };
        let mut journal = Journal {
            record,
            path: None,
            crash,
        };
        let about = &targets[0].0;
        match private::ensure() {
            Ok(dir) => {
                let path = dir.join(record_name(&journal.record.plan));
                let written = stage_record(&journal.record, &path, about).and_then(|temp| {
                    journal.crash.at("record", 1);
                    persist_record(temp, &path)
                });
                match written {
                    Ok(()) => journal.path = Some(path),
                    Err(refusal) if targets.len() > 1 => return Err(refusal),
                    Err(_) => {}
                }
            }
            Err(why) if targets.len() > 1 => {
                return Err(Refusal::new(
                    Kind::Io,
                    format!(
                        "Cannot keep the journal of this plan: {why}. Nothing was changed. multiedit keeps it in a private \
                         folder (mode 0700, owned by you): fix that folder or set XDG_STATE_HOME to one it may use."
                    ),
                ))
            }
            Err(_) => {}
        }
        journal.crash.at("begin", 1);
        Ok(journal)
    }

    /// Prefix of the plan's temporary files: recovery deletes exactly these.
    pub(crate) fn temp_prefix(&self) -> String {
        temp_prefix(&self.record.plan)
    }

    /// The committed record, with every temporary file and the folder steps, written beside the first
    /// one but not yet in its place: the caller fsyncs it with the new texts (one round of fsyncs, not
    /// two) and then `commit`s it. Dropped uncommitted (a refusal), it is deleted.
    pub(crate) fn prepare(
        &self,
        entries: Vec<Entry>,
        steps: &folders::Steps,
        about: &Path,
    ) -> Result<Option<Prepared>, Refusal> {
        let Some(path) = &self.path else {
            return Ok(None);
        };
        let mut record = self.record.clone();
        record.committed = true;
        record.files = entries;
        record.remove_dirs = steps.remove.clone();
        record.make_dirs = steps.make.clone();
        if !steps.is_empty() {
            record.multiedit_journal = FORMAT_FOLDERS;
        }
        Ok(Some(Prepared(stage_record(&record, path, about)?)))
    }

    /// The commit point: the prepared record, fsynced already, replaces the first one, and the private
    /// folder is fsynced.
    pub(crate) fn commit(&mut self, prepared: Prepared) -> Result<(), Refusal> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        persist_record(prepared.0, path)?;
        sync_dir(&folder(path));
        self.crash.at("commit", 1);
        Ok(())
    }

    /// Removes the record: the plan is whole.
    pub(crate) fn finish(mut self) {
        if let Some(p) = self.path.take() {
            let _ = fs::remove_file(p);
            self.crash.at("done", 1);
        }
    }
}

impl Drop for Journal {
    /// A refused plan takes its record with it (its files are all still old).
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            let _ = fs::remove_file(p);
        }
    }
}

/// A committed record written to its temporary file, waiting for its fsync and its rename.
pub(in crate::disk) struct Prepared(tempfile::NamedTempFile);

impl Prepared {
    pub(crate) fn path(&self) -> &Path {
        self.0.path()
    }

    pub(crate) fn file(&self) -> &fs::File {
        self.0.as_file()
    }
}

/// The record written whole to a temporary file beside `path` (deleted if it is dropped).
fn stage_record(
    record: &Record,
    path: &Path,
    about: &Path,
) -> Result<tempfile::NamedTempFile, Refusal> {
    let bytes = serde_json::to_vec_pretty(&record.rooted()).map_err(|e| {
        Refusal::new(
            Kind::Io,
            format!(
                "Cannot write the journal of {}: {e}. Nothing was changed.",
                about.display()
            ),
        )
    })?;
    let journal_refusal = |e: &std::io::Error| io_refusal(path, "write the journal", e);
    let mut temp = tempfile::Builder::new()
        .prefix(&record_temp_prefix(&record.plan))
        .suffix(TEMP_SUFFIX)
        .tempfile_in(folder(path))
        .map_err(|e| journal_refusal(&e))?;
    temp.write_all(&bytes).map_err(|e| journal_refusal(&e))?;
    Ok(temp)
}

/// The staged record renamed over `path`: a reader sees the old record or the new one whole.
fn persist_record(temp: tempfile::NamedTempFile, path: &Path) -> Result<(), Refusal> {
    temp.persist(path)
        .map(|_| ())
        .map_err(|e| io_refusal(path, "write the journal", &e.error))
}
