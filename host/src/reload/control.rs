//! What the control thread and the workers share: the generation word, one slot per stream, one
//! link per worker, and the reload counters.

use crate::engines::EngineFn;
use crate::offload::TxOffloads;
use crate::plugin::{ChainPlan, Runner};
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

/// What a stream switches to. `policy: None` keeps the stream's chain as it is; `Some(plan)` makes
/// the chain the plan describes (keeping the links it says to keep).
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
    /// The new policy chain, if it changes.
    pub policy: Option<ChainPlan>,
}

impl Slot {
    /// Puts `update` in the mailbox. An update the worker has not taken yet (it was slow to switch)
    /// is not lost: without a new update it stays, a new update that keeps the policy keeps the
    /// policy change of the one it replaces, and a new chain plan is composed with the pending one
    /// (its runners that the new plan does not keep go to `old`, to be dropped).
    pub fn offer(&self, update: Option<StreamUpdate>) {
        let mut next = self.next.lock().unwrap_or_else(|e| e.into_inner());
        match (update, next.take()) {
            (None, pending) => *next = pending,
            (Some(mut u), Some(pending)) => {
                u.policy = match (pending.policy, u.policy.take()) {
                    (p, None) => p,
                    (None, n) => n,
                    // The new plan was made against the chain the pending one leads to.
                    (Some(p), Some(n)) => {
                        let (plan, unused) = p.then(n);
                        self.old.lock().unwrap_or_else(|e| e.into_inner()).extend(unused);
                        Some(plan)
                    }
                };
                *next = Some(u);
            }
            (Some(u), None) => *next = Some(u),
        }
    }
}

/// One stream's mailbox: the update to take, and where the runner it replaced goes back (to be
/// dropped on the control thread, off the hot path).
#[derive(Default)]
pub struct Slot {
    /// Filled by the control thread before it publishes.
    pub next: Mutex<Option<StreamUpdate>>,
    /// Filled by the worker when it switched.
    pub old: Mutex<Vec<Runner>>,
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
    /// Why the last rejected reload was rejected (set before `rejected` is counted).
    pub last_error: std::sync::Mutex<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(burst_size: usize) -> StreamUpdate {
        fn noop(_: &mut crate::engines::FwdCtx<'_>, _: &mut crate::mbuf::Burst) {}
        StreamUpdate { run: noop, engine: "io", needs_rx: true, burst_size, tx: TxOffloads::default(), policy: None }
    }

    #[test]
    fn an_update_a_slow_worker_has_not_taken_is_not_lost() {
        let slot = Slot::default();
        let mut first = update(16);
        first.policy = Some(ChainPlan::none());
        slot.offer(Some(first));
        // The next reload changes nothing for this stream: the pending update stays.
        slot.offer(None);
        let taken = slot.next.lock().unwrap().take().unwrap();
        assert_eq!(taken.burst_size, 16);
        assert!(taken.policy.is_some_and(|p| p.links.is_empty()), "the policy change survives");
        // A newer update replaces the settings but keeps a policy change it does not make itself.
        let mut first = update(16);
        first.policy = Some(ChainPlan::none());
        slot.offer(Some(first));
        slot.offer(Some(update(64)));
        let taken = slot.next.lock().unwrap().take().unwrap();
        assert_eq!(taken.burst_size, 64);
        assert!(taken.policy.is_some_and(|p| p.links.is_empty()));
    }

    #[test]
    fn two_pending_chain_plans_compose() {
        use crate::plugin::LinkPlan::Keep;
        let slot = Slot::default();
        let names =
            |p: &ChainPlan| p.links.iter().map(|(n, l)| (n.to_string(), matches!(l, Keep(_)))).collect::<Vec<_>>();
        // The first reload reorders [a, b, c] to [c, a]; the second, against [c, a], keeps a then c.
        let mut first = update(16);
        first.policy = Some(ChainPlan { links: vec![("c".into(), Keep(2)), ("a".into(), Keep(0))] });
        slot.offer(Some(first));
        let mut second = update(16);
        second.policy = Some(ChainPlan { links: vec![("a".into(), Keep(1)), ("c".into(), Keep(0))] });
        slot.offer(Some(second));
        let taken = slot.next.lock().unwrap().take().unwrap().policy.unwrap();
        assert_eq!(names(&taken), [("a".to_string(), true), ("c".to_string(), true)]);
        let at: Vec<usize> = taken.links.iter().map(|(_, l)| if let Keep(i) = l { *i } else { 99 }).collect();
        assert_eq!(at, [0, 2], "indexes of the running chain [a, b, c]");
    }
}
