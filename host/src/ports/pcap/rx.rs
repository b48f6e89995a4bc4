//! RX of the `pcap` driver: replays this queue's share of a capture loaded at open (no I/O, no
//! parsing in the poll loop), paced by rate or by the capture's own timing.

use super::load::{Capture, Record};
use super::numbers;
use crate::config::{PcapCfg, Repeat};
use crate::mbuf::{Burst, PoolCache};
use crate::ports::{Rx, RxQueue};
use crate::stats::PortStats;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// When packets are due.
enum Pacing {
    /// Whenever polled.
    None,
    /// This many per second (this queue's share).
    Rate(f64),
    /// At the capture's timestamps; a pass lasts `span_ns`.
    Timing { span_ns: u64 },
}

/// RX of a port with `rx`: replays this queue's share of the capture.
#[repr(align(128))] // lines of its own: see `RxQueue`
pub(super) struct PcapRx {
    cap: Arc<Capture>,
    path: PathBuf,
    port: u16,
    queue: u16,
    /// Indexes into `cap.records` this queue replays (filtered by data room at the first burst).
    mine: Vec<u32>,
    checked_room: bool,
    /// A copy failed (warned once).
    copy_failed: bool,
    /// Next entry of `mine`.
    pos: usize,
    /// Passes completed.
    pass: u64,
    repeat: Repeat,
    pacing: Pacing,
    start: Option<Instant>,
    /// Packets delivered so far (for `rate_pps`).
    sent: u64,
    stats: Arc<PortStats>,
}

impl PcapRx {
    pub(super) fn new(
        port: u16,
        q: usize,
        n: usize,
        cap: Arc<Capture>,
        c: &PcapCfg,
        path: &Path,
        stats: Arc<PortStats>,
    ) -> PcapRx {
        let mine = (q..cap.records.len()).step_by(n).map(|i| i as u32).collect();
        let pacing = if c.timing && cap.records.len() > 1 {
            let first = cap.records.first().map_or(0, |r| r.ts_ns);
            let last = cap.records.iter().map(|r| r.ts_ns).max().unwrap_or(first);
            let dur = last.saturating_sub(first);
            Pacing::Timing { span_ns: dur + dur / (cap.records.len() as u64 - 1) }
        } else if !c.timing && c.rate_pps.0 > 0 {
            Pacing::Rate(c.rate_pps.0 as f64 / n as f64)
        } else {
            Pacing::None
        };
        PcapRx {
            cap,
            path: path.to_path_buf(),
            port,
            queue: q as u16,
            mine,
            checked_room: false,
            copy_failed: false,
            pos: 0,
            pass: 0,
            repeat: c.repeat,
            pacing,
            start: None,
            sent: 0,
            stats,
        }
    }

    /// Drops (and reports) records that do not fit a buffer of the pool.
    fn check_room(&mut self, data_room: usize) {
        self.checked_room = true;
        let cap = &self.cap;
        let too_long: Vec<u64> = self
            .mine
            .iter()
            .filter(|&&i| cap.records[i as usize].len as usize > data_room)
            .map(|&i| cap.records[i as usize].num)
            .collect();
        if too_long.is_empty() {
            return;
        }
        self.mine.retain(|&i| cap.records[i as usize].len as usize <= data_room);
        PortStats::add(&self.stats.skipped_too_long, too_long.len() as u64);
        tracing::warn!(
            "pcap.rx: `{}` (queue {}): {} record(s) longer than the pool's data room ({data_room} bytes) skipped: \
             record number(s) {}",
            self.path.display(),
            self.queue,
            too_long.len(),
            numbers(&too_long)
        );
    }

    fn finished(&self) -> bool {
        self.mine.is_empty() || matches!(self.repeat, Repeat::Times(t) if self.pass >= t)
    }

    /// How many of the next `max` packets are due now.
    fn due(&mut self, max: usize) -> usize {
        let start = *self.start.get_or_insert_with(Instant::now);
        match self.pacing {
            Pacing::None => max,
            Pacing::Rate(pps) => {
                let allowed = (start.elapsed().as_secs_f64() * pps) as u64 + 1;
                (allowed.saturating_sub(self.sent) as usize).min(max)
            }
            Pacing::Timing { span_ns } => {
                let now = start.elapsed().as_nanos() as u64;
                let first = self.cap.records.first().map_or(0, |r| r.ts_ns);
                let (mut pos, mut pass, mut n) = (self.pos, self.pass, 0);
                while n < max {
                    let r = &self.cap.records[self.mine[pos] as usize];
                    let at = pass.saturating_mul(span_ns).saturating_add(r.ts_ns.saturating_sub(first));
                    if at > now {
                        break;
                    }
                    n += 1;
                    pos += 1;
                    if pos == self.mine.len() {
                        pos = 0;
                        pass += 1;
                    }
                }
                n
            }
        }
    }
}

impl RxQueue for PcapRx {
    fn rx_burst(&mut self, cache: &mut PoolCache, out: &mut Burst, max: usize) -> Rx {
        if !self.checked_room {
            self.check_room(cache.pool().config().data_room as usize);
        }
        if self.finished() {
            return Rx::default();
        }
        let want = self.due(max);
        let (mut got, mut bytes) = (0, 0u64);
        while got < want && !self.finished() {
            let Some(mut p) = cache.alloc() else {
                return Rx { packets: got, bytes, nombuf: want - got };
            };
            let r: Record = self.cap.records[self.mine[self.pos] as usize];
            self.pos += 1;
            if self.pos == self.mine.len() {
                self.pos = 0;
                self.pass += 1;
            }
            if p.copy_from(self.cap.bytes(&r)).is_err() {
                // Not after check_room (every buffer has the pool's data room); skip it, said once.
                cache.free(p);
                PortStats::add(&self.stats.skipped_too_long, 1);
                if !self.copy_failed {
                    self.copy_failed = true;
                    tracing::warn!(
                        "pcap.rx: `{}`: a record of {} bytes did not fit a buffer; skipped",
                        self.path.display(),
                        r.len
                    );
                }
                continue;
            }
            p.meta_mut().set_input(self.port, self.queue);
            out.push(p);
            got += 1;
            bytes += r.len as u64;
            self.sent += 1;
        }
        Rx { packets: got, bytes, nombuf: 0 }
    }
}

/// RX of a port without `rx`.
pub(super) struct Silent;

impl RxQueue for Silent {
    fn rx_burst(&mut self, _: &mut PoolCache, _: &mut Burst, _: usize) -> Rx {
        Rx::default()
    }
}
