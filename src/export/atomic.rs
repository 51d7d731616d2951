//! Atomic file writes: the bytes go to a temporary file in the same folder, which is
//! then renamed over the target. A killed or interrupted process leaves either the old
//! file or the new one, never half of one. (No fsync: results are cheap to recompute,
//! and an fsync per file would dominate the time of a short run; a power loss can
//! lose the last files written.)
//!
//! Temporary files and folders are named `.tmp-*`: hidden, and recognisable, so that a
//! process killed mid-write leaves nothing a reader would take for a result, and the
//! next run in that folder removes what it left
//! ([`owner::remove_leftovers`](crate::export::owner::remove_leftovers)).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Prefix of every temporary file and folder retrysim writes.
pub(crate) const TMP_PREFIX: &str = ".tmp-";

/// A temporary name for `name`, unique within this process.
pub(crate) fn tmp_name(name: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{TMP_PREFIX}{}-{n}-{name}", std::process::id())
}

/// A file being written under a temporary name; [`commit`](Self::commit) renames it
/// into place. Dropped without a commit, the temporary file is removed.
#[derive(Debug)]
pub(crate) struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    out: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Starts writing `path` (creating its folder).
    pub(crate) fn create(path: &Path) -> std::io::Result<AtomicFile> {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".to_string());
        let tmp = dir.join(tmp_name(&name));
        let out = BufWriter::new(File::create(&tmp)?);
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp,
            out: Some(out),
        })
    }

    /// Appends bytes.
    pub(crate) fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.out.as_mut().expect("not committed").write_all(bytes)
    }

    /// Flushes and renames the file into place.
    pub(crate) fn commit(mut self) -> std::io::Result<()> {
        let out = self.out.take().expect("not committed");
        let renamed = out
            .into_inner()
            .map_err(|e| e.into_error())
            .and_then(|_| std::fs::rename(&self.tmp, &self.path));
        if renamed.is_err() {
            let _ = std::fs::remove_file(&self.tmp);
        }
        renamed
    }
}

/// Writes through the file's buffer, so a renderer can stream into it.
impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.out.as_mut().expect("not committed").write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.as_mut().expect("not committed").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.out.is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `path` atomically, creating the parent folder.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sub/x.csv");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let names: Vec<_> = std::fs::read_dir(d.path().join("sub")).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_failed_write_leaves_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        // The target is a folder: the rename fails after the bytes were written.
        std::fs::create_dir(d.path().join("x.csv")).unwrap();
        std::fs::write(d.path().join("x.csv/keep"), b"").unwrap();
        assert!(write_atomic(&d.path().join("x.csv"), b"bytes").is_err());
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["x.csv"]);
    }

    #[test]
    fn an_uncommitted_file_leaves_nothing_behind() {
        let d = tempfile::tempdir().unwrap();
        let mut f = AtomicFile::create(&d.path().join("x.csv")).unwrap();
        f.write_all(b"half").unwrap();
        drop(f);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }
}
