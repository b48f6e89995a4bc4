//! Reading the files a configuration names (configs, plugins, captures, cache entries) as untrusted
//! input: only regular files, never more than a limit, with the limit checked before reading.
//!
//! The file is opened non-blocking, so that a FIFO cannot hang the open, and checked with `fstat` on
//! the open descriptor, so that what is checked is what is read. At most `max + 1` bytes are read even
//! if the file grows meanwhile.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// Why a file could not be read.
#[derive(Debug)]
pub enum InputError {
    /// Open or read failed.
    Io(std::io::Error),
    /// Not a regular file: what it is instead.
    NotAFile(&'static str),
    /// Larger than the limit: its size (at least `max + 1` if it grew while read).
    TooBig { size: u64, max: u64 },
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputError::Io(e) => write!(f, "cannot read: {e}"),
            InputError::NotAFile(kind) => write!(f, "is a {kind}, not a regular file"),
            InputError::TooBig { size, max } => write!(f, "is {size} bytes; the limit is {max}"),
        }
    }
}

impl std::error::Error for InputError {}

impl InputError {
    /// True when the file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, InputError::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Opens `path` for reading without blocking on FIFOs and checks that it is a regular file of at
/// most `max` bytes.
pub fn open_regular(path: &Path, max: u64) -> Result<(File, u64), InputError> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(InputError::Io)?;
    let meta = file.metadata().map_err(InputError::Io)?;
    let ft = meta.file_type();
    if !ft.is_file() {
        let kind = if ft.is_dir() {
            "directory"
        } else if ft.is_fifo() {
            "FIFO"
        } else if ft.is_char_device() {
            "character device"
        } else if ft.is_block_device() {
            "block device"
        } else if ft.is_socket() {
            "socket"
        } else {
            "special file"
        };
        return Err(InputError::NotAFile(kind));
    }
    if meta.len() > max {
        return Err(InputError::TooBig { size: meta.len(), max });
    }
    Ok((file, meta.len()))
}

/// Reads the whole of `path`, refusing anything but a regular file of at most `max` bytes.
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, InputError> {
    let (file, len) = open_regular(path, max)?;
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max + 1).read_to_end(&mut bytes).map_err(InputError::Io)?;
    if bytes.len() as u64 > max {
        return Err(InputError::TooBig { size: bytes.len() as u64, max });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_directories_are_refused_without_reading() {
        assert!(matches!(read_bounded(Path::new("/dev/zero"), 1024), Err(InputError::NotAFile("character device"))));
        assert!(matches!(read_bounded(Path::new("/tmp"), 1024), Err(InputError::NotAFile("directory"))));
        let fifo = std::env::temp_dir().join(format!("wasmdp-fifo-{}", std::process::id()));
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let t = std::time::Instant::now();
        let r = read_bounded(&fifo, 1024);
        std::fs::remove_file(&fifo).unwrap();
        assert!(matches!(r, Err(InputError::NotAFile("FIFO"))), "{r:?}");
        assert!(t.elapsed() < std::time::Duration::from_secs(1), "a FIFO must not block");
    }

    #[test]
    fn a_large_sparse_file_is_refused_from_its_size() {
        let p = std::env::temp_dir().join(format!("wasmdp-sparse-{}", std::process::id()));
        let f = File::create(&p).unwrap();
        f.set_len(3 << 30).unwrap();
        let r = read_bounded(&p, 16 << 20);
        std::fs::remove_file(&p).unwrap();
        match r {
            Err(InputError::TooBig { size, max }) => assert_eq!((size, max), (3 << 30, 16 << 20)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_file_within_the_limit_is_read_whole() {
        let p = std::env::temp_dir().join(format!("wasmdp-small-{}", std::process::id()));
        std::fs::write(&p, b"hello").unwrap();
        assert_eq!(read_bounded(&p, 5).unwrap(), b"hello");
        assert!(matches!(read_bounded(&p, 4), Err(InputError::TooBig { size: 5, max: 4 })));
        std::fs::remove_file(&p).unwrap();
    }
}
