//! Per-stream plugin runner: calls the plugin for each burst (or applies its sticky decision), and
//! contains failures as the port's policy says.
//!
//! Nothing slow runs on the worker: a trapped instance is handed to the runtime's service thread to
//! be dropped, and under `reload` the new instance (whose init may take up to its budget) is made
//! there too, while the worker keeps forwarding with the failure policy.

mod outcome;

use super::area::{self, Stamp};
use super::counters::{bump, now_ns, PluginCounters};
use super::instance::{trap_text, Live, Plugin};
use super::logs::LogLimit;
use super::state::HostState;
use crate::config::FailurePolicy;
use crate::engines::{EngineFn, FwdCtx};
use crate::mbuf::Burst;
use crate::simd::Simd;
use outcome::{apply_requests, run_sticky};
use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use wasmdp_abi::verdict;
use wasmtime::Trap;

/// An instance being made on the service thread.
type Pending = Arc<Mutex<Option<Result<Live, super::InstanceError>>>>;

/// Runs one stream's plugin.
pub struct Runner {
    plugin: Arc<Plugin>,
    live: Option<Live>,
    port: u16,
    env: Arc<super::StreamEnv>,
    simd: Simd,
    counters: Arc<PluginCounters>,
    /// When the traps still inside the failure window happened, oldest first.
    traps: VecDeque<Instant>,
    disabled: bool,
    /// When to ask for the next instance (`reload`), and the one being made.
    retry_at: Option<Instant>,
    pending: Option<Pending>,
    next_tick: Option<Instant>,
    /// Bursts until the clock is read again for the tick (reading it every burst costs more than a
    /// sticky burst's whole bookkeeping).
    tick_countdown: u32,
    /// The runner's own warnings (traps, error returns), rate-limited.
    warnings: LogLimit,
    /// Calls until the next one is timed ([`super::counters::TIME_EVERY`]).
    time_countdown: u32,
}

/// Delay before the second re-instantiation in a failure window; doubles with each further trap up
/// to [`MAX_BACKOFF`]. The first one is asked for at once.
const FIRST_BACKOFF: Duration = Duration::from_millis(10);
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// The tick's clock is read every this many polls of the stream (busy or idle): often enough to
/// tick within microseconds of the period, rarely enough that the clock costs nothing per poll.
const TICK_CHECK_EVERY: u32 = 64;

/// How a call ended badly.
enum Failure {
    /// A trap (including the deadline): the instance is dropped.
    Trap(String),
    /// `wasmdp_on_burst` returned nonzero: the instance is kept.
    Error(i32),
}

impl Runner {
    /// Instantiates the plugin for the stream `env` describes (runs its init). `counters` are the
    /// stream's plugin counters, kept across policy swaps.
    pub fn new(
        plugin: Arc<Plugin>,
        env: Arc<super::StreamEnv>,
        simd: Simd,
        counters: Arc<PluginCounters>,
    ) -> Result<Runner, super::InstanceError> {
        let live = plugin.instantiate(&env, simd, &counters)?;
        let next_tick = tick_period(&plugin).map(|p| Instant::now() + p);
        counters.attached.store(true, Relaxed);
        counters.disabled.store(false, Relaxed);
        Ok(Runner {
            plugin,
            live: Some(live),
            port: env.port,
            env,
            simd,
            counters,
            traps: VecDeque::new(),
            disabled: false,
            retry_at: None,
            pending: None,
            next_tick,
            tick_countdown: TICK_CHECK_EVERY,
            warnings: LogLimit::new(5.0, 1.0),
            time_countdown: 1,
        })
    }

    /// Writes `bytes` into the live instance's memory at `at` (for the fuzz harness's program).
    #[doc(hidden)]
    pub fn poke(&mut self, at: usize, bytes: &[u8]) {
        let Some(live) = self.live.as_mut() else { return };
        let Some(mem) = live.store.data().memory else { return };
        if let Some(dst) = mem.data_mut(&mut live.store).get_mut(at..at + bytes.len()) {
            dst.copy_from_slice(bytes);
        }
    }

    /// The counters, for the stats.
    pub fn counters(&self) -> Arc<PluginCounters> {
        self.counters.clone()
    }

    /// The plugin this runner runs.
    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.plugin
    }

    /// A poll that received nothing: the plugin's tick still comes when it is due.
    #[inline]
    pub fn idle(&mut self) {
        self.maybe_tick();
    }

    /// Handles one burst: the plugin's decision, its sticky decision, or the failure policy.
    /// `native` is the port's engine (the fallback). What is dropped meanwhile counts as the
    /// policy's drops (in a chain: this link's).
    #[inline]
    pub fn on_burst(&mut self, ctx: &mut FwdCtx<'_>, burst: &mut Burst, native: EngineFn) {
        // Summed before the call (`black_box`): otherwise every reason's count was kept across it,
        // in stack slots, and both sums made after it.
        let dropped = std::hint::black_box(ctx.drops.total());
        self.decide(ctx, burst, native);
        bump(&self.counters.drops, ctx.drops.total() - dropped);
    }

    #[inline(always)]
    fn decide(&mut self, ctx: &mut FwdCtx<'_>, burst: &mut Burst, native: EngineFn) {
        if self.counters.operator.load(Relaxed) != 0 {
            self.operator();
        }
        self.maybe_tick();
        if self.live.is_none() {
            self.revive();
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
        self.time_countdown -= 1;
        let called = if self.time_countdown == 0 { self.timed_call(ctx, burst) } else { self.call(ctx, burst) };
        if let Err(f) = called {
            self.failed(f);
            self.fail(ctx, burst, native);
        }
    }

    /// [`Runner::call`], timed: one call in [`super::counters::TIME_EVERY`] (out of line, so that the
    /// others carry no clock).
    #[cold]
    #[inline(never)]
    fn timed_call(&mut self, ctx: &mut FwdCtx<'_>, burst: &mut Burst) -> Result<(), Failure> {
        self.time_countdown = super::counters::TIME_EVERY;
        let t = Instant::now();
        let r = self.call(ctx, burst);
        bump(&self.counters.timed_ns, t.elapsed().as_nanos() as u64);
        bump(&self.counters.timed_calls, 1);
        r
    }

    fn call(&mut self, ctx: &mut FwdCtx<'_>, burst: &mut Burst) -> Result<(), Failure> {
        let Some(live) = self.live.as_mut() else { return Err(Failure::Trap("no instance".into())) };
        bump(&self.counters.calls, 1);
        live.store.data_mut().begin_call(burst, ctx);
        // `on_burst` cleared a used-up sticky decision before calling: one set during a call that
        // then fails is undone (to None) below.
        debug_assert!(live.store.data().sticky.is_none());
        if let Some((a, mem, st)) = live.area_and_state() {
            let env = &self.env;
            let now_ns = super::counters::coarse_now_ns();
            let stamp = Stamp { port: env.port, queue: env.queue, tx_port: env.tx_port, now_ns };
            let filled = match (a.direct(), st.direct.as_mut()) {
                (false, _) => area::fill(a, mem, &mut st.area_stale, burst, &stamp, self.simd),
                (true, Some(m)) => area::fill_direct(a, mem, m, burst, &stamp),
                (true, None) => false,
            };
            if !filled {
                live.store.data_mut().end_call();
                return Err(Failure::Error(wasmdp_abi::err::BAD_MEMORY));
            }
        }
        let res = live.on_burst(self.port, burst.len());
        let verdict = match res {
            Ok(rc) if live.verdicts => verdict::engine_of(rc),
            _ => None,
        };
        let outcome = match res {
            Ok(rc) if rc == 0 || verdict.is_some() => {
                let applied = match live.area_and_state() {
                    Some((a, data, st)) => area::apply(a, data, st).map_err(Failure::Error),
                    None => Ok(()),
                };
                applied.and_then(|()| run_verdict(live.store.data_mut(), verdict))
            }
            Ok(rc) => Err(Failure::Error(rc)),
            Err(e) if e.downcast_ref::<Trap>() == Some(&Trap::Interrupt) => {
                bump(&self.counters.timeouts, 1);
                Err(Failure::Trap(format!(
                    "deadline of {} us of CPU time exceeded{}",
                    self.plugin.cfg.limits.deadline_us.0,
                    where_(&e)
                )))
            }
            Err(e) => Err(Failure::Trap(format!("trapped: {}", trap_text(&e)))),
        };
        let st = live.store.data_mut();
        st.end_call();
        match outcome {
            Ok(()) => apply_requests(ctx, burst, st),
            Err(Failure::Error(_)) => st.sticky = None,
            Err(_) => {}
        }
        outcome
    }

    /// Counts and logs a failure. A trap drops the instance (its state cannot be trusted), disables
    /// the plugin after `max_failures` traps within `failure_window_s`, and under `reload` schedules
    /// a new instance with a delay that doubles with each trap in the window.
    fn failed(&mut self, f: Failure) {
        let policy = self.plugin.cfg.on_failure;
        let reason = match f {
            Failure::Error(rc) => {
                bump(&self.counters.errors, 1);
                self.warn(format_args!("plugin returned error {rc}; the failure policy applies to the burst"));
                return;
            }
            Failure::Trap(r) => r,
        };
        bump(&self.counters.traps, 1);
        if let Some(dead) = self.live.take() {
            self.dispose(dead);
            self.counters.failed.store(true, Relaxed);
        }
        let now = Instant::now();
        let window = Duration::from_secs(self.plugin.cfg.failure_window_s.0);
        while self.traps.front().is_some_and(|t| now.duration_since(*t) > window) {
            self.traps.pop_front();
        }
        self.traps.push_back(now);
        self.warn(format_args!("plugin failed: {reason}"));
        let max = self.plugin.cfg.max_failures.0;
        if self.traps.len() as u64 >= max {
            self.disabled = true;
            self.counters.disabled.store(true, Relaxed);
            tracing::error!(plugin = %self.plugin.name(), port = self.port, traps = self.traps.len(),
                window_s = window.as_secs(),
                "plugin disabled after {max} traps within the failure window; every burst now gets the failure policy ({})",
                policy.name());
        } else if policy == FailurePolicy::Reload {
            let backoff = match self.traps.len() {
                0 | 1 => Duration::ZERO,
                n => FIRST_BACKOFF.saturating_mul(1 << (n - 2).min(16)).min(MAX_BACKOFF),
            };
            self.retry_at = Some(now + backoff);
        }
    }

    fn warn(&mut self, what: std::fmt::Arguments<'_>) {
        if let Some(quiet) = self.warnings.allow() {
            tracing::warn!(plugin = %self.plugin.name(), port = self.port, policy = self.plugin.cfg.on_failure.name(),
                not_logged = quiet, "{what}");
        }
    }

    /// Drops an instance on the service thread (freeing a store unmaps memory), its packet region
    /// closed first, here on the worker.
    fn dispose(&self, mut dead: Live) {
        if let Some(m) = dead.store.data_mut().direct.as_mut() {
            m.close();
        }
        self.plugin.runtime().submit(Box::new(move || drop(dead)));
    }

    /// Before the runner leaves the stream's worker (replaced by a reload, to be dropped elsewhere):
    /// closes its instance's packet region, so that no other thread can run code that reaches the
    /// stream's packets.
    pub fn leave(&mut self) {
        if let Some(m) = self.live.as_mut().and_then(|l| l.store.data_mut().direct.as_mut()) {
            m.close();
        }
    }

    /// The stream's pool for direct packet access, when an instance asked for one: the stream then
    /// allocates its packets there.
    pub fn direct_pool(&self) -> Option<&Arc<crate::mbuf::Pool>> {
        self.env.direct.pool()
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

    /// Carries out the operator's request (control socket `policy enable|disable`).
    #[cold]
    fn operator(&mut self) {
        match self.counters.operator.swap(0, Relaxed) {
            super::counters::OPERATOR_ENABLE => {
                self.disabled = false;
                self.traps.clear();
                self.counters.disabled.store(false, Relaxed);
                if self.live.is_none() {
                    self.retry_at = Some(Instant::now());
                }
                tracing::info!(plugin = %self.plugin.name(), port = self.port, "plugin enabled by the operator");
            }
            super::counters::OPERATOR_DISABLE => {
                self.disabled = true;
                self.counters.disabled.store(true, Relaxed);
                if let Some(live) = self.live.take() {
                    self.dispose(live);
                }
                tracing::info!(plugin = %self.plugin.name(), port = self.port,
                    "plugin disabled by the operator; every burst gets the failure policy ({})", self.plugin.cfg.on_failure.name());
            }
            _ => {}
        }
    }

    /// Under `reload`: takes the instance the service thread made, or asks for one when due.
    #[cold]
    fn revive(&mut self) {
        if let Some(p) = &self.pending {
            let Ok(mut slot) = p.try_lock() else { return };
            let Some(made) = slot.take() else { return };
            drop(slot);
            self.pending = None;
            match made {
                Ok(live) => {
                    tracing::info!(plugin = %self.plugin.name(), port = self.port, "plugin re-instantiated");
                    self.live = Some(live);
                    self.counters.failed.store(false, Relaxed);
                }
                Err(e) => self.failed(Failure::Trap(format!("re-instantiation failed: {e}"))),
            }
            return;
        }
        if self.disabled || self.retry_at.is_none_or(|t| Instant::now() < t) {
            return;
        }
        self.retry_at = None;
        let pending: Pending = Arc::default();
        let (plugin, slot) = (self.plugin.clone(), pending.clone());
        let (env, simd, counters) = (self.env.clone(), self.simd, self.counters.clone());
        let job = Box::new(move || {
            let made = plugin.instantiate(&env, simd, &counters);
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(made);
        });
        if self.plugin.runtime().submit(job) {
            self.pending = Some(pending);
        }
    }

    #[inline(always)]
    fn maybe_tick(&mut self) {
        if self.next_tick.is_none() {
            return;
        }
        self.tick_countdown -= 1;
        if self.tick_countdown == 0 {
            self.check_tick();
        }
    }

    /// Every [`TICK_CHECK_EVERY`] polls: the tick, when it is due (out of line: the hot path is
    /// only `maybe_tick`'s countdown).
    #[cold]
    #[inline(never)]
    fn check_tick(&mut self) {
        let Some(at) = self.next_tick else { return };
        self.tick_countdown = TICK_CHECK_EVERY;
        let now = Instant::now();
        if now < at {
            return;
        }
        self.next_tick = tick_period(&self.plugin).map(|p| now + p);
        let Some(live) = self.live.as_mut().filter(|l| l.has_tick()) else { return };
        live.store.data_mut().watch.begin();
        bump(&self.counters.ticks, 1);
        if let Err(e) = live.tick(now_ns()) {
            self.failed(Failure::Trap(format!("tick trapped: {}", trap_text(&e))));
        }
    }
}

/// Runs the engine `wasmdp_on_burst` returned (ABI 1.1 `verdict::RUN_ENGINE`) on what is left of
/// the burst, exactly as a last `run_engine(id, 0, ALL_PACKETS)` import would have.
#[inline]
fn run_verdict(st: &mut HostState, engine: Option<u32>) -> Result<(), Failure> {
    let Some(id) = engine else { return Ok(()) };
    let rc = super::ops::decide::run_whole(st, id);
    if rc < 0 {
        return Err(Failure::Error(rc));
    }
    Ok(())
}

/// " (in function ...)" for a trap, when wasmtime knows where it happened.
fn where_(e: &wasmtime::Error) -> String {
    let t = trap_text(e);
    t.find(" (in function").map(|i| t[i..].to_string()).unwrap_or_default()
}

fn tick_period(p: &Plugin) -> Option<Duration> {
    let ms = p.cfg.tick_ms.0;
    (ms > 0).then(|| Duration::from_millis(ms))
}
