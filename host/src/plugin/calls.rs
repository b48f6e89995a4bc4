//! The cost of crossing the boundary: one host->plugin call and one plugin->host call, measured on
//! real instances (the same runtime, linker and store setup as the dataplane); and what the
//! sandbox's instrumentation adds to a bulk memory operation.

use super::counters::PluginCounters;
use super::{Plugin, Runtime};
use crate::config::{Bounded, FailurePolicy, LimitsCfg, PolicyCfg};
use crate::simd::Simd;
use std::sync::Arc;
use std::time::Instant;

/// What crossing the boundary and the instrumentation cost, in nanoseconds.
#[derive(Debug, Clone, Copy)]
pub struct CallCosts {
    /// An empty `wasmdp_on_burst` call from the host.
    pub host_to_plugin_ns: f64,
    /// One import call (`burst_len`) from the plugin.
    pub plugin_to_host_ns: f64,
    /// One 64-byte `memory.copy`, as wasmtime compiles it...
    pub copy64_raw_ns: f64,
    /// ... and as the sandbox compiles it (a call to a chunking function).
    pub copy64_instrumented_ns: f64,
}

/// A module whose `on_burst` does `n` (its second argument) `memory.copy`s of 64 bytes.
fn copies() -> Vec<u8> {
    use wasm_encoder::{
        BlockType, CodeSection, ExportKind, ExportSection, Function, FunctionSection, MemorySection, MemoryType,
        Module, TypeSection, ValType::I32,
    };
    let mut types = TypeSection::new();
    types.ty().function([I32, I32], [I32]);
    let mut funcs = FunctionSection::new();
    funcs.function(0);
    let mut memory = MemorySection::new();
    memory.memory(MemoryType { minimum: 1, maximum: None, memory64: false, shared: false, page_size_log2: None });
    let mut exports = ExportSection::new();
    exports.export("memory", ExportKind::Memory, 0);
    exports.export("f", ExportKind::Func, 0);
    let mut f = Function::new([]);
    let mut i = f.instructions();
    i.block(BlockType::Empty).loop_(BlockType::Empty);
    i.local_get(1).i32_eqz().br_if(1);
    i.local_get(1).i32_const(63).i32_and().i32_const(0).i32_const(64).memory_copy(0, 0);
    i.local_get(1).i32_const(1).i32_sub().local_set(1).br(0);
    i.end().end().i32_const(0).end();
    let mut code = CodeSection::new();
    code.function(&f);
    let mut m = Module::new();
    m.section(&types).section(&funcs).section(&memory).section(&exports).section(&code);
    m.finish()
}

/// Nanoseconds per copy of [`copies`] compiled from `bytes`.
fn time_copies(rt: &Runtime, bytes: &[u8]) -> anyhow::Result<f64> {
    use wasmtime::{Instance, Module, Store};
    let m = Module::new(rt.engine(), bytes).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut store = Store::new(rt.engine(), ());
    store.set_epoch_deadline(u64::MAX / 2);
    let inst = Instance::new(&mut store, &m, &[]).map_err(|e| anyhow::anyhow!("{e}"))?;
    let f = inst.get_typed_func::<(i32, i32), i32>(&mut store, "f").map_err(|e| anyhow::anyhow!("{e}"))?;
    let n = 100_000;
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        f.call(&mut store, (0, n)).map_err(|e| anyhow::anyhow!("{e}"))?;
        times.push(t.elapsed().as_nanos() as f64 / n as f64);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[2])
}

/// A module whose `on_burst` calls the host `calls` times (`burst_len`, the cheapest import) in a
/// loop, then returns 0; with `calls == false` it returns at once. Built with wasm-encoder, so the
/// binary needs no text-format parser.
fn module(calls: bool) -> Vec<u8> {
    use wasm_encoder::{
        BlockType, CodeSection, EntityType, ExportKind, ExportSection, Function, FunctionSection, ImportSection,
        MemorySection, MemoryType, Module, TypeSection, ValType::I32,
    };
    let mut types = TypeSection::new();
    types.ty().function([], [I32]); // 0: () -> i32
    types.ty().function([I32, I32], [I32]); // 1: (i32, i32) -> i32
    let mut imports = ImportSection::new();
    imports.import("wasmdp", "burst_len", EntityType::Function(0));
    let mut funcs = FunctionSection::new();
    funcs.function(0).function(1).function(1);
    let mut memory = MemorySection::new();
    memory.memory(MemoryType { minimum: 1, maximum: None, memory64: false, shared: false, page_size_log2: None });
    let mut exports = ExportSection::new();
    exports.export("memory", ExportKind::Memory, 0);
    exports.export("wasmdp_abi_version", ExportKind::Func, 1);
    exports.export("wasmdp_init", ExportKind::Func, 2);
    exports.export("wasmdp_on_burst", ExportKind::Func, 3);
    let mut code = CodeSection::new();
    let mut version = Function::new([]);
    version.instructions().i32_const(0x10000).end();
    let mut init = Function::new([]);
    init.instructions().i32_const(0).end();
    let mut on_burst = Function::new([]);
    let mut i = on_burst.instructions();
    if calls {
        // block $done (loop $l (br_if $done (n == 0)) (drop (burst_len)) (n -= 1) (br $l)))
        i.block(BlockType::Empty).loop_(BlockType::Empty);
        i.local_get(1).i32_eqz().br_if(1);
        i.call(0).drop();
        i.local_get(1).i32_const(1).i32_sub().local_set(1).br(0);
        i.end().end();
    }
    i.i32_const(0).end();
    for f in [&version, &init, &on_burst] {
        code.function(f);
    }
    let mut m = Module::new();
    m.section(&types).section(&imports).section(&funcs).section(&memory).section(&exports).section(&code);
    m.finish()
}

/// Nanoseconds per `on_burst(0, n)` call of `wat`, median of `reps` timings of `iters` calls.
fn time_calls(rt: &Arc<Runtime>, bytes: &[u8], n: i32, iters: u32, reps: usize) -> anyhow::Result<f64> {
    let dir = std::env::temp_dir().join(format!("wasmdp-calls-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("m{n}.wasm"));
    std::fs::write(&path, bytes)?;
    let cfg = PolicyCfg {
        name: None,
        plugin: path,
        params: Default::default(),
        on_failure: FailurePolicy::FailOpen,
        max_failures: Bounded(5),
        failure_window_s: Bounded(60),
        limits: LimitsCfg::default(),
        tick_ms: Bounded(0),
        shared_maps: Vec::new(),
        map_entries: Default::default(),
        map_pins: Default::default(),
    };
    let plugin = Plugin::load(rt, &cfg)?;
    let counters = Arc::new(PluginCounters::default());
    let env = Arc::new(super::StreamEnv::alone(Arc::from(Vec::new())));
    let mut live = plugin.instantiate(&env, Simd::detect(), &counters)?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        for _ in 0..iters {
            live.store.data_mut().watch.begin();
            live.on_burst(0, n as usize)?;
        }
        times.push(t.elapsed().as_nanos() as f64 / iters as f64);
    }
    let _ = std::fs::remove_dir_all(&dir);
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// An empty call, the extra cost per host call of a call that makes 1000 of them, and a 64-byte
/// `memory.copy` with and without the instrumentation.
pub fn measure() -> anyhow::Result<CallCosts> {
    let rt = Runtime::new()?;
    let empty = time_calls(&rt, &module(false), 0, 200_000, 5)?;
    let many = time_calls(&rt, &module(true), 1000, 2_000, 5)?;
    let raw = copies();
    let limits = super::module::StaticLimits { memory_bytes: 1 << 20, table_elements: 0 };
    let prepared = super::module::prepare(&raw, &limits).map_err(|e| anyhow::anyhow!(e))?;
    Ok(CallCosts {
        host_to_plugin_ns: empty,
        plugin_to_host_ns: (many - empty) / 1000.0,
        copy64_raw_ns: time_copies(&rt, &raw)?,
        copy64_instrumented_ns: time_copies(&rt, &prepared)?,
    })
}
