//! Per-stream plugin runner: calls the plugin for each burst (or applies its sticky decision), and
//! contains failures as the port's policy says.

use super::counters::{bump, now_ns, PluginCounters};
use super::instance::{Live, Plugin};
use super::state::{HostState, Sticky};
use crate::config::FailurePolicy;
use crate::engines::{EngineFn, FwdCtx, ENGINES};
use crate::mbuf::Burst;
use crate::offload::{self, TxOffloads};
use crate::ports::Inject;
use crate::simd::Simd;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime::Trap;

/// Runs one stream's plugin.
pub struct Runner {
    plugin: Arc<Plugin>,
    live: Option<Live>,
    port: u16,
    instance: u32,
    simd: Simd,
    injects: Arc<[Option<Arc<Inject>>]>,
    counters: Arc<PluginCounters>,
    /// Consecutive traps (no successful call between them).
    traps_in_a_row: u64,
    disabled: bool,
    /// Delay before the next re-instantiation (`reload`).
    backoff: Duration,
    retry_at: Option<Instant>,
    next_tick: Option<Instant>,
    /// Bursts until the clock is read again for the tick (reading it every burst costs more than a
    /// sticky burst's whole bookkeeping).
    tick_countdown: u32,
    /// Error returns are logged at most once a second: when the last line was written, and how many
    /// were not logged since.
    error_log: (Option<Instant>, u64),
}

/// First delay between re-instantiations after the immediate one; doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// The tick's clock is read every this many bursts.
const TICK_CHECK_EVERY: u32 = 64;

/// How a call ended badly.
enum Failure {
    /// A trap (including the deadline): the instance is dropped.
    Trap(String),
    /// `wasmdp_on_burst` returned nonzero: the instance is kept.
    Error(i32),
}

impl Runner {
    /// Instantiates the plugin for the stream receiving on `port` queue `instance` (runs its init).
    /// `injects` are the ports' inject queues, for `send_to`; `counters` are the stream's plugin
    /// counters, kept across policy swaps.
    pub fn new(
        plugin: Arc<Plugin>,
        port: u16,
        instance: u32,
        simd: Simd,
        injects: Arc<[Option<Arc<Inject>>]>,
        counters: Arc<PluginCounters>,
    ) -> anyhow::Result<Runner> {
        let live = plugin.instantiate(port, instance, simd, &counters, &injects)?;
        let next_tick = tick_period(&plugin).map(|p| Instant::now() + p);
        counters.attached.store(true, Relaxed);
        Ok(Runner {
            plugin,
            live: Some(live),
            port,
            instance,
            simd,
            injects,
            counters,
            traps_in_a_row: 0,
            disabled: false,
            backoff: Duration::ZERO,
            retry_at: None,
            next_tick,
            tick_countdown: TICK_CHECK_EVERY,
            error_log: (None, 0),
        })
    }

    /// The counters, for the stats.
    pub fn counters(&self) -> Arc<PluginCounters> {
        self.counters.clone()
    }

    /// The plugin this runner runs.
    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.plugin
    }

    /// Handles one burst: the plugin's decision, its sticky decision, or the failure policy.
    /// `native` is the port's engine (the fallback).
    #[inline]
    pub fn on_burst(&mut self, ctx: &mut FwdCtx<'_>, burst: &mut Burst, native: EngineFn) {
        self.maybe_tick();
        if self.live.is_none() {
            self.reinstantiate_if_due();
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
            Ok(()) => {
                self.traps_in_a_row = 0;
                self.backoff = Duration::ZERO;
            }
            Err(f) => {
                self.failed(f);
                self.fail(ctx, burst, native);
            }
        }
    }

    fn call(&mut self, ctx: &mut FwdCtx<'_>, burst: &mut Burst) -> Result<(), Failure> {
        let deadline = self.plugin.deadline_ticks();
        let Some(live) = self.live.as_mut() else { return Err(Failure::Trap("no instance".into())) };
        bump(&self.counters.calls, 1);
        let sticky_before = {
            let st = live.store.data_mut();
            st.reset_requests();
            st.call.burst = burst;
            st.call.ctx = (ctx as *mut FwdCtx<'_>).cast();
            st.sticky
        };
        live.store.set_epoch_deadline(deadline);
        let res = live.on_burst.call(&mut live.store, (self.port as i32, burst.len() as i32));
        let st = live.store.data_mut();
        st.call.burst = std::ptr::null_mut();
        st.call.ctx = std::ptr::null_mut();
        match res {
            Ok(0) => {
                apply_requests(ctx, burst, st);
                Ok(())
            }
            Ok(rc) => {
                st.sticky = sticky_before;
                Err(Failure::Error(rc))
            }
            Err(e) if e.downcast_ref::<Trap>() == Some(&Trap::Interrupt) => {
                bump(&self.counters.timeouts, 1);
                Err(Failure::Trap(format!("deadline of {} us exceeded", self.plugin.cfg.limits.deadline_us.0)))
            }
            Err(e) => Err(Failure::Trap(format!("trapped: {}", super::instance::trap_text(&e)))),
        }
    }

    /// Counts and logs a failure; a trap drops the instance (its state cannot be trusted), schedules
    /// a new one under `reload`, and disables the plugin after `max_failures` traps in a row.
    fn failed(&mut self, f: Failure) {
        let policy = self.plugin.cfg.on_failure;
        let name = self.plugin.name();
        let reason = match f {
            Failure::Error(rc) => {
                bump(&self.counters.errors, 1);
                let now = Instant::now();
                let (last, quiet) = &mut self.error_log;
                if last.is_none_or(|t| now.duration_since(t) >= Duration::from_secs(1)) {
                    tracing::warn!(plugin = %name, port = self.port, policy = policy.name(), not_logged = *quiet,
                        "plugin returned error {rc}; the failure policy applies to the burst");
                    (*last, *quiet) = (Some(now), 0);
                } else {
                    *quiet += 1;
                }
                return;
            }
            Failure::Trap(r) => r,
        };
        bump(&self.counters.traps, 1);
        self.traps_in_a_row += 1;
        self.live = None;
        tracing::warn!(plugin = %name, port = self.port, policy = policy.name(), "plugin failed: {reason}");
        if self.traps_in_a_row >= self.plugin.cfg.max_failures.0 {
            self.disabled = true;
            tracing::error!(plugin = %name, port = self.port, traps = self.traps_in_a_row,
                "plugin disabled after consecutive traps; every burst now gets the failure policy ({})", policy.name());
        } else if policy == FailurePolicy::Reload {
            self.retry_at = Some(Instant::now() + self.backoff);
            self.backoff = if self.backoff.is_zero() { FIRST_BACKOFF } else { (self.backoff * 2).min(MAX_BACKOFF) };
        }
    }

    fn fail(&mut self, ctx: &mut FwdCtx<'_>, burst: &mut Burst, native: EngineFn) {
        match self.plugin.cfg.on_failure {
            FailurePolicy::FailClosed => {
                ctx.drops.plugin += burst.len() as u64;
                ctx.cache.free_burst(burst);
            }
            FailurePolicy::FailOpen | FailurePolicy::Reload => native(ctx, burst),
        }
    }

    fn reinstantiate_if_due(&mut self) {
        if self.disabled || self.retry_at.is_none_or(|t| Instant::now() < t) {
            return;
        }
        self.retry_at = None;
        match self.plugin.instantiate(self.port, self.instance, self.simd, &self.counters, &self.injects) {
            Ok(live) => {
                tracing::info!(plugin = %self.plugin.name(), port = self.port, "plugin re-instantiated");
                self.live = Some(live);
            }
            Err(e) => self.failed(Failure::Trap(format!("re-instantiation failed: {e:#}"))),
        }
    }

    #[inline]
    fn maybe_tick(&mut self) {
        let Some(at) = self.next_tick else { return };
        self.tick_countdown -= 1;
        if self.tick_countdown != 0 {
            return;
        }
        self.tick_countdown = TICK_CHECK_EVERY;
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
            self.failed(Failure::Trap(format!("tick trapped: {}", super::instance::trap_text(&e))));
        }
    }
}

fn tick_period(p: &Plugin) -> Option<Duration> {
    let ms = p.cfg.tick_ms.0;
    (ms > 0).then(|| Duration::from_millis(ms))
}

/// A sticky burst: what `run_engine(engine, 0, n)` then `set_offloads(ALL, ...)` would do.
fn run_sticky(ctx: &mut FwdCtx<'_>, burst: &mut Burst, s: Sticky, simd: Simd) {
    if s.engine == wasmdp_abi::engine::RXONLY {
        ctx.drops.engine += burst.len() as u64;
        return ctx.cache.free_burst(burst);
    }
    (ENGINES[s.engine as usize].run.get(simd))(ctx, burst);
    if s.flags != 0 {
        let tx = TxOffloads { flags: s.flags, vlan_tci: s.vlan_tci, vlan_tci_outer: s.vlan_tci_outer };
        burst.iter_mut().for_each(|p| offload::request(p, &tx));
    }
}

/// Carries out the drops and sends of a successful call, back to front so indexes stay valid.
fn apply_requests(ctx: &mut FwdCtx<'_>, burst: &mut Burst, st: &HostState) {
    if !st.requested {
        return;
    }
    for i in (0..burst.len()).rev() {
        let bit = 1 << (i % 64);
        if st.drops[i / 64] & bit != 0 {
            let p = burst.remove(i);
            ctx.drop_pkt(p);
        } else if st.sent[i / 64] & bit != 0 {
            let p = burst.remove(i);
            ctx.redirected_out += 1;
            let q = st.injects[st.targets[i] as usize].as_ref();
            if let Some(Err(p)) = q.map(|q| q.push(p)) {
                ctx.redirected_out -= 1;
                ctx.drops.tx_full += 1;
                ctx.cache.free(p);
            }
        }
    }
}
