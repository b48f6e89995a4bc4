//! The wasmtime engine, the epoch ticker and the compile cache.

use anyhow::Context;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;
use wasmtime::{Config, Engine, Module};

/// Period of the epoch ticker; call deadlines are whole numbers of it.
pub const TICK: Duration = Duration::from_micros(250);

/// One wasmtime engine for the whole process, with its ticker thread.
pub struct Runtime {
    engine: Engine,
    cache_dir: Option<PathBuf>,
    stop: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
}

impl Runtime {
    /// Creates the engine (epoch interruption on) and starts the ticker; compiled modules are cached
    /// in the default cache directory.
    pub fn new() -> anyhow::Result<Arc<Runtime>> {
        Self::with_cache(cache_dir())
    }

    /// As [`Runtime::new`], with the compile cache in `dir` (None: no cache).
    pub fn with_cache(dir: Option<PathBuf>) -> anyhow::Result<Arc<Runtime>> {
        let mut cfg = Config::new();
        cfg.epoch_interruption(true);
        cfg.cranelift_opt_level(wasmtime::OptLevel::Speed);
        let engine = Engine::new(&cfg)?;
        let stop = Arc::new(AtomicBool::new(false));
        let ticker = {
            let (engine, stop) = (engine.clone(), stop.clone());
            std::thread::Builder::new().name("wasmdp-epoch".into()).spawn(move || {
                while !stop.load(Relaxed) {
                    std::thread::sleep(TICK);
                    engine.increment_epoch();
                }
            })?
        };
        Ok(Arc::new(Runtime { engine, cache_dir: dir, stop, ticker: Some(ticker) }))
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Compiles `bytes`, or loads the precompiled module from the cache (keyed by the SHA-256 of the
    /// bytes and the wasmtime version), so that a restart or reload does not recompile.
    pub fn compile(&self, bytes: &[u8], origin: &Path) -> anyhow::Result<Module> {
        let key = format!("{:x}", Sha256::new().chain_update(bytes).chain_update(wasmtime_version()).finalize());
        let cached = self.cache_dir.as_ref().map(|d| d.join(format!("{key}.cwasm")));
        if let Some(path) = cached.as_ref().filter(|p| p.exists()) {
            // SAFETY: the file was written by `Module::serialize` of this program into its own cache
            // directory under a key that includes the module's hash and the wasmtime version;
            // wasmtime also checks the engine configuration and refuses a mismatch, which we treat
            // as a cache miss.
            match unsafe { Module::deserialize_file(&self.engine, path) } {
                Ok(m) => return Ok(m),
                Err(e) => {
                    tracing::debug!(path = %path.display(), error = %e, "compile cache entry unusable; recompiling")
                }
            }
        }
        let module = Module::new(&self.engine, bytes)
            .with_context(|| format!("{}: not a valid WebAssembly module", origin.display()))?;
        if let Some(path) = cached {
            if let Err(e) = store(&module, &path) {
                tracing::debug!(path = %path.display(), error = %e, "could not write the compile cache");
            }
        }
        Ok(module)
    }
}

fn store(module: &Module, path: &Path) -> anyhow::Result<()> {
    let bytes = module.serialize()?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)?;
    Ok(())
}

fn wasmtime_version() -> &'static str {
    "wasmtime-39"
}

/// `$WASMDP_CACHE_DIR`, else `$XDG_CACHE_HOME/wasmdp`, else `$HOME/.cache/wasmdp`; created if
/// needed. None (no caching) when none can be made.
fn cache_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("WASMDP_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("wasmdp")))
        .or_else(|| std::env::var_os("HOME").map(|d| PathBuf::from(d).join(".cache/wasmdp")))?;
    std::fs::create_dir_all(&dir).ok()?;
    Some(dir)
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
    }
}
