//! Reading files back: a results folder's tables and manifest, scenario and baseline
//! files, manual pages about to be replaced. Only a regular file is opened (a symlink
//! is followed): a FIFO would block the reader for ever, a device such as `/dev/zero`
//! would feed it without end, so they are refused before anything is read. A file read
//! whole must also fit its cap, checked from its metadata and again while reading (in
//! case it grows meanwhile).

use std::fs::File;
use std::io::{Error, ErrorKind, Read};
use std::path::Path;

/// Largest table read whole from a results folder (`summary.csv`, `aggregate.csv`, a
/// finished run's files, `trace.json`): 2 GiB, above any retrysim writes within its
/// caps (a million runs' summary rows, a trace of a million spans).
pub(crate) const MAX_TABLE_BYTES: u64 = 2 << 30;

/// What a non-regular file is, for the message.
fn kind(ft: &std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        "a folder"
    } else if is_fifo(ft) {
        "a FIFO (named pipe)"
    } else if is_device(ft) {
        "a device"
    } else {
        "not a regular file"
    }
}

/// Opens `path` if it is a regular file (checked before it is opened, so a FIFO never
/// blocks); returns it and its length.
pub(crate) fn open(path: &Path) -> std::io::Result<(File, u64)> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "it is {}: only a regular file can be read",
                kind(&meta.file_type())
            ),
        ));
    }
    Ok((File::open(path)?, meta.len()))
}

/// `b` bytes in whole units: `16 MiB`, `2 GiB`, else bytes.
fn whole_units(b: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if b >= 1 << shift && b.is_multiple_of(1 << shift) {
            return format!("{} {unit}", b >> shift);
        }
    }
    format!("{b} B")
}

/// The error of a file of `n` bytes over its cap.
fn too_large(n: u64, cap: u64) -> Error {
    Error::new(
        ErrorKind::InvalidData,
        format!(
            "the file holds {n} bytes, more than the {cap} bytes ({}) allowed",
            whole_units(cap)
        ),
    )
}

/// A regular file opened by [`open_capped`]: reading past its cap is an error.
#[derive(Debug)]
pub(crate) struct Capped {
    file: File,
    read: u64,
    cap: u64,
}

impl Read for Capped {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.read += n as u64;
        if self.read > self.cap {
            return Err(too_large(self.read, self.cap));
        }
        Ok(n)
    }
}

/// Opens the regular file `path` (see [`open`]) of at most `cap` bytes, to be read as a
/// stream: a larger file is refused from its metadata, and reading past the cap (a
/// file that grew) is an error.
pub(crate) fn open_capped(path: &Path, cap: u64) -> std::io::Result<Capped> {
    let (file, len) = open(path)?;
    if len > cap {
        return Err(too_large(len, cap));
    }
    Ok(Capped { file, read: 0, cap })
}

thread_local! {
    /// Files held in memory that stand in for the file system while set (the
    /// playground's embedded data files: WebAssembly in a browser has no files).
    static MEMORY: std::cell::RefCell<Option<std::collections::BTreeMap<std::path::PathBuf, Vec<u8>>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `f` with `files` (path as a scenario names it, bytes) readable by [`read`] as
/// if on disk; a path not among them is read from the file system as ever.
pub(crate) fn with_files<R>(files: &[(&str, &[u8])], f: impl FnOnce() -> R) -> R {
    let map = files
        .iter()
        .map(|(p, b)| (std::path::PathBuf::from(p), b.to_vec()))
        .collect();
    let before = MEMORY.with(|m| m.replace(Some(map)));
    let out = f();
    MEMORY.with(|m| m.replace(before));
    out
}

/// The bytes of `path` held by [`with_files`], if any, within `cap`.
#[cold]
fn from_memory(path: &Path, cap: u64) -> Option<std::io::Result<Vec<u8>>> {
    MEMORY.with(|m| {
        let m = m.borrow();
        let bytes = m.as_ref()?.get(path)?;
        let n = bytes.len() as u64;
        Some(if n > cap {
            Err(too_large(n, cap))
        } else {
            Ok(bytes.clone())
        })
    })
}

/// Reads the regular file `path` of at most `cap` bytes (see [`open`]).
pub(crate) fn read(path: &Path, cap: u64) -> std::io::Result<Vec<u8>> {
    if let Some(held) = from_memory(path, cap) {
        return held;
    }
    let too_large = |n: u64| too_large(n, cap);
    let (file, len) = open(path)?;
    if len > cap {
        return Err(too_large(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Reads the regular file `path` of at most `cap` bytes as UTF-8 text.
pub(crate) fn read_to_string(path: &Path, cap: u64) -> std::io::Result<String> {
    String::from_utf8(read(path, cap)?)
        .map_err(|e| Error::new(ErrorKind::InvalidData, format!("it is not UTF-8 text: {e}")))
}

/// `e` with the file it concerns in front: `'dir/summary.csv': it is a FIFO ...`.
#[cfg(test)]
pub(crate) fn naming(path: &Path, e: Error) -> Error {
    Error::new(e.kind(), format!("'{}': {e}", path.display()))
}

#[cfg(unix)]
fn is_fifo(ft: &std::fs::FileType) -> bool {
    std::os::unix::fs::FileTypeExt::is_fifo(ft)
}

#[cfg(unix)]
fn is_device(ft: &std::fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    ft.is_char_device() || ft.is_block_device()
}

#[cfg(not(unix))]
fn is_fifo(_: &std::fs::FileType) -> bool {
    false
}

#[cfg(not(unix))]
fn is_device(_: &std::fs::FileType) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_are_named_in_whole_units() {
        assert_eq!(whole_units(16 << 20), "16 MiB");
        assert_eq!(whole_units(2 << 30), "2 GiB");
        assert_eq!(whole_units(3 << 10), "3 KiB");
        assert_eq!(whole_units(1000), "1000 B");
    }

    #[test]
    fn a_folder_or_a_file_over_its_cap_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let e = read(d.path(), 10).unwrap_err();
        assert_eq!(
            e.to_string(),
            "it is a folder: only a regular file can be read"
        );
        let f = d.path().join("x");
        std::fs::write(&f, "12345").unwrap();
        assert_eq!(read(&f, 5).unwrap(), b"12345");
        let e = read(&f, 4).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the file holds 5 bytes, more than the 4 bytes (4 B) allowed"
        );
        let e = naming(&f, e);
        assert!(e.to_string().starts_with(&format!("'{}': ", f.display())));
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_refused_before_it_is_read() {
        let e = read(Path::new("/dev/zero"), 1 << 30).unwrap_err();
        assert_eq!(
            e.to_string(),
            "it is a device: only a regular file can be read"
        );
    }
}
