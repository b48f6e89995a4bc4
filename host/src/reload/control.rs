//! What the control thread and the workers share: the generation word, one slot per stream, one
//! link per worker, and the reload counters.

use crate::engines::EngineFn;
use crate::offload::TxOffloads;
use crate::plugin::Runner;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// The generation word: `generation << 1 | preparing`.
#[derive(Debug, Default)]
pub struct Control {
    word: AtomicU64,
}

impl Control {
    /// The current word (one relaxed load: what a worker reads per loop).
    #[inline(always)]
    pub fn word(&self) -> u64 {
        self.word.load(Ordering::Relaxed)
    }

    /// Marks a reload as being prepared (workers start timing their loops).
    pub fn begin(&self) {
        self.word.fetch_or(1, Ordering::Release);
    }

    /// Ends a preparation that published nothing.
    pub fn end(&self) {
        self.word.fetch_and(!1, Ordering::Release);
    }

    /// Publishes a new generation (the slots were filled before); returns it.
    pub fn publish(&self) -> u64 {
        let w = self.word.load(Ordering::Relaxed);
        let next = ((w >> 1) + 1) << 1;
        self.word.store(next, Ordering::Release);
        next >> 1
    }
}

/// What a stream switches to. `policy: None` keeps the stream's runner; `Some(x)` replaces it with x.
pub struct StreamUpdate {
    /// Engine function (the native path, or the policy's fallback).
    pub run: EngineFn,
    /// Engine name, for logs.
    pub engine: &'static str,
    /// Whether the engine receives.
    pub needs_rx: bool,
    /// Packets per burst.
    pub burst_size: usize,
    /// TX port offloads.
    pub tx: TxOffloads,
    /// The new policy, if it changes.
    pub policy: Option<Option<Runner>>,
}

/// One stream's mailbox: the update to take, and where the runner it replaced goes back (to be
/// dropped on the control thread, off the hot path).
#[derive(Default)]
pub struct Slot {
    /// Filled by the control thread before it publishes.
    pub next: Mutex<Option<StreamUpdate>>,
    /// Filled by the worker when it switched.
    pub old: Mutex<Option<Runner>>,
}

/// What a worker reports to the control thread.
#[derive(Debug, Default)]
pub struct WorkerLink {
    /// The last generation it switched to.
    pub seen: AtomicU64,
    /// Longest gap between two of its loops while a reload was prepared or applied, in ns.
    pub max_gap_ns: AtomicU64,
}

/// Reload figures for the stats.
#[derive(Debug, Default)]
pub struct ReloadStats {
    /// File changes (or SIGHUPs) that validated, including those equal to the running configuration.
    pub applied: AtomicU64,
    /// Changes refused; the running configuration stayed.
    pub rejected: AtomicU64,
    /// The current generation (0: the configuration the dataplane started with).
    pub generation: AtomicU64,
    /// For the last applied reload that switched something: microseconds from the file event to
    /// every worker switched.
    pub last_us: AtomicU64,
    /// For the last reload: the longest gap between two loops of a worker, in microseconds.
    pub last_max_gap_us: AtomicU64,
    /// The longest event-to-switched time of any reload so far, in microseconds.
    pub max_us: AtomicU64,
    /// The longest gap between two loops of a worker during any reload so far, in microseconds.
    pub max_gap_us: AtomicU64,
}
