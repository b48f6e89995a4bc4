//! `pcap`: replays a capture file on RX and records TX to a capture file, with no I/O in the poll loop
//! on RX and buffered writes on TX.
//!
//! Options (`pcap:` of the port; at least one of `rx` and `tx`):
//!
//! - `rx: FILE`: a pcap (micro- or nanosecond) or pcapng file, Ethernet link type only (any other is
//!   refused at open, naming the file and its link type). The whole file is read and parsed once at
//!   open into one byte buffer and a table of records (offset, captured length, timestamp). Records
//!   shorter than an Ethernet header (14 bytes), cut short at the end of the file (in a pcap file a
//!   corrupt record length reads as that: the rest of the file is one skipped record), in a corrupt
//!   pcapng block (skipped by its length), or longer than the pool's `data_room` (checked at the
//!   first burst, when the pool is known) are skipped, never truncated, and counted: one warning per
//!   file (per queue for the data room) names the file, how many and which record numbers; the
//!   number loaded and skipped is logged at open. pcapng section and interface headers whose options
//!   pcap-file cannot parse are read without their options. Records captured with a snap length (caplen < original length) are replayed
//!   with their captured bytes. Without `rx` the port receives nothing.
//! - `repeat: N | forever` (default 1): passes over the capture; after the last one RX returns
//!   nothing.
//! - `rate_pps: N` (default 0: as fast as the stream polls): packets per second for the whole port
//!   (each of n queues gets N/n). `timing: true` replays at the capture's own inter-packet gaps
//!   (overrides `rate_pps`; a new pass starts one mean gap after the previous pass's last packet).
//!   Pacing never sleeps: a burst returns the packets that are due, possibly none.
//! - `tx: FILE`: every transmitted packet is written to a pcap file (header by pcap-file) (nanosecond timestamps taken
//!   once per burst, Ethernet link type, snap length 262144), through a buffered writer, then its
//!   buffer is freed. The header is written at open and only whole records are written, so the file
//!   is valid at any stop; the writer is flushed when the queue is dropped (at stop). With more than
//!   one queue, queue q writes to FILE with `-q<q>` before the extension (`out.pcap` ->
//!   `out-q0.pcap`, `out-q1.pcap`, ...). Without `tx` TX frees the packets.
//!
//! Queues: with n queues, RX queue q replays records q, q+n, q+2n, ... of the capture (its own
//! share, in order), so the port as a whole replays each record once per pass.
//!
//! Paths: in a config file, relative paths are relative to the file's folder (as plugin paths are);
//! in a config given as text, to the working directory.
//!
//! TX applies the requested offloads in software (like `null` and `ring`), so they are in the file;
//! `macsec_insert` is refused (no keys).

pub(crate) mod load;

use super::{DriverDesc, PortSetup, Queues, Rx, RxQueue, Shared, TxQueue};
use crate::config::{Config, PcapCfg, PortCfg, Repeat};
use crate::mbuf::{Burst, PoolCache};
use crate::stats::PortStats;
use load::{Capture, Record};
use pcap_file::pcap::PcapHeader;
use pcap_file::{DataLink, TsResolution};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// The driver entry.
pub const DRIVER: DriverDesc = DriverDesc {
    name: "pcap",
    help: "RX replays a pcap/pcapng capture (pcap.rx, repeat, rate_pps, timing), TX records to a pcap file (pcap.tx)",
    software_offloads: true,
    macsec: false,
    check,
    preflight,
    open,
};

/// Snap length written in TX files' headers.
const TX_SNAPLEN: u32 = 262_144;

/// Largest packet a buffer can hold at all (its data length is 16 bits); the pool's data room is
/// applied at the first burst.
const MAX_RECORD: usize = u16::MAX as usize;

fn check(_: &Config, p: &PortCfg) -> Result<(), String> {
    super::only_own_section(p, "pcap")?;
    let missing = "pcap: missing; driver `pcap` needs `pcap: {rx: FILE}` and/or `pcap: {tx: FILE}`";
    let c = p.pcap.as_ref().ok_or(missing)?;
    if c.rx.is_none() && c.tx.is_none() {
        return Err(
            "pcap: neither `rx` nor `tx`; driver `pcap` needs `pcap: {rx: FILE}` and/or `pcap: {tx: FILE}`".into()
        );
    }
    if let Some(rx) = &c.rx {
        if !rx.exists() {
            return Err(format!("pcap.rx: file `{}` does not exist", rx.display()));
        }
        if !rx.is_file() {
            return Err(format!("pcap.rx: `{}` is not a file", rx.display()));
        }
    }
    if let Some(tx) = &c.tx {
        let dir = tx.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !dir.is_dir() {
            return Err(format!("pcap.tx: directory `{}` of `{}` does not exist", dir.display(), tx.display()));
        }
        if tx.is_dir() {
            return Err(format!("pcap.tx: `{}` is a directory", tx.display()));
        }
    }
    Ok(())
}

fn open(s: &PortSetup<'_>, _: &mut Shared) -> anyhow::Result<Queues> {
    let c = s.cfg.pcap.as_ref().ok_or_else(|| anyhow::anyhow!("pcap: missing"))?;
    let n = s.cfg.queues.get();
    let rx = match &c.rx {
        Some(path) => {
            let cap = Arc::new(read_capture(path)?);
            let st = &s.stats;
            PortStats::add(&st.skipped_short, cap.reasons.short);
            PortStats::add(&st.skipped_too_long, cap.reasons.too_long);
            PortStats::add(&st.skipped_corrupt, cap.reasons.corrupt);
            PortStats::add(&st.skipped_cut_short, cap.reasons.cut_short);
            (0..n)
                .map(|q| Box::new(PcapRx::new(s.id, q, n, cap.clone(), c, path, st.clone())) as Box<dyn RxQueue>)
                .collect()
        }
        None => (0..n).map(|_| Box::new(Silent) as Box<dyn RxQueue>).collect(),
    };
    let tx = match &c.tx {
        Some(path) => (0..n)
            .map(|q| {
                let file = if n == 1 { path.clone() } else { queue_path(path, q) };
                Ok(Box::new(PcapTx::create(file)?) as Box<dyn TxQueue>)
            })
            .collect::<anyhow::Result<Vec<_>>>()?,
        None => (0..n).map(|_| Box::new(Discard) as Box<dyn TxQueue>).collect(),
    };
    Ok(Queues { rx, tx })
}

/// Largest capture file replayed (it is held in memory).
pub const MAX_CAPTURE_BYTES: u64 = 1 << 30;

/// The capture loads, and the folder of the file to record to exists.
fn preflight(p: &PortCfg) -> anyhow::Result<()> {
    let Some(c) = &p.pcap else { return Ok(()) };
    if let Some(rx) = &c.rx {
        read_capture(rx)?;
    }
    if let Some(tx) = &c.tx {
        let dir = tx.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if !dir.is_dir() {
            anyhow::bail!("pcap.tx: `{}`: the folder `{}` does not exist", tx.display(), dir.display());
        }
    }
    Ok(())
}

fn read_capture(path: &Path) -> anyhow::Result<Capture> {
    let bytes = crate::input::read_bounded(path, MAX_CAPTURE_BYTES)
        .map_err(|e| anyhow::anyhow!("pcap.rx: `{}`: {e}", path.display()))?;
    let cap = load::load(&bytes, MAX_RECORD).map_err(|e| anyhow::anyhow!("pcap.rx: `{}`: {e}", path.display()))?;
    if !cap.skipped.is_empty() {
        tracing::warn!(
            "pcap.rx: `{}`: {} record(s) skipped (shorter than {} bytes or corrupt{}): record number(s) {}",
            path.display(),
            cap.skipped.len(),
            load::MIN_LEN,
            if cap.cut_short { ", or cut short at the end of the file" } else { "" },
            numbers(&cap.skipped)
        );
    }
    tracing::info!(
        "pcap.rx: `{}`: {} record(s) loaded ({} bytes), {} skipped",
        path.display(),
        cap.records.len(),
        cap.data.len(),
        cap.skipped.len()
    );
    Ok(cap)
}

/// Record numbers for a log line: the first 20, then how many more.
fn numbers(v: &[u64]) -> String {
    let mut s = v.iter().take(20).map(|n| n.to_string()).collect::<Vec<_>>().join(", ");
    if v.len() > 20 {
        s += &format!(" and {} more", v.len() - 20);
    }
    s
}

/// `dir/name.ext` -> `dir/name-q<q>.ext`.
fn queue_path(path: &Path, q: usize) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}-q{q}.{}", ext.to_string_lossy()),
        None => format!("{stem}-q{q}"),
    };
    path.with_file_name(name)
}

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
struct PcapRx {
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
    fn new(
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
struct Silent;

impl RxQueue for Silent {
    fn rx_burst(&mut self, _: &mut PoolCache, _: &mut Burst, _: usize) -> Rx {
        Rx::default()
    }
}

/// TX of a port without `tx`: frees.
struct Discard;

impl TxQueue for Discard {
    fn tx_burst(&mut self, cache: &mut PoolCache, burst: &mut Burst) -> usize {
        let n = burst.len();
        cache.free_burst(burst);
        n
    }
}

/// TX of a port with `tx`: writes each packet to the file, then frees it.
struct PcapTx {
    path: PathBuf,
    w: BufWriter<File>,
    failed: bool,
}

impl PcapTx {
    fn create(path: PathBuf) -> anyhow::Result<PcapTx> {
        let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("pcap.tx: `{}`: {e}", path.display());
        let f = File::create(&path).map_err(|e| err(&e))?;
        let header = PcapHeader {
            snaplen: TX_SNAPLEN,
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            endianness: pcap_file::Endianness::native(),
            ..PcapHeader::default()
        };
        let mut w = BufWriter::with_capacity(1 << 16, f);
        header.write_to(&mut w).map_err(|e| err(&e))?;
        // The header reaches the file now: a port that never transmits still leaves a valid pcap.
        w.flush().map_err(|e| err(&e))?;
        Ok(PcapTx { path, w, failed: false })
    }

    /// Appends one record (header in native byte order, as the file header says, then the data).
    fn write(&mut self, ts: Duration, data: &[u8]) -> std::io::Result<()> {
        let mut h = [0u8; 16];
        let fields = [ts.as_secs() as u32, ts.subsec_nanos(), data.len() as u32, data.len() as u32];
        for (d, f) in h.chunks_exact_mut(4).zip(fields) {
            d.copy_from_slice(&f.to_ne_bytes());
        }
        self.w.write_all(&h)?;
        self.w.write_all(data)
    }
}

impl TxQueue for PcapTx {
    fn tx_burst(&mut self, cache: &mut PoolCache, burst: &mut Burst) -> usize {
        let n = burst.len();
        let ts = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or(Duration::ZERO);
        for i in 0..n {
            if let Err(e) = self.write(ts, burst[i].data()) {
                if !self.failed {
                    self.failed = true;
                    tracing::warn!("pcap.tx: `{}`: write failed, packets are not recorded: {e}", self.path.display());
                }
            }
        }
        cache.free_burst(burst);
        n
    }
}

impl Drop for PcapTx {
    fn drop(&mut self) {
        if let Err(e) = self.w.flush() {
            tracing::warn!("pcap.tx: `{}`: flush failed: {e}", self.path.display());
        }
    }
}
