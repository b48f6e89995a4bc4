//! A checked, compiled plugin, and instantiating it for one stream (ABI version check, init).

use super::check;
use super::counters::PluginCounters;
use super::deadline::Watch;
use super::error::{InstanceError, LoadError};
use super::module::StaticLimits;
use super::state::HostState;
use super::Runtime;
use super::StreamEnv;
use crate::config::PolicyCfg;
use crate::simd::Simd;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use wasmdp_abi::{export, ABI_MAJOR};
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
    pre: InstancePre<HostState>,
    params: Arc<BTreeMap<String, String>>,
}

/// A live instance: its store and entry points.
pub(crate) struct Live {
    pub store: Store<HostState>,
    pub on_burst: TypedFunc<(i32, i32), i32>,
    pub tick: Option<TypedFunc<i64, ()>>,
    /// Built for ABI 1.1 or later: `wasmdp_on_burst` may return an engine verdict (for 1.0 modules
    /// every nonzero value is a failure, as 1.0 said).
    pub verdicts: bool,
}

/// CPU time allowed to instantiation, `wasmdp_abi_version` and `wasmdp_init` together: they run on
/// the control thread (or the plugin service thread), never in the poll loop.
const INIT_BUDGET_NS: u64 = 1_000_000_000;

impl Plugin {
    /// Reads, checks and compiles the plugin of a `policy:` section. Errors say what is wrong with
    /// the file; the caller adds which port.
    pub fn load(runtime: &Arc<Runtime>, cfg: &PolicyCfg) -> Result<Arc<Plugin>, LoadError> {
        let path = cfg.plugin.clone();
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
        let limits =
            StaticLimits { memory_bytes: cfg.limits.memory_kib.0 * 1024, table_elements: cfg.limits.table_elements.0 };
        let module =
            runtime.compile(&bytes, &limits).map_err(|reason| LoadError::Module { path: path.clone(), reason })?;
        let abi = |reason: String| LoadError::Abi { path: path.clone(), reason };
        check::module(&module).map_err(abi)?;
        let mut linker = Linker::new(runtime.engine());
        super::hostfns::link(&mut linker).map_err(|e| abi(format!("linking the host functions: {e}")))?;
        let pre = linker.instantiate_pre(&module).map_err(|e| abi(e.to_string()))?;
        let params = Arc::new(cfg.params.iter().map(|(k, v)| (k.clone(), v.0.clone())).collect());
        let digest = digest(&bytes);
        Ok(Arc::new(Plugin { path, cfg: cfg.clone(), digest, runtime: runtime.clone(), pre, params }))
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
        );
        let mut store = Store::new(self.runtime.engine(), state);
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_callback(|mut cx| Ok(cx.data_mut().watch.on_epoch()));
        store.set_epoch_deadline(1);
        let trapped = |during| move |e: wasmtime::Error| InstanceError::Trapped { during, cause: trap_text(&e) };
        let setup = |e: wasmtime::Error| InstanceError::Setup(e.to_string());
        let inst = self.pre.instantiate(&mut store).map_err(trapped("instantiation (the start function)"))?;
        store.data_mut().memory = inst.get_memory(&mut store, export::MEMORY);
        let version = inst.get_typed_func::<(), i32>(&mut store, export::ABI_VERSION).map_err(setup)?;
        let v = version.call(&mut store, ()).map_err(trapped(export::ABI_VERSION))? as u32;
        if v >> 16 != ABI_MAJOR {
            return Err(InstanceError::Version { major: v >> 16, minor: v & 0xffff, host: ABI_MAJOR });
        }
        let init = inst.get_typed_func::<(i32, i32), i32>(&mut store, export::INIT).map_err(setup)?;
        let rc = init.call(&mut store, (port as i32, instance as i32)).map_err(trapped("init"))?;
        if rc != 0 {
            return Err(InstanceError::Refused { code: rc });
        }
        let st = store.data_mut();
        st.in_init = false;
        st.counters.seal();
        st.watch = Watch::new(l.deadline_us.0 * 1000);
        let on_burst = inst.get_typed_func::<(i32, i32), i32>(&mut store, export::ON_BURST).map_err(setup)?;
        let tick = inst.get_typed_func::<i64, ()>(&mut store, export::TICK).ok();
        Ok(Live { store, on_burst, tick, verdicts: v & 0xffff >= 1 })
    }
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
