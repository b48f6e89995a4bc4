//! The example plugins of plugins/ (built by scripts/build-plugins.sh) end to end: each on a ring
//! port, with its expected effect on the frames that come out.

mod common;

use common::{plugin_path, swapped, tags, Wire};
use std::sync::atomic::Ordering::Relaxed;
use wasmdp::wire::{build_udp, FrameSpec};

fn policy(name: &str, params: &str) -> String {
    format!(
        "policy: {{plugin: {}, params: {{{params}}}, limits: {{deadline_us: 500000}}}}",
        plugin_path(name).display()
    )
}

fn frame(size: usize, dst_port: u16) -> Vec<u8> {
    build_udp(&FrameSpec {
        size,
        dst_mac: [0xd0; 6],
        src_mac: [0x5a; 6],
        src_ip: [10, 0, 0, 1],
        dst_ip: [10, 0, 0, 2],
        src_port: 1000,
        dst_port,
        vlan: None,
    })
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
