//! What the socket drivers (`af_packet`, `af_xdp`) count outside the streams: frames that arrived but
//! cannot be received (`rx_oversize`, logged at most once a second), and when to read the kernel's
//! own drop counters again (every 100 ms, looking at the clock only every 1024 calls).

use crate::stats::PortStats;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the socket's drop counters are read.
const STATS_EVERY: Duration = Duration::from_millis(100);
/// The clock is looked at every this many calls.
const STATS_CHECK_CALLS: u32 = 1024;

/// One queue's count of unreceivable frames and its rate-limited warning.
pub(crate) struct Unfit {
    driver: &'static str,
    port: u16,
    queue: u16,
    stats: Arc<PortStats>,
    /// Frames since the last warning, and when that was.
    since: (u64, Option<Instant>),
}

impl Unfit {
    pub(crate) fn new(driver: &'static str, port: u16, queue: u16, stats: Arc<PortStats>) -> Unfit {
        Unfit { driver, port, queue, stats, since: (0, None) }
    }

    /// Counts a frame of `len` bytes that cannot be received for reason `why`.
    #[cold]
    pub(crate) fn count(&mut self, why: &str, len: u32) {
        PortStats::add(&self.stats.oversize, 1);
        self.since.0 += 1;
        if self.since.1.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            tracing::warn!(
                port = self.port,
                queue = self.queue,
                frames = self.since.0,
                "{}: a frame of {len} bytes could not be received ({why}); counted as rx_oversize",
                self.driver
            );
            self.since = (0, Some(Instant::now()));
        }
    }
}

/// When a queue reads its socket's drop counters next.
pub(crate) struct StatsClock {
    at: Instant,
    calls: u32,
}

impl StatsClock {
    pub(crate) fn new() -> StatsClock {
        StatsClock { at: Instant::now(), calls: 0 }
    }

    /// Whether it is time (always when `now`).
    #[inline(always)]
    pub(crate) fn due(&mut self, now: bool) -> bool {
        self.calls = self.calls.wrapping_add(1);
        if !now && (!self.calls.is_multiple_of(STATS_CHECK_CALLS) || self.at.elapsed() < STATS_EVERY) {
            return false;
        }
        self.at = Instant::now();
        true
    }
}
