//! Running a built dataplane: start workers (and the control thread that reloads the config file),
//! show stats, stop on a signal or after a duration, account for every buffer.

use super::Dataplane;
use crate::lcore::{self, WorkerExit};
use crate::mbuf::Pool;
use crate::ports::{Inject, RxQueue};
use crate::reload::ReloadStats;
use crate::simd::Simd;
use crate::stats::{self, Rates, RunFacts, StatsView};
use serde_json::json;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::thread::JoinHandle;
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
    /// Watch this config file (and its plugins) and reload live on change or SIGHUP.
    pub watch: Option<PathBuf>,
    /// Serve the control socket here (docs/CONTROL.md; None: no socket).
    pub control: Option<PathBuf>,
    /// Serve Prometheus metrics on this address (None: no metrics).
    pub metrics: Option<std::net::SocketAddr>,
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

/// A dataplane that is forwarding.
pub struct Running {
    /// Counters, readable while it runs.
    pub view: StatsView,
    /// Live reload figures.
    pub reloads: Arc<ReloadStats>,
    /// Set to stop.
    pub stop: Arc<AtomicBool>,
    start: Instant,
    pool: Arc<Pool>,
    simd: Simd,
    workers: Vec<JoinHandle<WorkerExit>>,
    control: Option<JoinHandle<()>>,
    socket: Option<JoinHandle<()>>,
    metrics: Option<JoinHandle<()>>,
    unpolled: Vec<Box<dyn RxQueue>>,
    injects: Vec<Arc<Inject>>,
}

/// Starts the workers, and the control thread when `opts.watch` names the config file.
pub fn start(dp: Dataplane, opts: &RunOptions, stop: Arc<AtomicBool>) -> anyhow::Result<Running> {
    let Dataplane { pool, simd, workers, view, unpolled, injects, plane, taps } = dp;
    let info = pool.info();
    tracing::info!(simd = %simd, buffers = info.size, stride = info.stride, backing = info.backing.name(), workers = workers.len(), streams = view.streams.len(), "starting");
    let reloads = plane.stats.clone();
    let hup = Arc::new(AtomicBool::new(false));
    plane.publish_plugins();
    let plugins = plane.published.clone();
    let control = match &opts.watch {
        Some(path) => Some(crate::reload::spawn_watcher(plane, path.clone(), stop.clone(), hup.clone())?),
        None => None,
    };
    let start = Instant::now();
    let state = Arc::new(crate::control::State {
        view: view.clone(),
        reloads: reloads.clone(),
        start,
        simd: simd.name().into(),
        reload: opts.watch.is_some().then_some(hup),
        plugins,
        pool: pool.clone(),
        taps,
        stop: stop.clone(),
    });
    let metrics = match opts.metrics {
        Some(addr) => Some(crate::control::metrics::spawn(addr, state.clone(), stop.clone())?),
        None => None,
    };
    let socket = match &opts.control {
        Some(path) => {
            match crate::control::spawn(path.clone(), state, stop.clone()) {
                Ok(h) => Some(h),
                // Two dataplanes started at once both find the default path free: the later one
                // runs without a socket rather than not at all.
                Err(e) if *path == crate::control::default_path() => {
                    tracing::warn!("{e:#}; running without a control socket (set control.socket)");
                    None
                }
                Err(e) => return Err(e),
            }
        }
        None => None,
    };
    let workers =
        lcore::spawn_all(workers, &pool, &stop).map_err(|e| anyhow::anyhow!("starting a worker thread: {e}"))?;
    Ok(Running { view, reloads, stop, start, pool, simd, workers, control, socket, metrics, unpolled, injects })
}

impl Running {
    /// Stops (if not yet), joins every thread, drains the queues, checks the pool, and reports.
    pub fn finish(mut self, opts: &RunOptions) -> anyhow::Result<RunReport> {
        self.stop.store(true, Relaxed);
        let secs = self.start.elapsed().as_secs_f64();
        let mut in_flight = 0;
        for h in self.workers.drain(..) {
            in_flight += h.join().map_err(|_| anyhow::anyhow!("a worker thread panicked"))?.in_flight;
        }
        if let Some(c) = self.control.take() {
            join_control(c)?;
        }
        if let Some(s) = self.socket.take() {
            s.join().map_err(|_| anyhow::anyhow!("the control socket thread panicked"))?;
        }
        if let Some(m) = self.metrics.take() {
            m.join().map_err(|_| anyhow::anyhow!("the metrics thread panicked"))?;
        }
        // Pinned maps to their files, now that no instance writes to them (the control thread,
        // the last to run a policy, is joined).
        for why in self.view.maps.iter().flat_map(|m| m.save_pins()) {
            tracing::error!("{why}: the map's entries are not saved");
        }
        let mut cache = self.pool.cache();
        in_flight += self.unpolled.iter_mut().map(|q| q.drain(&mut cache)).sum::<u64>();
        in_flight += self.injects.iter().map(|q| q.drain(&mut cache)).sum::<u64>();
        drop(cache);
        let leaked = (self.pool.capacity() - self.pool.available()) as u64;
        if leaked != 0 {
            tracing::error!(leaked, "buffers not returned to the pool at stop");
        }
        let info = self.pool.info();
        let facts = RunFacts {
            duration_s: secs,
            simd: self.simd.name().into(),
            in_flight,
            leaked_buffers: leaked,
            pool: json!({"size": info.size, "stride": info.stride, "backing": info.backing.name()}),
        };
        let json = stats::report_json(&self.view, &facts);
        if let Some(path) = &opts.stats_json {
            let text = serde_json::to_string_pretty(&json)?;
            std::fs::write(path, text + "\n").map_err(|e| anyhow::anyhow!("--stats-json {}: {e}", path.display()))?;
        }
        // After the report: stdout may be a pipe or terminal nobody reads any more.
        if opts.print_final {
            stats::print_final(&self.view, secs);
        }
        Ok(RunReport { json, secs, leaked })
    }
}

/// Waits for the control thread to notice the stop, but not for a compilation it may be in the
/// middle of: after [`CONTROL_GRACE`] it is left to finish alone (it holds no packet buffers).
fn join_control(c: JoinHandle<()>) -> anyhow::Result<()> {
    let until = Instant::now() + CONTROL_GRACE;
    while !c.is_finished() {
        if Instant::now() >= until {
            tracing::warn!("the control thread is still busy (compiling a plugin for a reload); not waiting for it");
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    c.join().map_err(|_| anyhow::anyhow!("the control thread panicked"))
}

/// How long a stop waits for the control thread.
const CONTROL_GRACE: Duration = Duration::from_millis(100);

/// Runs until `stop` is set or the duration has passed, showing stats, then stops and reports.
pub fn run(dp: Dataplane, opts: &RunOptions, stop: Arc<AtomicBool>) -> anyhow::Result<RunReport> {
    let running = start(dp, opts, stop)?;
    let mut rates = Rates::new(running.view.ports.len());
    let mut next_show = opts.stats_period.map(|p| running.start + p);
    loop {
        if running.stop.load(Relaxed) || opts.duration.is_some_and(|d| running.start.elapsed() >= d) {
            break;
        }
        if let (Some(at), Some(period)) = (next_show, opts.stats_period) {
            if Instant::now() >= at {
                stats::print_periodic(&running.view, &mut rates);
                next_show = Some(at + period);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    running.finish(opts)
}
