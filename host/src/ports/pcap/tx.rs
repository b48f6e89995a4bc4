//! TX of the `pcap` driver: a small pcap writer (little-endian, nanosecond timestamps, Ethernet),
//! buffered, whose file is valid at any stop: the header is written at open and only whole records
//! are written after it.

use crate::mbuf::{Burst, PoolCache};
use crate::ports::TxQueue;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// Magic number of a pcap file with nanosecond timestamps (written little-endian).
const MAGIC_NS: u32 = 0xa1b2_3c4d;

/// Snap length written in TX files' headers (a buffer holds at most 65535 bytes).
const SNAPLEN: u32 = 65_535;

/// LINKTYPE_ETHERNET.
const ETHERNET: u32 = 1;

/// The 24-byte file header: magic, version 2.4, zone 0, sigfigs 0, snap length, link type.
fn file_header() -> [u8; 24] {
    let mut h = [0u8; 24];
    h[..4].copy_from_slice(&MAGIC_NS.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    h[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
    h[20..].copy_from_slice(&ETHERNET.to_le_bytes());
    h
}

/// The 16-byte header of a record of `len` bytes: seconds, nanoseconds, captured and original length.
fn record_header(ts: Duration, len: usize) -> [u8; 16] {
    let mut h = [0u8; 16];
    let fields = [ts.as_secs() as u32, ts.subsec_nanos(), len as u32, len as u32];
    for (d, f) in h.chunks_exact_mut(4).zip(fields) {
        d.copy_from_slice(&f.to_le_bytes());
    }
    h
}

/// TX of a port with `tx`: writes each packet to the file, then frees it.
#[repr(align(128))] // lines of its own: see `RxQueue`
pub(super) struct PcapTx {
    path: PathBuf,
    w: BufWriter<File>,
    failed: bool,
}

impl PcapTx {
    /// Creates (or truncates) `path` and writes the file header through to the file.
    pub(super) fn create(path: PathBuf) -> anyhow::Result<PcapTx> {
        let err = |e: &dyn std::fmt::Display| anyhow::anyhow!("pcap.tx: `{}`: {e}", path.display());
        let f = File::create(&path).map_err(|e| err(&e))?;
        let mut w = BufWriter::with_capacity(1 << 16, f);
        w.write_all(&file_header()).map_err(|e| err(&e))?;
        // The header reaches the file now: a port that never transmits still leaves a valid pcap.
        w.flush().map_err(|e| err(&e))?;
        Ok(PcapTx { path, w, failed: false })
    }

    /// Appends one record (its header, then the data).
    fn write(&mut self, ts: Duration, data: &[u8]) -> std::io::Result<()> {
        self.w.write_all(&record_header(ts, data.len()))?;
        self.w.write_all(data)
    }
}

impl TxQueue for PcapTx {
    fn tx_burst(&mut self, cache: &mut PoolCache, burst: &mut Burst, _: &mut crate::ports::TxRefused) -> usize {
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

/// TX of a port without `tx`: frees.
pub(super) struct Discard;

impl TxQueue for Discard {
    fn tx_burst(&mut self, cache: &mut PoolCache, burst: &mut Burst, _: &mut crate::ports::TxRefused) -> usize {
        let n = burst.len();
        cache.free_burst(burst);
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_is_a_nanosecond_ethernet_pcap_valid_at_open_and_after_writes() {
        let dir = std::env::temp_dir().join(format!("wasmdp-pcap-tx-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out.pcap");
        let mut tx = PcapTx::create(path.clone()).unwrap();
        let header = std::fs::read(&path).unwrap();
        assert_eq!(header, file_header());
        assert_eq!(&header[..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(&header[16..], &[0xff, 0xff, 0, 0, 1, 0, 0, 0]);
        tx.write(Duration::new(7, 42), &[0xab; 60]).unwrap();
        drop(tx);
        let f = std::fs::read(&path).unwrap();
        assert_eq!(f.len(), 24 + 16 + 60);
        assert_eq!(&f[24..40], &[7, 0, 0, 0, 42, 0, 0, 0, 60, 0, 0, 0, 60, 0, 0, 0]);
        assert_eq!(&f[40..], &[0xab; 60]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
