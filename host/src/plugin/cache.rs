//! The compile cache: precompiled modules, so that a restart or a reload does not recompile.
//!
//! A precompiled module is native code that wasmtime maps and runs as it is: whoever can write an
//! entry runs code as the dataplane. So the cache is trusted the way ssh trusts its keys:
//!
//! * the folder is created with mode 0700; a folder or entry that is not owned by this user, or that
//!   group or others may write, is not used (a warning says which and why), and modules are
//!   compiled instead;
//! * every folder above it must belong to this user or to root and be writable by no one else
//!   (unless it has the sticky bit, as `/tmp` does), as ssh checks the folders of its keys: whoever
//!   can rename a parent can put another folder in its place;
//! * an entry is `KEY.cwasm` plus `KEY.sum`, the SHA-256 of `KEY` followed by the `.cwasm` file's
//!   bytes: the digest binds the entry to its key, so the self-consistent pair of another module
//!   copied under this module's key is a miss, not that module's code run for this one;
//! * each file is opened without following a symbolic link, and the checks (a regular file, owned
//!   by this user, writable by no one else, within the size limit) are made on the opened
//!   descriptor, so what is checked is what is read; an entry is read whole into memory, its digest
//!   checked, and only then deserialized from that memory, so a truncated, flipped or swapped file is
//!   a miss, and the bytes checked are the bytes used;
//! * `KEY` is the SHA-256 of the module's bytes, the instrumentation version and the engine's
//!   compatibility hash (wasmtime's version and every setting that affects code), so an entry is
//!   only ever used by the engine configuration that wrote it.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use wasmtime::{Engine, Module};

/// Largest `.cwasm` file read back (a 16 MiB module compiles to less).
const MAX_ENTRY: u64 = 256 << 20;

/// A usable cache folder.
pub(crate) struct Cache {
    dir: PathBuf,
}

/// Feeds `Hash` implementations into SHA-256 (for the engine's compatibility hash).
struct ShaHasher(Sha256);

impl std::hash::Hasher for ShaHasher {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// The cache key of `bytes` under `engine`.
pub(crate) fn key(engine: &Engine, bytes: &[u8]) -> String {
    use std::hash::Hash;
    let mut h = ShaHasher(Sha256::new());
    h.0.update(bytes);
    h.0.update(super::module::INSTRUMENT_VERSION.to_le_bytes());
    engine.precompile_compatibility_hash().hash(&mut h);
    format!("{:x}", h.0.finalize())
}

/// Why a file or folder is not trusted, if it is not.
fn untrusted(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let m = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) => return Some(format!("cannot inspect it: {e}")),
    };
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if m.file_type().is_symlink() {
        return Some("it is a symbolic link".into());
    }
    if m.uid() != me {
        return Some(format!("it is owned by uid {}, not by this user (uid {me})", m.uid()));
    }
    if m.mode() & 0o022 != 0 {
        return Some(format!("group or others may write to it (mode {:o})", m.mode() & 0o777));
    }
    None
}

/// Why a folder above the cache is not trusted, if one is not: every ancestor must belong to this
/// user or to root and be writable by no one else, unless it is sticky (`/tmp`).
fn untrusted_parents(dir: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    let dir = dir.canonicalize().ok()?;
    for p in dir.ancestors().skip(1) {
        let m = match std::fs::metadata(p) {
            Ok(m) => m,
            Err(e) => return Some(format!("{}: cannot inspect it: {e}", p.display())),
        };
        if m.uid() != me && m.uid() != 0 {
            return Some(format!("{} is owned by uid {}, neither this user (uid {me}) nor root", p.display(), m.uid()));
        }
        let sticky = m.mode() & libc::S_ISVTX != 0;
        if m.mode() & 0o022 != 0 && !sticky {
            return Some(format!("group or others may write to {} (mode {:o})", p.display(), m.mode() & 0o777));
        }
    }
    None
}

/// Reads `path` whole if it is a regular file (not a symbolic link: it is not followed) owned by
/// this user, writable by no one else, of at most `max` bytes: checked on the open descriptor.
fn read_private(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => format!("{}: it is a symbolic link", path.display()),
            _ => format!("{}: cannot open it: {e}", path.display()),
        })?;
    let m = file.metadata().map_err(|e| format!("{}: cannot inspect it: {e}", path.display()))?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if !m.file_type().is_file() {
        return Err(format!("{}: not a regular file", path.display()));
    }
    if m.uid() != me {
        return Err(format!("{}: owned by uid {}, not by this user (uid {me})", path.display(), m.uid()));
    }
    if m.mode() & 0o022 != 0 {
        return Err(format!("{}: group or others may write to it (mode {:o})", path.display(), m.mode() & 0o777));
    }
    if m.len() > max {
        return Err(format!("{}: {} bytes; the limit is {max}", path.display(), m.len()));
    }
    let mut bytes = Vec::with_capacity(m.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes).map_err(|e| format!("{}: cannot read it: {e}", path.display()))?;
    if bytes.len() as u64 > max {
        return Err(format!("{}: it grew past {max} bytes while read", path.display()));
    }
    Ok(bytes)
}

/// The digest stored in `KEY.sum`: SHA-256 of the key, then the `.cwasm` bytes.
fn entry_digest(key: &str, cwasm: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(key.as_bytes());
    h.update(cwasm);
    format!("{:x}", h.finalize())
}

impl Cache {
    /// The cache in `dir`, created (0700) when missing; None, with a warning, when it is not safe.
    pub(crate) fn open(dir: &Path) -> Option<Cache> {
        use std::os::unix::fs::DirBuilderExt;
        if let Err(e) = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir) {
            tracing::warn!(dir = %dir.display(), "compile cache unusable, modules are compiled at every start: {e}");
            return None;
        }
        if let Some(why) = untrusted(dir).or_else(|| untrusted_parents(dir)) {
            tracing::warn!(dir = %dir.display(), "compile cache not used, modules are compiled at every start: {why}");
            return None;
        }
        Some(Cache { dir: dir.to_path_buf() })
    }

    fn paths(&self, key: &str) -> (PathBuf, PathBuf) {
        (self.dir.join(format!("{key}.cwasm")), self.dir.join(format!("{key}.sum")))
    }

    /// The precompiled module of `key`, when a trusted and intact entry exists.
    pub(crate) fn load(&self, engine: &Engine, key: &str) -> Option<Module> {
        let (cwasm, sum) = self.paths(key);
        if !cwasm.exists() {
            return None;
        }
        match self.verified(key, &cwasm, &sum) {
            // SAFETY: `bytes` are what `Module::serialize` of an engine with this configuration
            // wrote (the key includes its compatibility hash), read whole into memory from a file
            // owned by this user and writable by no one else, and they match the digest stored
            // beside them; wasmtime checks the header and configuration again and refuses a
            // mismatch, which is a miss.
            Ok(bytes) => match unsafe { Module::deserialize(engine, &bytes) } {
                Ok(m) => Some(m),
                Err(e) => {
                    tracing::warn!(entry = %cwasm.display(), "compile cache entry refused by wasmtime ({e}); recompiling");
                    None
                }
            },
            Err(why) => {
                tracing::warn!(entry = %cwasm.display(), "compile cache entry not used ({why}); recompiling");
                None
            }
        }
    }

    fn verified(&self, key: &str, cwasm: &Path, sum: &Path) -> Result<Vec<u8>, String> {
        let want = read_private(sum, 64).map_err(|e| format!("digest file {e}"))?;
        let bytes = read_private(cwasm, MAX_ENTRY)?;
        if want != entry_digest(key, &bytes).as_bytes() {
            return Err("it does not match the digest stored beside it for this key".into());
        }
        Ok(bytes)
    }

    /// Stores `module` under `key` (written to temporary files and renamed, mode 0600).
    pub(crate) fn store(&self, key: &str, module: &Module) {
        if let Err(e) = self.try_store(key, module) {
            tracing::warn!(dir = %self.dir.display(), "could not write the compile cache: {e:#}");
        }
    }

    fn try_store(&self, key: &str, module: &Module) -> anyhow::Result<()> {
        let bytes = module.serialize()?;
        let digest = entry_digest(key, &bytes);
        let (cwasm, sum) = self.paths(key);
        write_private(&cwasm, &bytes)?;
        write_private(&sum, digest.as_bytes())?;
        Ok(())
    }
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp)?;
    f.write_all(bytes)?;
    f.sync_data()?;
    std::fs::rename(&tmp, path)
}

/// `$WASMDP_CACHE_DIR`, else `$XDG_CACHE_HOME/wasmdp`, else `$HOME/.cache/wasmdp`.
pub(crate) fn default_dir() -> Option<PathBuf> {
    std::env::var_os("WASMDP_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("wasmdp")))
        .or_else(|| std::env::var_os("HOME").map(|d| PathBuf::from(d).join(".cache/wasmdp")))
}
