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
mod tests {
    use super::*;

    fn put(v: &mut Vec<u8>, x: u32, big: bool) {
        v.extend_from_slice(&u32_bytes(x, big));
    }

    fn put16(v: &mut Vec<u8>, x: u16, big: bool) {
        v.extend_from_slice(&if big { x.to_be_bytes() } else { x.to_le_bytes() });
    }

    fn pcap_header(link: u32, nano: bool, big: bool) -> Vec<u8> {
        let mut v = Vec::new();
        put(&mut v, if nano { 0xa1b2_3c4d } else { 0xa1b2_c3d4 }, big);
        put16(&mut v, 2, big);
        put16(&mut v, 4, big);
        v.extend_from_slice(&[0; 8]);
        put(&mut v, 65535, big);
        put(&mut v, link, big);
        v
    }

    fn record(v: &mut Vec<u8>, sec: u32, frac: u32, data: &[u8], orig: u32, big: bool) {
        for x in [sec, frac, data.len() as u32, orig] {
            put(v, x, big);
        }
        v.extend_from_slice(data);
    }

    fn frame(len: usize, fill: u8) -> Vec<u8> {
        vec![fill; len]
    }

    #[test]
    fn pcap_records_keep_bytes_and_timestamps_and_skip_bad_ones() {
        let mut f = pcap_header(1, false, false);
        record(&mut f, 1, 5, &frame(60, 1), 60, false);
        record(&mut f, 2, 0, &frame(10, 2), 10, false); // shorter than Ethernet
        record(&mut f, 3, 0, &frame(300, 3), 300, false); // longer than max_len 256
        record(&mut f, 4, 7, &frame(100, 4), 1500, false); // snaplen-truncated: replayed as captured
        record(&mut f, 5, 0, &frame(64, 5), 64, false);
        f.truncate(f.len() - 10); // the last one cut short at EOF
        let c = load(&f, 256).unwrap();
        assert_eq!(c.records.len(), 2);
        assert_eq!(c.skipped, vec![2, 3, 5]);
        assert_eq!(c.reasons, Skipped { short: 1, too_long: 1, corrupt: 0, cut_short: 1 });
        assert!(c.cut_short);
        assert_eq!(c.bytes(&c.records[0]), &frame(60, 1)[..]);
        assert_eq!(c.records[0].ts_ns, 1_000_005_000);
        assert_eq!(c.bytes(&c.records[1]), &frame(100, 4)[..]);
        assert_eq!((c.records[1].ts_ns, c.records[1].num), (4_000_007_000, 4));
    }

    #[test]
    fn nanosecond_and_big_endian_pcap_and_bad_inputs() {
        for (nano, big) in [(true, false), (false, true), (true, true)] {
            let mut f = pcap_header(1, nano, big);
            record(&mut f, 1, 5, &frame(60, 1), 60, big);
            let c = load(&f, 2048).unwrap();
            assert_eq!(c.records[0].ts_ns, if nano { 1_000_000_005 } else { 1_000_005_000 });
            assert_eq!((c.bytes(&c.records[0]), c.skipped.len()), (&frame(60, 1)[..], 0));
        }
        assert!(load(b"garbage!garbage!garbage!garbage!", 2048).unwrap_err().contains("not a pcap"));
        assert!(load(b"ab", 2048).unwrap_err().contains("not a pcap"));
        assert!(load(&pcap_header(1, false, false)[..20], 2048).unwrap_err().contains("cut short"));
        let e = load(&pcap_header(101, false, false), 2048).unwrap_err();
        assert_eq!(e, "LINKTYPE_RAW (101): only Ethernet (1) can be replayed");
        assert!(load(&pcap_header(9, false, true), 2048).unwrap_err().starts_with("LINKTYPE_PPP (9): only"));
        assert!(load(&pcap_header(4242, false, false), 2048).unwrap_err().starts_with("link type 4242"));
    }

    fn block(v: &mut Vec<u8>, ty: u32, body: &[u8], big: bool) {
        let len = 12 + body.len().div_ceil(4) as u32 * 4;
        put(v, ty, big);
        put(v, len, big);
        v.extend_from_slice(body);
        v.resize(v.len() + (4 - body.len() % 4) % 4, 0);
        put(v, len, big);
    }

    /// A section header, then interfaces of `(link type, options)`.
    fn section(v: &mut Vec<u8>, ifaces: &[(u16, Vec<u8>)], big: bool) {
        let mut shb = Vec::new();
        put(&mut shb, 0x1a2b_3c4d, big);
        put16(&mut shb, 1, big);
        put16(&mut shb, 0, big);
        shb.extend_from_slice(&[0xff; 8]); // section length -1
        block(v, SHB_MAGIC, &shb, big);
        for (link, opts) in ifaces {
            let mut idb = Vec::new();
            put16(&mut idb, *link, big);
            put16(&mut idb, 0, big);
            put(&mut idb, 0, big);
            idb.extend_from_slice(opts);
            block(v, IDB_MAGIC, &idb, big);
        }
    }

    /// An option (code, value) padded to 32 bits.
    fn opt(code: u16, value: &[u8], big: bool) -> Vec<u8> {
        let mut v = Vec::new();
        put16(&mut v, code, big);
        put16(&mut v, value.len() as u16, big);
        v.extend_from_slice(value);
        v.resize(v.len().div_ceil(4) * 4, 0);
        v
    }

    fn epb(v: &mut Vec<u8>, iface: u32, ts: u64, data: &[u8], caplen: u32, big: bool) {
        let mut b = Vec::new();
        for x in [iface, (ts >> 32) as u32, ts as u32, caplen, data.len() as u32] {
            put(&mut b, x, big);
        }
        b.extend_from_slice(data);
        block(v, EPB_MAGIC, &b, big);
    }

    fn pcapng(link: u16, packets: &[(u64, &[u8])], corrupt_second: bool) -> Vec<u8> {
        let mut v = Vec::new();
        section(&mut v, &[(link, [opt(9, &[9], false), opt(0, &[], false)].concat())], false);
        for (i, (ts, data)) in packets.iter().enumerate() {
            let caplen = if corrupt_second && i == 1 { 5000 } else { data.len() as u32 };
            epb(&mut v, 0, *ts, data, caplen, false);
        }
        v
    }

    #[test]
    fn pcapng_epbs_with_resolution_and_a_corrupt_block_skipped() {
        let (a, b, c) = (frame(60, 1), frame(70, 2), frame(80, 3));
        let f = pcapng(1, &[(1000, &a), (2000, &b), (3000, &c)], true);
        let cap = load(&f, 2048).unwrap();
        assert_eq!(cap.records.len(), 2);
        assert_eq!((cap.skipped.clone(), cap.reasons.corrupt), (vec![2], 1));
        assert!(!cap.cut_short);
        assert_eq!(cap.bytes(&cap.records[0]), &a[..]);
        assert_eq!(cap.bytes(&cap.records[1]), &c[..]);
        assert_eq!(cap.records[1].ts_ns, 3000);
        let mut cut = pcapng(1, &[(1, &a), (2, &b)], false);
        cut.truncate(cut.len() - 30);
        let cap = load(&cut, 2048).unwrap();
        assert_eq!((cap.records.len(), cap.skipped.len(), cap.cut_short), (1, 1, true));
        // A section header option running past its block, and an interface block with a bad
        // trailer: both read without their options.
        let mut odd = Vec::new();
        section(&mut odd, &[(1, opt(9, &[9], false))], false);
        let shb_len = u32::from_le_bytes(odd[4..8].try_into().unwrap()) as usize;
        odd.splice(shb_len - 4..shb_len - 4, [2, 0, 200, 0, 1, 2, 3, 4]);
        let shb_len = shb_len + 8;
        odd[4..8].copy_from_slice(&(shb_len as u32).to_le_bytes());
        odd[shb_len - 4..shb_len].copy_from_slice(&(shb_len as u32).to_le_bytes());
        let end = odd.len();
        odd[end - 4..].copy_from_slice(&4u32.to_le_bytes());
        epb(&mut odd, 0, 7, &a, a.len() as u32, false);
        let cap = load(&odd, 2048).unwrap();
        assert_eq!((cap.records.len(), cap.skipped.len(), cap.records[0].ts_ns), (1, 0, 7000));
        let e = load(&pcapng(101, &[(1, &a)], false), 2048).unwrap_err();
        assert_eq!(e, "LINKTYPE_RAW (101): only Ethernet (1) can be replayed");
        assert!(load(&f[..20], 2048).unwrap_err().contains("not a valid pcapng file: section header: cut short"));
    }

    /// Two sections (big-endian, then little-endian) with several interfaces and every packet block.
    fn mixed() -> Vec<u8> {
        let mut v = Vec::new();
        for big in [true, false] {
            let offset = opt(14, &if big { 10i64.to_be_bytes() } else { 10i64.to_le_bytes() }, big);
            section(&mut v, &[(1, vec![]), (1, [opt(9, &[0x80 | 10], big), offset].concat())], big);
            block(&mut v, 4, &[0; 4], big); // name resolution: not a packet
            epb(&mut v, 0, 5, &frame(60, 1), 60, big); // microseconds
            epb(&mut v, 1, 1024, &frame(61, 2), 61, big); // 2^-10 s, + 10 s
            let mut spb = Vec::new();
            put(&mut spb, 62, big);
            block(&mut v, SPB_MAGIC, &[spb, frame(62, 3)].concat(), big); // no timestamp: the previous
            let mut pb = Vec::new();
            put16(&mut pb, 1, big);
            put16(&mut pb, 0, big);
            for x in [0, 2048, 63, 63] {
                put(&mut pb, x, big);
            }
            block(&mut v, PB_MAGIC, &[pb, frame(63, 4)].concat(), big);
            epb(&mut v, 7, 0, &frame(60, 5), 60, big); // no interface 7
        }
        v
    }

    #[test]
    fn pcapng_sections_interfaces_and_every_packet_block() {
        let cap = load(&mixed(), 2048).unwrap();
        let s = 1_000_000_000;
        let ts: Vec<_> = cap.records.iter().map(|r| (r.num, r.len, r.ts_ns)).collect();
        let one = [(1, 60, 5000), (2, 61, 11 * s), (3, 62, 11 * s), (4, 63, 12 * s)];
        let two: Vec<_> = one.iter().map(|&(n, l, t)| (n + 5, l, t)).collect();
        assert_eq!(ts, [&one[..], &two[..]].concat());
        assert_eq!(cap.bytes(&cap.records[2]), &frame(62, 3)[..]);
        assert_eq!((cap.skipped.clone(), cap.reasons.corrupt), (vec![5, 10], 2));
        let mut sll = Vec::new();
        section(&mut sll, &[(1, vec![]), (113, vec![])], false);
        epb(&mut sll, 0, 0, &frame(60, 1), 60, false);
        epb(&mut sll, 1, 0, &frame(60, 1), 60, false);
        assert_eq!(load(&sll, 2048).unwrap_err(), "LINKTYPE_LINUX_SLL (113): only Ethernet (1) can be replayed");
    }

    #[test]
    fn no_panic_on_cut_or_damaged_files() {
        let mut p = pcap_header(1, false, true);
        record(&mut p, 1, 2, &frame(60, 1), 60, true);
        for f in [mixed(), pcapng(1, &[(1, &frame(60, 1))], false), p] {
            for i in 0..f.len() {
                let _ = load(&f[..i], 2048);
                for x in [0, 0x7f, 0xff] {
                    let mut g = f.clone();
                    g[i] = x;
                    let _ = load(&g, 2048);
                }
            }
        }
    }
}
