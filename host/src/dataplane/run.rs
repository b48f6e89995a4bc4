//! Running a built dataplane: start workers, show stats, stop on a signal or after a duration, account
//! for every buffer.

use super::Dataplane;
use crate::lcore;
use crate::stats::{self, Rates, RunFacts};
use serde_json::json;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long to run and what to show.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Stop after this long (None: until `stop` is set, e.g. by SIGINT).
    pub duration: Option<Duration>,
    /// Print port statistics this often.
    pub stats_period: Option<Duration>,
    /// Write the JSON report here at stop.
    pub stats_json: Option<PathBuf>,
    /// Print the final forward statistics.
    pub print_final: bool,
}

/// What a run left behind.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// The JSON report (also written to `stats_json`).
    pub json: serde_json::Value,
    /// Seconds forwarded.
    pub secs: f64,
    /// Buffers not returned to the pool.
    pub leaked: u64,
}

/// Runs until `stop` is set or the duration has passed, then stops every worker and checks the pool.
pub fn run(dp: Dataplane, opts: &RunOptions, stop: Arc<AtomicBool>) -> anyhow::Result<RunReport> {
    let Dataplane { pool, simd, workers, view, mut unpolled, injects } = dp;
    let info = pool.info();
    tracing::info!(simd = %simd, buffers = info.size, stride = info.stride, backing = info.backing.name(), workers = workers.len(), streams = view.streams.len(), "starting");
    let start = Instant::now();
    let handles = lcore::spawn_all(workers, &pool, &stop);
    let mut rates = Rates::new(view.ports.len());
    let mut next_show = opts.stats_period.map(|p| start + p);
    loop {
        if stop.load(Relaxed) || opts.duration.is_some_and(|d| start.elapsed() >= d) {
            break;
        }
        if let (Some(at), Some(period)) = (next_show, opts.stats_period) {
            if Instant::now() >= at {
                stats::print_periodic(&view, &mut rates);
                next_show = Some(at + period);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    stop.store(true, Relaxed);
    let secs = start.elapsed().as_secs_f64();
    let mut in_flight = 0;
    for h in handles {
        let exit = h.join().map_err(|_| anyhow::anyhow!("a worker thread panicked"))?;
        in_flight += exit.in_flight;
    }
    let mut cache = pool.cache();
    in_flight += unpolled.iter_mut().map(|q| q.drain(&mut cache)).sum::<u64>();
    for q in &injects {
        while let Some(p) = q.pop() {
            cache.free(p);
            in_flight += 1;
        }
    }
    drop(cache);
    let leaked = (pool.capacity() - pool.available()) as u64;
    if leaked != 0 {
        tracing::error!(leaked, "buffers not returned to the pool at stop");
    }
    if opts.print_final {
        stats::print_final(&view, secs);
    }
    let facts = RunFacts {
        duration_s: secs,
        simd: simd.name().into(),
        in_flight,
        leaked_buffers: leaked,
        pool: json!({"size": info.size, "stride": info.stride, "backing": info.backing.name()}),
    };
    let json = stats::report_json(&view, &facts);
    if let Some(path) = &opts.stats_json {
        let text = serde_json::to_string_pretty(&json)?;
        std::fs::write(path, text + "\n").map_err(|e| anyhow::anyhow!("--stats-json {}: {e}", path.display()))?;
    }
    Ok(RunReport { json, secs, leaked })
}
