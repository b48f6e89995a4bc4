//! The example plugins of plugins/ (built by scripts/build-plugins.sh) end to end: each on a ring
//! port, with its expected effect on the frames that come out.

mod common;

use common::{plugin_path, swapped, tags, Wire};
use std::sync::atomic::Ordering::Relaxed;

fn policy(name: &str, params: &str) -> String {
    format!(
        "policy: {{plugin: {}, params: {{{params}}}, limits: {{deadline_us: 500000}}}}",
        plugin_path(name).display()
    )
}

fn frame(size: usize, dst_port: u16) -> Vec<u8> {
    common::udp(size, [10, 0, 0, 2], 1000, dst_port, None)
}

#[test]
fn static_policy_runs_its_engine_and_requests_its_offloads_every_burst() {
    let mut w = Wire::new(&policy("static_policy", "engine: macswap, offloads: vlan_insert, vlan: 7"));
    let f = frame(64, 9);
    for _ in 0..2 {
        let out = w.send(&vec![f.clone(); 5]);
        assert_eq!(out.len(), 5);
        for o in &out {
            assert_eq!(tags(o), [(0x8100, 7)]);
            let mut untagged = o.clone();
            untagged.drain(12..16);
            assert_eq!(untagged, swapped(&f));
        }
    }
    assert_eq!(w.plugin().calls.load(Relaxed), 2);
}

#[test]
fn static_policy_sticky_decides_once_and_the_host_repeats_it() {
    let mut w = Wire::new(&policy("static_policy", "engine: macswap, sticky: true"));
    let f = frame(64, 9);
    for _ in 0..4 {
        assert_eq!(w.send(&vec![f.clone(); 3]), vec![swapped(&f); 3]);
    }
    let p = w.plugin();
    assert_eq!((p.calls.load(Relaxed), p.sticky.load(Relaxed)), (1, 3));
}

#[test]
fn vlan_tagger_requests_qinq_with_both_tcis() {
    let mut w = Wire::new(&policy("vlan_tagger", "mode: qinq, vlan: 10, vlan_outer: 20"));
    let f = frame(64, 9);
    for o in w.send(&vec![f.clone(); 4]) {
        assert_eq!(tags(&o), [(0x88a8, 20), (0x8100, 10)]);
        assert_eq!(&o[..12], &f[..12], "engine io: addresses unchanged");
        assert_eq!(&o[20..], &f[12..]);
    }
}

#[test]
fn size_steering_swaps_small_frames_and_forwards_large_ones() {
    let mut w = Wire::new(&policy("size_steering", "threshold: 100, small_engine: macswap, large_engine: io"));
    let frames: Vec<_> = [64, 64, 200, 64, 300, 300].iter().map(|&s| frame(s, 9)).collect();
    let out = w.send(&frames);
    for (o, f) in out.iter().zip(&frames) {
        let want = if f.len() < 100 { swapped(f) } else { f.clone() };
        assert_eq!(o, &want, "frame of {} bytes", f.len());
    }
    let named = w.plugin().named();
    assert_eq!(named, [("small".to_string(), 3), ("large".to_string(), 3)].into());
}

#[test]
fn acl_drops_what_its_rules_deny_and_counts_it() {
    let mut w = Wire::new(&policy("acl", "deny_udp_dst_port: 53"));
    let frames: Vec<_> = [9, 53, 9, 53, 53, 80].iter().map(|&p| frame(64, p)).collect();
    let out = w.send(&frames);
    let ports: Vec<u16> = out.iter().map(|o| u16::from_be_bytes([o[36], o[37]])).collect();
    assert_eq!(ports, [9, 9, 80]);
    assert_eq!(w.counts().drops.policy, 3, "the plugin's drops are counted as policy drops");
    assert_eq!(w.plugin().named(), [("denied".to_string(), 3)].into());
}

#[test]
fn wasm_macswap_swaps_inside_webassembly() {
    let mut w = Wire::new(&policy("wasm_macswap", ""));
    let frames: Vec<_> = [64, 65, 1518].iter().map(|&s| frame(s, 9)).collect();
    let out = w.send(&frames);
    assert_eq!(out, frames.iter().map(|f| swapped(f)).collect::<Vec<_>>());
}

fn null_pair(policy: &str) -> wasmdp::config::Config {
    let yaml = format!("ports:\n  - {{name: a, driver: null, {policy}}}\n  - {{name: b, driver: null}}\n");
    wasmdp::config::parse(&yaml, "test").unwrap()
}

#[test]
fn the_faulty_plugins_are_refused_at_load_with_the_cause() {
    let cases: [(&str, &[&str]); 4] = [
        ("faulty_bad_import", &["port `a`", "faulty_bad_import.wasm", "format_disk"]),
        ("faulty_no_export", &["does not export `wasmdp_on_burst`"]),
        ("faulty_abi_v9", &["ABI v9.0"]),
        ("faulty_refuse", &["init refused"]),
    ];
    for (name, parts) in cases {
        let cfg = null_pair(&policy(name, ""));
        let err = match wasmdp::dataplane::build(&cfg, &Default::default()) {
            Ok(_) => panic!("{name} was accepted"),
            Err(e) => format!("{e:#}"),
        };
        for p in parts {
            assert!(err.contains(p), "{name}: `{p}` missing from: {err}");
        }
    }
}

#[test]
fn the_faulty_plugins_that_run_are_contained_and_forwarding_goes_on() {
    for (name, params, limits) in [
        ("faulty_trap", "", "deadline_us: 500000"),
        ("faulty_loop", "", "deadline_us: 1000"),
        ("faulty_grow", "", "deadline_us: 500000, memory_kib: 4096"),
    ] {
        let pol = format!(
            "policy: {{plugin: {}, params: {{{params}}}, on_failure: fail_open, limits: {{{limits}}}}}",
            plugin_path(name).display()
        );
        let dp = wasmdp::dataplane::build(&null_pair(&pol), &Default::default()).unwrap();
        let opts = wasmdp::dataplane::RunOptions {
            duration: Some(std::time::Duration::from_millis(200)),
            ..Default::default()
        };
        let r = wasmdp::dataplane::run(dp, &opts, Default::default()).unwrap();
        let a = &r.json["ports"][0];
        assert_eq!(a["plugin_traps"], 1, "{name}: {a}");
        assert!(r.json["ports"][1]["tx_packets"].as_u64().unwrap() > 1000, "{name}: forwarding stopped");
        assert_eq!(r.leaked, 0);
    }
}

fn udp_to(dst_ip: [u8; 4], src_port: u16, dst_port: u16) -> Vec<u8> {
    common::udp(80, dst_ip, src_port, dst_port, None)
}

#[test]
fn dnat_rewrites_on_windows_with_checksums_a_full_computation_agrees_with() {
    let mut w = Wire::new(&policy("dnat", "match: 10.0.0.0/24, to: 192.0.2.9, port: 53, to_port: 5353"));
    let frames =
        vec![udp_to([10, 0, 0, 2], 1000, 53), udp_to([10, 0, 1, 2], 1000, 53), udp_to([10, 0, 0, 7], 1001, 80)];
    let out = w.send(&frames);
    // The host's frame builder computes both checksums in full for the rewritten addresses.
    assert_eq!(out, vec![udp_to([192, 0, 2, 9], 1000, 5353), frames[1].clone(), frames[2].clone()]);
    assert_eq!(w.plugin().named()["rewritten"], 1);
}

#[test]
fn dnat_fixes_a_first_fragments_udp_checksum_and_only_the_address_of_later_ones() {
    // The fragment word set after the builder's checksums: the UDP checksum stays the datagram's,
    // the IPv4 header's is filled again.
    let frag = |mut f: Vec<u8>, word: [u8; 2], dst: [u8; 4]| {
        f[20..22].copy_from_slice(&word);
        f[30..34].copy_from_slice(&dst);
        let h = wasmdp::wire::parse(&f);
        assert!(wasmdp::wire::fill_ipv4_cksum(&mut f, &h));
        f
    };
    let (old, new) = ([10, 0, 0, 2], [192, 0, 2, 9]);
    let first = frag(udp_to(old, 1000, 53), [0x20, 0], old);
    let later = frag(udp_to(old, 1000, 53), [0x20, 0x10], old);
    let mut w = Wire::new(&policy("dnat", "match: 10.0.0.2, to: 192.0.2.9"));
    let out = w.send(&[first, later.clone()]);
    assert_eq!(out[0], frag(udp_to(new, 1000, 53), [0x20, 0], new), "first fragment: UDP checksum for the new address");
    assert_eq!(out[1], frag(later, [0x20, 0x10], new), "later fragment: the address and the IPv4 checksum only");
    assert_eq!(w.plugin().named()["rewritten"], 2);
}

/// `f` with the IPv4 TOS byte at `at` set to `tos` and the header checksum computed again in full.
fn with_tos(mut f: Vec<u8>, at: usize, tos: u8) -> Vec<u8> {
    f[at] = tos;
    let h = wasmdp::wire::parse(&f);
    assert!(wasmdp::wire::fill_ipv4_cksum(&mut f, &h));
    f
}

#[test]
fn dscp_remark_rewrites_heads_in_place_ipv4_ipv6_and_the_tag_and_leaves_the_rest() {
    let v4 = udp_to([10, 0, 0, 2], 1000, 53);
    let tagged = common::udp(80, [10, 0, 0, 2], 1000, 53, Some(100));
    let mut v6 = Vec::new();
    etherparse::PacketBuilder::ethernet2([0x5a; 6], [0xd0; 6])
        .ipv6(
            [0x20, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            [0x20, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
            64,
        )
        .udp(1000, 53)
        .write(&mut v6, &[7; 40])
        .unwrap();
    v6[15] |= 0x10; // traffic class 0x01: ECN 1, DSCP 0
    let arp = [&[0xff; 6][..], &[0x5a; 6], &[0x08, 0x06], &[1; 46]].concat();
    // IPv4 with 40 bytes of options: its checksum lies in the 64-byte head, its end does not.
    let mut deep = udp_to([10, 0, 0, 2], 1000, 53);
    deep[14] = 0x4f;
    let frames = vec![v4.clone(), tagged.clone(), v6.clone(), arp.clone(), deep.clone(), vec![0xd0; 10]];
    let mut w = Wire::new(&policy("dscp_remark", "dscp: 46, pcp: 5"));
    let out = w.send(&frames);
    assert_eq!(out[0], with_tos(v4, 15, 46 << 2), "IPv4: DSCP and a checksum a full computation agrees with");
    let mut want = with_tos(tagged, 19, 46 << 2);
    want[14] |= 5 << 5; // PCP 5 over VID 100
    assert_eq!(out[1], want, "tagged IPv4: DSCP, checksum and PCP");
    assert_eq!(tags(&out[1]), [(0x8100, (5 << 13) | 100)]);
    let p = etherparse::SlicedPacket::from_ethernet(&out[2]).unwrap();
    let Some(etherparse::NetSlice::Ipv6(ip)) = p.net else { panic!("{:02x?}", out[2]) };
    assert_eq!(ip.header().traffic_class(), (46 << 2) | 1, "IPv6: DSCP written, ECN kept");
    assert_eq!((&out[2][..14], &out[2][14..16], &out[2][16..]), (&v6[..14], &[0x6b, 0x90][..], &v6[16..]), "IPv6");
    assert_eq!(out[3..], [arp, deep, vec![0xd0; 10]], "not IP, too deep, too short: as they came");
    assert_eq!(w.plugin().named(), [("remarked".to_string(), 3), ("too_deep".to_string(), 1)].into());
    // Only packets with DSCP 0, the tag included.
    let mut w = Wire::new(&policy("dscp_remark", "pcp: 3, from_dscp: 46"));
    let out = w.send(&[common::udp(80, [10, 0, 0, 2], 1000, 53, Some(100)), want.clone()]);
    assert_eq!(tags(&out[0]), [(0x8100, 100)], "DSCP 0: not selected");
    assert_eq!(tags(&out[1]), [(0x8100, (3 << 13) | 100)], "DSCP 46: the tag remarked");
}

#[test]
fn vxlan_plugins_round_trip_and_agree_with_the_native_decapsulation() {
    // Encapsulated by the plugin, decapsulated by the native engine and by the plugin: the inner
    // frame comes back byte for byte each time.
    let inner: Vec<Vec<u8>> = (0..4).map(|i| udp_to([10, 0, 0, 2], 1000 + i, 53)).collect();
    let mut enc = Wire::new(&policy("vxlan_encap", "vni: 42, local_ip: 192.0.2.1, remote_ip: 192.0.2.2"));
    let outer = enc.send(&inner);
    assert!(outer.iter().zip(&inner).all(|(o, i)| o.len() == i.len() + 50 && o[50..] == i[..]));
    assert_eq!(&outer[0][42..50], &[8, 0, 0, 0, 0, 0, 42, 0]);
    let mut dec = Wire::new(&policy("vxlan_decap", "local_ip: 192.0.2.2, vni: 42"));
    assert_eq!(dec.send(&outer), inner);
    // The native engine's strict check accepts what the plugin wrote, and finds the same inner frame.
    use wasmdp::wire::tunnel::{check, Expect, Kind};
    let e =
        Expect { kind: Kind::Vxlan, local: [192, 0, 2, 2].into(), dst_port: 4789, vni: Some(42), zero_csum_v6: false };
    for (o, i) in outer.iter().zip(&inner) {
        let found = check(o, &e).unwrap_or_else(|r| panic!("{r:?}"));
        assert_eq!((found.outer_len, found.inner_len), (50, i.len()), "{found:?}");
    }
    // Not ours: dropped (counted by the plugin and as policy drops).
    let mut other = Wire::new(&policy("vxlan_decap", "local_ip: 192.0.2.3"));
    assert!(other.send(&outer).is_empty());
    assert_eq!(other.counts().drops.policy, 4);
}

#[test]
fn ratelimit_holds_each_source_to_its_rate() {
    // 200 packets per second for the one source of the null port's frames, for 0.3 s: about
    // 20 (the burst) + 60 pass, the rest are policy drops. Bursts of up to 64 packets and larger
    // ones are carried out apart (the engine codes' array).
    for burst in [32, 256] {
        let yaml = format!(
            "engine: io\nburst: {burst}\nports:\n  - {{name: a, driver: null, {}}}\n  - {{name: b, driver: null}}\n",
            policy("ratelimit", "rate_pps: 200, burst: 20")
        );
        let j = common::run_yaml(&yaml, 0.3);
        let (a, b) = (&j["ports"][0], &j["ports"][1]);
        let passed = b["tx_packets"].as_u64().unwrap();
        assert!((20..=120).contains(&passed), "burst {burst}: passed {passed}: {b}");
        let dropped = b["dropped_by_reason"]["policy"].as_u64().unwrap();
        assert_eq!(dropped + passed, a["rx_packets"].as_u64().unwrap(), "burst {burst}");
    }
}

#[test]
fn l4_lb_spreads_flows_over_the_ports_given() {
    // At burst 256 the sends to c fill batches (32 packets) and are carried out with the array for
    // large bursts.
    for burst in [32, 256] {
        let yaml = format!(
            "engine: io\nburst: {burst}\nstreams: [{{rx: a, tx: b}}, {{rx: c, tx: c}}]\nports:\n  - {{name: a, driver: null, frame: {{flows: 64}}, {}}}\n  - {{name: b, driver: null}}\n  - {{name: c, driver: null}}\n",
            policy("l4_lb", "ports: '1,2'")
        );
        let j = common::run_yaml(&yaml, 0.3);
        let a = &j["ports"][0];
        let rx = a["rx_packets"].as_u64().unwrap();
        // Stream a -> b: the packets sent to b, its own TX port, leave on it directly (transmitted,
        // not redirected); those sent to c are redirected out, into c's inject queue.
        let s = &j["streams"][0];
        let (b, c) = (s["tx_packets"].as_u64().unwrap(), s["redirected_out"].as_u64().unwrap());
        assert_eq!(s["redirected_in"], 0, "burst {burst}: nothing came back through b's inject queue: {s}");
        assert!(b + c == rx && b > rx / 5 && c > rx / 5, "burst {burst}: spread {b} / {c} of {rx}: {s}");
        // Everything sent to c came in through its inject queue, but what was still queued at
        // the stop (counted in flight).
        let (sc, in_flight) = (&j["streams"][1], j["totals"]["in_flight"].as_u64().unwrap());
        let came = sc["redirected_in"].as_u64().unwrap();
        assert!(
            came <= c && c - came <= in_flight,
            "burst {burst}: {came} of {c} came in, {in_flight} in flight: {sc}"
        );
        assert_eq!(a["plugin_maps"][0]["entries"], 64, "burst {burst}: the 64 flows pinned: {a}");
    }
}

/// An Ethernet frame of a 5-tuple (`proto` 6: TCP, 17: UDP) with a payload of `tag` bytes.
fn flow_frame(src: [u8; 4], dst: [u8; 4], proto: u8, sport: u16, dport: u16, tag: u32) -> Vec<u8> {
    use etherparse::PacketBuilder;
    let ip = PacketBuilder::ethernet2([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]).ipv4(src, dst, 64);
    let payload = tag.to_be_bytes();
    let mut out = Vec::new();
    if proto == 6 {
        let b = ip.tcp(sport, dport, tag, 1024);
        b.write(&mut out, &payload).unwrap();
    } else {
        let b = ip.udp(sport, dport);
        b.write(&mut out, &payload).unwrap();
    }
    out
}

#[test]
fn firewall_passes_replies_to_inside_flows_only_and_a_flood_of_new_flows_keeps_the_flows_in_use() {
    // Two pcap ports sharing one 1024-flow LRU map. Inside: 50 clients open TCP flows to a server,
    // then 3000 spoofed-source UDP flows flood the map (3x its size), the 50 clients' flows in use
    // throughout (one of their packets every 10 of the flood). Outside: 4000 packets that answer no
    // inside flow (spoofed sources; denied, and they come first so that the inside is done before
    // the replies), then one reply per client flow, all of which must pass.
    use common::pcap::{self, Rec};
    let dir = std::env::temp_dir().join(format!("wasmdp-firewall-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let server = [198, 51, 100, 7];
    let client = |i: u32| [10, 0, 0, 10 + i as u8];
    let request = |i: u32, n: u32| flow_frame(client(i), server, 6, 40000 + i as u16, 443, n);
    let mut inside: Vec<Vec<u8>> = (0..50).map(|i| request(i, 0)).collect();
    for f in 0..3000u32 {
        let spoofed = [10, 66, (f >> 8) as u8, f as u8];
        inside.push(flow_frame(spoofed, [203, 0, 113, 9], 17, 1024 + (f % 60000) as u16, 53, f));
        if f % 10 == 9 {
            inside.push(request(f / 10 % 50, f));
        }
    }
    let mut outside: Vec<Vec<u8>> = (0..4000u32)
        .map(|f| flow_frame([192, 0, 2, (f % 250) as u8], client(f % 50), 6, 443, 40000 + (f % 50) as u16 + 1, f))
        .collect();
    let replies: Vec<Vec<u8>> = (0..50).map(|i| flow_frame(server, client(i), 6, 443, 40000 + i as u16, i)).collect();
    outside.extend(replies.iter().cloned());
    let write = |name: &str, frames: &[Vec<u8>]| {
        let recs: Vec<Rec> = frames
            .iter()
            .map(|d| Rec { ts: std::time::Duration::from_secs(1), data: d.clone(), orig_len: d.len() as u32 })
            .collect();
        let path = dir.join(name);
        pcap::write_us(&path, pcap::ETHERNET, &recs);
        path
    };
    let (in_rx, out_rx) = (write("inside.pcap", &inside), write("outside.pcap", &outside));
    let (in_tx, out_tx) = (dir.join("inside-tx.pcap"), dir.join("outside-tx.pcap"));
    let port = |name: &str, rx: &std::path::Path, tx: &std::path::Path, side: &str| {
        format!(
            "  - {{name: {name}, driver: pcap, pcap: {{rx: {}, tx: {}}}, policy: {{plugin: {}, params: {{side: {side}, flows: 1024}}, shared_maps: [fw_flows], limits: {{deadline_us: 500000}}}}}}\n",
            rx.display(),
            tx.display(),
            plugin_path("firewall").display()
        )
    };
    // One worker polls both ports in turn, so the inside's packets are in before the replies.
    let yaml = format!(
        "engine: io\nlcores: [0]\nports:\n{}{}",
        port("inside", &in_rx, &in_tx, "inside"),
        port("outside", &out_rx, &out_tx, "outside")
    );
    let j = common::run_yaml(&yaml, 1.0);
    let (a, b) = (&j["ports"][0], &j["ports"][1]);
    assert_eq!(common::pcap_packets(&out_tx), inside, "every inside packet left on the outside, unchanged");
    assert_eq!(common::pcap_packets(&in_tx), replies, "exactly the replies came in, unchanged, in order");
    let counter =
        |p: &serde_json::Value, k: &str| p["plugin_counters"][k].as_u64().unwrap_or_else(|| panic!("{k}: {p}"));
    assert_eq!((counter(a, "allowed"), counter(a, "denied"), counter(a, "unrecorded")), (inside.len() as u64, 0, 0));
    assert_eq!((counter(b, "allowed"), counter(b, "denied")), (50, 4000), "{b}");
    let s = j["streams"].as_array().unwrap().iter().find(|s| s["rx_port"] == "outside").unwrap();
    assert_eq!(s["dropped_by_reason"]["policy"].as_u64(), Some(4000), "each denied packet a counted drop: {s}");
    let m = &a["plugin_maps"][0];
    assert_eq!(
        (m["name"].as_str(), m["kind"].as_str(), m["shared"].as_bool()),
        (Some("fw_flows"), Some("lru_hash"), Some(true))
    );
    assert!(m["evicted"].as_u64().unwrap() >= 3050 - 1024, "the flood was evicted: {m}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Frames that walk every branch of the ACLs' parse: VLAN tags (none, one, two, three), not IPv4,
/// IPv4 with options, a non-first fragment, other protocols and sources, headers cut short.
fn acl_frames() -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    for (i, dport) in [53u16, 9, 80, 53].into_iter().enumerate() {
        frames.push(common::udp(64 + i * 30, [10, 0, 0, 2], 1000, dport, None));
        frames.push(common::udp(64, [10, 0, 0, 2], 1000, dport, Some(100 + i as u16)));
    }
    let base = common::udp(96, [10, 0, 0, 2], 1000, 53, None);
    let with = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut x = base.clone();
        f(&mut x);
        x
    };
    // Two tags (802.1ad then 802.1Q), and three (the third is not skipped: no match).
    frames.push(with(&|x| drop(x.splice(12..12, [0x88, 0xa8, 0, 5, 0x81, 0x00, 0, 6]))));
    frames.push(with(&|x| drop(x.splice(12..12, [0x91, 0x00, 0, 5, 0x81, 0x00, 0, 6, 0x81, 0x00, 0, 7]))));
    frames.push(with(&|x| x[12..14].copy_from_slice(&[0x86, 0xdd]))); // IPv6
    frames.push(with(&|x| x[12..14].copy_from_slice(&[0x08, 0x06]))); // ARP
    frames.push(with(&|x| x[14] = 0x46)); // IHL 6: the UDP ports 4 bytes further on
    frames.push(with(&|x| x[14] = 0x4f)); // IHL 15: the ports past a 64-byte window
    frames.push(with(&|x| x[14] = 0x44)); // IHL 4: not a valid header
    frames.push(with(&|x| x[14] = 0x65)); // version 6 in an IPv4 frame
    frames.push(with(&|x| x[20] = 0x20)); // a non-first fragment (offset 8192 bytes)
    frames.push(with(&|x| x[20] = 0x40)); // DF set, first fragment
    frames.push(with(&|x| x[23] = 6)); // TCP
    frames.push(with(&|x| x[23] = 1)); // ICMP
    frames.push(with(&|x| x[26..30].copy_from_slice(&[10, 0, 0, 7]))); // another source
    frames.push(with(&|x| x[26..30].copy_from_slice(&[192, 168, 1, 1])));
    frames.push(base[..14].to_vec()); // Ethernet alone
    frames.push(base[..33].to_vec()); // IPv4 cut short
    frames.push(base[..36].to_vec()); // the UDP destination port cut short
    frames
}

/// What a port running `plugin` with `params` transmits from [`acl_frames`], its policy drops
/// and its plugin's counters.
fn acl_run(plugin: &str, params: &str) -> (Vec<Vec<u8>>, u64, std::collections::BTreeMap<String, u64>) {
    let mut w = Wire::new(&policy(plugin, params));
    let mut out = Vec::new();
    for _ in 0..3 {
        out.extend(w.send(&acl_frames()));
    }
    (out, w.counts().drops.policy, w.plugin().named())
}

/// Drops are counted by reason, each frame once: the ACL's own (`policy`) apart from those of the
/// `rxonly` engine it runs on the frames it lets through (`engine`), in the same bursts.
#[test]
fn a_policys_drops_and_its_engines_are_counted_apart() {
    let mut w = Wire::new(&policy("acl", "engine: rxonly, deny_proto: 17"));
    let frames = acl_frames();
    for _ in 0..3 {
        assert!(w.send(&frames).is_empty(), "rxonly transmits nothing");
    }
    let (c, denied) = (w.counts(), w.plugin().named()["denied"]);
    let all = 3 * frames.len() as u64;
    assert!(denied > 0 && denied < all, "the frames mix UDP and others: denied {denied} of {all}");
    assert_eq!((c.drops.policy, c.drops.engine), (denied, all - denied), "{c:?}");
    assert_eq!(c.drops.total(), all, "{c:?}");
}

/// The ACL written in C (plugins/c-acl, on sdk/c/wasmdp.h), in Zig (plugins/zig-acl, on
/// sdk/zig/wasmdp.zig) and in AssemblyScript (plugins/as-acl) does what the Rust `acl` does: the same frames on the wire, byte for byte,
/// the same drops and counters, the same refusals.
#[test]
fn the_acl_in_c_zig_and_assemblyscript_matches_the_rust_acl_byte_for_byte() {
    let cases = [
        "deny_udp_dst_port: 53",
        "deny_src_ip: 10.0.0.7",
        "deny_proto: 6",
        "deny_udp_dst_port: 0x50, deny_proto: 1, deny_src_ip: ' 192.168.1.1 '",
        "engine: macswap, deny_udp_dst_port: 53",
        "engine: rxonly, deny_proto: 17",
        "",
    ];
    for params in cases {
        let rust = acl_run("acl", params);
        assert!(!rust.0.is_empty() || params.contains("rxonly"), "{params}: nothing passed");
        for other in ["acl_c", "acl_zig", "acl_as"] {
            let got = acl_run(other, params);
            assert_eq!(got.0.len(), rust.0.len(), "{other} with `{params}`: frames out");
            assert!(got.0 == rust.0, "{other} with `{params}`: the frames differ from the Rust acl's");
            assert_eq!((got.1, &got.2), (rust.1, &rust.2), "{other} with `{params}`: drops and counters");
        }
    }
    for (params, says) in [
        ("deny_src_ip: 10.0.0", "param `deny_src_ip`: `10.0.0` is not an IPv4 address"),
        ("deny_src_ip: 10.0.0.256", "param `deny_src_ip`: `10.0.0.256` is not an IPv4 address"),
        ("deny_udp_dst_port: 65536", "param `deny_udp_dst_port`: `65536` is not a number 0..=65535"),
        ("deny_proto: +6", "param `deny_proto`: `+6` is not a number 0..=255"),
        ("engine: warp", "param `engine`: `warp` is not io|mac|macswap|5tswap|copy|drop|vxlan_encap"),
    ] {
        for plugin in ["acl", "acl_c", "acl_zig", "acl_as"] {
            let cfg = null_pair(&policy(plugin, params));
            let (r, logs) = common::capture_logs(|| wasmdp::dataplane::build(&cfg, &Default::default()).map(drop));
            let e = format!("{:#}", r.expect_err(plugin));
            assert!(e.contains("init refused"), "{plugin} with `{params}`: {e}");
            assert!(logs.contains(says), "{plugin} with `{params}`: `{says}` not logged:\n{logs}");
        }
    }
}

/// docs/ABI.md's "Writing a policy in C" as a reader follows it: its C file and its build command,
/// run in an empty folder with the two headers copied in; the module then drops what it says.
#[test]
fn the_c_walkthrough_of_the_abi_docs_builds_and_does_what_it_says() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let doc = std::fs::read_to_string(root.join("docs/ABI.md")).unwrap();
    let at = doc.find("### Writing a policy in C").expect("the walkthrough");
    let block = |lang: &str, nth: usize| -> String {
        let fence = format!("```{lang}\n");
        let start = doc[at..].match_indices(&fence).nth(nth).unwrap_or_else(|| panic!("```{lang} #{nth}")).0;
        let body = at + start + fence.len();
        doc[body..body + doc[body..].find("```").unwrap()].to_string()
    };
    let dir = common::live::fresh_dir("c-walkthrough");
    for h in ["wasmdp.h", "wasmdp_helpers.h"] {
        std::fs::copy(root.join("sdk/c").join(h), dir.join(h)).unwrap();
    }
    std::fs::write(dir.join("drop_udp.c"), block("c", 0)).unwrap();
    let build = block("sh", 1);
    assert!(build.starts_with("clang "), "{build}");
    let out = std::process::Command::new("sh").arg("-c").arg(&build).current_dir(&dir).output().unwrap();
    assert!(out.status.success(), "{build}\n{}", String::from_utf8_lossy(&out.stderr));
    let wasm = dir.join("drop_udp.wasm");
    let mut w = Wire::new(&format!(
        "policy: {{plugin: {}, params: {{port: 9}}, limits: {{deadline_us: 500000}}}}",
        wasm.display()
    ));
    let frames: Vec<_> = [9, 53, 9, 80].iter().map(|&p| frame(64, p)).collect();
    let out = w.send(&frames);
    assert_eq!(out, [frames[1].clone(), frames[3].clone()], "UDP to port 9 dropped, the rest unchanged");
    assert_eq!(w.counts().drops.policy, 2);
    assert_eq!(w.plugin().named(), [("dropped".to_string(), 2)].into());
    let _ = std::fs::remove_dir_all(&dir);
}
