//! Reading a whole capture (pcap or pcapng) into memory: one byte buffer and a table of records, so
//! RX does no I/O and no parsing per packet. Parsing is pcap-parser's; the obsolete pcapng packet
//! block (which it does not know) is read here.

use pcap_parser::nom::IResult;
use pcap_parser::{
    parse_block_be, parse_block_le, parse_pcap_frame, parse_pcap_frame_be, parse_pcap_frame_modified,
    parse_pcap_header, Block, InterfaceDescriptionBlock, LegacyPcapBlock, Linktype, OptionCode, PcapError, EPB_MAGIC,
    IDB_MAGIC, SHB_MAGIC, SPB_MAGIC,
};

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

/// Common link types pcap-parser has no name for.
const MORE_NAMES: [(i32, &str); 7] = [
    (9, "PPP"),
    (50, "PPP_HDLC"),
    (51, "PPP_ETHER"),
    (104, "C_HDLC"),
    (105, "IEEE802_11"),
    (127, "IEEE802_11_RADIOTAP"),
    (271, "VSOCK"),
];

/// `LINKTYPE_RAW (101)`-style name of a link type (`link type N` when it has no name here).
pub fn link_name(l: Linktype) -> String {
    let n = l.0 as u32;
    let named = l.to_string(); // pcap-parser's name, or `Linktype(N / 0x..)`
    match MORE_NAMES.iter().find(|(code, _)| *code == l.0) {
        _ if !named.starts_with("Linktype(") => format!("LINKTYPE_{named} ({n})"),
        Some((_, name)) => format!("LINKTYPE_{name} ({n})"),
        None => format!("link type {n}"),
    }
}

fn refuse(l: Linktype) -> String {
    format!("{}: only Ethernet (1) can be replayed", link_name(l))
}

/// Parses `bytes` (a whole pcap or pcapng file). Records shorter than an Ethernet header or longer
/// than `max_len` are skipped and listed, and so is a record cut short at the end of the file or a
/// corrupt pcapng block. Errors: not a capture, or a link type other than Ethernet.
pub fn load(bytes: &[u8], max_len: usize) -> Result<Capture, String> {
    match bytes.get(..4) {
        Some(m) if m == SHB_MAGIC.to_le_bytes() => load_pcapng(bytes, max_len),
        Some(m) => load_pcap(bytes, m, max_len),
        None => Err(format!("not a pcap or pcapng file: {} bytes", bytes.len())),
    }
}

type Frame = for<'a> fn(&'a [u8]) -> IResult<&'a [u8], LegacyPcapBlock<'a>, PcapError<&'a [u8]>>;

fn load_pcap(bytes: &[u8], magic: &[u8], max_len: usize) -> Result<Capture, String> {
    let (mut rest, h) = parse_pcap_header(bytes).map_err(|e| match e {
        pcap_parser::nom::Err::Incomplete(_) => "not a pcap or pcapng file: header cut short".to_string(),
        _ => format!("not a pcap or pcapng file: unknown magic number {magic:02x?}"),
    })?;
    if h.network != Linktype::ETHERNET {
        return Err(refuse(h.network));
    }
    let frame: Frame = match (h.is_modified_format(), h.is_bigendian()) {
        (true, _) => parse_pcap_frame_modified,
        (false, true) => parse_pcap_frame_be,
        (false, false) => parse_pcap_frame,
    };
    let frac_ns = if h.is_nanosecond_precision() { 1 } else { 1000 };
    let mut cap = Capture::default();
    let mut n = 0;
    while !rest.is_empty() {
        n += 1;
        let Ok((r, p)) = frame(rest) else {
            // Cut short at the end of the file (a header or data not all there).
            cap.skip(n, |r| &mut r.cut_short);
            cap.cut_short = true;
            break;
        };
        cap.keep(n, p.data, p.ts_sec as u64 * 1_000_000_000 + p.ts_usec as u64 * frac_ns, max_len);
        rest = r;
    }
    Ok(cap)
}

/// An interface of the current pcapng section.
struct Iface {
    link: Linktype,
    /// Timestamp units per second (if_tsresol; None when too fine to count in a u128).
    per_s: Option<u128>,
    /// Seconds added to its timestamps (if_tsoffset).
    offset_s: i64,
}

impl Iface {
    fn new(idb: &InterfaceDescriptionBlock<'_>, big: bool) -> Iface {
        let r = idb.if_tsresol;
        let per_s = if r & 0x80 != 0 { 1u128.checked_shl((r & 0x7f) as u32) } else { 10u128.checked_pow(r as u32) };
        let offset = idb.options.iter().find(|o| o.code == OptionCode::IfTsoffset);
        let offset = offset.and_then(|o| <[u8; 8]>::try_from(o.value.get(..8)?).ok());
        let offset_s = offset.map_or(0, |b| if big { i64::from_be_bytes(b) } else { i64::from_le_bytes(b) });
        Iface { link: idb.linktype, per_s, offset_s }
    }

    /// A raw timestamp of this interface in nanoseconds since the epoch.
    fn ts_ns(&self, raw: u64) -> u64 {
        let ns = self.per_s.map_or(0, |p| raw as u128 * 1_000_000_000 / p) as i128;
        (ns + self.offset_s as i128 * 1_000_000_000).clamp(0, u64::MAX as i128) as u64
    }
}

/// What a pcapng block holds, for the loader.
enum Item<'a> {
    /// A section header: big-endian or not.
    Section(bool),
    /// An interface description.
    Iface(Iface),
    /// A packet: its interface, captured bytes and raw timestamp (none in a simple packet block).
    Packet(u32, &'a [u8], Option<u64>),
    /// Any other block (passed over).
    Other,
}

/// Obsolete packet block: pcap-parser reads it as an unknown block.
const PB_MAGIC: u32 = 2;

/// Byte-order magic of a section header, as it reads in a big- and a little-endian file.
const BOM_BE: [u8; 4] = [0x1a, 0x2b, 0x3c, 0x4d];
const BOM_LE: [u8; 4] = [0x4d, 0x3c, 0x2b, 0x1a];

fn u32_at(src: &[u8], at: usize, big: bool) -> Option<u32> {
    let b: [u8; 4] = src.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(if big { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) })
}

fn u32_bytes(v: u32, big: bool) -> [u8; 4] {
    if big {
        v.to_be_bytes()
    } else {
        v.to_le_bytes()
    }
}

/// The byte order of the block at the start of `src`: a section header's own, else the section's.
fn order(src: &[u8], big: bool) -> bool {
    match (u32_at(src, 0, false), src.get(8..12)) {
        (Some(SHB_MAGIC), Some(bom)) if bom == BOM_BE || bom == BOM_LE => bom == BOM_BE,
        _ => big,
    }
}

/// Length of the block at the start of `src` per its header, when it is sane (so it can be skipped).
fn block_len(src: &[u8], big: bool) -> Option<usize> {
    let len = u32_at(src, 4, order(src, big))? as usize;
    (len >= 12 && len.is_multiple_of(4) && len <= src.len()).then_some(len)
}

/// The block at the start of `src` (in a section of byte order `big`) and its length.
fn block(src: &[u8], big: bool) -> Option<(Item<'_>, usize)> {
    match u32_at(src, 0, big)? {
        SHB_MAGIC | IDB_MAGIC | SPB_MAGIC | EPB_MAGIC => {
            let (rest, b) = if big { parse_block_be(src) } else { parse_block_le(src) }.ok()?;
            let item = match b {
                Block::SectionHeader(s) => Item::Section(s.big_endian()),
                Block::InterfaceDescription(i) => Item::Iface(Iface::new(&i, big)),
                Block::EnhancedPacket(e) => {
                    let data = e.data.get(..e.caplen as usize).unwrap_or(e.data);
                    Item::Packet(e.if_id, data, Some(((e.ts_high as u64) << 32) | e.ts_low as u64))
                }
                // The block's data includes its padding: keep the original length at most.
                Block::SimplePacket(s) => Item::Packet(0, s.data.get(..s.origlen as usize).unwrap_or(s.data), None),
                _ => Item::Other,
            };
            Some((item, src.len() - rest.len()))
        }
        PB_MAGIC => {
            // Interface (16 bits), drops (16), timestamp high and low, caplen, origlen, data, options.
            let len = block_len(src, big)?;
            let end = 28usize.checked_add(u32_at(src, 20, big)? as usize)?;
            if end > len - 4 || u32_at(src, len - 4, big)? != len as u32 {
                return None;
            }
            let w = u32_at(src, 8, big)?;
            let iface = if big { w >> 16 } else { w & 0xffff };
            let ts = ((u32_at(src, 12, big)? as u64) << 32) | u32_at(src, 16, big)? as u64;
            Some((Item::Packet(iface, src.get(28..end)?, Some(ts)), len))
        }
        _ => Some((Item::Other, block_len(src, big)?)),
    }
}

/// A section header (SHB) or interface description (IDB) block at the start of `src` that could
/// not be parsed (options that do not parse, a bad trailer), read without its options.
fn bare(src: &[u8], big: bool) -> Option<(Item<'static>, usize)> {
    let big = order(src, big);
    let fixed = match u32_at(src, 0, big)? {
        SHB_MAGIC => 16,
        IDB_MAGIC => 8,
        _ => return None,
    };
    let len = block_len(src, big).filter(|&len| len >= 12 + fixed)?;
    let total = u32_bytes(12 + fixed as u32, big);
    let v = [src.get(..4)?, &total, src.get(8..8 + fixed)?, &total].concat();
    match block(&v, big)?.0 {
        Item::Section(b) => Some((Item::Section(b), len)),
        Item::Iface(i) => Some((Item::Iface(i), len)),
        _ => None,
    }
}

fn load_pcapng(bytes: &[u8], max_len: usize) -> Result<Capture, String> {
    let (mut cap, mut ifaces, mut big, mut n) = (Capture::default(), Vec::<Iface>::new(), false, 0);
    let mut rest = bytes;
    while !rest.is_empty() {
        let Some((item, len)) = block(rest, big).or_else(|| bare(rest, big)) else {
            if rest.len() == bytes.len() {
                let why = match bytes.get(8..12) {
                    Some(m) if m != BOM_BE && m != BOM_LE => format!("byte-order magic {m:02x?} not recognized"),
                    Some(_) if block_len(bytes, big).is_some() => "malformed".to_string(),
                    _ => "cut short".to_string(),
                };
                return Err(format!("not a valid pcapng file: section header: {why}"));
            }
            // A corrupt block: skip it by its length when that is sane, else stop there.
            n += 1;
            match block_len(rest, big) {
                Some(len) => {
                    cap.skip(n, |r| &mut r.corrupt);
                    rest = rest.get(len..).unwrap_or_default();
                    continue;
                }
                None => {
                    cap.skip(n, |r| &mut r.cut_short);
                    cap.cut_short = true;
                    break;
                }
            }
        };
        rest = rest.get(len..).unwrap_or_default();
        match item {
            Item::Section(b) => {
                big = b;
                ifaces.clear();
            }
            Item::Iface(i) => ifaces.push(i),
            Item::Packet(iface, data, ts) => {
                n += 1;
                let Some(i) = ifaces.get(iface as usize) else {
                    cap.skip(n, |r| &mut r.corrupt);
                    continue;
                };
                if i.link != Linktype::ETHERNET {
                    return Err(refuse(i.link));
                }
                // A simple packet block has no timestamp: the previous record's.
                let ts_ns = ts.map_or_else(|| cap.records.last().map_or(0, |r| r.ts_ns), |t| i.ts_ns(t));
                cap.keep(n, data, ts_ns, max_len);
            }
            Item::Other => {}
        }
    }
    Ok(cap)
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
