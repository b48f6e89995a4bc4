//! A checked, compiled plugin, and instantiating it for one stream (ABI version check, init).

use super::check;
use super::counters::PluginCounters;
use super::state::{Call, HostState};
use super::Runtime;
use crate::config::PolicyCfg;
use crate::mbuf::{Burst, MAX_BURST};
use crate::ports::Inject;
use crate::simd::Simd;
use anyhow::{anyhow, bail};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use wasmdp_abi::{export, ABI_MAJOR};
use wasmtime::{InstancePre, Linker, Store, StoreLimitsBuilder, TypedFunc};

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
}

impl Plugin {
    /// Reads, checks and compiles the plugin of a `policy:` section. Errors say what is wrong with
    /// the file; the caller adds which port.
    pub fn load(runtime: &Arc<Runtime>, cfg: &PolicyCfg) -> anyhow::Result<Arc<Plugin>> {
        let path = cfg.plugin.clone();
        let shown = path.display();
        let bytes = std::fs::read(&path).map_err(|e| {
            anyhow!("plugin {shown}: cannot read: {e} (the example plugins are built by scripts/build-plugins.sh)")
        })?;
        let max = cfg.limits.module_kib.get() * 1024;
        if bytes.len() > max {
            bail!("plugin {shown}: {} bytes is over limits.module_kib ({} KiB)", bytes.len(), max / 1024);
        }
        if !bytes.starts_with(b"\0asm") {
            bail!("plugin {shown}: not a WebAssembly module (no \\0asm header)");
        }
        let module = runtime.compile(&bytes, &path)?;
        check::module(&module).map_err(|e| anyhow!("plugin {shown}: {e}"))?;
        let mut linker = Linker::new(runtime.engine());
        super::hostfns::link(&mut linker)?;
        let pre = linker.instantiate_pre(&module).map_err(|e| anyhow!("plugin {shown}: {e}"))?;
        let params = Arc::new(cfg.params.iter().map(|(k, v)| (k.clone(), v.0.clone())).collect());
        let digest = digest(&bytes);
        Ok(Arc::new(Plugin { path, cfg: cfg.clone(), digest, runtime: runtime.clone(), pre, params }))
    }

    /// The plugin's file name, for logs.
    pub fn name(&self) -> String {
        self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }

    /// A new instance for one stream: checks the ABI version, runs init with the parameters.
    pub(crate) fn instantiate(
        &self,
        port: u16,
        instance: u32,
        simd: Simd,
        counters: &Arc<PluginCounters>,
        injects: &Arc<[Option<Arc<Inject>>]>,
    ) -> anyhow::Result<Live> {
        let l = &self.cfg.limits;
        let limits = StoreLimitsBuilder::new()
            .memory_size(l.memory_kib.get() * 1024)
            .table_elements(l.table_elements.get())
            .instances(1)
            .build();
        let state = HostState {
            limits,
            memory: None,
            call: Call { burst: std::ptr::null_mut(), ctx: std::ptr::null_mut() },
            drops: [0; MAX_BURST / 64],
            sent: [0; MAX_BURST / 64],
            targets: [0; MAX_BURST],
            requested: false,
            injects: injects.clone(),
            scratch: Burst::new(),
            sticky: None,
            params: self.params.clone(),
            counters: counters.clone(),
            simd,
            label: format!("{}@port{port}", self.name()).into(),
            in_init: true,
        };
        let mut store = Store::new(self.runtime.engine(), state);
        store.limiter(|s| &mut s.limits);
        store.set_epoch_deadline(INIT_DEADLINE_TICKS);
        let inst = self.pre.instantiate(&mut store).map_err(|e| anyhow!("instantiating: {}", trap_text(&e)))?;
        store.data_mut().memory = inst.get_memory(&mut store, export::MEMORY);
        let version = inst.get_typed_func::<(), i32>(&mut store, export::ABI_VERSION)?;
        let v = version.call(&mut store, ()).map_err(|e| anyhow!("{}: {e}", export::ABI_VERSION))? as u32;
        if v >> 16 != ABI_MAJOR {
            bail!(
                "built for ABI v{}.{}; this host runs ABI v{ABI_MAJOR} (rebuild it with a matching wasmdp-sdk)",
                v >> 16,
                v & 0xffff
            );
        }
        let init = inst.get_typed_func::<(i32, i32), i32>(&mut store, export::INIT)?;
        store.set_epoch_deadline(INIT_DEADLINE_TICKS);
        let rc = init
            .call(&mut store, (port as i32, instance as i32))
            .map_err(|e| anyhow!("init trapped: {}", trap_text(&e)))?;
        if rc != 0 {
            bail!("init refused the configuration (code {rc}; the plugin's log above says why)");
        }
        store.data_mut().in_init = false;
        let on_burst = inst.get_typed_func::<(i32, i32), i32>(&mut store, export::ON_BURST)?;
        let tick = inst.get_typed_func::<i64, ()>(&mut store, export::TICK).ok();
        Ok(Live { store, on_burst, tick })
    }

    /// The per-call deadline in ticks of the epoch ticker (at least one).
    pub(crate) fn deadline_ticks(&self) -> u64 {
        let tick = super::runtime::TICK.as_micros() as u64;
        (self.cfg.limits.deadline_us.0.div_ceil(tick)).max(1)
    }
}

/// Deadline of instantiation, the version call and init, in ticks (1 s): these run on the control
/// thread, not in the poll loop, and a loaded machine must not make a good plugin fail to start.
const INIT_DEADLINE_TICKS: u64 = 4000;

/// A trap's message with its kind ("interrupt" for the deadline).
pub(crate) fn trap_text(e: &anyhow::Error) -> String {
    match e.downcast_ref::<wasmtime::Trap>() {
        Some(wasmtime::Trap::Interrupt) => "deadline exceeded".into(),
        Some(t) => format!("{t}"),
        None => format!("{}", e.root_cause()),
    }
}

/// SHA-256 of a module's bytes.
pub fn digest(bytes: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).into()
}
