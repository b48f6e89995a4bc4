//! Tests of the capture loader, on captures built byte by byte.

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
