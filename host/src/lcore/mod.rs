//! The poll loop: worker threads pinned to cores, each polling its streams without sleeping.

mod stream;

pub use stream::{Retry, Stream, StreamParts};

use crate::mbuf::Pool;
use crate::reload::{Control, Slot, WorkerLink};
use std::sync::atomic::{
    AtomicBool, AtomicUsize,
    Ordering::{Acquire, Relaxed, Release},
};
use std::sync::Arc;
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
                let gone = s.apply(u);
                if !gone.is_empty() {
                    slot.old.lock().unwrap_or_else(|e| e.into_inner()).extend(gone);
                }
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

/// Starts every worker. `stop` ends the loops; after all have stopped polling (so that no one still
/// transmits into a queue being drained), each drains its RX queues. If a thread cannot be
/// started, the ones started are stopped and the error returned.
pub fn spawn_all(
    workers: Vec<Worker>,
    pool: &Arc<Pool>,
    stop: &Arc<AtomicBool>,
) -> std::io::Result<Vec<JoinHandle<WorkerExit>>> {
    let polling = Arc::new(AtomicUsize::new(workers.len()));
    let total = workers.len();
    let mut handles = Vec::with_capacity(total);
    for mut w in workers {
        for s in &mut w.streams {
            s.set_stop(stop.clone());
        }
        let (pool, stop2, polling2) = (pool.clone(), stop.clone(), polling.clone());
        let name = format!("wasmdp-lcore{}", w.lcore.map(|c| c.to_string()).unwrap_or_default());
        match std::thread::Builder::new().name(name).spawn(move || run(w, &pool, &stop2, &polling2)) {
            Ok(h) => handles.push(h),
            Err(e) => {
                stop.store(true, Relaxed);
                polling.fetch_sub(total - handles.len(), Release);
                for h in handles {
                    let _ = h.join();
                }
                return Err(e);
            }
        }
    }
    Ok(handles)
}

// Never inlined: a profiler restricted to this function (callgrind's `--toggle-collect`) sees the
// worker loop alone, which is how `wasmdp bench --instructions` counts instructions per packet.
#[inline(never)]
fn run(mut w: Worker, pool: &Arc<Pool>, stop: &AtomicBool, polling: &AtomicUsize) -> WorkerExit {
    let pinned = w.lcore.is_some_and(|id| core_affinity::set_for_current(core_affinity::CoreId { id }));
    if w.lcore.is_some() && !pinned {
        tracing::warn!(lcore = ?w.lcore, "could not pin the worker thread; running unpinned");
    }
    let mut cache = pool.cache();
    for s in &mut w.streams {
        s.rehome();
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
            seen = on_control(&mut w, word, &mut gap_from);
        }
    }
    // Wait until no worker polls any more before draining.
    polling.fetch_sub(1, Release);
    while polling.load(Acquire) != 0 {
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    let in_flight = w.streams.iter_mut().map(|s| s.drain(&mut cache)).sum();
    WorkerExit { in_flight, pinned }
}

/// What a worker keeps as its "seen" word while a reload is being prepared: no real word equals it,
/// so the worker comes back here on every loop to time the gaps.
const PREPARING: u64 = u64::MAX;

/// The slow path of the loop, taken only while a reload is prepared or published: times the gaps
/// between loops (the report's "longest gap") and switches to a published generation. Returns the
/// word the worker compares the control word with from now on.
#[cold]
fn on_control(w: &mut Worker, word: u64, gap_from: &mut Option<Instant>) -> u64 {
    let now = Instant::now();
    if let Some(t) = gap_from.replace(now) {
        w.link.max_gap_ns.fetch_max(now.duration_since(t).as_nanos() as u64, Relaxed);
    }
    let generation = word >> 1;
    if generation != w.link.seen.load(Relaxed) {
        w.switch(generation);
        w.link.max_gap_ns.fetch_max(now.elapsed().as_nanos() as u64, Relaxed);
    }
    if word & 1 == 1 {
        return PREPARING;
    }
    // The reload is over (published or not): the next one times its own gaps from its start.
    *gap_from = None;
    word
}
