//! The control thread: watches the config file and every plugin file it names (their folders, so
//! that editors that write a new file and rename it over the old one are seen), debounces bursts of
//! events, also reloads on SIGHUP, and reports each reload.
//!
//! A change counts when it names a watched file or a name in its folder that the file is a link
//! through: in a Kubernetes ConfigMap volume `config.yaml` points to `..data/config.yaml`, and an
//! update renames a new `..data` link over the old one, touching neither `config.yaml` nor its
//! target's name. Other names in the folders do not count (a capture or pcap file written there
//! all the time must not keep the debounce from ever ending). The files' identities (inode,
//! modification time and size, through symlinks) decide whether anything changed, so a swap made
//! of several renames and removals reloads once.

use super::plane::{Outcome, Plane};
use crate::config;
use notify::{Event, EventKind, RecursiveMode, Watcher};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Quiet time after the last file event before reloading: editors write in several steps.
const DEBOUNCE: Duration = Duration::from_millis(15);

/// Starts the control thread for the config file `path`; it ends when `stop` is set. Setting `hup`
/// (as SIGHUP does, and the control socket's `reload`) reloads the file even if it did not change.
pub fn spawn(
    plane: Plane,
    path: PathBuf,
    stop: Arc<AtomicBool>,
    hup: Arc<AtomicBool>,
) -> anyhow::Result<JoinHandle<()>> {
    signal_hook::flag::register(signal_hook::consts::SIGHUP, hup.clone())?;
    let (tx, rx) = mpsc::channel();
    let watcher = notify::recommended_watcher(move |e: notify::Result<Event>| {
        if let Ok(e) = e {
            let _ = tx.send((e, Instant::now()));
        }
    })?;
    let mut ctl = ControlThread {
        plane,
        path,
        watcher,
        watched_dirs: HashSet::new(),
        files: HashSet::new(),
        links: HashSet::new(),
        last_stamp: HashMap::new(),
    };
    ctl.rewatch();
    ctl.last_stamp = ctl.stamps();
    Ok(std::thread::Builder::new().name("wasmdp-control".into()).spawn(move || ctl.run(&rx, &stop, &hup))?)
}

struct ControlThread {
    plane: Plane,
    path: PathBuf,
    watcher: notify::RecommendedWatcher,
    watched_dirs: HashSet<PathBuf>,
    files: HashSet<PathBuf>,
    /// Names the files are links through (`..data` of a ConfigMap volume).
    links: HashSet<PathBuf>,
    /// The identity of each watched file as it was just before the last reload read it: one change
    /// can arrive as several events (a rename is reported for both names and as a pair), possibly
    /// further apart than the debounce on a loaded machine; a file whose identity did not move is
    /// the same change. Taken before the read, never after: an edit saved while a reload runs
    /// must look like a change afterwards.
    last_stamp: HashMap<PathBuf, Stamp>,
}

/// What identifies a version of a file: inode, modification time, size (None: missing).
type Stamp = Option<(u64, i128, u64)>;

fn stamp(p: &Path) -> Stamp {
    let m = std::fs::metadata(p).ok()?;
    let mtime = m.modified().ok()?.duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as i128).unwrap_or(0);
    #[cfg(unix)]
    let ino = std::os::unix::fs::MetadataExt::ino(&m);
    #[cfg(not(unix))]
    let ino = 0;
    Some((ino, mtime, m.len()))
}

/// `p` with its folder made canonical (the file itself may not exist during a rename).
fn normal(p: &Path) -> PathBuf {
    let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    p.file_name().map(|n| dir.join(n)).unwrap_or(dir)
}

fn relevant(kind: &EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode, ModifyKind};
    match kind {
        EventKind::Create(_) | EventKind::Remove(_) => true,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Modify(_) => true,
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        _ => false,
    }
}

impl ControlThread {
    fn stamps(&self) -> HashMap<PathBuf, Stamp> {
        self.files.iter().map(|f| (f.clone(), stamp(f))).collect()
    }

    /// Whether `p` is a watched file or a name one of them is a link through.
    fn names(&self, p: &Path) -> bool {
        let p = normal(p);
        self.files.contains(&p) || self.links.contains(&p)
    }

    /// Watches the folders of the config file and of every plugin file of the running config.
    fn rewatch(&mut self) {
        let mut files = vec![self.path.clone()];
        let policies = self.plane.cfg.ports.iter().flat_map(|p| p.policy.links());
        files.extend(
            policies.filter(|pc| crate::plugin::native::named(&pc.plugin).is_none()).map(|pc| pc.plugin.clone()),
        );
        self.files = files.iter().map(|f| normal(f)).collect();
        // A file that is a link whose target starts with another name of its folder (`..data/x`).
        self.links = self
            .files
            .iter()
            .filter_map(|f| {
                let target = std::fs::read_link(f).ok().filter(|t| t.is_relative())?;
                let first = target.components().next()?;
                Some(f.parent()?.join(first))
            })
            .collect();
        for f in &self.files {
            let Some(dir) = f.parent() else { continue };
            if self.watched_dirs.insert(dir.to_path_buf()) {
                if let Err(e) = self.watcher.watch(dir, RecursiveMode::NonRecursive) {
                    tracing::warn!(dir = %dir.display(), error = %e, "cannot watch for changes");
                }
            }
        }
    }

    fn run(&mut self, rx: &mpsc::Receiver<(Event, Instant)>, stop: &AtomicBool, hup: &AtomicBool) {
        let mut pending: Option<Instant> = None;
        let mut last_event = Instant::now();
        while !stop.load(Relaxed) {
            match rx.recv_timeout(Duration::from_millis(5)) {
                Ok((e, at)) => {
                    if relevant(&e.kind) && e.paths.iter().any(|p| self.names(p)) {
                        pending.get_or_insert(at);
                        last_event = Instant::now();
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
            let forced = hup.swap(false, Relaxed);
            if forced {
                tracing::info!("SIGHUP (or the control socket): reloading {}", self.path.display());
                pending.get_or_insert_with(Instant::now);
            }
            if let Some(at) = pending {
                if last_event.elapsed() >= DEBOUNCE || forced {
                    pending = None;
                    let now = self.stamps();
                    if forced || now != self.last_stamp {
                        self.last_stamp = now;
                        self.reload(at, stop);
                    }
                }
            }
        }
    }

    fn reload(&mut self, event_at: Instant, stop: &AtomicBool) {
        if stop.load(Relaxed) {
            tracing::info!("the dataplane is stopping: change to {} not applied", self.path.display());
            return;
        }
        let stats = self.plane.stats.clone();
        self.plane.control.begin();
        for l in &self.plane.links {
            l.max_gap_ns.store(0, Relaxed);
        }
        let result = config::load(&self.path)
            .map_err(anyhow::Error::from)
            .and_then(|cfg| self.plane.reload(cfg, event_at, stop));
        self.plane.control.end();
        let gap_us = self.plane.links.iter().map(|l| l.max_gap_ns.load(Relaxed)).max().unwrap_or(0) / 1000;
        stats.last_max_gap_us.store(gap_us, Relaxed);
        stats.max_gap_us.fetch_max(gap_us, Relaxed);
        match result {
            Ok(Outcome::Switched { lagging, .. }) if stop.load(Relaxed) && lagging > 0 => {
                tracing::info!("the dataplane stopped during the reload of {}: not applied", self.path.display());
            }
            Ok(Outcome::Switched { lines, us, lagging }) => {
                stats.applied.fetch_add(1, Relaxed);
                stats.last_us.store(us, Relaxed);
                stats.max_us.fetch_max(us, Relaxed);
                let generation = stats.generation.load(Relaxed);
                if lagging > 0 {
                    tracing::warn!(generation, lagging,
                        "reload published, but {lagging} worker(s) had not switched after 5 s (stalled?); they switch at their next loop");
                }
                tracing::info!(generation, switch_ms = us as f64 / 1e3, max_gap_us = gap_us, "reload applied");
                for l in lines {
                    tracing::info!(generation, "  {l}");
                }
                self.plane.publish_plugins();
                self.rewatch();
                // Files the new config names that the old one did not: stamped now, a moment after
                // the reload read them (their identity before the read is not known); the files
                // both name keep the stamps taken before the read.
                let files = &self.files;
                self.last_stamp.retain(|f, _| files.contains(f));
                for f in files {
                    self.last_stamp.entry(f.clone()).or_insert_with(|| stamp(f));
                }
            }
            Ok(Outcome::Unchanged) => {
                stats.applied.fetch_add(1, Relaxed);
                tracing::info!(
                    "reload: {} is valid and equal to the running configuration; nothing to swap",
                    self.path.display()
                );
            }
            Err(e) => {
                *stats.last_error.lock().unwrap_or_else(|p| p.into_inner()) = format!("{e:#}");
                stats.rejected.fetch_add(1, Relaxed);
                tracing::error!("reload rejected, the running configuration stays: {e:#}");
            }
        }
    }
}
