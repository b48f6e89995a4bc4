//! Per-stream plugin runner: calls the plugin for each burst (or applies its sticky decision), and
//! contains failures as the port's policy says.

use super::instance::{Live, Plugin};
use super::state::Sticky;
use crate::config::FailurePolicy;
use crate::engines::{EngineFn, FwdCtx, ENGINES};
use crate::mbuf::Burst;
use crate::offload::TxOffloads;
use crate::simd::Simd;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};
use wasmtime::Trap;

/// Monotonic nanoseconds since the first call (the plugins' clock).
pub fn now_ns() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// A stream's plugin counters, read by the stats display.
#[derive(Debug, Default)]
pub struct PluginCounters {
    /// Calls into the plugin (per-burst calls, ticks not counted).
    pub calls: AtomicU64,
    /// Calls that trapped or returned an error.
    pub traps: AtomicU64,
    /// Calls stopped at the deadline.
    pub timeouts: AtomicU64,
    /// Bursts handled by a sticky decision without a call.
    pub sticky: AtomicU64,
    names: Mutex<Vec<String>>,
    values: [AtomicU64; wasmdp_abi::MAX_COUNTERS as usize],
}

fn bump(c: &AtomicU64, v: u64) {
    c.store(c.load(Relaxed).wrapping_add(v), Relaxed);
}

impl PluginCounters {
    pub(crate) fn register(&self, name: String, max: usize) -> i32 {
        let mut names = self.names.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = names.iter().position(|n| *n == name) {
            return i as i32;
        }
        if names.len() >= max {
            return wasmdp_abi::err::TOO_SMALL;
        }
        names.push(name);
        names.len() as i32 - 1
    }

    pub(crate) fn add(&self, id: i32, v: u64) -> i32 {
        match usize::try_from(id).ok().and_then(|i| self.values.get(i)) {
            Some(c) if (id as usize) < self.names.lock().map(|n| n.len()).unwrap_or(0) => {
                bump(c, v);
                0
            }
            _ => wasmdp_abi::err::NOT_FOUND,
        }
    }

    /// The plugin's own counters, by name.
    pub fn named(&self) -> Vec<(String, u64)> {
        let names = self.names.lock().unwrap_or_else(|e| e.into_inner());
        names.iter().enumerate().map(|(i, n)| (n.clone(), self.values[i].load(Relaxed))).collect()
    }
}

/// Runs one stream's plugin.
pub struct Runner {
    plugin: Arc<Plugin>,
    live: Option<Live>,
    port: u16,
    instance: u32,
    simd: Simd,
    counters: Arc<PluginCounters>,
    failures: u64,
    disabled: bool,
    backoff: Duration,
    retry_at: Option<Instant>,
    next_tick: Option<Instant>,
}

impl Runner {
    /// Instantiates the plugin for a stream receiving on `port` (runs its init).
    pub fn new(plugin: Arc<Plugin>, port: u16, instance: u32, simd: Simd) -> anyhow::Result<Runner> {
        let counters = Arc::new(PluginCounters::default());
        let live = plugin.instantiate(port, instance, simd, &counters)?;
        let next_tick = tick_period(&plugin).map(|p| Instant::now() + p);
        Ok(Runner {
            plugin,
            live: Some(live),
            port,
            instance,
            simd,
            counters,
            failures: 0,
            disabled: false,
            backoff: Duration::from_millis(1),
            retry_at: None,
            next_tick,
        })
    }

    /// The counters, for the stats.
    pub fn counters(&self) -> Arc<PluginCounters> {
        self.counters.clone()
    }

    /// Handles one burst: the plugin's decision, its sticky decision, or the failure policy.
    /// `native` is the port's engine (the fallback).
    pub fn on_burst(&mut self, ctx: &mut FwdCtx<'_>, burst: &mut Burst, native: EngineFn) {
        self.maybe_tick();
        if self.disabled || self.live.is_none() {
            self.reinstantiate_if_due();
            if self.live.is_none() || self.disabled {
                return self.fail(ctx, burst, native);
            }
        }
        let Some(live) = self.live.as_mut() else { return self.fail(ctx, burst, native) };
        if let Some(s) = live.store.data_mut().sticky.as_mut() {
            if s.left > 0 {
                if s.left != u64::MAX {
                    s.left -= 1;
                }
                let s = *s;
                bump(&self.counters.sticky, 1);
                return run_sticky(ctx, burst, s, self.simd);
            }
            live.store.data_mut().sticky = None;
        }
        match self.call(ctx, burst) {
            Ok(()) => self.failures = 0,
            Err(reason) => {
                self.failed(&reason);
                self.fail(ctx, burst, native);
            }
        }
    }

    fn call(&mut self, ctx: &mut FwdCtx<'_>, burst: &mut Burst) -> Result<(), String> {
        let deadline = self.plugin.deadline_ticks();
        let live = self.live.as_mut().ok_or("no instance")?;
        bump(&self.counters.calls, 1);
        {
            let st = live.store.data_mut();
            st.drops = [0; crate::mbuf::MAX_BURST / 64];
            st.call.burst = burst;
            st.call.ctx = (ctx as *mut FwdCtx<'_>).cast();
        }
        live.store.set_epoch_deadline(deadline);
        let n = burst.len() as i32;
        let res = live.on_burst.call(&mut live.store, (self.port as i32, n));
        let st = live.store.data_mut();
        st.call.burst = std::ptr::null_mut();
        st.call.ctx = std::ptr::null_mut();
        match res {
            Ok(0) => {
                let drops = st.drops;
                apply_drops(ctx, burst, &drops);
                Ok(())
            }
            Ok(rc) => Err(format!("on_burst returned error code {rc}")),
            Err(e) if e.downcast_ref::<Trap>() == Some(&Trap::Interrupt) => {
                bump(&self.counters.timeouts, 1);
                Err(format!("deadline of {} us exceeded", self.plugin.cfg.limits.deadline_us.0))
            }
            Err(e) => Err(format!("trapped: {}", e.root_cause())),
        }
    }

    fn failed(&mut self, reason: &str) {
        bump(&self.counters.traps, 1);
        self.failures += 1;
        let policy = self.plugin.cfg.on_failure;
        tracing::warn!(plugin = %self.plugin.name(), port = self.port, policy = policy.name(), "plugin failed: {reason}");
        if policy == FailurePolicy::Reload {
            self.live = None;
            self.retry_at = Some(Instant::now() + self.backoff);
            self.backoff = (self.backoff * 2).min(Duration::from_secs(1));
        }
        if self.failures >= self.plugin.cfg.max_failures.0 && !self.disabled {
            self.disabled = true;
            tracing::error!(plugin = %self.plugin.name(), port = self.port, failures = self.failures,
                "plugin disabled after consecutive failures; the port now runs its failure policy ({})", policy.name());
        }
    }

    fn fail(&mut self, ctx: &mut FwdCtx<'_>, burst: &mut Burst, native: EngineFn) {
        match self.plugin.cfg.on_failure {
            FailurePolicy::FailClosed => {
                ctx.drops.engine += burst.len() as u64;
                ctx.cache.free_burst(burst);
            }
            FailurePolicy::FailOpen | FailurePolicy::Reload => native(ctx, burst),
        }
    }

    fn reinstantiate_if_due(&mut self) {
        if self.disabled || self.live.is_some() || self.retry_at.is_none_or(|t| Instant::now() < t) {
            return;
        }
        match self.plugin.instantiate(self.port, self.instance, self.simd, &self.counters) {
            Ok(live) => {
                tracing::info!(plugin = %self.plugin.name(), port = self.port, "plugin re-instantiated");
                self.live = Some(live);
                self.retry_at = None;
            }
            Err(e) => {
                self.failed(&format!("re-instantiation failed: {e:#}"));
            }
        }
    }

    fn maybe_tick(&mut self) {
        let Some(at) = self.next_tick else { return };
        let now = Instant::now();
        if now < at {
            return;
        }
        self.next_tick = tick_period(&self.plugin).map(|p| now + p);
        let deadline = self.plugin.deadline_ticks();
        let Some(live) = self.live.as_mut() else { return };
        let Some(tick) = live.tick.clone() else { return };
        live.store.set_epoch_deadline(deadline);
        if let Err(e) = tick.call(&mut live.store, now_ns() as i64) {
            self.failed(&format!("tick trapped: {}", e.root_cause()));
        }
    }
}

fn tick_period(p: &Plugin) -> Option<Duration> {
    let ms = p.cfg.tick_ms.0;
    (ms > 0).then(|| Duration::from_millis(ms))
}

fn run_sticky(ctx: &mut FwdCtx<'_>, burst: &mut Burst, s: Sticky, simd: Simd) {
    if s.engine == wasmdp_abi::engine::RXONLY {
        ctx.drops.engine += burst.len() as u64;
        return ctx.cache.free_burst(burst);
    }
    let port_tx = ctx.tx;
    ctx.tx = TxOffloads { flags: s.flags, vlan_tci: s.vlan_tci, vlan_tci_outer: s.vlan_tci_outer };
    (ENGINES[s.engine as usize].run.get(simd))(ctx, burst);
    ctx.tx = port_tx;
}

fn apply_drops(ctx: &mut FwdCtx<'_>, burst: &mut Burst, drops: &[u64]) {
    if drops.iter().all(|w| *w == 0) {
        return;
    }
    for i in (0..burst.len()).rev() {
        if drops[i / 64] & (1 << (i % 64)) != 0 {
            let p = burst.remove(i);
            ctx.drop_pkt(p);
        }
    }
}
