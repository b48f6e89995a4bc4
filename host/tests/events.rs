//! Plugin events end to end: a module registers a kind with named fields and emits through the ABI;
//! the port's ring fills while nobody reads and what does not fit is counted lost (stats, the
//! `events` answer); `wasmdp ctl events` prints each as JSON with its fields by name; the `ratelimit`
//! example reports sources over their rate; bad registrations are refused with the reason logged.

mod common;

use common::{plugin_path, write_wat};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use wasmdp::dataplane::{RunOptions, Running};

fn dir(name: &str) -> PathBuf {
    common::live::fresh_dir(&format!("events-{name}"))
}

fn start(dir: &Path, yaml: &str) -> (Running, RunOptions, PathBuf) {
    common::live::start_with_socket(dir, yaml)
}

/// A module that registers `kind` (`layout`, `size` bytes) at init, refusing to start if that
/// fails, and emits one event per burst: 10.0.0.9, the burst's length.
fn emitter(name: &str, size: u32, layout: &str) -> PathBuf {
    let module = format!(
        r#"(module
  (import "wasmdp" "event_register" (func $reg (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasmdp" "event_emit" (func $emit (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 0) "seen")
  (data (i32.const 16) "{layout}")
  (data (i32.const 512) "\0a\00\00\09")
  (global $id (mut i32) (i32.const -1))
  (func (export "wasmdp_abi_version") (result i32) (i32.const 65537))
  (func (export "wasmdp_init") (param i32 i32) (result i32)
    (global.set $id (call $reg (i32.const 0) (i32.const 4) (i32.const 16) (i32.const {len}) (i32.const {size})))
    (i32.lt_s (global.get $id) (i32.const 0)))
  (func (export "wasmdp_on_burst") (param i32 i32) (result i32)
    (i32.store (i32.const 516) (local.get 1))
    (drop (call $emit (global.get $id) (i32.const 512) (i32.const 8)))
    (i32.const 0)))"#,
        len = layout.len()
    );
    write_wat(name, &module)
}

/// Two null ports, the policy on `a` (a generous deadline: a machine busy with other tests must
/// not make a call time out, which would start a new instance).
fn yaml(plugin: &Path, params: &str) -> String {
    format!(
        "engine: io\nlcores: [0]\nports:\n  - {{name: a, driver: null, policy: {{plugin: {}, params: {{{params}}}, limits: {{deadline_us: 1000000}}}}}}\n  - {{name: b, driver: null}}\n",
        plugin.display()
    )
}

fn port_stats(sock: &Path) -> Value {
    let r = wasmdp::control::request(sock, &serde_json::json!({"cmd": "ports"})).unwrap();
    r["result"][0].clone()
}

#[test]
fn a_full_ring_counts_what_it_loses_and_ctl_events_prints_named_fields() {
    let d = dir("ring");
    let p = emitter("events-emitter", 8, "src:ipv4 n:u32");
    let (running, opts, sock) = start(&d, &yaml(&p, ""));
    // Nobody reads: the ring (1024) fills within a few thousand bursts, the rest is lost.
    let t = Instant::now();
    while port_stats(&sock)["plugin_events_lost"].as_u64().unwrap_or(0) == 0 {
        assert!(t.elapsed() < Duration::from_secs(20), "no event lost: {}", port_stats(&sock));
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(port_stats(&sock)["plugin_events"], 1024, "the ring holds 1024 events");
    let (code, out, err) = common::wasmdp(&["ctl", "--socket", sock.to_str().unwrap(), "events", "a", "--count", "3"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("seen (events-emitter: src:ipv4 n:u32)"), "{err}");
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 3, "{out}");
    for l in &lines {
        assert_eq!(l["event"], "seen");
        assert_eq!(l["plugin"], "events-emitter");
        assert_eq!(l["port"], "a");
        assert_eq!(l["fields"]["src"], "10.0.0.9");
        assert_eq!(l["fields"]["n"], 32, "the burst's length");
    }
    // Reading three made room for three more, and no more.
    let t = Instant::now();
    while port_stats(&sock)["plugin_events"] != 1027 {
        assert!(t.elapsed() < Duration::from_secs(10), "{}", port_stats(&sock));
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(port_stats(&sock)["plugin_events"], 1027);
    // One reader at a time.
    let mut first = std::os::unix::net::UnixStream::connect(&sock).unwrap();
    std::io::Write::write_all(&mut first, b"{\"cmd\": \"events\", \"port\": \"a\"}\n").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let (code, _, err) = common::wasmdp(&["ctl", "--socket", sock.to_str().unwrap(), "events", "a", "--count", "1"]);
    assert_ne!(code, 0);
    assert!(err.contains("another client is reading this port's events"), "{err}");
    drop(first);
    let j = running.finish(&opts).unwrap().json;
    let a = &j["ports"][0];
    assert!(a["plugin_events_lost"].as_u64().unwrap() > 0);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn fields_that_do_not_add_up_to_the_record_size_refuse_the_registration() {
    // 8-byte records declared with 5 bytes of fields: the registration fails, so init refuses.
    let p = emitter("events-bad-size", 8, "src:ipv4 n:u8");
    let (err, logs) = common::capture_logs(|| common::build_error(&yaml(&p, "")));
    assert!(err.contains("init refused the configuration"), "{err}");
    assert!(logs.contains("event `seen`: its fields take 5 bytes; its records are declared 8"), "{logs}");
    // A type that does not exist: the reason names it and the types allowed.
    let p = emitter("events-bad-type", 8, "src:ipv4 n:u33");
    let (err, logs) = common::capture_logs(|| common::build_error(&yaml(&p, "")));
    assert!(err.contains("init refused the configuration"), "{err}");
    assert!(logs.contains(r#"field "n": type "u33" is not one of u8, u16"#), "{logs}");
}

#[test]
fn ratelimit_reports_sources_over_their_rate() {
    let d = dir("ratelimit");
    // 100 packets a second per source at full load: every source is over its rate.
    let (running, opts, sock) = start(&d, &yaml(&plugin_path("ratelimit"), "rate_pps: 100"));
    let (code, out, err) = common::wasmdp(&["ctl", "--socket", sock.to_str().unwrap(), "events", "a", "--count", "5"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 5);
    let mut last = 0;
    for l in &lines {
        assert_eq!(l["event"], "over_rate", "{l}");
        assert_eq!(l["fields"]["rate_pps"], 100);
        assert!(l["fields"]["dropped"].as_u64().unwrap() > 0);
        assert!(l["fields"]["src"].as_str().unwrap().parse::<std::net::Ipv4Addr>().is_ok());
        // At most one event per 10 ms per queue (one queue here).
        let ts = l["ts_ns"].as_u64().unwrap();
        assert!(last == 0 || ts >= last + 9_000_000, "{ts} after {last}: {out}");
        last = ts;
    }
    running.finish(&opts).unwrap();
    let _ = std::fs::remove_dir_all(&d);
}
