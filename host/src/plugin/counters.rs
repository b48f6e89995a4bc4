//! The plugins' counters and gauges (shown in the stats) and their clock.
//!
//! Each instance has its own named counters ([`InstanceCounters`], at most `MAX_COUNTERS`, registered
//! in init): written only by the worker running the instance, with a plain load and store, no lock.
//! A stream's [`PluginCounters`] know the instances alive on it and keep the totals of those that
//! are gone, so the display sums by name across instances and reloads. Locks are taken only when an
//! instance is made or dropped, and by the display.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Instant;
use wasmdp_abi::MAX_COUNTERS;

/// Monotonic nanoseconds since the first call (the plugins' clock).
pub fn now_ns() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// [`now_ns`] as of the epoch ticker's last tick (every [`super::TICK`]): what the burst area's
/// header carries, one load instead of a clock read per call.
static TICKED_NS: AtomicU64 = AtomicU64::new(0);

/// Called by the epoch ticker.
pub(crate) fn tick_clock() {
    TICKED_NS.store(now_ns(), Relaxed);
}

/// The plugins' clock to within one tick of the epoch ticker (exact before the first tick).
#[inline]
pub fn coarse_now_ns() -> u64 {
    match TICKED_NS.load(Relaxed) {
        0 => now_ns(),
        t => t,
    }
}

/// Distinct counter names a stream keeps across reloads; counters of further names are added to
/// [`OTHER`].
const MAX_NAMES: usize = 64;
/// The name under which counters beyond [`MAX_NAMES`] are shown.
pub const OTHER: &str = "(other)";

/// A stream's plugin figures, read by the stats display.
#[derive(Debug, Default)]
pub struct PluginCounters {
    /// Calls into the plugin (per-burst calls, ticks not counted).
    pub calls: AtomicU64,
    /// Calls that trapped (including timeouts).
    pub traps: AtomicU64,
    /// Calls of `wasmdp_on_burst` that returned nonzero.
    pub errors: AtomicU64,
    /// Calls stopped at the deadline.
    pub timeouts: AtomicU64,
    /// Bursts handled by a sticky decision without a call.
    pub sticky: AtomicU64,
    /// Calls of `wasmdp_tick`.
    pub ticks: AtomicU64,
    /// Packets dropped where the policy ran (its drops, the drops of the engines it ran, and its
    /// bursts dropped under `fail_closed`): in a chain, the link that dropped them.
    pub drops: AtomicU64,
    /// Calls timed (one in [`TIME_EVERY`]), and the nanoseconds they took in all: a link's time per
    /// burst is `timed_ns / timed_calls`, as Envoy reports per filter.
    pub timed_calls: AtomicU64,
    /// See `timed_calls`.
    pub timed_ns: AtomicU64,
    /// A policy is attached to the stream now.
    pub attached: AtomicBool,
    /// The plugin was disabled after too many failures (or by the operator).
    pub disabled: AtomicBool,
    /// The stream's instance trapped and it has none now (failure policy in force).
    pub failed: AtomicBool,
    /// An operator's request for the stream's runner, taken at its next burst: [`OPERATOR_ENABLE`]
    /// or [`OPERATOR_DISABLE`] (0: none).
    pub operator: std::sync::atomic::AtomicU8,
    /// Instances alive on the stream (usually one; two while a reload swaps them).
    live: Mutex<Vec<Weak<InstanceCounters>>>,
    /// Totals of the instances that are gone, by name.
    retired: Mutex<BTreeMap<String, u64>>,
    /// The gauges of the instance that ended last: shown while no instance is live (after the stop,
    /// in the final report).
    last_gauges: Mutex<BTreeMap<String, i64>>,
}

/// One call in this many is timed (two clock reads): often enough for a per-burst time within a
/// second, rarely enough that the clock costs nothing per burst.
pub const TIME_EVERY: u32 = 64;

/// Operator request: run the plugin again (a new instance, the failure window cleared).
pub const OPERATOR_ENABLE: u8 = 1;
/// Operator request: stop calling the plugin; every burst gets the failure policy.
pub const OPERATOR_DISABLE: u8 = 2;

/// Adds to a counter only the calling worker writes: a load and a store, saturating.
#[inline(always)]
pub(crate) fn bump(c: &AtomicU64, v: u64) {
    c.store(c.load(Relaxed).saturating_add(v), Relaxed);
}

impl PluginCounters {
    /// Counters for a new instance of the stream; they stay counted after the instance is gone.
    pub(crate) fn instance(self: &Arc<Self>) -> Arc<InstanceCounters> {
        let c = Arc::new(InstanceCounters {
            names: Names::default(),
            values: Default::default(),
            gauges: Gauges::default(),
            owner: Arc::downgrade(self),
        });
        self.live.lock().unwrap_or_else(|e| e.into_inner()).push(Arc::downgrade(&c));
        c
    }

    fn retire(&self, gone: &InstanceCounters) {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.retain(|c| !std::ptr::eq(c.as_ptr(), gone));
        drop(live);
        let mut retired = self.retired.lock().unwrap_or_else(|e| e.into_inner());
        for (name, v) in gone.values() {
            add_named(&mut retired, name, v);
        }
        drop(retired);
        *self.last_gauges.lock().unwrap_or_else(|e| e.into_inner()) = gone.gauges.values().into_iter().collect();
    }

    /// The plugins' own counters, by name, summed over the stream's instances past and present.
    pub fn named(&self) -> BTreeMap<String, u64> {
        // Upgraded outside the lock: dropping the last reference retires an instance, which locks.
        let live: Vec<Arc<InstanceCounters>> =
            self.live.lock().unwrap_or_else(|e| e.into_inner()).iter().filter_map(Weak::upgrade).collect();
        let mut out = self.retired.lock().unwrap_or_else(|e| e.into_inner()).clone();
        for c in &live {
            for (name, v) in c.values() {
                add_named(&mut out, name, v);
            }
        }
        drop(live);
        out
    }
}

impl PluginCounters {
    /// The plugins' gauges, by name, summed over the stream's live instances (a gauge is a level:
    /// an instance that is gone no longer has one); with none live, the last values of the instance
    /// that ended last.
    pub fn gauges(&self) -> BTreeMap<String, i64> {
        let live: Vec<Arc<InstanceCounters>> =
            self.live.lock().unwrap_or_else(|e| e.into_inner()).iter().filter_map(Weak::upgrade).collect();
        if live.is_empty() {
            return self.last_gauges.lock().unwrap_or_else(|e| e.into_inner()).clone();
        }
        let mut out = BTreeMap::new();
        for c in &live {
            for (name, v) in c.gauges.values() {
                let e: &mut i64 = out.entry(name).or_default();
                *e = e.saturating_add(v);
            }
        }
        drop(live);
        out
    }
}

fn add_named(map: &mut BTreeMap<String, u64>, name: String, v: u64) {
    let name = if map.contains_key(&name) || map.len() < MAX_NAMES { name } else { OTHER.to_string() };
    let e = map.entry(name).or_default();
    *e = e.saturating_add(v);
}

/// Names registered during init (pending), then sealed: read without a lock on the hot path.
#[derive(Debug, Default)]
struct Names {
    sealed: OnceLock<Vec<String>>,
    pending: Mutex<Vec<String>>,
}

impl Names {
    fn register(&self, name: String) -> i32 {
        let mut names = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = names.iter().position(|n| *n == name) {
            return i as i32;
        }
        if names.len() >= MAX_COUNTERS as usize {
            return wasmdp_abi::err::TOO_SMALL;
        }
        names.push(name);
        names.len() as i32 - 1
    }

    fn seal(&self) {
        let names = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        let _ = self.sealed.set(names);
    }

    fn sealed(&self) -> Option<&Vec<String>> {
        self.sealed.get()
    }
}

/// One instance's named counters.
#[derive(Debug)]
pub(crate) struct InstanceCounters {
    /// Names, registered during init (before any `counter_add` on the worker).
    names: Names,
    values: [AtomicU64; MAX_COUNTERS as usize],
    /// The instance's gauges.
    pub gauges: Gauges,
    owner: Weak<PluginCounters>,
}

/// One instance's gauges: named levels the plugin sets (at most `MAX_COUNTERS`, registered in init).
#[derive(Debug, Default)]
pub(crate) struct Gauges {
    names: Names,
    values: [AtomicI64; MAX_COUNTERS as usize],
}

impl Gauges {
    /// Registers `name` during init; its id, or `TOO_SMALL` past `MAX_COUNTERS`.
    pub(crate) fn register(&self, name: String) -> i32 {
        self.names.register(name)
    }

    /// Ends registration.
    pub(crate) fn seal(&self) {
        self.names.seal();
    }

    /// Sets gauge `id`; `NOT_FOUND` for an id not registered.
    #[inline]
    pub(crate) fn set(&self, id: i32, v: i64) -> i32 {
        let n = self.names.sealed().map_or(0, Vec::len);
        match usize::try_from(id) {
            Ok(i) if i < n => {
                self.values[i].store(v, Relaxed);
                0
            }
            _ => wasmdp_abi::err::NOT_FOUND,
        }
    }

    fn values(&self) -> Vec<(String, i64)> {
        let Some(names) = self.names.sealed() else { return Vec::new() };
        names.iter().enumerate().map(|(i, n)| (n.clone(), self.values[i].load(Relaxed))).collect()
    }
}

impl InstanceCounters {
    /// Registers `name` during init; returns its id, or `TOO_SMALL` when the instance has
    /// `MAX_COUNTERS` already.
    pub(crate) fn register(&self, name: String) -> i32 {
        self.names.register(name)
    }

    /// Ends registration (after init): from now on only values change.
    pub(crate) fn seal(&self) {
        self.names.seal();
        self.gauges.seal();
    }

    /// Adds `v` to counter `id` (saturating); `NOT_FOUND` for an id not registered.
    #[inline]
    pub(crate) fn add(&self, id: i32, v: u64) -> i32 {
        let n = self.names.sealed().map_or(0, Vec::len);
        match usize::try_from(id) {
            Ok(i) if i < n => {
                bump(&self.values[i], v);
                0
            }
            _ => wasmdp_abi::err::NOT_FOUND,
        }
    }

    fn values(&self) -> Vec<(String, u64)> {
        let Some(names) = self.names.sealed() else { return Vec::new() };
        names.iter().enumerate().map(|(i, n)| (n.clone(), self.values[i].load(Relaxed))).collect()
    }
}

impl Drop for InstanceCounters {
    fn drop(&mut self) {
        if let Some(owner) = self.owner.upgrade() {
            owner.retire(self);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_per_instance_and_survive_it() {
        let stream = Arc::new(PluginCounters::default());
        let a = stream.instance();
        assert_eq!(a.register("hits".into()), 0);
        for i in 1..MAX_COUNTERS as usize {
            assert_eq!(a.register(format!("c{i}")), i as i32);
        }
        assert_eq!(a.register("one too many".into()), wasmdp_abi::err::TOO_SMALL);
        a.seal();
        assert_eq!(a.add(0, 5), 0);
        assert_eq!(a.add(16, 1), wasmdp_abi::err::NOT_FOUND);
        // A second instance has a cap of its own, and the same name adds up.
        let b = stream.instance();
        assert_eq!(b.register("hits".into()), 0);
        assert_eq!(b.register("other".into()), 1);
        b.seal();
        b.add(0, 2);
        assert_eq!(stream.named()["hits"], 7);
        drop(a);
        assert_eq!(stream.named()["hits"], 7, "a dropped instance's counts stay");
        assert!(stream.named().contains_key("other"));
    }

    #[test]
    fn gauges_are_levels_of_the_live_instances() {
        let stream = Arc::new(PluginCounters::default());
        let a = stream.instance();
        assert_eq!(a.gauges.register("flows".into()), 0);
        a.seal();
        a.gauges.set(0, 10);
        a.gauges.set(0, 7);
        let b = stream.instance();
        b.gauges.register("flows".into());
        b.seal();
        b.gauges.set(0, -2);
        assert_eq!(stream.gauges()["flows"], 5, "the last values, summed over instances");
        assert_eq!(a.gauges.set(3, 1), wasmdp_abi::err::NOT_FOUND);
        drop(a);
        assert_eq!(stream.gauges()["flows"], -2, "a gone instance has no level");
        drop(b);
        assert_eq!(stream.gauges()["flows"], -2, "with none live, the last one's levels stay shown");
    }

    #[test]
    fn counters_saturate() {
        let stream = Arc::new(PluginCounters::default());
        let a = stream.instance();
        a.register("n".into());
        a.seal();
        a.add(0, u64::MAX - 1);
        a.add(0, 10);
        assert_eq!(stream.named()["n"], u64::MAX);
    }
}
