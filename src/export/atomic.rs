//! Atomic file writes: the bytes go to a temporary file in the same folder, which is
//! then renamed over the target. A killed or interrupted process leaves either the old
//! file or the new one, never half of one. (No fsync: results are cheap to recompute,
//! and an fsync per file would dominate the time of a short run.)

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// A file being written under a temporary name; [`commit`](Self::commit) renames it
/// into place. Dropped without a commit, the temporary file is removed.
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    tmp: PathBuf,
    out: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Starts writing `path` (creating its folder).
    pub fn create(path: &Path) -> std::io::Result<AtomicFile> {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".to_string());
        let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
        let out = BufWriter::new(File::create(&tmp)?);
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp,
            out: Some(out),
        })
    }

    /// Appends bytes.
    pub fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.out.as_mut().expect("not committed").write_all(bytes)
    }

    /// Flushes and renames the file into place.
    pub fn commit(mut self) -> std::io::Result<()> {
        let out = self.out.take().expect("not committed");
        out.into_inner().map_err(|e| e.into_error())?;
        std::fs::rename(&self.tmp, &self.path)
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
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".to_string());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
    }
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
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
}
