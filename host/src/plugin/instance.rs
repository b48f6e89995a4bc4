//! A checked, compiled plugin, and instantiating it for one stream (ABI version check, init).

use super::area::Area;
use super::check;
use super::counters::PluginCounters;
use super::deadline::Watch;
use super::error::{InstanceError, LoadError};
use super::module::StaticLimits;
use super::native::{self, NativeHost, Twin};
use super::state::HostState;
use super::Runtime;
use super::StreamEnv;
use crate::config::PolicyCfg;
use crate::simd::Simd;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use wasmdp_abi::{export, ABI_MAJOR};
use wasmdp_sdk::native::NativePolicy;
use wasmtime::{InstancePre, Linker, Store, StoreLimitsBuilder, Trap, TypedFunc, WasmBacktrace};

/// A plugin file, checked against ABI v1 and compiled, ready to instantiate per stream.
pub struct Plugin {
    /// The module file.
    pub path: PathBuf,
    /// Its policy settings.
    pub cfg: PolicyCfg,
    /// SHA-256 of the module file, to tell a rebuilt plugin from the one running.
    pub digest: [u8; 32],
    runtime: Arc<Runtime>,
    code: Code,
    params: Arc<BTreeMap<String, String>>,
    /// The typed layouts of its maps (its custom section `wasmdp.map_layouts`).
    layouts: Arc<crate::plugin::maps::Layouts>,
    /// The initial entries of its maps (`policy: map_entries:`), read at load.
    pub initial: Arc<crate::plugin::maps::Initials>,
    /// The ABI minor version the module declares (`wasmdp_abi_version`), once an instance was
    /// made; `u32::MAX` before.
    declared_minor: std::sync::atomic::AtomicU32,
}

/// What runs: a module, or a native build (`plugin: native:NAME`).
enum Code {
    Wasm(InstancePre<HostState>),
    Native(&'static Twin),
}

/// A live instance: its store and entry points.
pub(crate) struct Live {
    pub store: Store<HostState>,
    pub entry: Entry,
    /// Built for ABI 1.1 or later: `wasmdp_on_burst` may return an engine verdict (for 1.0 modules
    /// every nonzero value is a failure, as 1.0 said).
    pub verdicts: bool,
    /// The burst area the init registered, as the calls lend it (at offset 0 of a native build's
    /// buffer), and where a native build registered it. Fixed once the init returned (`burst_area`
    /// is refused after it), so kept here, out of the store: each call borrows it beside the memory
    /// where it copied it out of the store's data, twice a call.
    area: Option<Area>,
    native_at: usize,
}

/// An instance's entry points.
pub(crate) enum Entry {
    /// A module's exports.
    Wasm { on_burst: TypedFunc<(i32, i32), i32>, tick: Option<TypedFunc<i64, ()>> },
    /// A native build (its state is in the store's data like a module's).
    Native(Box<dyn NativePolicy>),
}

impl Live {
    /// `wasmdp_on_burst(port, n)`.
    #[inline]
    pub fn on_burst(&mut self, port: u16, n: usize) -> wasmtime::Result<i32> {
        match &mut self.entry {
            Entry::Wasm { on_burst, .. } => on_burst.call(&mut self.store, (i32::from(port), n as i32)),
            Entry::Native(p) => Ok(p.on_burst(&mut NativeHost(self.store.data_mut()), u32::from(port), n as u32)),
        }
    }

    /// `wasmdp_tick(now_ns)`, if the plugin has one.
    pub fn tick(&mut self, now_ns: u64) -> wasmtime::Result<()> {
        match &mut self.entry {
            Entry::Wasm { tick: Some(t), .. } => t.call(&mut self.store, now_ns as i64),
            Entry::Wasm { tick: None, .. } => Ok(()),
            Entry::Native(p) => {
                p.tick(&mut NativeHost(self.store.data_mut()), now_ns);
                Ok(())
            }
        }
    }

    /// Whether it has a tick.
    pub fn has_tick(&self) -> bool {
        !matches!(self.entry, Entry::Wasm { tick: None, .. })
    }

    /// The area, the memory it is in (the module's, or a native build's own buffer) and the state.
    /// Always inlined: called on every burst, and left out of line in some builds by how the
    /// crate's code was split for compiling (a call each burst; measured in the `chain1` path).
    #[inline(always)]
    pub fn area_and_state(&mut self) -> Option<(&Area, &mut [u8], &mut HostState)> {
        let a = self.area.as_ref()?;
        match (self.store.data().memory, &mut self.entry) {
            (Some(mem), _) => {
                let (data, st) = mem.data_and_store_mut(&mut self.store);
                Some((a, data, st))
            }
            // A native build registers its area at the start of its own buffer (the SDK's
            // `Instance`), which it lends here: the area is at offset 0 of it.
            (None, Entry::Native(p)) => {
                let bytes = p.area();
                let len = a.end();
                (bytes.as_ptr() as usize == self.native_at && len <= bytes.len())
                    .then(|| (a, &mut bytes[..len], self.store.data_mut()))
            }
            (None, Entry::Wasm { .. }) => None,
        }
    }
}

/// CPU time allowed to instantiation, `wasmdp_abi_version` and `wasmdp_init` together: they run on
/// the control thread (or the plugin service thread), never in the poll loop.
const INIT_BUDGET_NS: u64 = 1_000_000_000;

impl Plugin {
    /// The ABI version the module declares, as `1.1`, once an instance of it was made.
    pub fn declared_abi(&self) -> Option<String> {
        match self.declared_minor.load(std::sync::atomic::Ordering::Relaxed) {
            u32::MAX => None,
            minor => Some(format!("{}.{minor}", wasmdp_abi::ABI_MAJOR)),
        }
    }

    /// Reads, checks and compiles the plugin of a `policy:` section. Errors say what is wrong with
    /// the file; the caller adds which port.
    pub fn load(runtime: &Arc<Runtime>, cfg: &PolicyCfg) -> Result<Arc<Plugin>, LoadError> {
        let path = cfg.plugin.clone();
        let params = Arc::new(cfg.params.iter().map(|(k, v)| (k.clone(), v.0.clone())).collect());
        let initial = Arc::new(
            crate::plugin::maps::initial::read_all(&cfg.map_entries, &cfg.map_pins).map_err(LoadError::MapEntries)?,
        );
        let made = |path, digest, code, layouts| {
            let runtime = runtime.clone();
            Ok(Arc::new(Plugin {
                path,
                cfg: cfg.clone(),
                digest,
                runtime,
                code,
                params,
                layouts,
                initial,
                declared_minor: u32::MAX.into(),
            }))
        };
        if let Some(twin) = native::named(&path) {
            let twin = twin.map_err(|name| LoadError::File {
                path: path.clone(),
                reason: format!("no native build is called `{name}` (there are: {})", native::names()),
            })?;
            let digest = digest(path.as_os_str().as_encoded_bytes());
            return made(path, digest, Code::Native(twin), Arc::default());
        }
        let max = cfg.limits.module_kib.0 * 1024;
        let bytes = crate::input::read_bounded(&path, max).map_err(|e| {
            let hint = if e.is_not_found() && path.components().any(|c| c.as_os_str() == "target") {
                " (the example plugins are built by scripts/build-plugins.sh)"
            } else {
                ""
            };
            let e = match e {
                crate::input::InputError::TooBig { size, .. } => {
                    format!("is {size} bytes, over limits.module_kib ({} KiB)", max / 1024)
                }
                e => e.to_string(),
            };
            LoadError::File { path: path.clone(), reason: format!("{e}{hint}") }
        })?;
        if !bytes.starts_with(b"\0asm") {
            return Err(LoadError::NotWasm { path });
        }
        let layouts = crate::plugin::maps::layout::of_module(&bytes)
            .map_err(|reason| LoadError::Module { path: path.clone(), reason })?;
        let layouts = Arc::new(layouts);
        let limits =
            StaticLimits { memory_bytes: cfg.limits.memory_kib.0 * 1024, table_elements: cfg.limits.table_elements.0 };
        let module =
            runtime.compile(&bytes, &limits).map_err(|reason| LoadError::Module { path: path.clone(), reason })?;
        let abi = |reason: String| LoadError::Abi { path: path.clone(), reason };
        check::module(&module).map_err(abi)?;
        let mut linker = Linker::new(runtime.engine());
        super::hostfns::link(&mut linker).map_err(|e| abi(format!("linking the host functions: {e}")))?;
        let code = Code::Wasm(linker.instantiate_pre(&module).map_err(|e| abi(e.to_string()))?);
        made(path, digest(&bytes), code, layouts)
    }

    /// The plugin's file name, for logs.
    pub fn name(&self) -> String {
        self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }

    /// The runtime it was compiled by.
    pub(crate) fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// A new instance for one stream: checks the ABI version, runs init with the parameters.
    pub(crate) fn instantiate(
        &self,
        env: &Arc<StreamEnv>,
        simd: Simd,
        counters: &Arc<PluginCounters>,
    ) -> Result<Live, InstanceError> {
        let (port, instance) = (env.port, u32::from(env.queue));
        let l = &self.cfg.limits;
        let limits = StoreLimitsBuilder::new()
            .memory_size(l.memory_kib.get() * 1024)
            .table_elements(l.table_elements.get())
            .instances(1)
            .memories(1)
            .tables(1)
            .build();
        let label: Arc<str> = format!("{}@port{port}", self.name()).into();
        let state = HostState::new(
            limits,
            Watch::new(INIT_BUDGET_NS),
            env.clone(),
            l.map_kib.0 * 1024,
            self.params.clone(),
            counters.instance(),
            simd,
            label,
            self.layouts.clone(),
        );
        let mut store = Store::new(self.runtime.engine(), state);
        store.data_mut().initial = self.initial.clone();
        // By its file's stem, as the metrics' `plugin` label names it (`native:NAME` as is).
        let stem = self.path.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| self.name());
        store.data_mut().plugin = stem.into();
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_callback(|mut cx| Ok(cx.data_mut().watch.on_epoch()));
        store.set_epoch_deadline(1);
        let made = match &self.code {
            Code::Wasm(pre) => instantiate_wasm(pre, &mut store, port, instance),
            Code::Native(twin) => {
                let mut policy = twin.instance();
                match policy.init(&mut NativeHost(store.data_mut()), u32::from(port), instance) {
                    0 => Ok((Entry::Native(policy), wasmdp_sdk::ABI_VERSION & 0xffff)),
                    code => Err(InstanceError::Refused { code }),
                }
            }
        };
        // A refused map with initial entries is the cause to report (the init fails on it, or
        // goes on without the map).
        let (entry, minor) =
            made.map_err(|e| store.data_mut().initial_refused.take().map_or(e, InstanceError::MapEntries))?;
        let st = store.data_mut();
        if let Some(map) = st.initial.keys().find(|m| !st.maps.iter().any(|t| t.spec().name == **m)) {
            let why = st.initial_refused.take().unwrap_or_else(|| {
                format!("map_entries names map {map:?}, which the plugin does not declare in its init")
            });
            return Err(InstanceError::MapEntries(why));
        }
        self.declared_minor.store(minor, std::sync::atomic::Ordering::Relaxed);
        st.in_init = false;
        st.counters.seal();
        st.watch = Watch::new(l.deadline_us.0 * 1000);
        let (area, native_at) = match (st.area, &entry) {
            (Some(a), Entry::Native(_)) => (a.at(0), a.ptr()),
            (a, _) => (a, 0),
        };
        Ok(Live { store, entry, verdicts: minor >= 1, area, native_at })
    }
}

/// Instantiates a module in `store`, checks its ABI version and runs its init: its entry points
/// and ABI minor version.
fn instantiate_wasm(
    pre: &InstancePre<HostState>,
    store: &mut Store<HostState>,
    port: u16,
    instance: u32,
) -> Result<(Entry, u32), InstanceError> {
    let trapped = |during| move |e: wasmtime::Error| InstanceError::Trapped { during, cause: trap_text(&e) };
    let setup = |e: wasmtime::Error| InstanceError::Setup(e.to_string());
    let inst = pre.instantiate(&mut *store).map_err(trapped("instantiation (the start function)"))?;
    store.data_mut().memory = inst.get_memory(&mut *store, export::MEMORY);
    let version = inst.get_typed_func::<(), i32>(&mut *store, export::ABI_VERSION).map_err(setup)?;
    let v = version.call(&mut *store, ()).map_err(trapped(export::ABI_VERSION))? as u32;
    if v >> 16 != ABI_MAJOR {
        return Err(InstanceError::Version { major: v >> 16, minor: v & 0xffff, host: ABI_MAJOR });
    }
    // A module may use only the imports of the version it declares (the host serves it that
    // version's semantics: a 1.0 module's nonzero return is a failure, not a verdict).
    let minor = v & 0xffff;
    for imp in pre.module().imports() {
        let since = wasmdp_abi::import::since(imp.name()).unwrap_or(0);
        if since > minor {
            return Err(InstanceError::ImportTooNew { minor, import: imp.name().to_string(), since });
        }
    }
    let init = inst.get_typed_func::<(i32, i32), i32>(&mut *store, export::INIT).map_err(setup)?;
    let rc = init.call(&mut *store, (i32::from(port), instance as i32)).map_err(trapped("init"))?;
    if rc != 0 {
        return Err(InstanceError::Refused { code: rc });
    }
    let on_burst = inst.get_typed_func::<(i32, i32), i32>(&mut *store, export::ON_BURST).map_err(setup)?;
    let tick = inst.get_typed_func::<i64, ()>(&mut *store, export::TICK).ok();
    Ok((Entry::Wasm { on_burst, tick }, v & 0xffff))
}

/// A trap's cause and where it happened, for the log: "deadline exceeded" for the deadline.
pub(crate) fn trap_text(e: &wasmtime::Error) -> String {
    let what = match e.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => "deadline exceeded (the call used up its CPU time)".to_string(),
        Some(t) => t.to_string(),
        None => e.to_string(),
    };
    let frame = e.downcast_ref::<WasmBacktrace>().and_then(|bt| bt.frames().first());
    match frame {
        Some(f) => match f.func_name() {
            Some(name) => format!("{what} (in function `{name}`)"),
            None => format!("{what} (in function #{})", f.func_index()),
        },
        None => what,
    }
}

/// SHA-256 of a module's bytes.
pub fn digest(bytes: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).into()
}
