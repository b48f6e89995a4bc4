//! The `af_packet` driver on live interfaces: network namespaces joined by veth pairs to wasmdp ports
//! in the root namespace, traffic only inside those namespaces. Needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN
//! for namespaces); without them a test skips with a printed reason, which under CI is a failure. wasmdp runs as the binary, stopped with SIGINT, its --stats-json read.
#![cfg(target_os = "linux")]

mod common;

use common::netns::*;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Two namespaces, each joined by a veth to one wasmdp port; `policy` (YAML) on port a.
fn forwarding(name: &str, policy: Option<String>) -> Option<serde_json::Value> {
    let mut net = Net::new();
    let (a, b) = setup(name, || Ok((net.side('a', 1)?, net.side('b', 2)?)))?;
    let extra = policy.map(|p| format!(", policy: {p}")).unwrap_or_default();
    let yaml = format!(
        "engine: io\ntopology: paired\nports:\n  - {{name: a, driver: af_packet, af_packet: {{iface: {}}}{extra}}}\n  - {{name: b, driver: af_packet, af_packet: {{iface: {}}}}}\n",
        a.2, b.2
    );
    let w = Wasmdp::start(name, &yaml);
    let o = ping(&a.0, &net.ip(2));
    let err = std::fs::read_to_string(w.dir.join("stderr")).unwrap_or_default();
    assert_ok("ping from namespace a to b through wasmdp", &o, &err);
    let j = w.stop();
    check_accounting(&j);
    for p in ["a", "b"] {
        assert!(u(port(&j, p), "rx_packets") >= 3 && u(port(&j, p), "tx_packets") >= 3, "port {p}: {j}");
    }
    eprintln!("ports: {}", j["ports"]);
    Some(j)
}

#[test]
fn netns_io_forwarding_between_two_namespaces() {
    forwarding("netns_io_forwarding", None);
}

#[test]
fn netns_plugin_chooses_the_engine_on_a_live_interface() {
    let wasm = common::plugin_path("static_policy");
    let policy = format!("{{plugin: {}, params: {{engine: io}}}}", wasm.display());
    if let Some(j) = forwarding("netns_plugin", Some(policy)) {
        let calls = port(&j, "a")["plugin_calls"].as_u64().unwrap_or(0);
        assert!(calls > 0, "plugin_calls of port a: {j}");
    }
}

fn rx_packets(ns: &str, dev: &str) -> u64 {
    let o = sh(&["ip", "netns", "exec", ns, "cat", &format!("/sys/class/net/{dev}/statistics/rx_packets")]);
    String::from_utf8_lossy(&o.stdout).trim().parse().unwrap_or_else(|_| panic!("rx_packets of {dev} in {ns}: {o:?}"))
}

#[test]
fn netns_macswap_and_5tswap_reflect_every_packet() {
    for (i, engine) in ["macswap", "5tswap"].into_iter().enumerate() {
        let name = format!("netns_{engine}");
        let mut net = Net::new();
        net.tag.push(if i == 0 { 'm' } else { 'f' });
        let Some(a) = setup(&name, || net.side('a', 1)) else { return };
        // A static neighbour, so that ping sends its echo requests at once (the reflected frames come
        // back with the MACs swapped, which the namespace's stack does not answer).
        run_ok(&["ip", "-n", &a.0, "neigh", "add", &net.ip(2), "lladdr", "02:00:00:00:00:00", "dev", &a.1]).unwrap();
        let yaml = format!(
            "engine: {engine}\ntopology: loop\nports:\n  - {{name: a, driver: af_packet, af_packet: {{iface: {}}}}}\n",
            a.2
        );
        let w = Wasmdp::start(&name, &yaml);
        let before = rx_packets(&a.0, &a.1);
        let n = 5;
        let _ = sh(&["ip", "netns", "exec", &a.0, "ping", "-c", &n.to_string(), "-i", "0.2", "-W", "1", &net.ip(2)]);
        std::thread::sleep(Duration::from_millis(300));
        let after = rx_packets(&a.0, &a.1);
        let j = w.stop();
        check_accounting(&j);
        let p = port(&j, "a");
        eprintln!("{engine}: namespace rx {before} -> {after}; port {p}");
        assert!(u(p, "rx_packets") >= n && u(p, "tx_packets") >= n, "{engine}: {j}");
        assert!(
            after - before >= n,
            "{engine}: the namespace received {} frames back, expected >= {n}",
            after - before
        );
    }
}

#[test]
fn netns_icmpecho_answers_ping_and_arping() {
    let mut net = Net::new();
    let Some(a) = setup("netns_icmpecho", || net.side('a', 1)) else { return };
    let port_ip = net.ip(2);
    let yaml = format!(
        "engine: icmpecho\ntopology: loop\nports:\n  - {{name: a, driver: af_packet, af_packet: {{iface: {}}}, icmpecho: {{ipv4: [{port_ip}]}}}}\n",
        a.2
    );
    let w = Wasmdp::start("netns_icmpecho", &yaml);
    let err = || std::fs::read_to_string(w.dir.join("stderr")).unwrap_or_default();
    let o = ping(&a.0, &port_ip);
    assert_ok("ping of the icmpecho port", &o, &err());
    let o = sh(&["ip", "netns", "exec", &a.0, "arping", "-c", "2", "-w", "5", "-I", &a.1, &port_ip]);
    assert_ok("arping of the icmpecho port", &o, &err());
    let j = w.stop();
    check_accounting(&j);
    eprintln!("ports: {}", j["ports"]);
}

/// Starts tcpdump writing what `dev` in `ns` receives to `out`, and waits until it says it is
/// listening (a fixed sleep lost frames on a loaded machine); returns it to be stopped.
fn capture(ns: &str, dev: &str, out: &std::path::Path) -> Child {
    use std::io::BufRead;
    let mut c = Command::new("ip")
        .args(["netns", "exec", ns, "tcpdump", "-i", dev, "-U", "-n", "-w"])
        .arg(out)
        .args(["not", "ip6"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("tcpdump");
    let stderr = c.stderr.take().expect("tcpdump stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("listening on") {
                let _ = tx.send(());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(20)).expect("tcpdump did not start listening within 20 s");
    c
}

/// Whole packet records in the pcap file at `path` so far (a capture still being written).
fn records_so_far(path: &std::path::Path) -> usize {
    let b = std::fs::read(path).unwrap_or_default();
    let mut at = 24;
    let mut n = 0;
    while let Some(h) = b.get(at..at + 16) {
        let len = u32::from_le_bytes([h[8], h[9], h[10], h[11]]) as usize;
        at += 16 + len;
        n += usize::from(at <= b.len());
    }
    n
}

/// Stops the capture once `want` frames are in `pcap`, or after 10 s (the test then says what
/// it saw).
fn stop_capture(mut c: Child, pcap: &std::path::Path, want: usize) {
    let give_up = std::time::Instant::now() + Duration::from_secs(10);
    while records_so_far(pcap) < want && std::time::Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: signalling our own child process by its id.
    unsafe { libc::kill(c.id() as libc::pid_t, libc::SIGINT) };
    let _ = c.wait();
}

#[test]
fn netns_tags_survive_the_kernel_and_offloads_show_on_the_wire() {
    let mut net = Net::new();
    let Some((a, b)) = setup("netns_tags_offloads", || Ok((net.side('a', 1)?, net.side('b', 2)?))) else { return };
    // Port b inserts VLAN 30 and fills the IPv4 and UDP checksums of what it sends into b.
    let yaml = format!(
        "engine: io\nports:\n  - {{name: a, driver: af_packet, af_packet: {{iface: {}}}}}\n  - {{name: b, driver: af_packet, af_packet: {{iface: {}}}, tx_offloads: [vlan_insert, ipv4_cksum, udp_cksum], tx_vlan: 30}}\n",
        a.2, b.2
    );
    let w = Wasmdp::start("netns_tags_offloads", &yaml);
    let pcap = w.dir.join("b.pcap");
    let tcpdump = capture(&b.0, &b.1, &pcap);
    // Untagged, VLAN 20 (the kernel takes the tag out of the data on receive: wasmdp must put it
    // back) and QinQ 100/20.
    let sent = [
        udp_frame(&net, &[], b"plain"),
        udp_frame(&net, &[(0x8100, 20)], b"vlan"),
        udp_frame(&net, &[(0x88a8, 100), (0x8100, 20)], b"qinq"),
    ];
    send_raw(&a.0, &a.1, &sent);
    stop_capture(tcpdump, &pcap, sent.len());
    let got = common::pcap_packets(&pcap);
    let j = w.stop();
    check_accounting(&j);
    assert_eq!(got.len(), 3, "frames seen in namespace b: {got:02x?}");
    for (s, g) in sent.iter().zip(&got) {
        // What b sees: the frame sent, with VLAN 30 inserted after the MACs (outermost), checksums
        // filled.
        let tags = common::tags(g);
        let sent_tags = common::tags(s);
        assert_eq!(tags[0], (0x8100, 30), "outer tag inserted by port b: {g:02x?}");
        assert_eq!(&tags[1..], &sent_tags[..], "the frame's own tags kept: {g:02x?}");
        // etherparse reads two tags at most: check the frame without the one port b inserted.
        let inner: Vec<u8> = g[..12].iter().chain(&g[16..]).copied().collect();
        let p = etherparse::SlicedPacket::from_ethernet(&inner).unwrap();
        let Some(etherparse::NetSlice::Ipv4(ip)) = p.net else { panic!("{g:02x?}") };
        let h = ip.header().to_header();
        assert_eq!(h.header_checksum, h.calc_header_checksum());
        let Some(etherparse::TransportSlice::Udp(udp)) = p.transport else { panic!() };
        assert_eq!(udp.checksum(), udp.to_header().calc_checksum_ipv4(&h, udp.payload()).unwrap());
        assert_eq!(udp.payload(), &s[s.len() - udp.payload().len()..]);
    }
}

#[test]
fn netns_fanout_spreads_flows_over_the_queues() {
    let mut net = Net::new();
    let Some((a, b)) = setup("netns_fanout", || Ok((net.side('a', 1)?, net.side('b', 2)?))) else { return };
    // 16 source addresses in namespace a: 16 flows for the queues to share.
    add_sources(&net, &a);
    let yaml = format!(
        "engine: io\nports:\n  - {{name: a, driver: af_packet, queues: 2, af_packet: {{iface: {}}}}}\n  - {{name: b, driver: af_packet, queues: 2, af_packet: {{iface: {}}}}}\n",
        a.2, b.2
    );
    let w = Wasmdp::start("netns_fanout", &yaml);
    let err = std::fs::read_to_string(w.dir.join("stderr")).unwrap_or_default();
    ping_from_sources(&net, &a, &err);
    let j = w.stop();
    check_accounting(&j);
    assert_both_queues_received(&j, "a");
}

/// The TCP retransmissions counted in namespace `ns` so far.
#[test]
fn netns_tcp_through_wasmdp_with_default_offloads() {
    // The veths keep their default offloads (TSO, GSO, checksum offload): the sender's kernel hands
    // over super-frames and partial checksums, which wasmdp segments and completes.
    let mut net = Net::new();
    let Some((a, b)) = setup("netns_tcp", || Ok((net.side('a', 1)?, net.side('b', 2)?))) else { return };
    let yaml = format!(
        "engine: io\nports:\n  - {{name: a, driver: af_packet, af_packet: {{iface: {}}}}}\n  - {{name: b, driver: af_packet, af_packet: {{iface: {}}}}}\n",
        a.2, b.2
    );
    let w = Wasmdp::start("netns_tcp", &yaml);
    let t = tcp_transfer(&net, &a, &b, 64, &w);
    let j = w.stop();
    check_accounting(&j);
    eprintln!("TCP through wasmdp (af_packet), default offloads: {t}; ports {}", j["ports"]);
    assert_eq!(u(port(&j, "a"), "rx_oversize"), 0, "every super-frame was segmented: {j}");
}

#[test]
fn netns_frames_lost_in_a_full_ring_are_counted_as_missed() {
    let mut net = Net::new();
    let Some(a) = setup("netns_missed", || net.side('a', 1)) else { return };
    let _ = sh(&["ip", "netns", "exec", &a.0, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1"]);
    // A ring of 2 blocks of 4 KiB: a few dozen frames.
    let yaml = format!(
        "engine: rxonly\ntopology: loop\nports:\n  - {{name: a, driver: af_packet, af_packet: {{iface: {}, block_size: 4096, block_count: 2}}}}\n",
        a.2
    );
    let w = Wasmdp::start("netns_missed", &yaml);
    let n = 2000;
    flood_while_stopped(&w, &net, &a, n, Duration::from_millis(500));
    let j = w.stop();
    check_accounting(&j);
    let p = port(&j, "a");
    let (rx, missed, inflight) = received_missed_in_flight(&j, "a");
    eprintln!("sent {n}: received {rx}, missed {missed}, in flight {inflight}, ring full {}", u(p, "rx_ring_full"));
    assert!(missed > 0, "the ring overflowed while wasmdp was stopped: {p}");
    assert_eq!(rx + missed + inflight, n, "every frame the kernel had is received or counted: {p}");
}

#[test]
fn netns_frames_too_big_for_a_buffer_are_counted() {
    let mut net = Net::new();
    let Some(a) = setup("netns_oversize", || net.side('a', 1)) else { return };
    let yaml = format!(
        "engine: rxonly\ntopology: loop\npool: {{data_room: 1024}}\nports:\n  - {{name: a, driver: af_packet, af_packet: {{iface: {}}}}}\n",
        a.2
    );
    let w = Wasmdp::start("netns_oversize", &yaml);
    send_raw(&a.0, &a.1, &[udp_frame(&net, &[], &[1; 1300]), udp_frame(&net, &[], &[2; 100])]);
    std::thread::sleep(Duration::from_millis(300));
    let err = std::fs::read_to_string(w.dir.join("stderr")).unwrap_or_default();
    let j = w.stop();
    let p = port(&j, "a");
    assert_eq!(u(p, "rx_oversize"), 1, "{p}");
    assert!(u(p, "rx_packets") >= 1, "{p}");
    assert!(err.contains("could not be received"), "logged: {err}");
}

#[test]
fn netns_a_dad_probe_for_an_icmpecho_address_fails_the_probers_dad() {
    let mut net = Net::new();
    let Some(a) = setup("netns_dad", || net.side('a', 1)) else { return };
    let yaml = format!(
        "engine: icmpecho\ntopology: loop\nports:\n  - {{name: a, driver: af_packet, af_packet: {{iface: {}}}, icmpecho: {{ipv6: [fd00:77::1]}}}}\n",
        a.2
    );
    let w = Wasmdp::start("netns_dad", &yaml);
    // Standard DAD (enhanced_dad off): a solicitation without options, from the unspecified address.
    let conf = |k: &str, v: &str| {
        sh(&["ip", "netns", "exec", &a.0, "sysctl", "-q", "-w", &format!("net.ipv6.conf.{}.{k}={v}", a.1)])
    };
    conf("disable_ipv6", "0");
    conf("accept_dad", "1");
    conf("enhanced_dad", "0");
    run_ok(&["ip", "-n", &a.0, "addr", "add", "fd00:77::1/64", "dev", &a.1]).unwrap();
    let mut state = String::new();
    for _ in 0..40 {
        std::thread::sleep(Duration::from_millis(100));
        state =
            String::from_utf8_lossy(&sh(&["ip", "-n", &a.0, "-6", "addr", "show", "dev", &a.1]).stdout).into_owned();
        if state.contains("dadfailed") {
            break;
        }
    }
    let j = w.stop();
    check_accounting(&j);
    assert!(state.contains("dadfailed"), "the prober's address should have failed DAD: {state}\n{j}");
}

#[test]
fn netns_a_super_frame_of_more_segments_than_a_burst_is_received_whole() {
    // One TCP super-frame of 60 000 payload bytes cut at 64 (938 segments, more than a burst of
    // 512 holds): it once stayed at the head of the ring, "later" forever, and the port received
    // nothing more. An ordinary sender makes such frames when a peer advertises a tiny MSS.
    let mut net = Net::new();
    let Some((a, b)) = setup("netns_gso_938", || Ok((net.side('a', 1)?, net.side('b', 2)?))) else { return };
    let yaml = format!(
        "engine: io\nburst: 512\nports:\n  - {{name: a, driver: af_packet, af_packet: {{iface: {}}}}}\n  - {{name: b, driver: af_packet, af_packet: {{iface: {}}}}}\n",
        a.2, b.2
    );
    let w = Wasmdp::start("netns_gso_938", &yaml);
    // A raw packet socket with a virtio-net header: the kernel takes the frame as a TSO super-frame.
    let sender = "import socket,struct,sys\ns=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\ns.setsockopt(263,15,1)\ns.bind((sys.argv[1],0))\n\
src=bytes(int(x) for x in sys.argv[2].split('.'));dst=bytes(int(x) for x in sys.argv[3].split('.'))\n\
payload=bytes(i%251 for i in range(60000))\n\
ip=struct.pack('!BBHHHBBH4s4s',0x45,0,40+len(payload),1,0x4000,64,6,0,src,dst)\n\
tcp=struct.pack('!HHIIBBHHH',40000,5201,1000,1,0x50,0x10,65535,0,0)\n\
eth=bytes.fromhex('020000000002020000000001')+b'\\x08\\x00'\n\
vnet=struct.pack('=BBHHHH',1,1,54,64,34,16)\n\
s.send(vnet+eth+ip+tcp+payload)\n";
    let o = python(&a.0, sender, &[&a.1, &net.ip(1), &net.ip(2)]);
    assert!(o.status.success(), "the sender: {}", String::from_utf8_lossy(&o.stderr));
    std::thread::sleep(Duration::from_millis(300));
    let o = ping(&a.0, &net.ip(2));
    let err = std::fs::read_to_string(w.dir.join("stderr")).unwrap_or_default();
    assert_ok("ping after the super-frame (the port still receives)", &o, &err);
    let j = w.stop();
    check_accounting(&j);
    let p = port(&j, "a");
    assert_eq!(u(p, "rx_oversize"), 0, "{p}");
    assert!(u(p, "rx_packets") >= 938 + 3, "the 938 segments and the pings: {p}");
}

#[test]
fn netns_a_frame_over_the_mtu_is_dropped_alone_and_counted() {
    // sendmmsg stops at the first message the kernel refuses (EMSGSIZE): once, the whole burst
    // was retried and dropped as tx_full behind it.
    let mut net = Net::new();
    let Some(b) = setup("netns_af_packet_tx_big", || net.side('b', 2)) else { return };
    let out = format!("  - {{name: out, driver: af_packet, af_packet: {{iface: {}}}}}\n", b.2);
    let mut frames = frames_of(&net, 1, 1600);
    frames.extend(frames_of(&net, 31, 64));
    let (j, got) = replay_into("netns_af_packet_tx_big", &b, &out, 32, &frames);
    check_accounting(&j);
    let o = port(&j, "out");
    assert_eq!((u(o, "tx_packets"), got), (31, 31), "{o}");
    assert_eq!((u(&o["dropped_by_reason"], "tx_oversize"), u(&o["dropped_by_reason"], "tx_full")), (1, 0), "{o}");
}

/// `wasmdp ctl capture` on a live af_packet port (`common::netns::check_capture_of_ping`).
#[test]
fn netns_a_capture_of_a_live_port_shows_requests_in_and_replies_out() {
    let mut net = Net::new();
    let Some(a) = setup("netns_capture", || net.side('a', 1)) else { return };
    check_capture_of_ping("netns_capture", &a, &net.ip(2), "driver: af_packet, af_packet");
}
