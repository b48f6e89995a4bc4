//! The wasmtime engine, the epoch ticker, the compile cache, and the service thread that makes and
//! disposes of instances off the workers' hot path.

use super::cache::{self, Cache};
use super::module::{self, StaticLimits};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use wasmtime::{Config, Engine, Module};

/// Period of the epoch ticker: deadlines are checked at this granularity.
pub const TICK: Duration = Duration::from_micros(250);

/// Work for the service thread.
pub(crate) type Job = Box<dyn FnOnce() + Send>;

/// One wasmtime engine for the whole process, with its ticker and service threads.
pub struct Runtime {
    engine: Engine,
    cache: Option<Cache>,
    stop: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
    jobs: Mutex<Option<mpsc::Sender<Job>>>,
}

/// The engine configuration: epoch interruption, and exactly the features of [`module::FEATURES`].
fn config() -> Config {
    let mut cfg = Config::new();
    cfg.epoch_interruption(true);
    cfg.cranelift_opt_level(wasmtime::OptLevel::Speed);
    // The instrumentation relies on every function entry checking the epoch: no inlining.
    cfg.compiler_inlining(wasmtime::Inlining::No);
    // Bounds the recursion depth, and with it how long an unwinding runs between two epoch checks
    // (`module::instrument`, returns): a frame is at least 16 bytes.
    cfg.max_wasm_stack(MAX_WASM_STACK);
    // The host makes every linear memory, so that it may map a stream's packet region into one
    // (direct packet access, `super::direct`); copy-on-write images need wasmtime's own memories.
    cfg.with_host_memory(super::memory::Creator::new());
    cfg.memory_init_cow(false);
    cfg.wasm_features(wasmtime::WasmFeatures::all(), false);
    cfg.wasm_features(module::FEATURES, true);
    if std::env::var_os(PERF_MAP_ENV).is_some_and(|v| v == "1") {
        // For `perf` and the like: /tmp/perf-PID.map names each compiled function (its name-section
        // name, else `wasm[M]::function[N]`), so a profile shows where a plugin spends.
        cfg.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    cfg
}

/// Bytes of native stack a plugin's call may use (wasmtime's default, stated: the deadline's bound
/// in docs/ABI.md depends on it); deeper recursion traps with a stack overflow.
pub const MAX_WASM_STACK: usize = 512 << 10;

/// Set to `1`, wasmtime writes `/tmp/perf-PID.map` for the compiled plugins.
pub const PERF_MAP_ENV: &str = "WASMDP_PERF_MAP";

impl Runtime {
    /// Creates the engine and starts its threads; compiled modules are cached in the default cache
    /// folder (`$WASMDP_CACHE_DIR`, `$XDG_CACHE_HOME/wasmdp` or `~/.cache/wasmdp`).
    pub fn new() -> anyhow::Result<Arc<Runtime>> {
        Self::with_cache(cache::default_dir())
    }

    /// As [`Runtime::new`], with the compile cache in `dir` (None: no cache).
    pub fn with_cache(dir: Option<PathBuf>) -> anyhow::Result<Arc<Runtime>> {
        let engine = Engine::new(&config()).map_err(|e| anyhow::anyhow!("configuring wasmtime: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let ticker = {
            let (engine, stop) = (engine.clone(), stop.clone());
            std::thread::Builder::new().name("wasmdp-epoch".into()).spawn(move || {
                while !stop.load(Relaxed) {
                    std::thread::sleep(TICK);
                    super::counters::tick_clock();
                    engine.increment_epoch();
                }
            })?
        };
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new().name("wasmdp-plugins".into()).spawn(move || {
            while let Ok(job) = rx.recv() {
                job();
            }
        })?;
        let cache = dir.as_deref().and_then(Cache::open);
        Ok(Arc::new(Runtime { engine, cache, stop, ticker: Some(ticker), jobs: Mutex::new(Some(tx)) }))
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Runs `job` on the service thread (re-instantiation, dropping an instance). Returns false when
    /// the thread is gone (the runtime is shutting down).
    pub(crate) fn submit(&self, job: Job) -> bool {
        let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        jobs.as_ref().is_some_and(|tx| tx.send(job).is_ok())
    }

    /// Checks `bytes` against the static limits, then takes the compiled module from the cache or
    /// validates, instruments and compiles it. The error says what is wrong with the module.
    pub(crate) fn compile(&self, bytes: &[u8], limits: &StaticLimits) -> Result<Module, String> {
        let key = cache::key(&self.engine, bytes);
        module::check_limits(bytes, limits)?;
        if let Some(m) = self.cache.as_ref().and_then(|c| c.load(&self.engine, &key)) {
            return Ok(m);
        }
        let prepared = module::prepare(bytes, limits)?;
        let module = Module::new(&self.engine, &prepared)
            .map_err(|e| format!("is not a valid WebAssembly module: {}", e.root_cause()))?;
        if let Some(c) = &self.cache {
            c.store(&key, &module);
        }
        Ok(module)
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        // The service thread ends when its queue closes; it may be the thread dropping us, so it is
        // not joined.
        self.jobs.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
    }
}
