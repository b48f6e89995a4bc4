//! The poll loop: worker threads pinned to cores, each polling its streams without sleeping.

mod stream;

pub use stream::{Retry, Stream, StreamParts};

use crate::mbuf::Pool;
use crate::reload::{Control, Slot, WorkerLink};
use std::sync::atomic::{
    AtomicBool,
    Ordering::{Relaxed, Release},
};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::Instant;

/// The streams one worker thread polls, and the core it runs on.
pub struct Worker {
    /// Core to pin to (None: not pinned).
    pub lcore: Option<usize>,
    /// Streams, polled in turn.
    pub streams: Vec<Stream>,
    /// Each stream's reload mailbox (same order).
    pub slots: Vec<Arc<Slot>>,
    /// The generation word of live reloads.
    pub control: Arc<Control>,
    /// What this worker reports back to the control thread.
    pub link: Arc<WorkerLink>,
}

impl Worker {
    /// A worker with no streams yet.
    pub fn new(lcore: Option<usize>, control: Arc<Control>) -> Worker {
        Worker { lcore, streams: Vec::new(), slots: Vec::new(), control, link: Arc::default() }
    }

    /// Adds a stream and its mailbox.
    pub fn add(&mut self, s: Stream, slot: Arc<Slot>) {
        self.streams.push(s);
        self.slots.push(slot);
    }

    /// Takes the new generation: each stream takes its update, hands back what it replaced.
    fn switch(&mut self, generation: u64) {
        for (s, slot) in self.streams.iter_mut().zip(&self.slots) {
            let update = slot.next.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(u) = update {
                let old = s.apply(u);
                *slot.old.lock().unwrap_or_else(|e| e.into_inner()) = old;
            }
        }
        self.link.seen.store(generation, Release);
    }
}

/// What a worker reports when it stops.
#[derive(Debug, Clone, Copy, Default)]
pub struct WorkerExit {
    /// Packets found waiting in the RX queues it owns at stop (freed then).
    pub in_flight: u64,
    /// Whether pinning to the requested core succeeded.
    pub pinned: bool,
}

/// Starts every worker. `stop` ends the loops; after all have stopped polling (a barrier, so that no
/// one still transmits into a queue being drained), each drains its RX queues.
pub fn spawn_all(workers: Vec<Worker>, pool: &Arc<Pool>, stop: &Arc<AtomicBool>) -> Vec<JoinHandle<WorkerExit>> {
    let barrier = Arc::new(Barrier::new(workers.len()));
    workers
        .into_iter()
        .map(|w| {
            let (pool, stop, barrier) = (pool.clone(), stop.clone(), barrier.clone());
            let name = format!("wasmdp-lcore{}", w.lcore.map(|c| c.to_string()).unwrap_or_default());
            std::thread::Builder::new()
                .name(name)
                .spawn(move || run(w, &pool, &stop, &barrier))
                .expect("spawning a worker thread")
        })
        .collect()
}

fn run(mut w: Worker, pool: &Arc<Pool>, stop: &AtomicBool, barrier: &Barrier) -> WorkerExit {
    let pinned = w.lcore.is_some_and(|id| core_affinity::set_for_current(core_affinity::CoreId { id }));
    if w.lcore.is_some() && !pinned {
        tracing::warn!(lcore = ?w.lcore, "could not pin the worker thread; running unpinned");
    }
    let mut cache = pool.cache();
    for s in &mut w.streams {
        s.seed(&mut cache);
    }
    let mut seen = w.control.word();
    let mut gap_from: Option<Instant> = None;
    while !stop.load(Relaxed) {
        for s in &mut w.streams {
            s.poll(&mut cache);
        }
        let word = w.control.word();
        if word != seen {
            seen = on_control(&mut w, word, seen, &mut gap_from);
        }
    }
    barrier.wait();
    let in_flight = w.streams.iter_mut().map(|s| s.drain(&mut cache)).sum();
    WorkerExit { in_flight, pinned }
}

/// The slow path of the loop, taken only while a reload is prepared or published: times the gaps
/// between loops (the report's "longest gap") and switches to a published generation. Returns the
/// word the worker has now seen.
#[cold]
fn on_control(w: &mut Worker, word: u64, seen: u64, gap_from: &mut Option<Instant>) -> u64 {
    let now = Instant::now();
    if let Some(t) = gap_from.replace(now) {
        w.link.max_gap_ns.fetch_max(now.duration_since(t).as_nanos() as u64, Relaxed);
    }
    if word & 1 == 1 || word >> 1 == seen >> 1 {
        return seen;
    }
    w.switch(word >> 1);
    let done = Instant::now();
    w.link.max_gap_ns.fetch_max(done.duration_since(now).as_nanos() as u64, Relaxed);
    *gap_from = None;
    word
}
