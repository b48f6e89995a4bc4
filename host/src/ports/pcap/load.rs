//! Reading a whole capture (pcap or pcapng) into memory: one byte buffer and a table of records, so
//! RX does no I/O and no parsing per packet.

use pcap_file::pcap::PcapParser;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::pcapng::{Block, PcapNgParser};
use pcap_file::{DataLink, Endianness, PcapError};

/// Smallest record replayed: an Ethernet header.
pub const MIN_LEN: usize = 14;

/// One packet of the capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Offset of its bytes in [`Capture::data`].
    pub off: usize,
    /// Captured length (what is replayed; may be less than the packet's original length).
    pub len: u32,
    /// Original timestamp, nanoseconds since the epoch.
    pub ts_ns: u64,
    /// Its number in the file (1-based, packet records only), for messages.
    pub num: u64,
}

/// A capture in memory.
#[derive(Debug, Default)]
pub struct Capture {
    /// Every kept record's bytes, back to back.
    pub data: Vec<u8>,
    /// Kept records, in file order.
    pub records: Vec<Record>,
    /// Record numbers (1-based, in file order) skipped as truncated, corrupt or too long/short.
    pub skipped: Vec<u64>,
    /// Whether the file ended inside a record or block (counted in `skipped`).
    pub cut_short: bool,
    /// The skipped records by reason.
    pub reasons: Skipped,
}

/// Records skipped, by reason.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Skipped {
    /// Shorter than an Ethernet header.
    pub short: u64,
    /// Longer than the largest frame (65535 at load, the pool's data room when replayed).
    pub too_long: u64,
    /// A corrupt pcapng block (or one naming an interface that does not exist).
    pub corrupt: u64,
    /// Cut short by the end of the file.
    pub cut_short: u64,
}

impl Capture {
    /// The bytes of record `r`.
    pub fn bytes(&self, r: &Record) -> &[u8] {
        &self.data[r.off..r.off + r.len as usize]
    }

    fn skip(&mut self, n: u64, reason: fn(&mut Skipped) -> &mut u64) {
        self.skipped.push(n);
        *reason(&mut self.reasons) += 1;
    }

    fn keep(&mut self, n: u64, bytes: &[u8], ts_ns: u64, max_len: usize) {
        if bytes.len() < MIN_LEN {
            return self.skip(n, |r| &mut r.short);
        }
        if bytes.len() > max_len {
            return self.skip(n, |r| &mut r.too_long);
        }
        self.records.push(Record { off: self.data.len(), len: bytes.len() as u32, ts_ns, num: n });
        self.data.extend_from_slice(bytes);
    }
}

/// `LINKTYPE_RAW (101)`-style name of a link type.
pub fn link_name(l: DataLink) -> String {
    let n: u32 = l.into();
    match l {
        DataLink::Unknown(_) => format!("link type {n}"),
        _ => format!("LINKTYPE_{l:?} ({n})"),
    }
}

fn refuse(l: DataLink) -> String {
    format!("{}: only Ethernet (1) can be replayed", link_name(l))
}

/// Parses `bytes` (a whole pcap or pcapng file). Records shorter than an Ethernet header or longer
/// than `max_len` are skipped and listed, and so is a record cut short at the end of the file or a
/// corrupt pcapng block. Errors: not a capture, or a link type other than Ethernet.
pub fn load(bytes: &[u8], max_len: usize) -> Result<Capture, String> {
    match bytes.get(..4) {
        Some([0x0a, 0x0d, 0x0d, 0x0a]) => load_pcapng(bytes, max_len),
        Some(_) => load_pcap(bytes, max_len),
        None => Err(format!("not a pcap or pcapng file: {} bytes", bytes.len())),
    }
}

fn load_pcap(bytes: &[u8], max_len: usize) -> Result<Capture, String> {
    let (mut rest, parser) = PcapParser::new(bytes).map_err(|e| match e {
        PcapError::IncompleteBuffer => "not a pcap or pcapng file: header cut short".to_string(),
        e => format!("not a pcap or pcapng file: {e}"),
    })?;
    let h = parser.header();
    if h.datalink != DataLink::ETHERNET {
        return Err(refuse(h.datalink));
    }
    let nano = h.ts_resolution == pcap_file::TsResolution::NanoSecond;
    let mut cap = Capture::default();
    let mut n = 0;
    while !rest.is_empty() {
        n += 1;
        match parser.next_raw_packet(rest) {
            Ok((r, p)) => {
                let frac = if nano { p.ts_frac as u64 } else { p.ts_frac as u64 * 1000 };
                cap.keep(n, &p.data, p.ts_sec as u64 * 1_000_000_000 + frac, max_len);
                rest = r;
            }
            Err(_) => {
                // Cut short at the end of the file (a header or data not all there).
                cap.skip(n, |r| &mut r.cut_short);
                cap.cut_short = true;
                break;
            }
        }
    }
    Ok(cap)
}

/// Nanoseconds per timestamp unit of an interface (if_tsresol; default microseconds).
fn tick_ns(opts: &[InterfaceDescriptionOption<'_>]) -> f64 {
    let r = opts.iter().find_map(|o| match o {
        InterfaceDescriptionOption::IfTsResol(r) => Some(*r),
        _ => None,
    });
    match r.unwrap_or(6) {
        r if r & 0x80 != 0 => 1e9 / 2f64.powi((r & 0x7f) as i32),
        r => 1e9 / 10f64.powi(r as i32),
    }
}

/// Length of the block at the start of `src` per its header, when it is sane (so it can be skipped).
fn block_len(src: &[u8], e: Endianness) -> Option<usize> {
    let b: [u8; 4] = src.get(4..8)?.try_into().ok()?;
    let len = match e {
        Endianness::Big => u32::from_be_bytes(b),
        Endianness::Little => u32::from_le_bytes(b),
    } as usize;
    (len >= 12 && len.is_multiple_of(4) && len <= src.len()).then_some(len)
}

/// A section header (SHB) or interface description (IDB) block at the start of `src` rebuilt without
/// its options, and the original block's length; None for other blocks or a bad length.
fn bare_block(src: &[u8], e: Endianness) -> Option<(Vec<u8>, usize)> {
    let ty: [u8; 4] = src.get(..4)?.try_into().ok()?;
    let (e, fixed) = match ty {
        [0x0a, 0x0d, 0x0d, 0x0a] => match src.get(8..12)? {
            [0x1a, 0x2b, 0x3c, 0x4d] => (Endianness::Big, 16),
            [0x4d, 0x3c, 0x2b, 0x1a] => (Endianness::Little, 16),
            _ => return None,
        },
        _ if ty == u32_bytes(1, e) => (e, 8),
        _ => return None,
    };
    let len = block_len(src, e)?;
    if len < 12 + fixed {
        return None;
    }
    let total = (12 + fixed) as u32;
    let mut v = ty.to_vec();
    v.extend_from_slice(&u32_bytes(total, e));
    v.extend_from_slice(&src[8..8 + fixed]);
    v.extend_from_slice(&u32_bytes(total, e));
    Some((v, len))
}

fn u32_bytes(v: u32, e: Endianness) -> [u8; 4] {
    match e {
        Endianness::Big => v.to_be_bytes(),
        Endianness::Little => v.to_le_bytes(),
    }
}

fn load_pcapng(bytes: &[u8], max_len: usize) -> Result<Capture, String> {
    let (mut rest, mut parser) = match PcapNgParser::new(bytes) {
        Ok(x) => x,
        // Options pcap-file cannot parse (they do not matter here): retry with the bare header.
        Err(e) => match bare_block(bytes, Endianness::Big) {
            Some((bare, len)) => {
                let (_, p) =
                    PcapNgParser::new(&bare).map_err(|e| format!("not a valid pcapng file: section header: {e}"))?;
                (&bytes[len..], p)
            }
            None => return Err(format!("not a valid pcapng file: section header: {e}")),
        },
    };
    let mut cap = Capture::default();
    let mut n = 0;
    while !rest.is_empty() {
        let endianness = parser.section().endianness;
        let block = parser.next_block(rest);
        let (r, block) = match block {
            Ok(x) => x,
            Err(_) if bare_block(rest, endianness).is_some() => {
                // A section or interface header with options pcap-file cannot parse: use it without.
                let (bare, len) = bare_block(rest, endianness).unwrap_or_default();
                if parser.next_block(&bare).is_err() {
                    n += 1;
                    cap.skip(n, |r| &mut r.corrupt);
                }
                rest = &rest[len..];
                continue;
            }
            Err(_) => {
                // A corrupt block: skip it by its length when that is sane, else stop there.
                n += 1;
                match block_len(rest, endianness) {
                    Some(len) => {
                        cap.skip(n, |r| &mut r.corrupt);
                        rest = &rest[len..];
                        continue;
                    }
                    None => {
                        cap.skip(n, |r| &mut r.cut_short);
                        cap.cut_short = true;
                        break;
                    }
                }
            }
        };
        rest = r;
        let (iface, data, ts) = match block {
            Block::EnhancedPacket(p) => (Some(p.interface_id), p.data, Some(p.timestamp.as_nanos() as u64)),
            Block::SimplePacket(p) => {
                // The block's data includes its padding: keep the original length at most.
                let keep = (p.original_len as usize).min(p.data.len());
                (Some(0), std::borrow::Cow::Owned(p.data[..keep].to_vec()), None)
            }
            Block::Packet(p) => (Some(p.interface_id as u32), p.data, Some(p.timestamp)),
            _ => (None, Default::default(), None),
        };
        let Some(iface) = iface else { continue };
        n += 1;
        let Some(idb) = parser.interfaces().get(iface as usize) else {
            cap.skip(n, |r| &mut r.corrupt);
            continue;
        };
        if idb.linktype != DataLink::ETHERNET {
            return Err(refuse(idb.linktype));
        }
        // pcap-file reads the raw timestamp as nanoseconds; scale by the interface's resolution.
        let ts_ns = ts.map(|t| (t as f64 * tick_ns(&idb.options)) as u64);
        let ts_ns = ts_ns.unwrap_or_else(|| cap.records.last().map_or(0, |r| r.ts_ns));
        cap.keep(n, &data, ts_ns, max_len);
    }
    Ok(cap)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pcap_header(link: u32, nano: bool) -> Vec<u8> {
        let magic: u32 = if nano { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
        let mut v = magic.to_le_bytes().to_vec();
        v.extend_from_slice(&2u16.to_le_bytes());
        v.extend_from_slice(&4u16.to_le_bytes());
        v.extend_from_slice(&[0; 8]);
        v.extend_from_slice(&65535u32.to_le_bytes());
        v.extend_from_slice(&link.to_le_bytes());
        v
    }

    fn record(v: &mut Vec<u8>, sec: u32, frac: u32, data: &[u8], orig: u32) {
        for x in [sec, frac, data.len() as u32, orig] {
            v.extend_from_slice(&x.to_le_bytes());
        }
        v.extend_from_slice(data);
    }

    fn frame(len: usize, fill: u8) -> Vec<u8> {
        vec![fill; len]
    }

    #[test]
    fn pcap_records_keep_bytes_and_timestamps_and_skip_bad_ones() {
        let mut f = pcap_header(1, false);
        record(&mut f, 1, 5, &frame(60, 1), 60);
        record(&mut f, 2, 0, &frame(10, 2), 10); // shorter than Ethernet
        record(&mut f, 3, 0, &frame(300, 3), 300); // longer than max_len 256
        record(&mut f, 4, 7, &frame(100, 4), 1500); // snaplen-truncated: replayed as captured
        record(&mut f, 5, 0, &frame(64, 5), 64);
        f.truncate(f.len() - 10); // the last one cut short at EOF
        let c = load(&f, 256).unwrap();
        assert_eq!(c.records.len(), 2);
        assert_eq!(c.skipped, vec![2, 3, 5]);
        assert!(c.cut_short);
        assert_eq!(c.bytes(&c.records[0]), &frame(60, 1)[..]);
        assert_eq!(c.records[0].ts_ns, 1_000_005_000);
        assert_eq!(c.bytes(&c.records[1]), &frame(100, 4)[..]);
        assert_eq!(c.records[1].ts_ns, 4_000_007_000);
    }

    #[test]
    fn nanosecond_pcap_and_bad_inputs() {
        let mut f = pcap_header(1, true);
        record(&mut f, 1, 5, &frame(60, 1), 60);
        let c = load(&f, 2048).unwrap();
        assert_eq!(c.records[0].ts_ns, 1_000_000_005);
        assert!(c.skipped.is_empty());
        assert!(load(b"garbage!garbage!garbage!garbage!", 2048).unwrap_err().contains("not a pcap"));
        assert!(load(b"ab", 2048).unwrap_err().contains("not a pcap"));
        let e = load(&pcap_header(101, false), 2048).unwrap_err();
        assert_eq!(e, "LINKTYPE_RAW (101): only Ethernet (1) can be replayed");
        assert!(load(&pcap_header(4242, false), 2048).unwrap_err().starts_with("link type 4242"));
    }

    fn block(v: &mut Vec<u8>, ty: u32, body: &[u8]) {
        let len = 12 + body.len().div_ceil(4) * 4;
        v.extend_from_slice(&ty.to_le_bytes());
        v.extend_from_slice(&(len as u32).to_le_bytes());
        v.extend_from_slice(body);
        v.resize(v.len() + (4 - body.len() % 4) % 4, 0);
        v.extend_from_slice(&(len as u32).to_le_bytes());
    }

    fn pcapng(link: u16, packets: &[(u32, &[u8])], corrupt_second: bool) -> Vec<u8> {
        let mut v = Vec::new();
        let mut shb = 0x1a2b_3c4du32.to_le_bytes().to_vec();
        shb.extend_from_slice(&1u16.to_le_bytes());
        shb.extend_from_slice(&0u16.to_le_bytes());
        shb.extend_from_slice(&(-1i64).to_le_bytes());
        block(&mut v, 0x0a0d_0d0a, &shb);
        let mut idb = link.to_le_bytes().to_vec();
        idb.extend_from_slice(&[0, 0]);
        idb.extend_from_slice(&0u32.to_le_bytes());
        // if_tsresol = 9 (nanoseconds), then opt_endofopt.
        idb.extend_from_slice(&[9, 0, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0]);
        block(&mut v, 1, &idb);
        for (i, (ts, data)) in packets.iter().enumerate() {
            let mut epb = 0u32.to_le_bytes().to_vec();
            epb.extend_from_slice(&0u32.to_le_bytes());
            epb.extend_from_slice(&ts.to_le_bytes());
            let caplen = if corrupt_second && i == 1 { 5000 } else { data.len() as u32 };
            epb.extend_from_slice(&caplen.to_le_bytes());
            epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
            epb.extend_from_slice(data);
            block(&mut v, 6, &epb);
        }
        v
    }

    #[test]
    fn pcapng_epbs_with_resolution_and_a_corrupt_block_skipped() {
        let (a, b, c) = (frame(60, 1), frame(70, 2), frame(80, 3));
        let f = pcapng(1, &[(1000, &a), (2000, &b), (3000, &c)], true);
        let cap = load(&f, 2048).unwrap();
        assert_eq!(cap.records.len(), 2);
        assert_eq!(cap.skipped, vec![2]);
        assert!(!cap.cut_short);
        assert_eq!(cap.bytes(&cap.records[0]), &a[..]);
        assert_eq!(cap.bytes(&cap.records[1]), &c[..]);
        assert_eq!(cap.records[1].ts_ns, 3000);
        let mut cut = pcapng(1, &[(1, &a), (2, &b)], false);
        cut.truncate(cut.len() - 30);
        let cap = load(&cut, 2048).unwrap();
        assert_eq!((cap.records.len(), cap.skipped.len(), cap.cut_short), (1, 1, true));
        // A section header option pcap-file refuses (shb_hardware not UTF-8): read without options.
        let mut odd = pcapng(1, &[(1, &a)], false);
        let shb_len = u32::from_le_bytes(odd[4..8].try_into().unwrap()) as usize;
        let mut shb = odd[..shb_len - 4].to_vec();
        shb.extend_from_slice(&[2, 0, 2, 0, 0xff, 0xfe, 0, 0, 0, 0, 0, 0]);
        let new_len = (shb.len() + 4) as u32;
        shb[4..8].copy_from_slice(&new_len.to_le_bytes());
        shb.extend_from_slice(&new_len.to_le_bytes());
        odd.splice(..shb_len, shb);
        assert!(pcap_file::pcapng::PcapNgParser::new(&odd).is_err(), "the option should upset pcap-file");
        let cap = load(&odd, 2048).unwrap();
        assert_eq!((cap.records.len(), cap.skipped.len()), (1, 0));
        let e = load(&pcapng(101, &[(1, &a)], false), 2048).unwrap_err();
        assert_eq!(e, "LINKTYPE_RAW (101): only Ethernet (1) can be replayed");
    }
}
