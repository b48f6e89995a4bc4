//! Capture files written and read by hand for the tests, independently of the project's loader and
//! of any capture library: pcap files written (microsecond) and read back (either byte order, micro-
//! or nanosecond), and the packet records of a pcap or pcapng file counted by a plain reading.

use std::path::Path;
use std::time::Duration;

/// LINKTYPE_ETHERNET.
pub const ETHERNET: u32 = 1;

/// LINKTYPE_RAW.
pub const RAW: u32 = 101;

/// One record of a pcap file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rec {
    /// Timestamp since the epoch.
    pub ts: Duration,
    /// Captured bytes.
    pub data: Vec<u8>,
    /// Length of the packet on the wire (at least the captured length).
    pub orig_len: u32,
}

/// A pcap file as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pcap {
    /// Timestamps in nanoseconds (else microseconds).
    pub nano: bool,
    /// Big-endian file.
    pub big: bool,
    /// Snap length in the header.
    pub snaplen: u32,
    /// Link type in the header.
    pub link: u32,
    /// Every record, in order.
    pub recs: Vec<Rec>,
}

/// Writes a little-endian, microsecond pcap file of link type `link` (snap length 65535) holding
/// `recs`.
pub fn write_us(path: &Path, link: u32, recs: &[Rec]) {
    let mut v = Vec::new();
    // Magic, version 2.4 (two 16-bit fields), time zone, sigfigs, snap length, link type.
    for x in [0xa1b2_c3d4, 0x0004_0002, 0, 0, 65535, link] {
        v.extend_from_slice(&u32::to_le_bytes(x));
    }
    for r in recs {
        let fields = [r.ts.as_secs() as u32, r.ts.subsec_micros(), r.data.len() as u32, r.orig_len];
        for x in fields {
            v.extend_from_slice(&x.to_le_bytes());
        }
        v.extend_from_slice(&r.data);
    }
    std::fs::write(path, v).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// Writes whole Ethernet `frames` as a microsecond pcap, 1 ms apart.
pub fn write_frames(path: &Path, frames: &[Vec<u8>]) {
    let recs: Vec<Rec> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| Rec {
            ts: std::time::Duration::from_millis(1_700_000_000_000 + i as u64),
            data: f.clone(),
            orig_len: f.len() as u32,
        })
        .collect();
    write_us(path, ETHERNET, &recs);
}

/// Reads a pcap file; panics when it is not one or is not well formed to its end.
pub fn read(path: &Path) -> Pcap {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match parse_pcap(&b) {
        Some((p, false)) => p,
        Some((_, true)) => panic!("{}: a record cut short", path.display()),
        None => panic!("{}: not a pcap file", path.display()),
    }
}

fn u32_at(b: &[u8], at: usize, big: bool) -> Option<u32> {
    let w: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
    Some(if big { u32::from_be_bytes(w) } else { u32::from_le_bytes(w) })
}

fn u16_at(b: &[u8], at: usize, big: bool) -> Option<u16> {
    let w: [u8; 2] = b.get(at..at + 2)?.try_into().ok()?;
    Some(if big { u16::from_be_bytes(w) } else { u16::from_le_bytes(w) })
}

/// A pcap file's header and complete records, and whether it ended inside a record; None when it
/// has no pcap header.
fn parse_pcap(b: &[u8]) -> Option<(Pcap, bool)> {
    let (big, nano) = match b.get(..4)? {
        [0xd4, 0xc3, 0xb2, 0xa1] => (false, false),
        [0x4d, 0x3c, 0xb2, 0xa1] => (false, true),
        [0xa1, 0xb2, 0xc3, 0xd4] => (true, false),
        [0xa1, 0xb2, 0x3c, 0x4d] => (true, true),
        _ => return None,
    };
    let (snaplen, link) = (u32_at(b, 16, big)?, u32_at(b, 20, big)?);
    let mut p = Pcap { nano, big, snaplen, link, recs: Vec::new() };
    let mut at = 24;
    while at < b.len() {
        let Some(data) = u32_at(b, at + 8, big).and_then(|len| b.get(at + 16..at + 16 + len as usize)) else {
            return Some((p, true));
        };
        let (sec, frac, orig_len) = (u32_at(b, at, big)?, u32_at(b, at + 4, big)?, u32_at(b, at + 12, big)?);
        let ts = Duration::from_nanos(sec as u64 * 1_000_000_000 + frac as u64 * if nano { 1 } else { 1000 });
        p.recs.push(Rec { ts, data: data.to_vec(), orig_len });
        at += 16 + data.len();
    }
    Some((p, false))
}

/// The packet records of a pcap or pcapng file, as a plain reading finds them.
#[derive(Debug, Default)]
pub struct Packets {
    /// A pcap file's link type (None for pcapng, whose link types are per interface).
    pub header_link: Option<u32>,
    /// Each record: the link type of its interface (None when that does not exist), and its
    /// captured length.
    pub records: Vec<(Option<u32>, usize)>,
    /// The reading stopped at something malformed (or cut short) before the end of the file.
    pub irregular: bool,
}

/// Reads the packet records of `b`, a whole pcap or pcapng file. pcapng: section headers (either
/// byte order), interface descriptions, enhanced, simple and obsolete packet blocks; other blocks
/// are passed over by their length. Anything malformed stops the reading (`irregular`).
pub fn packets(b: &[u8]) -> Packets {
    if !b.starts_with(&[0x0a, 0x0d, 0x0d, 0x0a]) {
        let Some((p, cut)) = parse_pcap(b) else { return Packets { irregular: true, ..Default::default() } };
        let records = p.recs.iter().map(|r| (Some(p.link), r.data.len())).collect();
        return Packets { header_link: Some(p.link), records, irregular: cut };
    }
    let mut out = Packets::default();
    out.irregular = pcapng(b, &mut out.records).is_none();
    out
}

/// Reads pcapng blocks into `records`; None at something malformed.
fn pcapng(b: &[u8], records: &mut Vec<(Option<u32>, usize)>) -> Option<()> {
    let (mut at, mut big, mut links) = (0, false, Vec::<u32>::new());
    while at < b.len() {
        if b[at..].starts_with(&[0x0a, 0x0d, 0x0d, 0x0a]) {
            big = match b.get(at + 8..at + 12)? {
                [0x1a, 0x2b, 0x3c, 0x4d] => true,
                [0x4d, 0x3c, 0x2b, 0x1a] => false,
                _ => return None,
            };
            links.clear();
        }
        let (ty, len) = (u32_at(b, at, big)?, u32_at(b, at + 4, big)? as usize);
        if len < 12 || len % 4 != 0 || u32_at(b, (at + len).checked_sub(4)?, big)? != len as u32 {
            return None;
        }
        let body = &b[at + 8..at + len - 4];
        let link = |iface: usize| links.get(iface).copied();
        match ty {
            1 => links.push(u16_at(body, 0, big)? as u32),
            // Enhanced (interface 32 bits) and obsolete (16 bits) packet blocks.
            2 | 6 => {
                let iface = if ty == 6 { u32_at(body, 0, big)? as usize } else { u16_at(body, 0, big)? as usize };
                let caplen = u32_at(body, 12, big)? as usize;
                if 20 + caplen > body.len() {
                    return None;
                }
                records.push((link(iface), caplen));
            }
            // Simple packet block: the original length, at most what the block holds.
            3 => records.push((link(0), (u32_at(body, 0, big)? as usize).min(body.len().checked_sub(4)?))),
            _ => {}
        }
        at += len;
    }
    Some(())
}
