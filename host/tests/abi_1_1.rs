//! ABI 1.1 end to end, in WAT so each test shows the exact bytes a plugin writes: the burst area
//! (verdicts, windows written back, length changes, header engine), what the host refuses in it,
//! maps shared by a port's instances and kept across a reload, the context, gauges, and 1.0 modules
//! built against the released SDK running unchanged.

mod common;

use common::{build_error, capture_logs, plugin_path, run_yaml, write_wat, Wire};
use wasmdp::wire::{build_udp, FrameSpec};
use wasmdp_abi::area;

/// Imports of 1.1 and memory; the area sits at 1024: header 64 bytes, 32 descriptors of 32 bytes
/// (from 1088), 32 windows of 64 bytes (from 2112).
const HEAD: &str = r#"
  (import "wasmdp" "burst_area" (func $area (param i32 i32 i32) (result i32)))
  (import "wasmdp" "map_declare" (func $declare (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasmdp" "map_declare_ttl" (func $declare_ttl (param i32 i32 i32 i32 i32 i32 i64) (result i32)))
  (import "wasmdp" "map_update" (func $update (param i32 i32 i32) (result i32)))
  (import "wasmdp" "map_add" (func $madd (param i32 i32 i32 i64) (result i32)))
  (import "wasmdp" "map_lookup" (func $lookup (param i32 i32 i32) (result i32)))
  (import "wasmdp" "map_next_key" (func $next (param i32 i32 i32) (result i32)))
  (import "wasmdp" "gauge_register" (func $greg (param i32 i32) (result i32)))
  (import "wasmdp" "gauge_set" (func $gset (param i32 i64) (result i32)))
  (import "wasmdp" "context" (func $ctx (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "wasmdp_abi_version") (result i32) (i32.const 65537))
"#;

/// A module whose init registers the area (and runs `init`), and whose on_burst runs `burst`.
fn area_module(init: &str, burst: &str) -> String {
    area_module_flags(0, init, burst)
}

/// [`area_module`] with `flags` (`area::FLOW_HASH`) registered beside the 64-byte windows.
fn area_module_flags(flags: u32, init: &str, burst: &str) -> String {
    let window = 64 | flags;
    format!(
        "(module {HEAD}
           (func (export \"wasmdp_init\") (param i32 i32) (result i32)
             (if (i32.ne (call $area (i32.const 1024) (i32.const 32) (i32.const {window})) (i32.const 0))
               (then (return (i32.const 1))))
             {init} (i32.const 0))
           (func (export \"wasmdp_on_burst\") (param i32 i32) (result i32) {burst} (i32.const 0)))"
    )
}

/// Descriptor field `at` of packet `i`, and byte `at` of its window.
fn desc(i: u32, at: u32) -> u32 {
    1088 + i * 32 + at
}
fn win(i: u32, at: u32) -> u32 {
    2112 + i * 64 + at
}

fn frame(tag: u16) -> Vec<u8> {
    build_udp(&FrameSpec {
        size: 64,
        dst_mac: [0xd0; 6],
        src_mac: [0x5a; 6],
        src_ip: [10, 0, 0, 1],
        dst_ip: [10, 0, 0, 2],
        src_port: 1000,
        dst_port: tag,
        vlan: None,
    })
}

fn policy(path: &std::path::Path) -> String {
    format!("policy: {{plugin: {}, limits: {{deadline_us: 500000}}}}", path.display())
}

/// Decisions for packets 1..=6 of an 8-packet burst (a window byte, a prepend with its bytes, a
/// trim, a strip, an engine, a prepend that does not fit), and the frames they make with packet 0
/// dropped.
fn mixed_decisions() -> (String, Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let burst = format!(
        "(i32.store (i32.const 1040) (i32.const 1))
         (i32.store8 (i32.const {w1}) (i32.const 0xEE)) (i32.store16 (i32.const {dirty1}) (i32.const 1))
         (i32.store16 (i32.const {head2}) (i32.const 4)) (i32.store (i32.const {w2}) (i32.const 0xAAAAAAAA))
         (i32.store16 (i32.const {dirty2}) (i32.const 4))
         (i32.store16 (i32.const {tail3}) (i32.const -10))
         (i32.store16 (i32.const {head4}) (i32.const -14))
         (i32.store8 (i32.const {v5}) (i32.const 3)) (i32.store16 (i32.const {a5}) (i32.const 2))
         (i32.store16 (i32.const {head6}) (i32.const 1000))",
        w1 = win(1, 0),
        dirty1 = desc(1, 24),
        head2 = desc(2, 20),
        w2 = win(2, 0),
        dirty2 = desc(2, 24),
        tail3 = desc(3, 22),
        head4 = desc(4, 20),
        v5 = desc(5, 16),
        a5 = desc(5, 18),
        head6 = desc(6, 20),
    );
    let frames: Vec<Vec<u8>> = (0..8).map(frame).collect();
    let f = &frames;
    let mut one = f[1].clone();
    one[0] = 0xEE;
    let mut two = vec![0xAA; 4];
    two.extend(&f[2]);
    let five = common::swapped(&f[5]);
    let want: Vec<Vec<u8>> = vec![one, two, f[3][..54].to_vec(), f[4][14..].to_vec(), five, f[7].clone()];
    (burst, frames, want)
}

/// Runs `module` (named `name`) on the burst of [`mixed_decisions`] with packet 0 dropped by it:
/// the frames and drop counts that must come out.
fn check_mixed(name: &str, module: &str, frames: &[Vec<u8>], want: &[Vec<u8>]) {
    let p = write_wat(name, module);
    let mut w = Wire::new(&policy(&p));
    assert_eq!(w.send(frames), want);
    let c = w.counts();
    assert_eq!((c.drops.policy, c.drops.headroom, c.drops.total()), (1, 1, 2), "{c:?}");
}

#[test]
fn verdicts_windows_and_length_changes_reach_the_wire() {
    let (decisions, frames, want) = mixed_decisions();
    let burst = format!("(i32.store8 (i32.const {d0}) (i32.const 1)) {decisions}", d0 = desc(0, 16));
    check_mixed("area-verdicts", &area_module("", &burst), &frames, &want);
}

/// The same decisions when a 1.0 import changed the burst during the call (packet 0 dropped with
/// `drop_pkt`, not by its verdict): the host then carries them out through its view of the burst,
/// not slot by slot, and the result is the same.
#[test]
fn area_decisions_after_a_1_0_drop_reach_the_wire_alike() {
    let (decisions, frames, want) = mixed_decisions();
    let burst = format!("(drop (call $drop (i32.const 0))) {decisions}");
    let import = r#"(module (import "wasmdp" "drop_pkt" (func $drop (param i32) (result i32)))"#;
    let module = area_module("", &burst).replacen("(module ", import, 1);
    check_mixed("area-verdicts-1-0-drop", &module, &frames, &want);
}

/// Verdicts without windows (`burst_area` with window 0, as l4_lb registers it): each packet's
/// verdict is carried out in its place.
#[test]
fn verdicts_of_a_windowless_area_reach_the_wire() {
    let burst = format!(
        "(i32.store (i32.const 1040) (i32.const 1)) (i32.store8 (i32.const {d1}) (i32.const 1))
         (i32.store8 (i32.const {d2}) (i32.const 3)) (i32.store16 (i32.const {a2}) (i32.const 2))",
        d1 = desc(1, 16),
        d2 = desc(2, 16),
        a2 = desc(2, 18)
    );
    let module = area_module("", &burst).replace("(i32.const 32) (i32.const 64))", "(i32.const 32) (i32.const 0))");
    assert!(module.contains("(i32.const 32) (i32.const 0))"), "{module}");
    let p = write_wat("area-windowless", &module);
    let mut w = Wire::new(&policy(&p));
    let frames: Vec<Vec<u8>> = (0..4).map(frame).collect();
    let want = vec![frames[0].clone(), common::swapped(&frames[2]), frames[3].clone()];
    assert_eq!(w.send(&frames), want);
    assert_eq!(w.counts().drops.policy, 1);
}

#[test]
fn the_header_engine_runs_on_passing_packets_only() {
    // Header engine macswap (2); packet 1 dropped: the others swapped, in one engine run each side.
    let burst = format!(
        "(i32.store (i32.const 1036) (i32.const 2)) (i32.store (i32.const 1040) (i32.const 1))
         (i32.store8 (i32.const {d1}) (i32.const 1))",
        d1 = desc(1, 16)
    );
    let p = write_wat("area-engine", &area_module("", &burst));
    let mut w = Wire::new(&policy(&p));
    let frames: Vec<Vec<u8>> = (0..4).map(frame).collect();
    let out = w.send(&frames);
    let want: Vec<Vec<u8>> = [0, 2, 3].iter().map(|&i| common::swapped(&frames[i])).collect();
    assert_eq!(out, want);
}

#[test]
fn what_the_plugin_writes_in_the_area_is_checked_before_anything_is_done() {
    // Each: a burst that writes one bad value; the call fails (counted as a plugin error), and under
    // fail_open the burst leaves unchanged: nothing of the bad area was carried out.
    let bad = [
        ("verdict", format!("(i32.store8 (i32.const {}) (i32.const 9))", desc(0, 16))),
        (
            "engine",
            format!(
                "(i32.store8 (i32.const {}) (i32.const 3)) (i32.store16 (i32.const {}) (i32.const 99))",
                desc(0, 16),
                desc(0, 18)
            ),
        ),
        (
            "port",
            format!(
                "(i32.store8 (i32.const {}) (i32.const 2)) (i32.store16 (i32.const {}) (i32.const 7))",
                desc(0, 16),
                desc(0, 18)
            ),
        ),
        (
            "dirty",
            format!(
                "(i32.store16 (i32.const {}) (i32.const 65)) (i32.store8 (i32.const {}) (i32.const 1))",
                desc(0, 24),
                desc(1, 16)
            ),
        ),
        // Every verdict a plain pass and only the last packet's dirty count too long: the host's
        // quick pass over a burst of passes must still refuse it.
        ("dirty-alone", format!("(i32.store16 (i32.const {}) (i32.const 65))", desc(2, 24))),
        ("header-engine", "(i32.store (i32.const 1036) (i32.const 1234))".to_string()),
        ("flags", "(i64.store (i32.const 1048) (i64.const 1))".to_string()),
    ];
    for (what, code) in bad {
        let burst = format!("(i32.store (i32.const 1040) (i32.const 1)) {code}");
        let p = write_wat(&format!("area-bad-{what}"), &area_module("", &burst));
        let mut w = Wire::new(&format!(
            "policy: {{plugin: {}, on_failure: fail_open, max_failures: 10000, limits: {{deadline_us: 500000}}}}",
            p.display()
        ));
        let frames: Vec<Vec<u8>> = (0..3).map(frame).collect();
        let out = w.send(&frames);
        assert_eq!(out, frames, "{what}: the burst left as it came");
        let pc = w.plugin();
        assert_eq!(pc.errors.load(std::sync::atomic::Ordering::Relaxed), 1, "{what}: counted as a plugin error");
    }
}

#[test]
fn a_module_declaring_1_0_cannot_import_what_1_1_added() {
    let module = area_module("", "").replace("(i32.const 65537)", "(i32.const 65536)");
    let p = write_wat("declares-1-0", &module);
    let e = common::build_error(&format!(
        "engine: io\nports:\n  - {{name: a, driver: null, {}}}\n  - {{name: b, driver: null}}\n",
        policy(&p)
    ));
    assert!(e.contains("declares ABI v1.0 but imports `") && e.contains("which ABI v1.1 added"), "{e}");
}

#[test]
fn an_area_outside_the_memory_or_outside_init_is_refused() {
    // Init checks the codes itself: the port starts only if the host answered as documented.
    let init = "
      (if (i32.ne (call $area (i32.const 65000) (i32.const 32) (i32.const 64)) (i32.const -3)) (then (return (i32.const 2))))
      (if (i32.ne (call $area (i32.const 0) (i32.const 513) (i32.const 64)) (i32.const -2)) (then (return (i32.const 3))))
      (if (i32.ne (call $area (i32.const 0) (i32.const 32) (i32.const 1025)) (i32.const -2)) (then (return (i32.const 4))))
      (if (i32.ne (call $area (i32.const 0) (i32.const 32) (i32.const 0x40040)) (i32.const -2)) (then (return (i32.const 5))))";
    let burst =
        "(if (i32.ne (call $area (i32.const 1024) (i32.const 32) (i32.const 64)) (i32.const -13)) (then unreachable))";
    let p = write_wat("area-refusals", &area_module(init, burst));
    let j = run_yaml(
        &format!("engine: io\nports:\n  - {{name: a, driver: null, {}}}\n  - {{name: b, driver: null}}\n", policy(&p)),
        0.1,
    );
    let a = &j["ports"][0];
    assert!(a["plugin_calls"].as_u64().unwrap() > 0, "{a}");
    assert_eq!((a["plugin_traps"].as_u64(), a["plugin_errors"].as_u64()), (Some(0), Some(0)), "{a}");
}

#[test]
fn with_flow_hash_registered_each_descriptor_holds_the_hosts_flow_hash() {
    // Each packet's descriptor hash is copied over its first 4 bytes (window written, dirty 4).
    let burst = "(local $i i32) (i32.store (i32.const 1040) (i32.const 1))
      (block $d (loop $l (br_if $d (i32.ge_u (local.get $i) (local.get 1)))
        (i32.store (i32.add (i32.const 2112) (i32.mul (local.get $i) (i32.const 64)))
          (i32.load (i32.add (i32.const 1096) (i32.mul (local.get $i) (i32.const 32)))))
        (i32.store16 (i32.add (i32.const 1112) (i32.mul (local.get $i) (i32.const 32))) (i32.const 4))
        (local.set $i (i32.add (local.get $i) (i32.const 1))) (br $l)))";
    for (flags, name) in [(area::FLOW_HASH, "area-hash"), (0, "area-no-hash")] {
        let p = write_wat(name, &area_module_flags(flags, "", burst));
        let frames: Vec<Vec<u8>> = (0..8).map(|i| frame(1000 + i)).collect();
        let want: Vec<Vec<u8>> = frames
            .iter()
            .map(|f| {
                let hash = if flags == 0 { 0 } else { wasmdp_abi::hash::flow_hash(f) };
                let mut f = f.clone();
                f[..4].copy_from_slice(&hash.to_le_bytes());
                f
            })
            .collect();
        if flags != 0 {
            assert_ne!(want[0][..4], want[1][..4], "{name}: the flows differ");
        }
        assert_eq!(Wire::new(&policy(&p)).send(&frames), want, "{name}");
    }
}

#[test]
fn send_verdicts_leave_on_the_port_given() {
    // Every packet of a (queue 0) to port b; b's traffic goes back out of b.
    let burst = "(local $i i32) (i32.store (i32.const 1040) (i32.const 1))
      (block $d (loop $l (br_if $d (i32.ge_u (local.get $i) (local.get 1)))
        (i32.store8 (i32.add (i32.const 1104) (i32.mul (local.get $i) (i32.const 32))) (i32.const 2))
        (i32.store16 (i32.add (i32.const 1106) (i32.mul (local.get $i) (i32.const 32))) (i32.const 1))
        (local.set $i (i32.add (local.get $i) (i32.const 1))) (br $l)))";
    let p = write_wat("area-send", &area_module("", burst));
    let yaml = format!(
        "engine: io\ntopology: loop\nports:\n  - {{name: a, driver: null, {}}}\n  - {{name: b, driver: null}}\n",
        policy(&p)
    );
    let j = run_yaml(&yaml, 0.2);
    let (a, b) = (&j["ports"][0], &j["ports"][1]);
    let rx_a = a["rx_packets"].as_u64().unwrap();
    assert!(rx_a > 1000, "{a}");
    assert_eq!(a["tx_packets"], 0, "nothing left on a's own TX: {a}");
    assert_eq!(a["dropped"], 0, "{a}");
    assert!(b["tx_packets"].as_u64().unwrap() >= rx_a, "a's packets left on b: {b}");
}

/// A module declaring a shared hash map `hits` (4-byte key, 8-byte value) and adding 1 per packet
/// under key 0, and a gauge `calls` set to the map's value after each burst.
fn counting_module(capacity: u32) -> String {
    let init = format!("(i32.store (i32.const 900) (i32.const 0))
      (if (i32.ne (call $declare (i32.const 800) (i32.const 4) (i32.const 0) (i32.const 4) (i32.const 8) (i32.const {capacity})) (i32.const 0))
        (then (return (i32.const 5))))
      (if (i32.ne (call $greg (i32.const 820) (i32.const 5)) (i32.const 0)) (then (return (i32.const 6))))");
    let burst = "(drop (call $madd (i32.const 0) (i32.const 900) (i32.const 0) (i64.extend_i32_u (local.get 1))))
      (drop (call $lookup (i32.const 0) (i32.const 900) (i32.const 908)))
      (drop (call $gset (i32.const 0) (i64.load (i32.const 908))))";
    area_module(&init, burst).replace(
        "(memory (export \"memory\") 1)",
        "(memory (export \"memory\") 1) (data (i32.const 800) \"hits\") (data (i32.const 820) \"calls\")",
    )
}

#[test]
fn a_shared_map_counts_every_queue_and_shows_in_the_stats() {
    let p = write_wat("map-count", &counting_module(16));
    let yaml = format!(
        "engine: io\nports:\n  - {{name: a, driver: null, queues: 2, {}}}\n  - {{name: b, driver: null, queues: 2}}\n",
        policy(&p)
    );
    let j = run_yaml(&yaml, 0.2);
    let a = &j["ports"][0];
    let maps = a["plugin_maps"].as_array().unwrap();
    assert_eq!(maps.len(), 1, "{a}");
    assert_eq!(
        (maps[0]["name"].as_str(), maps[0]["kind"].as_str(), maps[0]["entries"].as_u64()),
        (Some("hits"), Some("hash"), Some(1))
    );
    assert_eq!((maps[0]["capacity"].as_u64(), maps[0]["tables"].as_u64()), (Some(16), Some(1)));
    // One table for both queues: each queue's gauge (the last value it saw) is close to all the
    // port's packets, and the port shows the two summed (separate tables would sum to rx exactly).
    let gauge = a["plugin_gauges"]["calls"].as_i64().unwrap_or_else(|| panic!("{a}")) as u64;
    let rx = a["rx_packets"].as_u64().unwrap();
    assert!(gauge > rx * 3 / 2 && gauge <= rx * 2, "gauge {gauge} of {rx} packets on two queues: {a}");
}

#[test]
fn a_map_listed_in_shared_maps_is_one_table_for_both_ports() {
    // Both ports count their packets under one key; each burst's gauge is the map's value then.
    // Shared, port a's gauge runs ahead of its own packets (b's are in it); not shared, it cannot.
    let p = write_wat("map-shared", &counting_module(16));
    let port = |name: &str, shares: &str| {
        format!(
            "  - {{name: {name}, driver: null, policy: {{plugin: {}, limits: {{deadline_us: 500000}}, shared_maps: [{shares}]}}}}\n",
            p.display()
        )
    };
    let yaml = |shares: &str| format!("engine: io\nports:\n{}{}", port("a", shares), port("b", shares));
    let j = run_yaml(&yaml("hits"), 0.2);
    let (a, b) = (&j["ports"][0], &j["ports"][1]);
    let gauge = a["plugin_gauges"]["calls"].as_i64().unwrap_or_else(|| panic!("{a}")) as u64;
    let (rx_a, rx_b) = (a["rx_packets"].as_u64().unwrap(), b["rx_packets"].as_u64().unwrap());
    assert!(gauge > rx_a + rx_b / 2 && gauge <= rx_a + rx_b, "gauge {gauge}, rx {rx_a} + {rx_b}: {a}");
    for port in [a, b] {
        let m = &port["plugin_maps"][0];
        assert_eq!(
            (m["name"].as_str(), m["shared"].as_bool(), m["entries"].as_u64()),
            (Some("hits"), Some(true), Some(1)),
            "{port}"
        );
    }
    let j = run_yaml(&yaml(""), 0.2);
    let a = &j["ports"][0];
    let gauge = a["plugin_gauges"]["calls"].as_i64().unwrap_or_else(|| panic!("{a}")) as u64;
    assert!(gauge <= a["rx_packets"].as_u64().unwrap(), "not shared: a counts only its own: {a}");
    assert_eq!(a["plugin_maps"][0]["shared"], false, "{a}");
}

#[test]
fn a_shared_map_declared_otherwise_on_another_port_is_refused_naming_both() {
    let (a, b) = (write_wat("map-shared-16", &counting_module(16)), write_wat("map-shared-32", &counting_module(32)));
    let port = |name: &str, p: &std::path::Path| {
        format!("  - {{name: {name}, driver: null, policy: {{plugin: {}, shared_maps: [hits]}}}}\n", p.display())
    };
    let yaml = format!("engine: io\nports:\n{}{}", port("inside", &a), port("outside", &b));
    let (e, logs) = capture_logs(|| build_error(&yaml));
    assert!(e.contains("outside"), "{e}");
    assert!(
        logs.contains("map \"hits\" is shared")
            && logs.contains("port `inside` declared it as hash key_size 4 value_size 8 capacity 16")
            && logs.contains("port `outside` declares it as hash key_size 4 value_size 8 capacity 32"),
        "{logs}"
    );
    let bad =
        "engine: io\nports:\n  - {name: a, driver: null, policy: {plugin: x.wasm, shared_maps: [\"no/slash\"]}}\n";
    let e = build_error(bad);
    assert!(e.contains("ports[0] (`a`).policy.shared_maps") && e.contains("\"no/slash\" is not a map name"), "{e}");
}

#[test]
fn an_lru_map_with_expiry_takes_every_new_key_and_counts_its_evictions() {
    // Each burst inserts a new key (a count kept at 900) into a 4-entry LRU map whose entries
    // expire after an hour: the map stays full, every insert succeeds (else init's gauge says so).
    let init = "(if (i32.ne (call $declare_ttl (i32.const 800) (i32.const 5) (i32.const 4) (i32.const 4) (i32.const 8) (i32.const 4) (i64.const 3600000)) (i32.const 0))
        (then (return (i32.const 5))))
      (if (i32.ne (call $greg (i32.const 820) (i32.const 6)) (i32.const 0)) (then (return (i32.const 6))))";
    let burst = "(i32.store (i32.const 900) (i32.add (i32.load (i32.const 900)) (i32.const 1)))
      (if (i32.ne (call $update (i32.const 0) (i32.const 900) (i32.const 904)) (i32.const 0))
        (then (drop (call $gset (i32.const 0) (i64.const 1)))))";
    let module = area_module(init, burst).replace(
        "(memory (export \"memory\") 1)",
        "(memory (export \"memory\") 1) (data (i32.const 800) \"flows\") (data (i32.const 820) \"failed\")",
    );
    let p = write_wat("map-lru", &module);
    let yaml =
        format!("engine: io\nports:\n  - {{name: a, driver: null, {}}}\n  - {{name: b, driver: null}}\n", policy(&p));
    let j = run_yaml(&yaml, 0.2);
    let a = &j["ports"][0];
    assert_eq!(a["plugin_gauges"]["failed"].as_i64(), Some(0), "an insert was refused: {a}");
    let m = &a["plugin_maps"][0];
    assert_eq!(
        (m["kind"].as_str(), m["entries"].as_u64(), m["ttl_ms"].as_u64()),
        (Some("lru_hash"), Some(4), Some(3_600_000)),
        "{m}"
    );
    let calls = a["plugin_calls"].as_u64().unwrap();
    assert_eq!(m["evicted"].as_u64(), Some(calls - 4), "one eviction per insert past the 4th: {a}");
}

#[test]
fn an_lpm_map_finds_the_longest_prefix_and_a_walk_returns_each_prefix_once() {
    // Init stores 10.0.0.0/8 -> 1 and 10.1.2.0/24 -> 2 and checks that a /33 is refused; each
    // burst looks up 10.1.2.3 (gauge `hop`) and walks the map, deleting each prefix as it is
    // returned, then puts both back (gauge `keys`: prefixes walked).
    let init = r#"(if (i32.ne (call $declare (i32.const 800) (i32.const 6) (i32.const 5) (i32.const 8) (i32.const 4) (i32.const 16)) (i32.const 0))
        (then (return (i32.const 5))))
      (if (i32.ne (call $update (i32.const 0) (i32.const 900) (i32.const 1000)) (i32.const 0)) (then (return (i32.const 6))))
      (if (i32.ne (call $update (i32.const 0) (i32.const 910) (i32.const 1004)) (i32.const 0)) (then (return (i32.const 7))))
      (if (i32.ne (call $update (i32.const 0) (i32.const 960) (i32.const 1004)) (i32.const -2)) (then (return (i32.const 8))))
      (drop (call $greg (i32.const 820) (i32.const 3)))
      (drop (call $greg (i32.const 830) (i32.const 4)))"#;
    let burst = r#"(local $n i64) (local $rc i32)
      (drop (call $lookup (i32.const 0) (i32.const 920) (i32.const 970)))
      (drop (call $gset (i32.const 0) (i64.load32_u (i32.const 970))))
      (i64.store (i32.const 940) (i64.const 0))
      (block $done (loop $walk
        (local.set $rc (call $next (i32.const 0) (i32.const 940) (i32.const 950)))
        (br_if $done (i32.eq (local.get $rc) (i32.const -7)))
        (if (i32.eq (local.get $rc) (i32.const 1)) (then
          (local.set $n (i64.add (local.get $n) (i64.const 1)))
          (drop (call $del (i32.const 0) (i32.const 950)))))
        (br $walk)))
      (drop (call $update (i32.const 0) (i32.const 900) (i32.const 1000)))
      (drop (call $update (i32.const 0) (i32.const 910) (i32.const 1004)))
      (drop (call $gset (i32.const 1) (local.get $n)))"#;
    let module = area_module(init, burst).replace(
        "(memory (export \"memory\") 1)",
        r#"(import "wasmdp" "map_delete" (func $del (param i32 i32) (result i32)))
  (memory (export "memory") 1) (data (i32.const 800) "routes") (data (i32.const 820) "hop") (data (i32.const 830) "keys")
  (data (i32.const 900) "\08\00\00\00\0a\00\00\00") (data (i32.const 910) "\18\00\00\00\0a\01\02\00")
  (data (i32.const 920) "\20\00\00\00\0a\01\02\03") (data (i32.const 960) "\21\00\00\00\0a\01\02\03")
  (data (i32.const 1000) "\01\00\00\00\02\00\00\00")"#,
    );
    let p = write_wat("map-lpm", &module);
    let yaml =
        format!("engine: io\nports:\n  - {{name: a, driver: null, {}}}\n  - {{name: b, driver: null}}\n", policy(&p));
    let j = run_yaml(&yaml, 0.2);
    let a = &j["ports"][0];
    assert_eq!(a["plugin_gauges"]["hop"].as_i64(), Some(2), "10.1.2.3 is in 10.1.2.0/24: {a}");
    assert_eq!(a["plugin_gauges"]["keys"].as_i64(), Some(2), "both prefixes, once each, deleted as walked: {a}");
    let m = &a["plugin_maps"][0];
    assert_eq!((m["kind"].as_str(), m["entries"].as_u64()), (Some("lpm_trie"), Some(2)), "{m}");
}

#[test]
fn single_key_calls_read_keys_in_place_and_alike_when_the_value_overlaps_the_key() {
    // Init stores key K (at 900) -> V (at 916) and key L (at 970) -> 0. Each burst looks K up with
    // the value apart from the key (into 932), overlapping its second half (key at 940, value at
    // 944) and on the key itself (both at 960): each must read the whole key before writing the
    // value. Then it adds 5 to L's value, reads it, deletes L, looks it up again and stores it back.
    let init = r#"(if (i32.ne (call $declare (i32.const 800) (i32.const 1) (i32.const 0) (i32.const 8) (i32.const 8) (i32.const 16)) (i32.const 0))
        (then (return (i32.const 5))))
      (if (i32.ne (call $update (i32.const 0) (i32.const 900) (i32.const 916)) (i32.const 0)) (then (return (i32.const 6))))
      (if (i32.ne (call $update (i32.const 0) (i32.const 970) (i32.const 1000)) (i32.const 0)) (then (return (i32.const 7))))
      (drop (call $greg (i32.const 820) (i32.const 5)))
      (drop (call $greg (i32.const 830) (i32.const 7)))
      (drop (call $greg (i32.const 840) (i32.const 4)))
      (drop (call $greg (i32.const 850) (i32.const 5)))
      (drop (call $greg (i32.const 860) (i32.const 7)))"#;
    let burst = r#"(local $rc i64)
      (i64.store (i32.const 940) (i64.load (i32.const 900)))
      (i64.store (i32.const 960) (i64.load (i32.const 900)))
      (local.set $rc (i64.extend_i32_s (call $lookup (i32.const 0) (i32.const 900) (i32.const 932))))
      (drop (call $gset (i32.const 0) (i64.add (i64.load (i32.const 932)) (local.get $rc))))
      (local.set $rc (i64.extend_i32_s (call $lookup (i32.const 0) (i32.const 940) (i32.const 944))))
      (drop (call $gset (i32.const 1) (i64.add (i64.load (i32.const 944)) (local.get $rc))))
      (local.set $rc (i64.extend_i32_s (call $lookup (i32.const 0) (i32.const 960) (i32.const 960))))
      (drop (call $gset (i32.const 2) (i64.add (i64.load (i32.const 960)) (local.get $rc))))
      (drop (call $madd (i32.const 0) (i32.const 970) (i32.const 0) (i64.const 5)))
      (drop (call $lookup (i32.const 0) (i32.const 970) (i32.const 1008)))
      (drop (call $gset (i32.const 3) (i64.load (i32.const 1008))))
      (local.set $rc (i64.extend_i32_s (call $del (i32.const 0) (i32.const 970))))
      (drop (call $gset (i32.const 4) (i64.add (i64.extend_i32_s (call $lookup (i32.const 0) (i32.const 970) (i32.const 1008)))
        (i64.mul (local.get $rc) (i64.const 100)))))
      (drop (call $update (i32.const 0) (i32.const 970) (i32.const 1000)))"#;
    let module = area_module(init, burst).replace(
        "(memory (export \"memory\") 1)",
        r#"(import "wasmdp" "map_delete" (func $del (param i32 i32) (result i32)))
  (memory (export "memory") 1) (data (i32.const 800) "m") (data (i32.const 820) "apart")
  (data (i32.const 830) "overlap") (data (i32.const 840) "same") (data (i32.const 850) "added")
  (data (i32.const 860) "deleted")
  (data (i32.const 900) "\01\02\03\04\05\06\07\08") (data (i32.const 916) "\2a\00\00\00\00\00\00\00")
  (data (i32.const 970) "\11\12\13\14\15\16\17\18")"#,
    );
    let p = write_wat("map-in-place", &module);
    let yaml =
        format!("engine: io\nports:\n  - {{name: a, driver: null, {}}}\n  - {{name: b, driver: null}}\n", policy(&p));
    let j = run_yaml(&yaml, 0.2);
    let g = &j["ports"][0]["plugin_gauges"];
    // 42 found (rc 0) each way; 5 added to 0; deleted (rc 0) then not found (-7).
    let got = ["apart", "overlap", "same", "added", "deleted"].map(|n| g[n].as_i64());
    assert_eq!(got, [Some(42), Some(42), Some(42), Some(5), Some(-7)], "{g}");
}

#[test]
fn the_context_reports_ports_macs_and_queue() {
    // Init copies the context to 3000 and refuses (returning a code) unless it holds what the config says.
    let init = "
      (if (i32.ne (call $ctx (i32.const 3000) (i32.const 16)) (i32.const -8)) (then (return (i32.const 2))))
      (if (i32.ne (call $ctx (i32.const 3000) (i32.const 256)) (i32.const 48)) (then (return (i32.const 3))))
      (if (i32.ne (i32.load16_u (i32.const 3004)) (i32.const 1)) (then (return (i32.const 4))))
      (if (i32.ne (i32.load16_u (i32.const 3006)) (i32.const 2)) (then (return (i32.const 5))))
      (if (i32.ne (i32.load8_u (i32.const 3021)) (i32.const 0x22)) (then (return (i32.const 6))))
      (if (i32.ne (i32.load8_u (i32.const 3037)) (i32.const 0x11)) (then (return (i32.const 7))))";
    let p = write_wat("context", &area_module(init, ""));
    let yaml = format!(
        "engine: io\nports:\n  - {{name: a, driver: null, mac: '02:00:00:00:00:22', peer_mac: '02:00:00:00:00:33', {}}}\n  - {{name: b, driver: null, mac: '02:00:00:00:00:11'}}\n",
        policy(&p)
    );
    let j = run_yaml(&yaml, 0.05);
    assert!(j["ports"][0]["plugin_calls"].as_u64().unwrap() > 0, "init accepted the context: {}", j["ports"][0]);
}

#[test]
fn plugins_built_against_the_1_0_sdk_run_unchanged() {
    // Modules built by the released 1.0 SDK (host/tests/data/abi-1.0/README.md): same bytes on the wire.
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/abi-1.0");
    let f: Vec<Vec<u8>> = [9, 53, 9].iter().map(|&p| frame(p)).collect();
    let old = |name: &str, params: &str| {
        format!(
            "policy: {{plugin: {}, params: {{{params}}}, limits: {{deadline_us: 500000}}}}",
            data.join(name).display()
        )
    };
    let mut w = Wire::new(&old("wasm_macswap.wasm", ""));
    assert_eq!(w.send(&f), f.iter().map(|x| common::swapped(x)).collect::<Vec<_>>());
    let mut w = Wire::new(&old("static_policy.wasm", "engine: macswap"));
    assert_eq!(w.send(&f), f.iter().map(|x| common::swapped(x)).collect::<Vec<_>>());
    let mut w = Wire::new(&old("acl.wasm", "deny_udp_dst_port: 53"));
    assert_eq!(w.send(&f), vec![f[0].clone(), f[2].clone()]);
    assert_eq!(w.counts().drops.policy, 1);
    // And the 1.1 builds of the same plugins agree.
    let mut w = Wire::new(&format!(
        "policy: {{plugin: {}, limits: {{deadline_us: 500000}}}}",
        plugin_path("wasm_macswap").display()
    ));
    assert_eq!(w.send(&f), f.iter().map(|x| common::swapped(x)).collect::<Vec<_>>());
}

#[test]
fn a_map_survives_a_reload_that_declares_it_alike_and_not_one_that_changes_it() {
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    use wasmdp::dataplane::{self, Overrides, RunOptions};
    let dir = std::env::temp_dir().join(format!("wasmdp-map-reload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.yaml");
    let (same, other) = (write_wat("map-16", &counting_module(16)), write_wat("map-32", &counting_module(32)));
    let config = |p: &std::path::Path, x: u32| {
        format!(
            "engine: io\nports:\n  - {{name: a, driver: null, policy: {{plugin: {}, params: {{x: {x}}}, limits: {{deadline_us: 500000}}}}}}\n  - {{name: b, driver: null}}\n",
            p.display()
        )
    };
    let save = |text: &str| {
        std::fs::write(dir.join("tmp"), text).unwrap();
        std::fs::rename(dir.join("tmp"), &path).unwrap();
    };
    save(&config(&same, 1));
    let cfg = wasmdp::config::load(&path).unwrap();
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    let opts = RunOptions { watch: Some(path.clone()), ..RunOptions::default() };
    let running = dataplane::start(dp, &opts, Arc::new(AtomicBool::new(false))).unwrap();
    let (r, view) = (running.reloads.clone(), running.view.clone());
    let rx = || view.per_port(&view.snapshot())[0].rx_packets;
    let gauge =
        || view.plugins_per_port()[0].as_ref().map_or(0, |p| p.gauges.get("calls").copied().unwrap_or(0)) as u64;
    let wait = |what: &str, done: &dyn Fn() -> bool| {
        let t = Instant::now();
        while !done() {
            assert!(t.elapsed() < Duration::from_secs(10), "timed out: {what}");
            std::thread::sleep(Duration::from_millis(2));
        }
    };
    wait("traffic", &|| rx() > 50_000);
    save(&config(&same, 2)); // new params: new instances, the same map declared
    wait("the first reload", &|| r.generation.load(Relaxed) == 1);
    let before = rx();
    wait("more traffic", &|| rx() > before + 50_000);
    assert!(gauge() > before, "the new instance counts on from the old one's {before} packets: {}", gauge());
    save(&config(&other, 3)); // capacity 32: another map
    wait("the second reload", &|| r.generation.load(Relaxed) == 2);
    let before = rx();
    wait("more traffic", &|| rx() > before + 50_000);
    let g = gauge();
    assert!(g < rx() - before + 10_000, "a map of another shape starts empty: {g} after {before}");
    let report = running.finish(&opts).unwrap();
    assert_eq!(report.leaked, 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A module without an area: on_burst drops packet 1 and returns `rc`; it says it is ABI `version`.
fn verdict_module(version: u32, rc: i32) -> String {
    format!(
        "(module
           (import \"wasmdp\" \"drop_pkt\" (func $drop (param i32) (result i32)))
           (memory (export \"memory\") 1)
           (func (export \"wasmdp_abi_version\") (result i32) (i32.const {version}))
           (func (export \"wasmdp_init\") (param i32 i32) (result i32) (i32.const 0))
           (func (export \"wasmdp_on_burst\") (param i32 i32) (result i32)
             (drop (call $drop (i32.const 1))) (i32.const {rc})))"
    )
}

#[test]
fn an_engine_returned_by_on_burst_runs_after_the_call_on_what_is_left() {
    use std::sync::atomic::Ordering::Relaxed;
    use wasmdp_abi::verdict;
    let frames: Vec<Vec<u8>> = (0..4).map(frame).collect();
    let closed = |p: &std::path::Path| format!("policy: {{plugin: {}, on_failure: fail_closed}}", p.display());

    // 1.1: RUN_ENGINE | macswap: packet 1 dropped by the plugin, the others swapped.
    let p = write_wat("verdict-macswap", &verdict_module(0x1_0001, verdict::run_engine(2)));
    let mut w = Wire::new(&closed(&p));
    let want: Vec<Vec<u8>> = [0, 2, 3].iter().map(|&i| common::swapped(&frames[i])).collect();
    assert_eq!(w.send(&frames), want);
    assert_eq!((w.counts().drops.policy, w.plugin().errors.load(Relaxed)), (1, 0));

    // An engine id the ABI does not have: BAD_ENGINE, a failed call (fail_closed drops the burst).
    let p = write_wat("verdict-unknown", &verdict_module(0x1_0001, verdict::run_engine(99)));
    let mut w = Wire::new(&closed(&p));
    assert!(w.send(&frames).is_empty());
    assert_eq!((w.counts().drops.plugin, w.plugin().errors.load(Relaxed)), (4, 1));

    // A 1.0 module: any nonzero return is a failure, as 1.0 says, even one that looks like a verdict.
    let p = write_wat("verdict-1-0", &verdict_module(0x1_0000, verdict::run_engine(2)));
    let mut w = Wire::new(&closed(&p));
    assert!(w.send(&frames).is_empty());
    assert_eq!((w.counts().drops.plugin, w.plugin().errors.load(Relaxed)), (4, 1));
}

#[test]
fn a_packet_sent_to_the_streams_own_tx_port_leaves_on_it_without_a_redirect() {
    // send_to(i, 0) for every odd i: port 0 is the stream's own TX port here; the even packets pass.
    let wat = "(module
       (import \"wasmdp\" \"send_to\" (func $send (param i32 i32) (result i32)))
       (memory (export \"memory\") 1)
       (func (export \"wasmdp_abi_version\") (result i32) (i32.const 65537))
       (func (export \"wasmdp_init\") (param i32 i32) (result i32) (i32.const 0))
       (func (export \"wasmdp_on_burst\") (param i32 i32) (result i32) (local $i i32)
         (local.set $i (i32.const 1))
         (block $d (loop $l (br_if $d (i32.ge_u (local.get $i) (local.get 1)))
           (drop (call $send (local.get $i) (i32.const 0)))
           (local.set $i (i32.add (local.get $i) (i32.const 2))) (br $l)))
         (i32.const 0)))";
    let p = write_wat("send-own-port", wat);
    let yaml = format!("engine: io\ntopology: loop\nports:\n  - {{name: a, driver: null, {}}}\n", policy(&p));
    let j = run_yaml(&yaml, 0.2);
    let s = &j["streams"][0];
    let rx = s["rx_packets"].as_u64().unwrap();
    assert!(rx > 1000, "{s}");
    assert_eq!((s["tx_packets"].as_u64(), s["redirected_out"].as_u64()), (Some(rx), Some(0)), "{s}");
    assert_eq!(s["redirected_in"], 0, "{s}");
}

#[test]
fn a_map_layout_that_does_not_fit_its_map_or_does_not_parse_is_refused_with_the_cause() {
    let with_section = |text: &str| {
        counting_module(16).replacen("(module", &format!("(module (@custom \"wasmdp.map_layouts\" \"{text}\")"), 1)
    };
    let yaml = |p: &std::path::Path| {
        format!("engine: io\nports:\n  - {{name: a, driver: null, {}}}\n  - {{name: b, driver: null}}\n", policy(p))
    };
    // Fits: the stats are unchanged, the plugin runs.
    let fits = write_wat("layout-fits", &with_section("hits key k:u32 value n:u64"));
    let j = run_yaml(&yaml(&fits), 0.1);
    assert_eq!(j["ports"][0]["plugin_maps"][0]["entries"], 1, "{j}");
    // Sizes that disagree with the declaration: map_declare fails, so init does, naming both.
    let wrong = write_wat("layout-wrong", &with_section("hits key k:u32 value n:u32"));
    let (e, logs) = capture_logs(|| build_error(&yaml(&wrong)));
    assert!(e.contains("init"), "{e}");
    assert!(logs.contains("describes 4-byte keys and 4-byte values; it is declared with 4 and 8"), "{logs}");
    // A section that does not parse: refused at load, naming the line.
    let bad = write_wat("layout-bad", &with_section("other key a:u8 value b:u8\\nhits key k:u9 value n:u64"));
    let e = build_error(&yaml(&bad));
    assert!(e.contains("wasmdp.map_layouts, line 2") && e.contains("type \"u9\""), "{e}");
}

/// A module writing `random()` into bytes 20..28 of every packet, declaring ABI 1.`minor`.
fn random_module(minor: u32) -> String {
    format!(
        r#"(module
  (import "wasmdp" "random" (func $random (result i64)))
  (import "wasmdp" "pkt_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "wasmdp_abi_version") (result i32) (i32.const {}))
  (func (export "wasmdp_init") (param i32 i32) (result i32) (i32.const 0))
  (func (export "wasmdp_on_burst") (param $port i32) (param $n i32) (result i32)
    (local $i i32)
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (i64.store (i32.const 0) (call $random))
      (drop (call $write (local.get $i) (i32.const 20) (i32.const 0) (i32.const 8)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (i32.const 0)))"#,
        0x10000 | minor
    )
}

#[test]
fn random_draws_differ_per_call_and_per_instance_and_need_abi_1_1() {
    let p = write_wat("random", &random_module(1));
    let draws = |w: &mut Wire| -> Vec<u64> {
        let frames: Vec<Vec<u8>> = (0..64).map(frame).collect();
        let out = w.send(&frames);
        assert_eq!(out.len(), 64);
        out.iter().map(|o| u64::from_le_bytes(o[20..28].try_into().unwrap())).collect()
    };
    let first = draws(&mut Wire::new(&policy(&p)));
    let mut distinct = first.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 64, "64 calls, 64 values: {first:x?}");
    // Every bit both set and clear among 64 uniform draws (a stuck bit fails; chance 2^-57).
    let (any, all) = first.iter().fold((0u64, u64::MAX), |(o, a), v| (o | v, a & v));
    assert_eq!((any, all), (u64::MAX, 0), "bits that never change");
    // Another instance is seeded anew from the OS: not the same sequence.
    let second = draws(&mut Wire::new(&policy(&p)));
    assert!(second.iter().all(|v| !first.contains(v)), "a second instance repeated the first's draws");
    let old = write_wat("random-1-0", &random_module(0));
    let e = build_error(&format!(
        "engine: io\nports:\n  - {{name: a, driver: null, {}}}\n  - {{name: b, driver: null}}\n",
        policy(&old)
    ));
    assert!(e.contains("declares ABI v1.0 but imports `random`, which ABI v1.1 added"), "{e}");
}
