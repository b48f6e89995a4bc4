//! Policy plugins end to end, written in WAT so that each test shows exactly what the module does:
//! load-time checks, the per-burst path, sticky decisions, bounds checks, and failure containment.

use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use wasmdp::dataplane::{self, Overrides, RunOptions};

const HEAD: &str = r#"
  (import "wasmdp" "run_engine" (func $run (param i32 i32 i32) (result i32)))
  (import "wasmdp" "set_offloads" (func $off (param i32 i64 i32 i32) (result i32)))
  (import "wasmdp" "set_sticky" (func $sticky (param i32 i64 i32 i32 i32) (result i32)))
  (import "wasmdp" "pkt_read" (func $read (param i32 i32 i32 i32) (result i32)))
  (import "wasmdp" "pkt_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (import "wasmdp" "drop_pkt" (func $drop (param i32) (result i32)))
  (import "wasmdp" "send_to" (func $send (param i32 i32) (result i32)))
  (import "wasmdp" "pkt_len" (func $len (param i32) (result i32)))
  (memory (export "memory") 1)
"#;

fn module(body: &str, abi: u32) -> String {
    format!(
        "(module {HEAD}
           (func (export \"wasmdp_abi_version\") (result i32) (i32.const {abi}))
           (func (export \"wasmdp_init\") (param i32 i32) (result i32) (i32.const 0))
           {body})"
    )
}

fn on_burst(code: &str) -> String {
    module(
        &format!("(func (export \"wasmdp_on_burst\") (param $port i32) (param $n i32) (result i32) {code})"),
        1 << 16,
    )
}

fn write_plugin(name: &str, wat_text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wasmdp-plugin-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.wasm"));
    std::fs::write(&path, wat::parse_str(wat_text).unwrap()).unwrap();
    path
}

/// A config with the plugin on port `a`. Tests run many busy threads on few cores, so a call can be
/// preempted for milliseconds: tests that do not test the deadline give it room.
fn yaml(plugin: &std::path::Path, extra: &str) -> String {
    let extra =
        if extra.contains("limits") { extra.to_string() } else { format!("{extra}, limits: {{deadline_us: 500000}}") };
    format!(
        "engine: io\nports:\n  - name: a\n    driver: null\n    policy: {{plugin: {}, {extra}}}\n  - {{name: b, driver: null}}\n",
        plugin.display()
    )
}

fn build_err(yaml: &str) -> String {
    let cfg = wasmdp::config::parse(yaml, "test").unwrap();
    match dataplane::build(&cfg, &Overrides::default()) {
        Ok(_) => panic!("built:\n{yaml}"),
        Err(e) => format!("{e:#}"),
    }
}

fn run(yaml: &str, secs: f64) -> Value {
    let cfg = wasmdp::config::parse(yaml, "test").unwrap();
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    let opts = RunOptions { duration: Some(Duration::from_secs_f64(secs)), ..RunOptions::default() };
    let r = dataplane::run(dp, &opts, Arc::new(AtomicBool::new(false))).unwrap();
    assert_eq!(r.leaked, 0);
    for s in r.json["streams"].as_array().unwrap() {
        let u = |k: &str| s[k].as_u64().unwrap();
        assert_eq!(
            u("rx_packets") + u("generated") + u("redirected_in"),
            u("tx_packets") + u("dropped") + u("redirected_out"),
            "stream {s}"
        );
    }
    r.json
}

fn port_a(j: &Value) -> &Value {
    &j["ports"][0]
}

#[test]
fn load_time_checks_name_the_port_the_plugin_and_the_cause() {
    let ok = on_burst("(i32.const 0)");
    let missing = std::env::temp_dir().join("wasmdp-no-such-plugin.wasm");
    let cases: Vec<(PathBuf, &[&str])> = vec![
        (missing, &["port `a`", "wasmdp-no-such-plugin.wasm", "cannot read"]),
        (
            write_plugin(
                "bad-import",
                &ok.replace(
                    "(memory (export",
                    "(import \"wasmdp\" \"format_disk\" (func (param i32)))\n(memory (export",
                ),
            ),
            &["format_disk", "does not provide"],
        ),
        (write_plugin("no-export", &module("", 1 << 16)), &["wasmdp_on_burst", "does not export"]),
        (
            write_plugin(
                "wrong-sig",
                &module("(func (export \"wasmdp_on_burst\") (param i32) (result i32) (i32.const 0))", 1 << 16),
            ),
            &["wasmdp_on_burst", "ABI v1 needs"],
        ),
        (
            write_plugin(
                "abi-v9",
                &module("(func (export \"wasmdp_on_burst\") (param i32 i32) (result i32) (i32.const 0))", 9 << 16),
            ),
            &["ABI v9.0", "ABI v1"],
        ),
        (
            write_plugin(
                "refuse",
                &ok.replace(
                    "(param i32 i32) (result i32) (i32.const 0))\n",
                    "(param i32 i32) (result i32) (i32.const 7))\n",
                ),
            ),
            &["init refused", "code 7"],
        ),
    ];
    for (path, parts) in cases {
        let msg = build_err(&yaml(&path, "params: {}"));
        for p in parts {
            assert!(msg.contains(p), "`{p}` missing from: {msg}");
        }
    }
    let junk = std::env::temp_dir().join(format!("wasmdp-junk-{}.wasm", std::process::id()));
    std::fs::write(&junk, b"hello").unwrap();
    assert!(build_err(&yaml(&junk, "params: {}")).contains("not a WebAssembly module"));
}

#[test]
fn a_policy_choosing_macswap_per_burst_runs_and_is_counted() {
    let p = write_plugin(
        "per-burst",
        &on_burst("(drop (call $run (i32.const 2) (i32.const 0) (local.get $n))) (i32.const 0)"),
    );
    let j = run(&yaml(&p, "params: {}"), 0.2);
    let a = port_a(&j);
    assert!(a["plugin_calls"].as_u64().unwrap() > 100, "{a}");
    assert_eq!(a["plugin_traps"], 0);
    assert!(j["ports"][1]["plugin_calls"].is_null(), "port b has no policy");
}

#[test]
fn a_sticky_decision_stops_the_calls() {
    let p = write_plugin(
        "sticky",
        &on_burst("(drop (call $sticky (i32.const 2) (i64.const 0) (i32.const 0) (i32.const 0) (i32.const -1))) (i32.const 0)"),
    );
    let j = run(&yaml(&p, "params: {}"), 0.2);
    let a = port_a(&j);
    assert_eq!(a["plugin_calls"], 1, "{a}");
    assert!(a["plugin_sticky"].as_u64().unwrap() > 100);
}

#[test]
fn out_of_range_indexes_offsets_and_pointers_return_errors() {
    // Each call must return the documented error code; any other result traps (and is counted).
    let checks = [
        "(call $read (i32.const 999) (i32.const 0) (i32.const 0) (i32.const 4))", // -1 BAD_INDEX
        "(call $read (i32.const 0) (i32.const 60) (i32.const 0) (i32.const 100))", // -2 BAD_RANGE
        "(call $read (i32.const 0) (i32.const 0) (i32.const 65534) (i32.const 16))", // -3 BAD_MEMORY
        "(call $write (i32.const 0) (i32.const -1) (i32.const 0) (i32.const 4))", // -2
        "(call $run (i32.const 77) (i32.const 0) (i32.const 1))",                 // -4 BAD_ENGINE
        "(call $off (i32.const 0) (i64.const 1) (i32.const 0) (i32.const 0))",    // -6 BAD_FLAGS
        "(call $run (i32.const 0) (i32.const 30) (i32.const 10))",                // -1
    ];
    let want = [-1, -2, -3, -2, -4, -6, -1];
    let body: String =
        checks.iter().zip(want).map(|(c, w)| format!("(if (i32.ne {c} (i32.const {w})) (then unreachable))")).collect();
    let p = write_plugin("bounds", &on_burst(&format!("{body} (i32.const 0)")));
    let j = run(&yaml(&p, "params: {}"), 0.1);
    let a = port_a(&j);
    assert!(a["plugin_calls"].as_u64().unwrap() > 0);
    assert_eq!(a["plugin_traps"], 0, "a host call did not return its error code: {a}");
}

#[test]
fn drops_by_the_plugin_are_counted_as_policy_drops() {
    let p = write_plugin("drop-first", &on_burst("(drop (call $drop (i32.const 0))) (i32.const 0)"));
    let j = run(&yaml(&p, "params: {}"), 0.1);
    let a = port_a(&j);
    let calls = a["plugin_calls"].as_u64().unwrap();
    // Drops are counted on the stream's TX port (b), as testpmd shows them.
    assert_eq!(j["ports"][1]["dropped_by_reason"]["policy"].as_u64().unwrap(), calls);
    assert_eq!(j["ports"][1]["dropped_by_reason"]["engine"], 0);
}

#[test]
fn a_trapping_plugin_is_contained_and_disabled_fail_open_keeps_forwarding() {
    let p = write_plugin("trap", &on_burst("unreachable"));
    let j = run(&yaml(&p, "on_failure: fail_open, max_failures: 3"), 0.2);
    let a = port_a(&j);
    // The trapped instance is dropped; without `reload` the port stays on its native engine.
    assert_eq!((a["plugin_traps"].as_u64(), a["plugin_calls"].as_u64()), (Some(1), Some(1)), "{a}");
    assert_eq!(j["ports"][1]["dropped"], 0, "fail_open forwards with the native engine");
    assert!(j["ports"][1]["tx_packets"].as_u64().unwrap() > 1000);
}

#[test]
fn fail_closed_drops_every_burst_after_a_failure() {
    let p = write_plugin("trap2", &on_burst("unreachable"));
    let j = run(&yaml(&p, "on_failure: fail_closed, max_failures: 2"), 0.2);
    let b = &j["ports"][1];
    assert_eq!(b["tx_packets"], 0, "{b}");
    assert_eq!(b["dropped_by_reason"]["plugin"], j["ports"][0]["rx_packets"]);
}

#[test]
fn an_endless_loop_is_stopped_at_the_deadline() {
    let p = write_plugin("loop", &on_burst("(loop $l (br $l)) (i32.const 0)"));
    let j = run(&yaml(&p, "max_failures: 2, limits: {deadline_us: 1000}"), 0.3);
    let a = port_a(&j);
    assert_eq!((a["plugin_timeouts"].as_u64(), a["plugin_traps"].as_u64()), (Some(1), Some(1)), "{a}");
    assert!(j["ports"][1]["tx_packets"].as_u64().unwrap() > 1000, "forwarding went on");
}

#[test]
fn memory_growth_is_capped_and_the_trap_contained() {
    let p = write_plugin(
        "grow",
        &on_burst("(loop $l (br_if $l (i32.ne (memory.grow (i32.const 16)) (i32.const -1)))) unreachable"),
    );
    let j = run(&yaml(&p, "max_failures: 1, limits: {memory_kib: 1024, deadline_us: 500000}"), 0.2);
    assert_eq!(port_a(&j)["plugin_traps"], 1);
    assert!(j["ports"][1]["tx_packets"].as_u64().unwrap() > 1000);
}

#[test]
fn reload_reinstantiates_after_a_failure() {
    // Traps on the second call of each instance (a call counter in the instance's own memory): the
    // same instance would trap once in all; only fresh instances trap again.
    let p = write_plugin(
        "trap-second",
        &on_burst("(i32.store (i32.const 0) (i32.add (i32.load (i32.const 0)) (i32.const 1))) (if (i32.eq (i32.load (i32.const 0)) (i32.const 2)) (then unreachable)) (i32.const 0)"),
    );
    let j = run(&yaml(&p, "on_failure: reload, max_failures: 100"), 0.3);
    let a = port_a(&j);
    let traps = a["plugin_traps"].as_u64().unwrap();
    assert!(traps >= 2, "each re-instantiated instance traps on its second call: {a}");
    assert!(a["plugin_calls"].as_u64().unwrap() > traps, "and then runs: {a}");
}

#[test]
fn reload_gives_up_after_max_failures_traps_in_a_row() {
    let p = write_plugin("trap-always", &on_burst("unreachable"));
    let j = run(&yaml(&p, "on_failure: reload, max_failures: 3"), 0.3);
    let a = port_a(&j);
    assert_eq!(a["plugin_traps"], 3, "{a}");
    assert!(j["ports"][1]["tx_packets"].as_u64().unwrap() > 1000, "the native engine took over");
}

#[test]
fn an_error_return_keeps_the_instance_and_applies_the_failure_policy_to_the_burst() {
    let p = write_plugin("error", &on_burst("(i32.const -42)"));
    let j = run(&yaml(&p, "on_failure: fail_closed, max_failures: 1"), 0.1);
    let a = port_a(&j);
    let calls = a["plugin_calls"].as_u64().unwrap();
    assert!(calls > 10, "the instance is kept and called again: {a}");
    assert_eq!(a["plugin_errors"].as_u64(), Some(calls));
    assert_eq!(a["plugin_traps"], 0);
    assert_eq!(j["ports"][1]["dropped_by_reason"]["plugin"], a["rx_packets"]);
}

#[test]
fn send_to_moves_packets_to_another_port_and_every_one_is_accounted() {
    // Port a's plugin sends every packet to port c (index 2), whose own stream transmits them.
    let p = write_plugin(
        "send-all",
        &on_burst(
            "(local $i i32) (block $done (loop $l (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
               (if (i32.ne (call $send (local.get $i) (i32.const 2)) (i32.const 0)) (then unreachable))
               (local.set $i (i32.add (local.get $i) (i32.const 1))) (br $l))) (i32.const 0)",
        ),
    );
    let yaml = format!(
        "engine: io\nstreams:\n  - {{rx: a, tx: b}}\n  - {{rx: c, tx: c}}\nports:\n  - name: a\n    driver: null\n    policy: {{plugin: {}, limits: {{deadline_us: 500000}}}}\n  - {{name: b, driver: null}}\n  - {{name: c, driver: null}}\n",
        p.display()
    );
    let j = run(&yaml, 0.2);
    let t = &j["totals"];
    assert!(t["redirected"].as_u64().unwrap() > 1000, "{t}");
    assert_eq!(j["ports"][1]["tx_packets"], 0, "nothing left for b: {}", j["ports"][1]);
    let c = &j["ports"][2];
    assert!(c["tx_packets"].as_u64().unwrap() > c["rx_packets"].as_u64().unwrap(), "c sent its own and a's: {c}");
    assert_eq!(port_a(&j)["plugin_traps"], 0);
}

#[test]
fn tick_is_called_periodically() {
    let p = write_plugin(
        "ticker",
        &format!(
            "(module
               (import \"wasmdp\" \"counter_register\" (func $reg (param i32 i32) (result i32)))
               (import \"wasmdp\" \"counter_add\" (func $add (param i32 i64) (result i32)))
               {HEAD}
               (data (i32.const 100) \"ticks\")
               (func (export \"wasmdp_abi_version\") (result i32) (i32.const 65536))
               (func (export \"wasmdp_init\") (param i32 i32) (result i32) (drop (call $reg (i32.const 100) (i32.const 5))) (i32.const 0))
               (func (export \"wasmdp_on_burst\") (param i32 i32) (result i32) (i32.const 0))
               (func (export \"wasmdp_tick\") (param i64) (drop (call $add (i32.const 0) (i64.const 1)))))"
        ),
    );
    let j = run(&yaml(&p, "tick_ms: 10"), 0.3);
    let ticks = port_a(&j)["plugin_counters"]["ticks"].as_u64().unwrap();
    assert!((5..=40).contains(&ticks), "about 30 ticks in 0.3 s at 10 ms, got {ticks}");
    // A port that receives nothing (a ring pair nobody sends into) ticks all the same.
    let idle = format!(
        "ports:\n  - name: a\n    driver: ring\n    ring: {{peer: b}}\n    policy: {{plugin: {}, tick_ms: 10}}\n  - {{name: b, driver: ring, ring: {{peer: a}}}}\n",
        p.display()
    );
    let j = run(&idle, 0.5);
    let a = port_a(&j);
    assert_eq!(a["rx_packets"], 0);
    let ticks = a["plugin_counters"]["ticks"].as_u64().unwrap();
    assert!((30..=55).contains(&ticks), "about 50 ticks in 0.5 s at 10 ms on an idle port, got {ticks}");
    assert_eq!(a["plugin_ticks"].as_u64(), Some(ticks));
}

#[test]
fn macsec_requested_by_a_plugin_is_dropped_where_the_port_cannot_do_it() {
    // TX_MACSEC (1 << 42) on every packet: a ring port has no MACsec keys, so each is dropped as
    // `offload` rather than sent unprotected; a null port carries the flag.
    let p = write_plugin(
        "macsec",
        &on_burst(
            "(drop (call $off (i32.const -1) (i64.const 4398046511104) (i32.const 0) (i32.const 0))) (i32.const 0)",
        ),
    );
    let ring = format!(
        "engine: io\ntopology: loop\nports:\n  - name: a\n    driver: ring\n    ring: {{peer: b}}\n    policy: {{plugin: {}, limits: {{deadline_us: 500000}}}}\n  - {{name: b, driver: ring, ring: {{peer: a}}, tx_first: 1}}\n",
        p.display()
    );
    let j = run(&ring, 0.2);
    assert_eq!(j["ports"][1]["rx_packets"], 0, "nothing left port a unprotected: {}", j["ports"][1]);
    assert_eq!(j["ports"][0]["dropped_by_reason"]["offload"], 32, "b's 32 seeds, dropped at a's TX: {}", j["ports"][0]);
    let j = run(&yaml(&p, "params: {}"), 0.1);
    assert_eq!(j["ports"][1]["dropped_by_reason"]["offload"], 0);
    assert!(j["ports"][1]["tx_packets"].as_u64().unwrap() > 1000);
}

#[test]
fn every_error_code_of_the_abi_comes_from_the_real_host() {
    // Init refuses with the number of the first check that fails; a check in on_burst that fails
    // traps. Both checked below: the run starts, and no call traps.
    let check = |call: &str, code: i32, fail: &str| format!("(if (i32.ne {call} (i32.const {code})) (then {fail}))");
    let init: String = [
        check("(call $len (i32.const 0))", -9, "(return (i32.const 1))"), // NO_BURST in init
        check("(call $param (i32.const 200) (i32.const 4) (i32.const 300) (i32.const 16))", -7, "(return (i32.const 2))"), // NOT_FOUND
        check("(call $param (i32.const 210) (i32.const 1) (i32.const 300) (i32.const 2))", -8, "(return (i32.const 3))"), // TOO_SMALL
        check("(call $param (i32.const 70000) (i32.const 4) (i32.const 0) (i32.const 4))", -3, "(return (i32.const 4))"), // BAD_MEMORY
        check("(call $reg (i32.const 220) (i32.const 0))", -2, "(return (i32.const 5))"), // BAD_RANGE: empty name
        "(local.set $i (i32.const 1)) (block $d (loop $l (br_if $d (i32.gt_u (local.get $i) (i32.const 16)))
           (drop (call $reg (i32.const 220) (local.get $i))) (local.set $i (i32.add (local.get $i) (i32.const 1))) (br $l)))"
            .to_string(),
        check("(call $reg (i32.const 220) (i32.const 17))", -8, "(return (i32.const 6))"), // TOO_SMALL: 17th counter
    ]
    .concat();
    let burst: String = [
        check("(call $reg (i32.const 220) (i32.const 1))", -9, "unreachable"), // NO_BURST: register outside init
        check("(call $len (i32.const -5))", -1, "unreachable"),                // BAD_INDEX
        check("(call $send (i32.const 0) (i32.const 99))", -5, "unreachable"), // BAD_PORT
        check(
            "(call $sticky (i32.const 99) (i64.const 0) (i32.const 0) (i32.const 0) (i32.const 1))",
            -4,
            "unreachable",
        ), // BAD_ENGINE
        check("(call $off (i32.const 1) (i64.const 1) (i32.const 0) (i32.const 0))", -6, "unreachable"), // BAD_FLAGS
        check("(call $off (i32.const 1) (i64.const 0) (i32.const 70000) (i32.const 0))", -2, "unreachable"), // BAD_RANGE: TCI
        check(
            "(call $sticky (i32.const 0) (i64.const 0) (i32.const 0) (i32.const 0) (i32.const 0))",
            -2,
            "unreachable",
        ), // BAD_RANGE: bursts
        check("(call $add (i32.const 99) (i64.const 1))", -7, "unreachable"), // NOT_FOUND: counter
        check("(call $add (i32.const 0) (i64.const -1))", -2, "unreachable"), // BAD_RANGE: negative
        check("(call $drop (i32.const 0))", 0, "unreachable"),
        check("(call $drop (i32.const 0))", -10, "unreachable"), // GONE
        check("(call $len (i32.const 0))", -10, "unreachable"),  // GONE
        check("(call $read (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 4))", -10, "unreachable"), // GONE
    ]
    .concat();
    let text = format!(
        r#"(module
             (import "wasmdp" "counter_register" (func $reg (param i32 i32) (result i32)))
             (import "wasmdp" "counter_add" (func $add (param i32 i64) (result i32)))
             (import "wasmdp" "param_get" (func $param (param i32 i32 i32 i32) (result i32)))
             {HEAD}
             (data (i32.const 200) "nope")
             (data (i32.const 210) "k")
             (data (i32.const 220) "aaaaaaaaaaaaaaaaa")
             (func (export "wasmdp_abi_version") (result i32) (i32.const 65536))
             (func (export "wasmdp_init") (param i32 i32) (result i32) (local $i i32) {init} (i32.const 0))
             (func (export "wasmdp_on_burst") (param i32 i32) (result i32) {burst} (i32.const 0)))"#
    );
    let p = write_plugin("error-codes", &text);
    let j = run(&yaml(&p, "params: {k: value}"), 0.1);
    let a = port_a(&j);
    assert!(a["plugin_calls"].as_u64().unwrap() > 0, "{a}");
    assert_eq!(a["plugin_traps"], 0, "a host call did not return its documented code: {a}");
    assert_eq!(a["plugin_counters"].as_object().unwrap().len(), 16, "{a}");
}

#[test]
fn load_and_instance_errors_are_typed() {
    use wasmdp::plugin::{InstanceError, LoadError, Plugin, PluginCounters, Runner, Runtime};
    let rt = Runtime::with_cache(None).unwrap();
    let pol = |path: &std::path::Path| {
        let y = format!("ports:\n  - name: a\n    driver: null\n    policy: {{plugin: {}}}\n", path.display());
        wasmdp::config::parse(&y, "t").unwrap().ports[0].policy.first().cloned().unwrap()
    };
    let missing = std::env::temp_dir().join("wasmdp-no-such.wasm");
    assert!(matches!(Plugin::load(&rt, &pol(&missing)), Err(LoadError::File { .. })));
    let junk = write_plugin("typed-junk", "(module)");
    std::fs::write(&junk, b"junk").unwrap();
    assert!(matches!(Plugin::load(&rt, &pol(&junk)), Err(LoadError::NotWasm { .. })));
    let two = write_plugin("typed-two-mem", "(module (memory 1) (memory 1))");
    assert!(matches!(Plugin::load(&rt, &pol(&two)), Err(LoadError::Module { .. })));
    let no_export = write_plugin("typed-no-export", &module("", 1 << 16));
    assert!(matches!(Plugin::load(&rt, &pol(&no_export)), Err(LoadError::Abi { .. })));
    let refuse = write_plugin(
        "typed-refuse",
        &on_burst("(i32.const 0)")
            .replace("(param i32 i32) (result i32) (i32.const 0))\n", "(param i32 i32) (result i32) (i32.const 3))\n"),
    );
    let plugin = Plugin::load(&rt, &pol(&refuse)).unwrap();
    let simd = wasmdp::simd::Simd::detect();
    let env = std::sync::Arc::new(wasmdp::plugin::StreamEnv::alone(std::sync::Arc::from(vec![])));
    let r = Runner::new(plugin, env, simd, std::sync::Arc::new(PluginCounters::default()));
    assert!(matches!(r, Err(InstanceError::Refused { code: 3 })));
}
