//! The plugins' counters (shown in the stats) and their clock.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

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
    /// Calls that trapped (including timeouts).
    pub traps: AtomicU64,
    /// Calls of `wasmdp_on_burst` that returned nonzero.
    pub errors: AtomicU64,
    /// Calls stopped at the deadline.
    pub timeouts: AtomicU64,
    /// Bursts handled by a sticky decision without a call.
    pub sticky: AtomicU64,
    /// A policy is attached to the stream now.
    pub attached: std::sync::atomic::AtomicBool,
    names: Mutex<Vec<String>>,
    values: [AtomicU64; wasmdp_abi::MAX_COUNTERS as usize],
}

/// Adds to a counter only the calling worker writes: a load and a store.
pub(crate) fn bump(c: &AtomicU64, v: u64) {
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
