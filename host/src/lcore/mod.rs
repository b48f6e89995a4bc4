//! The poll loop: worker threads pinned to cores, each polling its streams without sleeping.

mod stream;

pub use stream::{Retry, Stream, StreamParts};

use crate::mbuf::Pool;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;

/// The streams one worker thread polls, and the core it runs on.
pub struct Worker {
    /// Core to pin to (None: not pinned).
    pub lcore: Option<usize>,
    /// Streams, polled in turn.
    pub streams: Vec<Stream>,
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
    while !stop.load(Relaxed) {
        for s in &mut w.streams {
            s.poll(&mut cache);
        }
    }
    barrier.wait();
    let in_flight = w.streams.iter_mut().map(|s| s.drain(&mut cache)).sum();
    WorkerExit { in_flight, pinned }
}
