//! The plugins' counters (shown in the stats) and their clock.
//!
//! Each instance has its own named counters ([`InstanceCounters`], at most `MAX_COUNTERS`, registered
//! in init): written only by the worker running the instance, with a plain load and store, no lock.
//! A stream's [`PluginCounters`] know the instances alive on it and keep the totals of those that
//! are gone, so the display sums by name across instances and reloads. Locks are taken only when an
//! instance is made or dropped, and by the display.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Instant;
use wasmdp_abi::MAX_COUNTERS;

/// Monotonic nanoseconds since the first call (the plugins' clock).
pub fn now_ns() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
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
    /// A policy is attached to the stream now.
    pub attached: AtomicBool,
    /// The plugin was disabled after too many failures.
    pub disabled: AtomicBool,
    /// Instances alive on the stream (usually one; two while a reload swaps them).
    live: Mutex<Vec<Weak<InstanceCounters>>>,
    /// Totals of the instances that are gone, by name.
    retired: Mutex<BTreeMap<String, u64>>,
}

/// Adds to a counter only the calling worker writes: a load and a store, saturating.
#[inline(always)]
pub(crate) fn bump(c: &AtomicU64, v: u64) {
    c.store(c.load(Relaxed).saturating_add(v), Relaxed);
}

impl PluginCounters {
    /// Counters for a new instance of the stream; they stay counted after the instance is gone.
    pub(crate) fn instance(self: &Arc<Self>) -> Arc<InstanceCounters> {
        let c = Arc::new(InstanceCounters {
            names: OnceLock::new(),
            pending: Mutex::default(),
            values: Default::default(),
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

fn add_named(map: &mut BTreeMap<String, u64>, name: String, v: u64) {
    let name = if map.contains_key(&name) || map.len() < MAX_NAMES { name } else { OTHER.to_string() };
    let e = map.entry(name).or_default();
    *e = e.saturating_add(v);
}

/// One instance's named counters.
#[derive(Debug)]
pub(crate) struct InstanceCounters {
    /// Names, registered during init (before any `counter_add` on the worker).
    names: OnceLock<Vec<String>>,
    pending: Mutex<Vec<String>>,
    values: [AtomicU64; MAX_COUNTERS as usize],
    owner: Weak<PluginCounters>,
}

impl InstanceCounters {
    /// Registers `name` during init; returns its id, or `TOO_SMALL` when the instance has
    /// `MAX_COUNTERS` already.
    pub(crate) fn register(&self, name: String) -> i32 {
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

    /// Ends registration (after init): from now on only values change.
    pub(crate) fn seal(&self) {
        let names = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        let _ = self.names.set(names);
    }

    /// Adds `v` to counter `id` (saturating); `NOT_FOUND` for an id not registered.
    #[inline]
    pub(crate) fn add(&self, id: i32, v: u64) -> i32 {
        let n = self.names.get().map_or(0, Vec::len);
        match usize::try_from(id) {
            Ok(i) if i < n => {
                bump(&self.values[i], v);
                0
            }
            _ => wasmdp_abi::err::NOT_FOUND,
        }
    }

    fn values(&self) -> Vec<(String, u64)> {
        let Some(names) = self.names.get() else { return Vec::new() };
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
