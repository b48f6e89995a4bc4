//! The compile cache: precompiled modules, so that a restart or a reload does not recompile.
//!
//! A precompiled module is native code that wasmtime maps and runs as it is: whoever can write an
//! entry runs code as the dataplane. So the cache is trusted the way ssh trusts its keys:
//!
//! * the folder is created with mode 0700; a folder or entry that is not owned by this user, or that
//!   group or others may write, is not used (a warning says which and why), and modules are
//!   compiled instead;
//! * an entry is `KEY.cwasm` plus `KEY.sum`, the SHA-256 of the `.cwasm` file; an entry is read
//!   whole into memory (bounded), its digest checked, and only then deserialized from that memory,
//!   so a truncated, flipped or swapped file is a miss, and the bytes checked are the bytes used;
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

impl Cache {
    /// The cache in `dir`, created (0700) when missing; None, with a warning, when it is not safe.
    pub(crate) fn open(dir: &Path) -> Option<Cache> {
        use std::os::unix::fs::DirBuilderExt;
        if let Err(e) = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir) {
            tracing::warn!(dir = %dir.display(), "compile cache unusable, modules are compiled at every start: {e}");
            return None;
        }
        if let Some(why) = untrusted(dir) {
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
        match self.verified(&cwasm, &sum) {
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

    fn verified(&self, cwasm: &Path, sum: &Path) -> Result<Vec<u8>, String> {
        for p in [cwasm, sum] {
            if let Some(why) = untrusted(p) {
                return Err(format!("{}: {why}", p.display()));
            }
        }
        let want = crate::input::read_bounded(sum, 64).map_err(|e| format!("digest file {e}"))?;
        let bytes = crate::input::read_bounded(cwasm, MAX_ENTRY).map_err(|e| e.to_string())?;
        let got = format!("{:x}", Sha256::digest(&bytes));
        if want != got.as_bytes() {
            return Err("its SHA-256 does not match the digest stored beside it".into());
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
        let digest = format!("{:x}", Sha256::digest(&bytes));
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
