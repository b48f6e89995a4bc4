//! What every request reads: the dataplane's counters, reload figures and trigger, the taps; and
//! the error answer line every request may get.

use crate::reload::ReloadStats;
use crate::stats::StatsView;
use serde_json::json;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// What the commands read: counters (atomics the workers write), reload figures, the reload trigger.
pub struct State {
    /// The dataplane's counters.
    pub view: StatsView,
    /// Live reload figures.
    pub reloads: Arc<ReloadStats>,
    /// When forwarding started.
    pub start: Instant,
    /// Kernel variant.
    pub simd: String,
    /// Set to reload the config file (None: not watching one).
    pub reload: Option<Arc<AtomicBool>>,
    /// Each port's chain now (empty: no policy), refreshed by reloads.
    pub plugins: Arc<std::sync::Mutex<Vec<Vec<crate::reload::PluginShown>>>>,
    /// The packet pool (occupancy for the metrics).
    pub pool: Arc<crate::mbuf::Pool>,
    /// The ports' capture points (`capture`).
    pub taps: Arc<crate::capture::Taps>,
    /// The dataplane's stop flag: a capture ends when it is set.
    pub stop: Arc<AtomicBool>,
}

/// An error answer line.
pub fn error(msg: &str) -> String {
    format!("{}\n", json!({"ok": false, "error": msg}))
}
