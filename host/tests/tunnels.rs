//! The tunnel engines on the real dataplane: a varied capture encapsulated, carried over a ring,
//! decapsulated and recorded comes out byte for byte; decapsulation of real captures from tcpdump's
//! test suite checked against tcpdump's own reading of them; counters and drop reasons.

mod common;

use common::pcap;
use etherparse::{PacketBuilder, VlanId};
use std::path::{Path, PathBuf};
use std::process::Command;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wasmdp-tunnels-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// 240 frames: IPv4 and IPv6, TCP, UDP and ICMP, untagged and 802.1Q-tagged, 60 to 1500 bytes.
fn varied() -> Vec<Vec<u8>> {
    (0..240usize)
        .map(|i| {
            let len = [0, 6, 20, 100, 512, 1000, 1400, 1446][i % 8] + i % 5;
            let payload: Vec<u8> = (0..len).map(|j| (i * 13 + j) as u8).collect();
            let eth = PacketBuilder::ethernet2([2, 0, 0, 0, 1, i as u8], [2, 0, 0, 0, 2, i as u8]);
            let vlan = VlanId::try_new(100 + i as u16 % 7).unwrap();
            let mut f = Vec::new();
            let sport = 1000 + i as u16;
            match (i / 8) % 6 {
                0 => eth.ipv4([10, 0, 0, 1], [10, 0, 0, 2], 64).udp(sport, 53).write(&mut f, &payload),
                1 => eth.ipv6([1; 16], [2; 16], 64).tcp(sport, 80, i as u32, 1000).write(&mut f, &payload),
                2 => eth
                    .single_vlan(vlan)
                    .ipv4([10, 1, 0, 1], [10, 1, 0, 2], 64)
                    .tcp(sport, 22, 1, 100)
                    .write(&mut f, &payload),
                3 => eth.single_vlan(vlan).ipv6([3; 16], [4; 16], 9).udp(sport, 9).write(&mut f, &payload),
                4 => eth.ipv4([10, 2, 0, 1], [10, 2, 0, 2], 1).icmpv4_echo_request(7, i as u16).write(&mut f, &payload),
                _ => eth.ipv6([5; 16], [6; 16], 2).icmpv6_echo_request(7, i as u16).write(&mut f, &payload),
            }
            .unwrap();
            f.resize(f.len().max(60), 0); // Ethernet's minimum, as captured
            f
        })
        .collect()
}

/// in (pcap) --encap--> b ==ring==> c --decap--> out (pcap): the inner frames cross a tunnel whose
/// two ends are b and c.
fn tunnel_yaml(kind: &str, v6: bool, input: &Path, output: &Path, checksum: bool) -> String {
    let (b_ip, c_ip) = if v6 { ("'2001:db8::b'", "'2001:db8::c'") } else { ("192.0.2.11", "192.0.2.12") };
    format!(
        "streams:\n  - {{rx: in, tx: b}}\n  - {{rx: c, tx: out}}\nports:\n\
         \x20 - {{name: in, driver: pcap, engine: {kind}_encap, pcap: {{rx: \"{}\"}}}}\n\
         \x20 - {{name: b, driver: ring, ring: {{peer: c}}, {kind}: {{vni: 77, local_ip: {b_ip}, remote_ip: {c_ip}, udp_checksum: {checksum}}}}}\n\
         \x20 - {{name: c, driver: ring, ring: {{peer: b}}, engine: {kind}_decap, {kind}: {{vni: 77, local_ip: {c_ip}, udp_checksum: {checksum}}}}}\n\
         \x20 - {{name: out, driver: pcap, pcap: {{tx: \"{}\"}}}}\n",
        input.display(),
        output.display()
    )
}

#[test]
fn encapsulated_carried_and_decapsulated_frames_come_out_byte_for_byte() {
    let frames = varied();
    for (kind, v6, checksum) in
        [("vxlan", false, false), ("vxlan", true, true), ("geneve", false, true), ("geneve", true, false)]
    {
        let d = dir(&format!("{kind}-{v6}"));
        let (input, output) = (d.join("in.pcap"), d.join("out.pcap"));
        pcap::write_frames(&input, &frames);
        let (j, _) = common::run_until(&tunnel_yaml(kind, v6, &input, &output, checksum), 2 * frames.len() as u64);
        let got = common::pcap_packets(&output);
        assert_eq!(got.len(), frames.len(), "{kind} v6={v6}: {j}");
        for (i, (g, w)) in got.iter().zip(&frames).enumerate() {
            assert_eq!(g, w, "{kind} v6={v6}: frame {i} ({} bytes)", w.len());
        }
        let n = frames.len() as u64;
        assert_eq!(
            (j["ports"][1]["encapsulated"].as_u64(), j["ports"][2]["decapsulated"].as_u64()),
            (Some(n), Some(n)),
            "{j}"
        );
        assert_eq!(j["totals"]["dropped"], 0, "{j}");
        // What crossed the ring was the inner frame plus the outer headers.
        let outer = if v6 { 70 } else { 50 };
        let inner: u64 = frames.iter().map(|f| f.len() as u64).sum();
        assert_eq!(j["ports"][2]["rx_bytes"].as_u64(), Some(inner + n * outer), "{j}");
    }
}

#[test]
fn frames_not_of_the_tunnel_are_dropped_with_their_reason_or_passed() {
    let d = dir("others");
    let (input, output) = (d.join("in.pcap"), d.join("out.pcap"));
    let frames = varied();
    pcap::write_frames(&input, &frames);
    for (others, passed) in [("drop", 0), ("pass", frames.len())] {
        let yaml = format!(
            "streams:\n  - {{rx: in, tx: out}}\nports:\n  - {{name: in, driver: pcap, engine: vxlan_decap, tunnel_others: {others}, vxlan: {{local_ip: 192.0.2.1}}, pcap: {{rx: \"{}\"}}}}\n  - {{name: out, driver: pcap, pcap: {{tx: \"{}\"}}}}\n",
            input.display(),
            output.display()
        );
        let (j, _) = common::run_until(&yaml, frames.len() as u64);
        let n = frames.len() as u64;
        let (tunnel, pass) = if others == "drop" { (n, 0) } else { (0, n) };
        assert_eq!(j["ports"][1]["dropped_by_reason"]["tunnel"].as_u64(), Some(tunnel), "{j}");
        assert_eq!(j["ports"][0]["tunnel_passed"].as_u64(), Some(pass), "{j}");
        let got = common::pcap_packets(&output);
        assert_eq!(got.len(), passed);
        assert!(got.iter().zip(&frames).all(|(g, w)| g == w), "passed frames are unchanged");
    }
}

#[test]
fn no_headroom_for_the_outer_headers_is_a_counted_drop() {
    // Nested tunnels: VXLAN then Geneve around the same frames. Each needs 50 bytes, which the 64 of
    // pool.headroom allow (the config check passes), but not both: the second is refused per packet.
    let d = dir("headroom");
    let (input, output) = (d.join("in.pcap"), d.join("out.pcap"));
    let frames = varied();
    pcap::write_frames(&input, &frames);
    let yaml = format!(
        "pool: {{headroom: 64}}\nstreams:\n  - {{rx: in, tx: b}}\n  - {{rx: c, tx: out}}\nports:\n\
         \x20 - {{name: in, driver: pcap, engine: vxlan_encap, pcap: {{rx: \"{}\"}}}}\n\
         \x20 - {{name: b, driver: ring, ring: {{peer: c}}, vxlan: {{vni: 1, local_ip: 192.0.2.1, remote_ip: 192.0.2.2}}}}\n\
         \x20 - {{name: c, driver: ring, ring: {{peer: b}}, engine: geneve_encap}}\n\
         \x20 - {{name: out, driver: pcap, geneve: {{vni: 2, local_ip: 192.0.2.3, remote_ip: 192.0.2.4}}, pcap: {{tx: \"{}\"}}}}\n",
        input.display(),
        output.display()
    );
    let (j, _) = common::run_until(&yaml, 2 * frames.len() as u64);
    let n = frames.len() as u64;
    assert_eq!(j["ports"][3]["dropped_by_reason"]["headroom"].as_u64(), Some(n), "{j}");
    assert_eq!((j["ports"][3]["dropped"].as_u64(), j["ports"][3]["encapsulated"].as_u64()), (Some(n), Some(0)), "{j}");
    assert!(common::pcap_packets(&output).is_empty());
    // With the headroom for both, every frame leaves inside two tunnels, 100 bytes longer.
    let (j, _) = common::run_until(&yaml.replace("headroom: 64", "headroom: 128"), 2 * n);
    let got = common::pcap_packets(&output);
    assert_eq!(j["ports"][3]["encapsulated"].as_u64(), Some(n), "{j}");
    assert!(got.iter().zip(&frames).all(|(g, f)| g.len() == f.len() + 100 && g[100..] == f[..]));
}

/// Lines tcpdump prints for a capture (`-nn -e`, absolute TCP sequence numbers, no timestamps),
/// with `extra` arguments.
fn tcpdump_lines(file: &Path, extra: &[&str]) -> Option<Vec<String>> {
    let o = Command::new("tcpdump").args(["-nn", "-e", "-S", "-t"]).args(extra).arg("-r").arg(file).output().ok()?;
    o.status.success().then(|| String::from_utf8_lossy(&o.stdout).lines().map(str::to_string).collect())
}

/// A capture of tcpdump's test suite decapsulated by wasmdp: what tcpdump prints for the output is
/// what it printed for the inner frames of the input's packets to `local`, and the other packets are
/// dropped. tcpdump prints a tunnel packet's outer line, then `VXLAN, ... vni N` (or `Geneve, ...:`)
/// and the inner frame's line.
fn decap_matches_tcpdump(file: &str, kind: &str, local: &str, port: u16) {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/pcaps/tcpdump-tests");
    let input = corpus.join(file);
    if !input.exists() {
        common::skip(
            "tcpdump capture decapsulation",
            &format!("{} is absent", input.display()),
            common::Skip::Optional,
        );
        return;
    }
    // tcpdump reads VXLAN on its IANA port; on another (Linux's default 8472) it is told to.
    let extra: &[&str] = if kind == "vxlan" && port != 4789 { &["-T", "vxlan"] } else { &[] };
    let Some(lines) = tcpdump_lines(&input, extra) else {
        common::skip("tcpdump capture decapsulation", "tcpdump is not installed", common::Skip::Required);
        return;
    };
    let marker = if kind == "vxlan" { "VXLAN, flags" } else { "Geneve, Flags" };
    let to_us = format!(" > {local}.{port}: ");
    // VXLAN: the inner frame is the next line; Geneve: the text after the header's closing ": ".
    let mut want = Vec::new();
    let mut ours = 0;
    for (i, l) in lines.iter().enumerate() {
        if !(l.contains(&to_us) && l.contains(marker)) {
            continue;
        }
        let inner =
            if kind == "vxlan" { lines.get(i + 1).cloned() } else { l.split_once("): ").map(|x| x.1.to_string()) };
        // Geneve packets with critical options are not ours to decapsulate (RFC 8926).
        if l.contains("Flags [C]") {
            continue;
        }
        ours += 1;
        want.extend(inner);
    }
    assert!(ours > 0, "{file}: no packets to {local}");
    let d = dir(file);
    let output = d.join("out.pcap");
    let yaml = format!(
        "streams:\n  - {{rx: in, tx: out}}\nports:\n  - {{name: in, driver: pcap, engine: {kind}_decap, {kind}: {{local_ip: {local}, dst_port: {port}}}, pcap: {{rx: \"{}\"}}}}\n  - {{name: out, driver: pcap, pcap: {{tx: \"{}\"}}}}\n",
        input.display(),
        output.display()
    );
    let total = common::pcap_packets(&input).len() as u64;
    let (j, _) = common::run_until(&yaml, total);
    assert_eq!(j["ports"][0]["decapsulated"].as_u64(), Some(ours as u64), "{j}");
    assert_eq!(j["ports"][1]["dropped_by_reason"]["tunnel"].as_u64(), Some(total - ours as u64), "{j}");
    let got = tcpdump_lines(&output, &[]).expect("tcpdump reads what wasmdp wrote");
    assert_eq!(got, want, "{file}: tcpdump's view of the decapsulated frames");
}

#[test]
fn real_vxlan_captures_decapsulate_as_tcpdump_reads_them() {
    decap_matches_tcpdump("vxlan.pcap", "vxlan", "192.168.202.1", 4789);
    decap_matches_tcpdump("vxlan_port_8472.pcap", "vxlan", "192.168.202.1", 8472);
}

#[test]
fn real_geneve_captures_decapsulate_as_tcpdump_reads_them() {
    decap_matches_tcpdump("geneve.pcap", "geneve", "20.0.0.1", 6081);
}

/// tcpdump, an independent dissector, reads wasmdp's encapsulation: each output packet is the
/// tunnel to the far end (`VXLAN, flags [I] (0x08), vni 77` / `Geneve, ... vni 0x4d`) around an
/// inner frame tcpdump prints exactly as it printed the input frame.
#[test]
fn tcpdump_reads_the_encapsulated_frames_as_the_originals() {
    let d = dir("tcpdump-encap");
    let (input, output) = (d.join("in.pcap"), d.join("out.pcap"));
    let frames = varied();
    pcap::write_frames(&input, &frames);
    let Some(originals) = tcpdump_lines(&input, &[]) else {
        common::skip("tcpdump reads the encapsulation", "tcpdump is not installed", common::Skip::Required);
        return;
    };
    for (kind, v6) in [("vxlan", false), ("geneve", true)] {
        let (local, remote) = if v6 { ("'2001:db8::1'", "2001:db8::2") } else { ("192.0.2.1", "192.0.2.2") };
        let yaml = format!(
            "streams:\n  - {{rx: in, tx: out}}\nports:\n  - {{name: in, driver: pcap, engine: {kind}_encap, pcap: {{rx: \"{}\"}}}}\n  - {{name: out, driver: pcap, {kind}: {{vni: 77, local_ip: {local}, remote_ip: '{remote}'}}, pcap: {{tx: \"{}\"}}}}\n",
            input.display(),
            output.display()
        );
        common::run_until(&yaml, frames.len() as u64);
        let lines = tcpdump_lines(&output, &[]).unwrap();
        let (marker, port) = if kind == "vxlan" {
            ("VXLAN, flags [I] (0x08), vni 77", 4789)
        } else {
            ("Geneve, Flags [none], vni 0x4d, proto TEB (0x6558): ", 6081)
        };
        let to = format!(" > {remote}.{port}: ");
        let mut inner = Vec::new();
        let mut it = lines.iter();
        while let Some(outer) = it.next() {
            assert!(outer.contains(&to) && outer.contains(marker), "{kind}: {outer}");
            match kind {
                // tcpdump prints the inner frame of VXLAN on a line of its own, of Geneve after the header.
                "vxlan" => inner.push(it.next().expect("an inner line").clone()),
                _ => inner.push(outer.split_once(marker).unwrap().1.to_string()),
            }
        }
        assert_eq!(inner, originals, "{kind}: the inner frames as tcpdump reads them");
    }
}
