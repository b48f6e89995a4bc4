//! The cost of crossing the boundary: one host->plugin call and one plugin->host call, measured on
//! real instances (the same runtime, linker and store setup as the dataplane).

use super::counters::PluginCounters;
use super::{Plugin, Runtime};
use crate::config::{Bounded, FailurePolicy, LimitsCfg, PolicyCfg};
use crate::simd::Simd;
use std::sync::Arc;
use std::time::Instant;

/// `on_burst` that returns at once.
const EMPTY: &str = r#"(module (memory (export "memory") 1)
  (func (export "wasmdp_abi_version") (result i32) (i32.const 65536))
  (func (export "wasmdp_init") (param i32 i32) (result i32) (i32.const 0))
  (func (export "wasmdp_on_burst") (param i32 i32) (result i32) (i32.const 0)))"#;

/// `on_burst` that calls the host `$n` times (`burst_len`, the cheapest import).
const CALLS: &str = r#"(module (import "wasmdp" "burst_len" (func $len (result i32))) (memory (export "memory") 1)
  (func (export "wasmdp_abi_version") (result i32) (i32.const 65536))
  (func (export "wasmdp_init") (param i32 i32) (result i32) (i32.const 0))
  (func (export "wasmdp_on_burst") (param $p i32) (param $n i32) (result i32)
    (block $done (loop $l (br_if $done (i32.eqz (local.get $n)))
      (drop (call $len)) (local.set $n (i32.sub (local.get $n) (i32.const 1))) (br $l)))
    (i32.const 0)))"#;

/// Nanoseconds per `on_burst(0, n)` call of `wat`, median of `reps` timings of `iters` calls.
fn time_calls(rt: &Arc<Runtime>, wat_text: &str, n: i32, iters: u32, reps: usize) -> anyhow::Result<f64> {
    let dir = std::env::temp_dir().join(format!("wasmdp-calls-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("m{n}.wasm"));
    std::fs::write(&path, wat::parse_str(wat_text)?)?;
    let cfg = PolicyCfg {
        plugin: path,
        params: Default::default(),
        on_failure: FailurePolicy::FailOpen,
        max_failures: Bounded(5),
        limits: LimitsCfg::default(),
        tick_ms: Bounded(0),
    };
    let plugin = Plugin::load(rt, &cfg)?;
    let counters = Arc::new(PluginCounters::default());
    let mut live = plugin.instantiate(0, 0, Simd::detect(), &counters, &Arc::from(Vec::new()))?;
    live.store.set_epoch_deadline(u64::MAX / 4);
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        for _ in 0..iters {
            live.on_burst.call(&mut live.store, (0, n))?;
        }
        times.push(t.elapsed().as_nanos() as f64 / iters as f64);
    }
    let _ = std::fs::remove_dir_all(&dir);
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// (host->plugin ns, plugin->host ns): an empty call, and the extra cost per host call of a call
/// that makes 1000 of them.
pub fn measure() -> anyhow::Result<(f64, f64)> {
    let rt = Runtime::new()?;
    let empty = time_calls(&rt, EMPTY, 0, 200_000, 5)?;
    let many = time_calls(&rt, CALLS, 1000, 2_000, 5)?;
    Ok((empty, (many - empty) / 1000.0))
}
