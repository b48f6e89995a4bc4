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
//!   number loaded and skipped is logged at open. Parsing is pcap-parser's (`load.rs`): pcapng
//!   options that do not parse (one running past its block) are dropped, a section or interface
//!   header that does not parse is read without its options, and blocks other than headers and
//!   packets are passed over by their length. Records captured with a snap length (caplen < original
//!   length) are replayed with their captured bytes. Without `rx` the port receives nothing.
//! - `repeat: N | forever` (default 1): passes over the capture; after the last one RX returns
//!   nothing.
//! - `rate_pps: N` (default 0: as fast as the stream polls): packets per second for the whole port
//!   (each of n queues gets N/n). `timing: true` replays at the capture's own inter-packet gaps
//!   (overrides `rate_pps`; a new pass starts one mean gap after the previous pass's last packet).
//!   Pacing never sleeps: a burst returns the packets that are due, possibly none.
//! - `tx: FILE`: every transmitted packet is written to a pcap file (little-endian, nanosecond
//!   timestamps taken once per burst, Ethernet link type, snap length 65535), through a buffered
//!   writer of our own (`tx.rs`), then its buffer is freed. The header is written at open and only
//!   whole records are written, so the file is valid at any stop; the writer is flushed when the
//!   queue is dropped (at stop). With more than one queue, queue q writes to FILE with `-q<q>` before
//!   the extension (`out.pcap` -> `out-q0.pcap`, `out-q1.pcap`, ...). Without `tx` TX frees the
//!   packets.
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
mod rx;
mod tx;

use super::{DriverDesc, PortSetup, Queues, RxQueue, Shared, TxQueue};
use crate::config::{Config, PortCfg};
use crate::stats::PortStats;
use load::Capture;
use rx::{PcapRx, Silent};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tx::{Discard, PcapTx};

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
