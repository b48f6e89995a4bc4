//! The native builds of the example policies (`plugin: native:NAME`, the same source compiled into
//! the host) against their WebAssembly builds: the same frames in, the same bytes out, the same
//! counters; and a config naming a build that does not exist is refused with the names that do.
//! The native builds are in the binary with the feature `native-examples` only (the test command
//! turns it on); without it, every `native:` name is refused saying so.
// Without the feature, only the refusal runs: the helpers of the others stay unused.
#![cfg_attr(not(feature = "native-examples"), allow(dead_code, unused_imports))]

mod common;

use common::{plugin_path, udp, Wire};
use std::collections::BTreeMap;

fn policy(plugin: &str, params: &str) -> String {
    format!("policy: {{plugin: '{plugin}', params: {{{params}}}, limits: {{deadline_us: 500000}}}}")
}

/// Frames of several sizes, addresses, ports and tags, and a few that are not IPv4/UDP at all.
fn varied() -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    for (i, size) in [60usize, 64, 100, 128, 300, 1000, 1500].into_iter().enumerate() {
        let i = i as u16;
        frames.push(udp(size, [10, 0, 0, 2], 1000 + i, 53, None));
        frames.push(udp(size, [10, 0, 1, (i % 3) as u8], 2000 + i, 80, Some(100 + i)));
    }
    let mut arp = vec![0xffu8; 60];
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    frames.push(arp);
    let mut short_ip = udp(64, [10, 0, 0, 2], 7, 53, None);
    short_ip[14] = 0x4f; // IHL 15: options past the frame's end
    frames.push(short_ip);
    frames
}

/// What comes out of a ring port whose policy is `plugin` with `params`, for each batch of frames,
/// with the port's policy drops and the plugin's counters.
fn run(plugin: &str, params: &str, batches: &[Vec<Vec<u8>>]) -> (Vec<Vec<Vec<u8>>>, u64, BTreeMap<String, u64>) {
    let mut w = Wire::new(&format!("engine: io, {}", policy(plugin, params)));
    let out = batches.iter().map(|b| w.send(b)).collect();
    (out, w.counts().drops.policy, w.plugin().named())
}

/// The module and the native build of `name` agree on everything `run` sees.
fn agree(name: &str, params: &str, batches: &[Vec<Vec<u8>>]) -> Vec<Vec<Vec<u8>>> {
    let wasm = run(&plugin_path(name).display().to_string(), params, batches);
    let native = run(&format!("native:{name}"), params, batches);
    assert_eq!(wasm.0.len(), native.0.len());
    for (i, (a, b)) in wasm.0.iter().zip(&native.0).enumerate() {
        assert_eq!(a, b, "{name}: batch {i}: the native build's bytes differ from the module's");
    }
    assert_eq!((wasm.1, &wasm.2), (native.1, &native.2), "{name}: policy drops and counters");
    wasm.0
}

#[cfg(feature = "native-examples")]
#[test]
fn every_per_packet_example_built_natively_puts_the_same_bytes_on_the_wire() {
    let frames = varied();
    let out = agree("wasm_macswap", "", std::slice::from_ref(&frames));
    assert_eq!(out[0].len(), frames.len());
    let out = agree("dnat", "match: 10.0.1.0/24, to: 192.0.2.9, to_port: 5353", std::slice::from_ref(&frames));
    assert_ne!(out[0], frames, "dnat rewrote something");
    let out = agree("dscp_remark", "dscp: 46, pcp: 5", std::slice::from_ref(&frames));
    assert_ne!(out[0], frames, "dscp_remark rewrote something");
    let enc = "vni: 42, local_ip: 192.0.2.1, remote_ip: 192.0.2.2";
    let outer = agree("vxlan_encap", enc, std::slice::from_ref(&frames)).remove(0);
    assert!(outer.iter().zip(&frames).all(|(o, i)| o.len() == i.len() + 50));
    let mut mixed = outer.clone();
    mixed.extend(frames.iter().take(4).cloned());
    let inner = agree("vxlan_decap", "local_ip: 192.0.2.2, vni: 42", &[mixed]).remove(0);
    assert_eq!(inner, frames, "decapsulated back to the frames, the others dropped");
    // 1 packet per second with a bucket of 3: the same three of each source pass in both builds.
    let same_source = vec![udp(64, [10, 0, 0, 2], 1, 53, None); 10];
    let out = agree("ratelimit", "rate_pps: 1, burst: 3", &[same_source.clone(), same_source]);
    assert_eq!((out[0].len(), out[1].len()), (3, 0));
    agree("static_policy", "engine: macswap, offloads: vlan_insert, vlan: 7", &[frames]);
}

#[cfg(feature = "native-examples")]
#[test]
fn l4_lb_built_natively_pins_and_spreads_flows_as_its_module_does() {
    for plugin in [plugin_path("l4_lb").display().to_string(), "native:l4_lb".into()] {
        let yaml = format!(
            "engine: io\nstreams: [{{rx: a, tx: b}}, {{rx: c, tx: c}}]\nports:\n  - {{name: a, driver: null, frame: {{flows: 64}}, {}}}\n  - {{name: b, driver: null}}\n  - {{name: c, driver: null}}\n",
            policy(&plugin, "ports: '1,2'")
        );
        let j = common::run_yaml(&yaml, 0.2);
        let (a, s) = (&j["ports"][0], &j["streams"][0]);
        let rx = a["rx_packets"].as_u64().unwrap();
        let (b, c) = (s["tx_packets"].as_u64().unwrap(), s["redirected_out"].as_u64().unwrap());
        assert!(b + c == rx && b > rx / 5 && c > rx / 5, "{plugin}: spread {b} / {c} of {rx}: {s}");
        assert_eq!(a["plugin_maps"][0]["entries"], 64, "{plugin}: the 64 flows pinned: {a}");
    }
}

#[cfg(feature = "native-examples")]
#[test]
fn an_unknown_native_build_is_refused_with_the_names_there_are() {
    let yaml =
        format!("ports:\n  - {{name: a, driver: null, {}}}\n  - {{name: b, driver: null}}\n", policy("native:nat", ""));
    let e = common::build_error(&yaml);
    for part in ["port `a`", "no native build is called `nat`", "dnat", "l4_lb", "wasm_macswap"] {
        assert!(e.contains(part), "`{part}` missing from: {e}");
    }
}

#[cfg(not(feature = "native-examples"))]
#[test]
fn without_the_feature_a_native_build_is_refused_naming_the_feature() {
    let yaml = format!(
        "ports:\n  - {{name: a, driver: null, {}}}\n  - {{name: b, driver: null}}\n",
        policy("native:dnat", "match: 198.18.0.0/24, to: 10.9.9.9")
    );
    let e = common::build_error(&yaml);
    for part in ["port `a`", "no native build is called `dnat`", "built without the feature `native-examples`"] {
        assert!(e.contains(part), "`{part}` missing from: {e}");
    }
}

#[cfg(feature = "native-examples")]
#[test]
fn a_config_file_names_a_native_build_without_it_becoming_a_path() {
    // Relative plugin paths are taken relative to the config file; `native:NAME` is not a path.
    let dir = std::env::temp_dir().join(format!("wasmdp-native-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("native.yaml");
    let yaml = format!(
        "lcores: [0]\nports:\n  - {{name: a, driver: null, {}}}\n  - {{name: b, driver: null}}\n",
        policy("native:static_policy", "engine: macswap")
    );
    std::fs::write(&cfg, yaml).unwrap();
    let stats = dir.join("stats.json");
    let (code, _, err) = common::wasmdp(&[
        "run",
        cfg.to_str().unwrap(),
        "--duration",
        "0.3",
        "--stats-period",
        "0",
        "--stats-json",
        stats.to_str().unwrap(),
    ]);
    let j: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&stats).unwrap_or_default()).unwrap_or(serde_json::Value::Null);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(code, 0, "{err}");
    let a = &j["ports"][0];
    assert!(a["plugin_calls"].as_u64().unwrap_or(0) > 0 && a["plugin_traps"] == 0, "{a}");
}
