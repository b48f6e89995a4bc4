//! Live capture (`wasmdp ctl capture`) end to end: a running dataplane captured through its control
//! socket, the pcapng read back by tshark (interfaces, directions, comments, exact bytes) and by
//! tcpdump; filters against tcpdump's own selection of the same frames; a capture of a port at full
//! load whose reader falls behind (overruns counted, every accepted packet either written or
//! counted lost); bad requests refused with the rule.

mod common;

use common::pcap;
use common::{skip, Skip};
use pcap_parser::pcapng::Block;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use wasmdp::dataplane::{RunOptions, Running};

fn dir(name: &str) -> PathBuf {
    common::live::fresh_dir(&format!("capture-{name}"))
}

fn start(dir: &Path, yaml: &str) -> (Running, RunOptions, PathBuf) {
    common::live::start_with_socket(dir, yaml)
}

/// `tool` is installed (scripts/setup.sh installs tshark and tcpdump), else the test is skipped.
fn have(test: &str, tool: &str) -> bool {
    let ok = Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        skip(test, &format!("{tool} is not installed (scripts/setup.sh installs it)"), Skip::Required);
    }
    ok
}

/// Varied frames: UDP and TCP over IPv4 and IPv6, tagged and not, ARP, ICMP; sizes 60..1400.
fn frames() -> Vec<Vec<u8>> {
    use etherparse::PacketBuilder as B;
    let (a, b) = ([0x02, 0, 0, 0, 0, 1], [0x02, 0, 0, 0, 0, 2]);
    let mut out = Vec::new();
    let mut put = |f: Vec<u8>| out.push(f);
    for (i, port) in [53u16, 80, 443, 9, 4789].into_iter().enumerate() {
        let pay = vec![i as u8; 20 + i * 300];
        let mut v = Vec::new();
        B::ethernet2(a, b)
            .ipv4([10, 0, 0, 1], [10, 0, i as u8, 2], 64)
            .udp(1000 + i as u16, port)
            .write(&mut v, &pay)
            .unwrap();
        put(v);
        let mut v = Vec::new();
        B::ethernet2(b, a)
            .ipv4([192, 168, 1, i as u8], [10, 0, 0, 1], 64)
            .tcp(port, 2000, 7, 1000)
            .syn()
            .write(&mut v, &pay)
            .unwrap();
        put(v);
        let mut v = Vec::new();
        B::ethernet2(a, b)
            .single_vlan((100 + i as u16).try_into().unwrap())
            .ipv4([10, 1, 0, 1], [10, 1, 0, 2], 64)
            .udp(5, port)
            .write(&mut v, &pay)
            .unwrap();
        put(v);
        let mut v = Vec::new();
        B::ethernet2(a, b).ipv6([0xfd; 16], [0xfe; 16], 64).udp(7, port).write(&mut v, &pay).unwrap();
        put(v);
    }
    let mut v = Vec::new();
    B::ethernet2(a, b)
        .ipv4([10, 0, 0, 1], [10, 0, 0, 3], 64)
        .icmpv4_echo_request(1, 2)
        .write(&mut v, &[0; 32])
        .unwrap();
    put(v);
    // ARP request (who has 10.0.0.3), padded to 60 bytes.
    let mut arp = vec![0xff; 6];
    arp.extend([0x02, 0, 0, 0, 0, 1, 0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1, 10, 0, 0, 1]);
    arp.extend([0; 6]);
    arp.extend([10, 0, 0, 3]);
    arp.resize(60, 0);
    put(arp);
    for f in &mut out {
        if f.len() < 60 {
            f.resize(60, 0);
        }
    }
    out
}

/// `wasmdp ctl capture ARGS`: (exit code, stderr).
fn ctl_capture(sock: &Path, args: &[&str]) -> (i32, String) {
    let mut all = vec!["ctl", "--socket", sock.to_str().unwrap(), "capture"];
    all.extend_from_slice(args);
    let (code, _, err) = common::wasmdp(&all);
    (code, err)
}

/// One packet of a pcapng file as tshark reads it.
#[derive(Debug)]
struct Seen {
    interface: String,
    /// `epb_flags` direction: 1 inbound, 2 outbound.
    direction: u32,
    comment: String,
    bytes: Vec<u8>,
    /// The packet's length on the wire (the block's original length).
    len: usize,
}

/// Every packet of `file` as tshark reads it (its JSON output with the raw bytes).
fn tshark(file: &Path) -> Vec<Seen> {
    let out = Command::new("tshark").args(["-r", file.to_str().unwrap(), "-T", "json", "-x"]).output().unwrap();
    assert!(out.status.success(), "tshark -r {}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    doc.as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let l = &p["_source"]["layers"];
            let hex = text(&l["frame_raw"][0]);
            Seen {
                interface: text(&l["frame"]["frame.interface_id_tree"]["frame.interface_name"]),
                direction: u32::from_str_radix(
                    text(&l["frame"]["frame.packet_flags_tree"]["frame.packet_flags_direction"])
                        .trim_start_matches("0x"),
                    16,
                )
                .unwrap_or(0),
                comment: text(&l["pkt_comment"]["frame.comment"]),
                len: text(&l["frame"]["frame.len"]).parse().unwrap_or(0),
                bytes: (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect(),
            }
        })
        .collect()
}

/// Whether `got` is a run of consecutive frames of `cycle` repeated (the replay loops).
fn is_run_of(got: &[Vec<u8>], cycle: &[Vec<u8>]) -> bool {
    let Some(first) = got.first() else { return true };
    let starts: Vec<usize> = (0..cycle.len()).filter(|&i| cycle[i] == *first).collect();
    starts.into_iter().any(|s| got.iter().enumerate().all(|(k, f)| *f == cycle[(s + k) % cycle.len()]))
}

#[test]
fn a_capture_of_both_directions_reads_in_tshark_and_tcpdump_with_exact_bytes() {
    let test = "capture_both_directions";
    if !have(test, "tshark") || !have(test, "tcpdump") {
        return;
    }
    let d = dir("both");
    let input = frames();
    pcap::write_frames(&d.join("in.pcap"), &input);
    let yaml = format!(
        "engine: macswap\nstreams: [{{rx: in, tx: out}}]\nports:\n  - {{name: in, driver: pcap, pcap: {{rx: \"{}\", repeat: forever, rate_pps: 5000}}}}\n  - {{name: out, driver: pcap, pcap: {{tx: \"{}\"}}}}\n",
        d.join("in.pcap").display(),
        d.join("out.pcap").display()
    );
    let (running, opts, sock) = start(&d, &yaml);
    let (code, err) = ctl_capture(&sock, &["in", "--count", "40", "-w", d.join("in.pcapng").to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("40 packets captured"), "{err}");
    let (code, err) =
        ctl_capture(&sock, &["out", "--tx", "--count", "40", "-w", d.join("out.pcapng").to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // --snaplen: the first 20 bytes kept, the length on the wire recorded; --queue 0 is the port's.
    let cut = d.join("cut.pcapng");
    let (code, err) = ctl_capture(
        &sock,
        &["in", "--rx", "--queue", "0", "--snaplen", "20", "--count", "3", "-w", cut.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{err}");
    for s in tshark(&cut) {
        assert_eq!(s.bytes.len(), 20);
        assert!(input.iter().any(|f| f.len() == s.len && f[..20] == s.bytes[..]), "{s:?}");
    }
    // `-w -` into tshark reading stdin: tshark stops after 5 packets, the capture ends with it.
    let pipe = format!(
        "timeout 30 {} ctl --socket {} capture in -w - 2>/dev/null | timeout 30 tshark -r - -c 5 -T fields -e frame.interface_name",
        env!("CARGO_BIN_EXE_wasmdp"),
        sock.display()
    );
    let out = Command::new("sh").args(["-c", &pipe]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().filter(|l| *l == "in-rx").count(), 5);
    running.finish(&opts).unwrap();

    let rx = tshark(&d.join("in.pcapng"));
    assert_eq!(rx.len(), 40);
    for s in &rx {
        assert_eq!((s.interface.as_str(), s.direction, s.comment.as_str()), ("in-rx", 1, "rx queue 0"), "{s:?}");
    }
    let got: Vec<Vec<u8>> = rx.into_iter().map(|s| s.bytes).collect();
    assert!(is_run_of(&got, &input), "the RX capture is not the replayed frames in order");

    // TX: the same frames after macswap, marked outbound.
    let tx = tshark(&d.join("out.pcapng"));
    assert_eq!(tx.len(), 40);
    let swapped: Vec<Vec<u8>> = input
        .iter()
        .map(|f| {
            let mut s = f.clone();
            s[..6].copy_from_slice(&f[6..12]);
            s[6..12].copy_from_slice(&f[..6]);
            s
        })
        .collect();
    for s in &tx {
        assert_eq!((s.interface.as_str(), s.direction, s.comment.as_str()), ("out-tx", 2, "tx queue 0"), "{s:?}");
    }
    let got: Vec<Vec<u8>> = tx.into_iter().map(|s| s.bytes).collect();
    assert!(is_run_of(&got, &swapped), "the TX capture is not the swapped frames in order");

    // tcpdump reads the same file (one line per packet with -q, each starting with its time).
    let out =
        Command::new("tcpdump").args(["-nn", "-q", "-r", d.join("out.pcapng").to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().filter(|l| l.starts_with(|c: char| c.is_ascii_digit())).count(), 40, "{text}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn filters_select_exactly_what_tcpdump_selects() {
    let test = "capture_filters";
    if !have(test, "tshark") || !have(test, "tcpdump") {
        return;
    }
    let d = dir("filters");
    let input = frames();
    let in_pcap = d.join("in.pcap");
    pcap::write_frames(&in_pcap, &input);
    let yaml = format!(
        "engine: io\nstreams: [{{rx: in, tx: out}}]\nports:\n  - {{name: in, driver: pcap, pcap: {{rx: \"{}\", repeat: forever, rate_pps: 20000}}}}\n  - {{name: out, driver: null}}\n",
        in_pcap.display()
    );
    let (running, opts, sock) = start(&d, &yaml);
    for (k, expr) in [
        "udp dst port 53",
        "vlan and udp",
        "ip6",
        "tcp[tcpflags] & tcp-syn != 0",
        "arp or icmp",
        "ether src 02:00:00:00:00:02",
        "greater 600 and not vlan",
    ]
    .into_iter()
    .enumerate()
    {
        // The reference: tcpdump's selection from the same frames.
        let want_file = d.join(format!("want{k}.pcap"));
        let o = Command::new("tcpdump")
            .args(["-r", in_pcap.to_str().unwrap(), "-w", want_file.to_str().unwrap(), expr])
            .output()
            .unwrap();
        assert!(o.status.success(), "tcpdump {expr}: {}", String::from_utf8_lossy(&o.stderr));
        let want: Vec<Vec<u8>> = pcap::read(&want_file).recs.into_iter().map(|r| r.data).collect();
        assert!(!want.is_empty() && want.len() < input.len(), "{expr}: a filter that selects some frames");
        // Three passes' worth: every selected frame appears, nothing else does.
        let n = (3 * want.len()).to_string();
        let file = d.join(format!("got{k}.pcapng"));
        let (code, err) =
            ctl_capture(&sock, &["in", "--rx", "--filter", expr, "--count", &n, "-w", file.to_str().unwrap()]);
        assert_eq!(code, 0, "{expr}: {err}");
        let got: Vec<Vec<u8>> = tshark(&file).into_iter().map(|s| s.bytes).collect();
        assert_eq!(got.len(), 3 * want.len(), "{expr}");
        assert!(got.iter().all(|f| want.contains(f)), "{expr}: a frame tcpdump does not select");
        assert!(want.iter().all(|f| got.contains(f)), "{expr}: a frame tcpdump selects is missing");
        assert!(is_run_of(&got, &want), "{expr}: not in replay order");
    }
    running.finish(&opts).unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// Blocks of a pcapng stream: (packets per interface, each interface's (seen, accepted, lost)).
fn blocks(mut data: &[u8]) -> ([u64; 2], [[u64; 3]; 2]) {
    let (mut packets, mut stats) = ([0; 2], [[0; 3]; 2]);
    while !data.is_empty() {
        let (rest, b) = pcap_parser::pcapng::parse_block_le(data).expect("a whole pcapng block");
        match b {
            Block::EnhancedPacket(e) => packets[e.if_id as usize] += 1,
            Block::InterfaceStatistics(isb) => {
                stats[isb.if_id as usize] = wasmdp::capture::pcapng::read_statistics(&isb)
            }
            _ => {}
        }
        data = rest;
    }
    (packets, stats)
}

#[test]
fn a_reader_that_falls_behind_loses_packets_counted_as_overruns_and_nothing_else() {
    let d = dir("overrun");
    let yaml = "engine: io\nlcores: [0]\nports:\n  - {name: a, driver: null, frame: {size: 1500}}\n  - {name: b, driver: null}\n";
    let (running, opts, sock) = start(&d, yaml);
    let mut s = UnixStream::connect(&sock).unwrap();
    s.write_all(format!("{}\n", json!({"cmd": "capture", "port": "a", "dir": "both"})).as_bytes()).unwrap();
    // Not reading for a while: the socket buffer fills, then the slots, at full load.
    std::thread::sleep(Duration::from_millis(1500));
    s.shutdown(std::net::Shutdown::Write).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["ok"], true, "{answer}");
    let mut data = Vec::new();
    r.read_to_end(&mut data).unwrap();
    let j = running.finish(&opts).unwrap().json;
    let (packets, stats) = blocks(&data);
    for (dir, name) in [(0, "rx"), (1, "tx")] {
        let [seen, accepted, lost] = stats[dir];
        assert!(seen > 0, "{name}: the port was captured");
        assert_eq!(accepted, seen, "{name}: no filter accepts all");
        assert!(lost > 0, "{name}: a reader that does not read for 1.5 s at full load loses packets");
        assert_eq!(packets[dir] + lost, accepted, "{name}: every accepted packet is written or counted lost");
    }
    // The dataplane itself lost nothing to the capture: it forwarded as ever.
    assert!(j["ports"][0]["rx_packets"].as_u64().unwrap() >= stats[0][0]);
    assert_eq!(j["leaked_buffers"], 0);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_capture_requests_are_refused_with_the_rule() {
    let d = dir("refused");
    let yaml = "engine: io\nports:\n  - {name: a, driver: null}\n  - {name: b, driver: null}\n";
    let (running, opts, sock) = start(&d, yaml);
    let out = d.join("x.pcapng");
    let w = out.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["nope", "-w", w], "capture: no port \"nope\""),
        (&["a", "--filter", "udp prot 9", "-w", w], "capture: filter \"udp prot 9\""),
        (&["a", "--snaplen", "0", "-w", w], "\"snaplen\" 0 is outside 1..=2048 (the pool's data_room)"),
        (&["a", "--snaplen", "4096", "-w", w], "\"snaplen\" 4096 is outside 1..=2048"),
        (&["a", "--queue", "70000", "-w", w], "error: invalid value '70000' for '--queue <Q>'"),
        (&["a"], "-w FILE (a pcapng file) or -w - (stdout) is required"),
    ];
    for (args, want) in cases {
        let (code, err) = ctl_capture(&sock, args);
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
    // One capture per port at a time.
    let mut first = UnixStream::connect(&sock).unwrap();
    first.write_all(format!("{}\n", json!({"cmd": "capture", "port": "a"})).as_bytes()).unwrap();
    let mut line = String::new();
    BufReader::new(first.try_clone().unwrap()).read_line(&mut line).unwrap();
    assert!(line.contains("\"ok\":true"), "{line}");
    let (code, err) = ctl_capture(&sock, &["a", "-w", w]);
    assert_ne!(code, 0);
    assert!(err.contains("another client is capturing this port"), "{err}");
    // Raw requests with wrong types.
    let a = wasmdp::control::request(&sock, &json!({"cmd": "capture", "port": "b", "dir": "up"})).unwrap();
    assert!(a["error"].as_str().unwrap().contains("\"dir\" \"up\": allowed \"rx\", \"tx\", \"both\""), "{a}");
    // A filter longer than the bound is refused before libpcap sees it.
    let long = "udp and ".repeat(600) + "udp";
    let a = wasmdp::control::request(&sock, &json!({"cmd": "capture", "port": "b", "filter": long})).unwrap();
    assert!(a["error"].as_str().unwrap().contains("\"filter\" is 4803 bytes; at most 4096"), "{a}");
    let a = wasmdp::control::request(&sock, &json!({"cmd": "capture", "port": "b", "filter": 5})).unwrap();
    assert!(a["error"].as_str().unwrap().contains("must be a string (a pcap filter expression)"), "{a}");
    drop(first);
    running.finish(&opts).unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_capture_of_ring_ports_shows_the_frames_that_loop_through_them() {
    let test = "capture_ring";
    if !have(test, "tshark") {
        return;
    }
    let d = dir("ring");
    // r0's TX feeds r1's RX: the stream r1 -> r0 forwards the seeded frames round that loop.
    let yaml = "engine: io\nports:\n  - {name: r0, driver: ring, ring: {peer: r1, size: 256}, tx_first: 2, frame: {size: 128}}\n  - {name: r1, driver: ring, ring: {peer: r0, size: 256}, frame: {size: 128}}\n";
    let (running, opts, sock) = start(&d, yaml);
    let mut got = Vec::new();
    for port in ["r0", "r1"] {
        let file = d.join(format!("{port}.pcapng"));
        let (code, err) = ctl_capture(&sock, &[port, "--count", "40", "-w", file.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        got.push(tshark(&file));
    }
    running.finish(&opts).unwrap();
    let (r0, r1) = (&got[0], &got[1]);
    assert_eq!((r0.len(), r1.len()), (40, 40));
    assert!(r0.iter().all(|s| (s.interface.as_str(), s.direction) == ("r0-tx", 2)), "r0 only transmits");
    assert!(r1.iter().all(|s| (s.interface.as_str(), s.direction) == ("r1-rx", 1)), "r1 only receives");
    // One template frame (one flow) loops unchanged through io: every capture of it is the same.
    assert!(r0.iter().chain(r1).all(|s| s.bytes.len() == 128 && s.bytes == r0[0].bytes));
    let _ = std::fs::remove_dir_all(&d);
}
