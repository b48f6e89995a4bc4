//! Packet trace (`wasmdp ctl trace`) end to end: a chain whose links drop, grow and send packets to
//! another port shows each packet's step at each link and its fate; a port without a policy shows
//! the TX port, the bytes handed to it and the offloads; bad requests are refused with the rule.

mod common;

use common::pcap;
use common::plugin_path;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A 1.1 module that appends 4 bytes to every packet (`pkt_adjust(i, 0, 4)`).
fn grow() -> PathBuf {
    common::write_wat(
        "grow",
        r#"(module
  (import "wasmdp" "pkt_adjust" (func $adjust (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "wasmdp_abi_version") (result i32) (i32.const 65537))
  (func (export "wasmdp_init") (param i32 i32) (result i32) (i32.const 0))
  (func (export "wasmdp_on_burst") (param i32 i32) (result i32) (local $i i32)
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get 1)))
      (drop (call $adjust (local.get $i) (i32.const 0) (i32.const 4)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (i32.const 0)))"#,
    )
}

/// A replay of UDP frames to ports 9 and 53 in turn, slow enough to trace.
fn input(dir: &Path) -> (PathBuf, Vec<Vec<u8>>) {
    let frames = vec![common::udp(64, [10, 0, 0, 2], 1000, 9, None), common::udp(64, [10, 0, 0, 2], 1001, 53, None)];
    let path = dir.join("in.pcap");
    pcap::write_frames(&path, &frames);
    (path, frames)
}

fn trace(sock: &Path, port: &str, count: u64) -> Value {
    let a = wasmdp::control::request(sock, &json!({"cmd": "trace", "port": port, "count": count})).unwrap();
    assert_eq!(a["ok"], true, "{a}");
    a["result"].clone()
}

#[test]
fn a_chain_that_drops_grows_and_sends_shows_each_packets_steps() {
    let d = common::live::fresh_dir("trace-chain");
    let (pcap, _) = input(&d);
    let yaml = format!(
        "engine: io\nstreams: [{{rx: in, tx: out}}, {{rx: out, tx: side}}]\nports:\n  - name: in\n    driver: pcap\n    pcap: {{rx: \"{}\", repeat: forever, rate_pps: 2000}}\n    policy:\n      - {{plugin: {}, params: {{deny_udp_dst_port: 9}}}}\n      - {{plugin: {}}}\n      - {{plugin: {}, params: {{ports: '2'}}}}\n  - {{name: out, driver: null}}\n  - {{name: side, driver: null}}\n",
        pcap.display(),
        plugin_path("acl").display(),
        grow().display(),
        plugin_path("l4_lb").display()
    );
    let (running, opts, sock) = common::live::start_with_socket(&d, &yaml);
    let r = trace(&sock, "in", 6);
    assert_eq!((r["asked"].as_u64(), r["traced"].as_u64()), (Some(6), Some(6)), "{r}");
    let packets = r["packets"].as_array().unwrap();
    let (mut dropped, mut sent) = (0, 0);
    for p in packets {
        assert_eq!(p["rx"]["port"], "in");
        assert_eq!(p["rx"]["len"], 64);
        assert_eq!(p["engine"], "io");
        let links = p["links"].as_array().unwrap();
        let dst_port = u16::from_str_radix(&p["rx"]["head"].as_str().unwrap()[72..76], 16).unwrap();
        match dst_port {
            9 => {
                dropped += 1;
                assert_eq!(links.len(), 1, "{p}");
                assert_eq!((links[0]["link"].as_str(), links[0]["verdict"].as_str()), (Some("acl"), Some("dropped")));
                assert_eq!(p["fate"], "dropped by link acl");
                assert!(p["tx"].is_null());
            }
            53 => {
                sent += 1;
                let steps: Vec<(&str, &str, Value)> = links
                    .iter()
                    .map(|l| (l["link"].as_str().unwrap(), l["verdict"].as_str().unwrap(), l["len"].clone()))
                    .collect();
                assert_eq!(
                    steps,
                    [
                        ("acl", "pass", json!(64)),
                        ("grow", "pass", json!(68)),
                        ("l4_lb", "sent to another port", Value::Null)
                    ],
                    "{p}"
                );
                assert_eq!(p["fate"], "sent to another port by link l4_lb");
                assert!(links.iter().all(|l| l["ns"].as_u64().unwrap() > 0), "each call timed: {p}");
            }
            other => panic!("a frame to port {other}: {p}"),
        }
    }
    assert!(dropped >= 2 && sent >= 2, "both kinds traced: {dropped} dropped, {sent} sent");
    // The text form: a block per packet, a line per step.
    let (code, out, err) = common::wasmdp(&["ctl", "--socket", sock.to_str().unwrap(), "trace", "in", "--count", "2"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("trace of in: 2 of 2 packets"), "{out}");
    assert!(out.contains("  link    acl: "), "{out}");
    assert!(out.contains("  rx      in queue 0, 64 bytes: "), "{out}");
    running.finish(&opts).unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_port_without_a_policy_shows_the_bytes_handed_to_the_tx_port() {
    let d = common::live::fresh_dir("trace-tx");
    let (pcap, frames) = input(&d);
    let yaml = format!(
        "engine: macswap\nstreams: [{{rx: in, tx: out}}]\nports:\n  - {{name: in, driver: pcap, pcap: {{rx: \"{}\", repeat: forever, rate_pps: 2000}}}}\n  - {{name: out, driver: null, tx_offloads: [ipv4_cksum]}}\n",
        pcap.display()
    );
    let (running, opts, sock) = common::live::start_with_socket(&d, &yaml);
    let r = trace(&sock, "in", 3);
    running.finish(&opts).unwrap();
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    for p in r["packets"].as_array().unwrap() {
        let head_in = p["rx"]["head"].as_str().unwrap();
        let frame = frames.iter().find(|f| hex(f) == head_in).expect("a replayed frame");
        let mut swapped = frame.clone();
        swapped[..6].copy_from_slice(&frame[6..12]);
        swapped[6..12].copy_from_slice(&frame[..6]);
        assert_eq!(p["engine"], "macswap");
        assert_eq!(p["links"], json!([]));
        assert_eq!(p["tx"]["port"], "out");
        assert_eq!(p["tx"]["len"], 64);
        assert_eq!(p["tx"]["head"], hex(&swapped), "the bytes handed to the TX port");
        assert_eq!(p["tx"]["offloads"], json!(["ipv4_cksum"]), "{p}");
        assert_eq!(p["fate"], "transmitted");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_trace_requests_are_refused_with_the_rule() {
    let d = common::live::fresh_dir("trace-bad");
    let yaml = "engine: io\nports:\n  - {name: a, driver: null}\n  - {name: b, driver: null}\n";
    let (running, opts, sock) = common::live::start_with_socket(&d, yaml);
    let err = |req: Value| wasmdp::control::request(&sock, &req).unwrap()["error"].as_str().unwrap_or("").to_string();
    assert_eq!(err(json!({"cmd": "trace", "port": "x"})), "trace: no port \"x\"");
    assert_eq!(err(json!({"cmd": "trace", "port": "a", "count": 0})), "trace: \"count\" 0 is outside 1..=1000");
    assert_eq!(err(json!({"cmd": "trace", "port": "a", "count": 5000})), "trace: \"count\" 5000 is outside 1..=1000");
    assert!(err(json!({"cmd": "trace", "port": "a", "count": "many"})).contains("must be a number"));
    running.finish(&opts).unwrap();
    let _ = std::fs::remove_dir_all(&d);
}
