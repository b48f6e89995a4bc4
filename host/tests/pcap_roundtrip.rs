//! The `pcap` driver end to end on the real dataplane: a capture replayed through `io` into a pcap TX
//! port comes out byte for byte; repeat, queues and pacing; engines and TX offloads seen in the
//! written file (with etherparse, and tcpdump when installed); config errors.

mod common;

use common::pcap::{self, Rec};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use wasmdp::dataplane::{self, Overrides, RunOptions};

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wasmdp-pcap-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `frames` as a microsecond pcap, 1 ms apart; `(data, orig_len)`.
fn write_capture(path: &Path, frames: &[(Vec<u8>, u32)]) {
    let recs: Vec<Rec> = frames
        .iter()
        .enumerate()
        .map(|(i, (d, orig))| Rec {
            ts: Duration::from_millis(1_700_000_000_000 + i as u64),
            data: d.clone(),
            orig_len: *orig,
        })
        .collect();
    pcap::write_us(path, pcap::ETHERNET, &recs);
}

/// Every record of a pcap file: (data, orig_len), and whether the header says nanoseconds.
fn read_capture(path: &Path) -> (Vec<(Vec<u8>, u32)>, bool) {
    let p = pcap::read(path);
    assert_eq!(p.link, pcap::ETHERNET);
    (p.recs.into_iter().map(|r| (r.data, r.orig_len)).collect(), p.nano)
}

/// Deterministic frames of varied sizes (60..=1514), one snaplen-truncated.
fn frames(n: usize) -> Vec<(Vec<u8>, u32)> {
    (0..n)
        .map(|i| {
            let len = 60 + (i * 97) % 1455;
            let d: Vec<u8> = (0..len).map(|j| (i * 31 + j * 7) as u8).collect();
            let orig = if i == 5 { len as u32 + 100 } else { len as u32 };
            (d, orig)
        })
        .collect()
}

fn yaml_pair(rx: &Path, tx: &Path, rx_extra: &str, tx_extra: &str) -> String {
    format!(
        "pool: {{size: 1024, cache_size: 32}}\nstreams:\n  - {{rx: in, tx: out}}\nports:\n  - {{name: in, driver: pcap, pcap: {{rx: \"{}\"{rx_extra}}}}}\n  - {{name: out, driver: pcap, pcap: {{tx: \"{}\"{tx_extra}}}}}\n",
        rx.display(),
        tx.display()
    )
}

#[test]
fn io_round_trip_is_byte_for_byte() {
    let d = dir("roundtrip");
    let (input, out) = (d.join("in.pcap"), d.join("out.pcap"));
    let f = frames(300);
    write_capture(&input, &f);
    let (j, _) = common::run_until(&yaml_pair(&input, &out, "", ""), 300);
    assert_eq!(j["totals"]["tx_packets"], 300, "{j}");
    let (got, nano) = read_capture(&out);
    assert!(nano, "TX files have nanosecond timestamps");
    let p = pcap::read(&out);
    assert_eq!((p.big, p.snaplen), (false, 65535), "TX files are little-endian, snap length 65535");
    assert_eq!(got.len(), 300);
    for (i, ((g, glen), (w, _))) in got.iter().zip(&f).enumerate() {
        assert_eq!(g, w, "record {i}");
        assert_eq!(*glen as usize, w.len(), "record {i}: written as captured");
    }
    let bytes: usize = f.iter().map(|(d, _)| d.len()).sum();
    assert_eq!(j["ports"][0]["rx_bytes"], bytes as u64, "{j}");
}

#[test]
fn a_tcpdump_capture_round_trips() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/pcaps/tcpdump-tests");
    let input = corpus.join("802.1ad_QinQ.pcap");
    if !input.exists() {
        common::skip("tcpdump capture round trip", &format!("{} is absent", input.display()), common::Skip::Optional);
        return;
    }
    let (want, _) = read_capture(&input);
    let want: Vec<_> = want.into_iter().filter(|(d, _)| (14..=2048).contains(&d.len())).collect();
    assert!(!want.is_empty());
    let d = dir("tcpdump");
    let out = d.join("out.pcap");
    common::run_until(&yaml_pair(&input, &out, "", ""), want.len() as u64);
    let (got, _) = read_capture(&out);
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.0, w.0, "record {i}");
    }
}

#[test]
fn repeat_and_queues_split_the_capture() {
    let d = dir("queues");
    let (input, out) = (d.join("in.pcap"), d.join("out.pcap"));
    let f = frames(41);
    write_capture(&input, &f);
    let yaml = format!(
        "pool: {{size: 1024, cache_size: 32}}\nstreams:\n  - {{rx: in, rx_queue: 0, tx: out, tx_queue: 0}}\n  - {{rx: in, rx_queue: 1, tx: out, tx_queue: 1}}\nports:\n  - {{name: in, driver: pcap, queues: 2, pcap: {{rx: \"{}\", repeat: 3}}}}\n  - {{name: out, driver: pcap, queues: 2, pcap: {{tx: \"{}\"}}}}\n",
        input.display(),
        out.display()
    );
    common::run_until(&yaml, 3 * 41);
    assert!(!out.exists(), "with 2 queues the files are out-q0.pcap and out-q1.pcap");
    for q in 0..2 {
        let (got, _) = read_capture(&d.join(format!("out-q{q}.pcap")));
        let want: Vec<_> = f.iter().skip(q).step_by(2).map(|(d, _)| d.clone()).collect();
        assert_eq!(got.len(), 3 * want.len(), "queue {q}");
        for (i, (g, _)) in got.iter().enumerate() {
            assert_eq!(g, &want[i % want.len()], "queue {q} record {i}");
        }
    }
}

#[test]
fn pacing_by_rate_and_by_capture_timing_spreads_the_replay() {
    let d = dir("pacing");
    let (input, out) = (d.join("in.pcap"), d.join("out.pcap"));
    // 1 ms apart: 29 ms at the capture's timing.
    write_capture(&input, &frames(30));
    // The spread is measured on the recorded timestamps (not on the wall clock around the run), and
    // bounded on both sides, with room for a loaded machine above.
    let (_, took) = common::run_until(&yaml_pair(&input, &out, ", rate_pps: 100", ""), 30);
    let gap = spread(&out);
    assert!(
        (Duration::from_millis(280)..Duration::from_millis(600)).contains(&gap),
        "30 packets at 100 pps spread over {gap:?} (run {took:?})"
    );
    let (_, took) = common::run_until(&yaml_pair(&input, &out, ", timing: true, repeat: 4", ""), 120);
    // 4 passes of 30 ms (29 ms + one mean gap): the last packet 119 ms after the first.
    let gap = spread(&out);
    assert!(
        (Duration::from_millis(110)..Duration::from_millis(400)).contains(&gap),
        "4 passes of a 30 ms capture spread over {gap:?} (run {took:?})"
    );
    assert_eq!(read_capture(&out).0.len(), 120);
}

/// Time from the first to the last record of a pcap file, by its timestamps.
fn spread(path: &Path) -> Duration {
    let ts: Vec<Duration> = pcap::read(path).recs.iter().map(|r| r.ts).collect();
    ts.last().copied().unwrap_or_default() - ts.first().copied().unwrap_or_default()
}

/// A UDP/IPv4 frame with zeroed checksums.
fn udp_frame(i: u16) -> Vec<u8> {
    let b = etherparse::PacketBuilder::ethernet2([2, 0, 0, 0, 0, 0xaa], [2, 0, 0, 0, 0, 0xbb])
        .ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64)
        .udp(1000 + i, 9999);
    let payload = vec![i as u8; 40 + i as usize];
    let mut v = Vec::new();
    b.write(&mut v, &payload).unwrap();
    v[24] = 0; // IPv4 header checksum
    v[25] = 0;
    v[40] = 0; // UDP checksum
    v[41] = 0;
    v
}

fn tcpdump(out: &Path) -> Option<String> {
    let ok = std::process::Command::new("which").arg("tcpdump").output().is_ok_and(|o| o.status.success());
    if !ok {
        common::skip(
            "tcpdump check",
            "tcpdump is not installed (scripts/setup.sh installs it)",
            common::Skip::Required,
        );
        return None;
    }
    let o = std::process::Command::new("tcpdump").args(["-r"]).arg(out).args(["-nn", "-e", "-v"]).output().unwrap();
    assert!(o.status.success(), "tcpdump: {}", String::from_utf8_lossy(&o.stderr));
    Some(String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn engines_and_offloads_are_in_the_written_file() {
    let d = dir("offloads");
    let input = d.join("in.pcap");
    let sent: Vec<Vec<u8>> = (0..8).map(udp_frame).collect();
    write_capture(&input, &sent.iter().map(|f| (f.clone(), f.len() as u32)).collect::<Vec<_>>());
    let case = |name: &str, engine: &str, tx_extra: &str| -> (Vec<Vec<u8>>, PathBuf) {
        let out = d.join(format!("{name}.pcap"));
        let yaml = yaml_pair(&input, &out, "", "")
            .replace("\n  - {name: in, driver: pcap,", &format!("\n  - {{name: in, engine: {engine}, driver: pcap,"));
        let yaml = yaml.replace("{name: out, driver: pcap,", &format!("{{name: out, driver: pcap{tx_extra},"));
        common::run_until(&yaml, sent.len() as u64);
        (read_capture(&out).0.into_iter().map(|(d, _)| d).collect(), out)
    };

    let (got, _) = case("macswap", "macswap", "");
    for (g, s) in got.iter().zip(&sent) {
        assert_eq!(&g[..6], &s[6..12]);
        assert_eq!(&g[6..12], &s[..6]);
        assert_eq!(&g[12..], &s[12..]);
    }

    let (got, _) = case("5tswap", "5tswap", "");
    for (g, s) in got.iter().zip(&sent) {
        let g = etherparse::SlicedPacket::from_ethernet(g).unwrap();
        let s = etherparse::SlicedPacket::from_ethernet(s).unwrap();
        let (Some(etherparse::NetSlice::Ipv4(gi)), Some(etherparse::NetSlice::Ipv4(si))) = (&g.net, &s.net) else {
            panic!("not IPv4")
        };
        assert_eq!(gi.header().source(), si.header().destination());
        assert_eq!(gi.header().destination(), si.header().source());
        let (Some(etherparse::TransportSlice::Udp(gu)), Some(etherparse::TransportSlice::Udp(su))) =
            (&g.transport, &s.transport)
        else {
            panic!("not UDP")
        };
        assert_eq!((gu.source_port(), gu.destination_port()), (su.destination_port(), su.source_port()));
    }

    let (got, out) = case("vlan", "io", ", tx_offloads: [vlan_insert], tx_vlan: 5");
    for (g, s) in got.iter().zip(&sent) {
        assert_eq!(g.len(), s.len() + 4);
        assert_eq!(&g[12..16], &[0x81, 0x00, 0, 5]);
        let p = etherparse::SlicedPacket::from_ethernet(g).unwrap();
        assert!(matches!(p.net, Some(etherparse::NetSlice::Ipv4(_))), "IPv4 behind the tag");
    }
    if let Some(text) = tcpdump(&out) {
        assert_eq!(text.matches("vlan 5").count(), sent.len(), "{text}");
    }

    let (got, out) = case("cksum", "io", ", tx_offloads: [ipv4_cksum, udp_cksum]");
    for g in &got {
        let p = etherparse::SlicedPacket::from_ethernet(g).unwrap();
        let Some(etherparse::NetSlice::Ipv4(ip)) = &p.net else { panic!("not IPv4") };
        let h = ip.header().to_header();
        assert_eq!(h.header_checksum, h.calc_header_checksum(), "IPv4 header checksum");
        let Some(etherparse::TransportSlice::Udp(u)) = &p.transport else { panic!("not UDP") };
        let want = u.to_header().calc_checksum_ipv4(&h, u.payload()).unwrap();
        assert_eq!(u.checksum(), want, "UDP checksum");
    }
    if let Some(text) = tcpdump(&out) {
        // tcpdump -v checks both sums: it would say "bad cksum" / "bad udp cksum".
        assert!(!text.contains("bad"), "{text}");
        assert_eq!(text.matches("UDP, length").count(), sent.len(), "{text}");
    }
}

fn check_err(yaml: &str) -> String {
    format!("{:#}", wasmdp::config::parse(yaml, "test").unwrap_err())
}

fn build_err(yaml: &str) -> String {
    let cfg = wasmdp::config::parse(yaml, "test").unwrap_or_else(|e| panic!("{e:#}"));
    match dataplane::build(&cfg, &Overrides::default()) {
        Ok(_) => panic!("built"),
        Err(e) => format!("{e:#}"),
    }
}

#[test]
fn config_errors_name_the_key_and_the_file() {
    let d = dir("errors");
    let e = check_err("ports:\n  - {name: p, driver: pcap}\n");
    assert!(e.contains("pcap: missing; driver `pcap` needs `pcap: {rx: FILE}` and/or `pcap: {tx: FILE}`"), "{e}");
    let e = check_err("ports:\n  - {name: p, driver: pcap, pcap: {repeat: 2}}\n");
    assert!(e.contains("pcap: neither `rx` nor `tx`"), "{e}");
    let e = check_err("ports:\n  - {name: p, driver: pcap, pcap: {rx: /nonexistent/x.pcap}}\n");
    assert!(e.contains("pcap.rx: file `/nonexistent/x.pcap` does not exist"), "{e}");
    let e = check_err("ports:\n  - {name: p, driver: pcap, pcap: {tx: /nonexistent/dir/x.pcap}}\n");
    assert!(e.contains("pcap.tx: directory `/nonexistent/dir`"), "{e}");
    let e = check_err("ports:\n  - {name: p, driver: null, pcap: {tx: x.pcap}}\n");
    assert!(e.contains("pcap: only for driver `pcap`"), "{e}");
    let e = check_err("ports:\n  - {name: p, driver: pcap, ring: {peer: p}, pcap: {tx: x.pcap}}\n");
    assert!(e.contains("ring: only for driver `ring`"), "{e}");

    // Refused at open: not a capture, or not Ethernet.
    let junk = d.join("junk.pcap");
    std::fs::write(&junk, b"this is not a capture file at all").unwrap();
    let e = build_err(&format!("ports:\n  - {{name: p, driver: pcap, pcap: {{rx: \"{}\"}}}}\n", junk.display()));
    assert!(e.contains("junk.pcap") && e.contains("not a pcap or pcapng file"), "{e}");
    let raw = d.join("raw.pcap");
    pcap::write_us(&raw, pcap::RAW, &[]);
    let e = build_err(&format!("ports:\n  - {{name: p, driver: pcap, pcap: {{rx: \"{}\"}}}}\n", raw.display()));
    assert!(e.contains("raw.pcap") && e.contains("LINKTYPE_RAW (101): only Ethernet (1) can be replayed"), "{e}");
}

#[test]
fn a_tx_file_is_a_valid_pcap_even_when_nothing_was_sent() {
    let d = dir("empty");
    let out = d.join("out.pcap");
    let yaml = format!("ports:\n  - {{name: p, driver: pcap, pcap: {{tx: \"{}\"}}}}\n", out.display());
    let cfg = wasmdp::config::parse(&yaml, "test").unwrap();
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    assert_eq!(read_capture(&out).0.len(), 0, "the header is on disk at open");
    let opts = RunOptions { duration: Some(Duration::from_millis(50)), ..Default::default() };
    let r = dataplane::run(dp, &opts, Arc::new(AtomicBool::new(false))).unwrap();
    assert_eq!(r.json["totals"]["rx_packets"], 0);
    assert_eq!(read_capture(&out).0.len(), 0);
}

#[test]
fn records_longer_than_the_data_room_are_skipped_not_truncated() {
    let d = dir("dataroom");
    let (input, out) = (d.join("in.pcap"), d.join("out.pcap"));
    let f = frames(60);
    write_capture(&input, &f);
    let fit: Vec<_> = f.iter().filter(|(d, _)| d.len() <= 1024).map(|(d, _)| d.clone()).collect();
    assert!(fit.len() < f.len() && !fit.is_empty());
    let yaml = yaml_pair(&input, &out, "", "").replace("pool: {size: 1024,", "pool: {size: 1024, data_room: 1024,");
    let (j, _) = common::run_until(&yaml, fit.len() as u64);
    assert_eq!(j["totals"]["rx_packets"], fit.len() as u64, "{j}");
    let got: Vec<_> = read_capture(&out).0.into_iter().map(|(d, _)| d).collect();
    assert_eq!(got, fit);
    let port = &j["ports"][0];
    assert_eq!(port["rx_skipped_by_reason"]["too_long"], (f.len() - fit.len()) as u64, "{port}");
}

#[test]
fn records_skipped_at_load_are_counted_in_the_report_by_reason() {
    // 4 good records, one of 10 bytes (too short for Ethernet), and a last one cut short by the end
    // of the file: replayed + skipped = records in the file.
    let d = dir("skipped");
    let (input, out) = (d.join("in.pcap"), d.join("out.pcap"));
    let mut f = frames(4);
    f.insert(2, (vec![0xab; 10], 10));
    f.push((vec![0xcd; 200], 200));
    write_capture(&input, &f);
    let bytes = std::fs::read(&input).unwrap();
    std::fs::write(&input, &bytes[..bytes.len() - 50]).unwrap();
    let (j, _) = common::run_until(&yaml_pair(&input, &out, "", ""), 4);
    let port = &j["ports"][0];
    assert_eq!(port["rx_packets"], 4, "{port}");
    assert_eq!(port["rx_skipped"], 2, "{port}");
    assert_eq!(port["rx_skipped_by_reason"]["short"], 1, "{port}");
    assert_eq!(port["rx_skipped_by_reason"]["cut_short"], 1, "{port}");
}
