//! Every packet received is transmitted, dropped with a counted reason, or still in flight; every
//! buffer is back in the pool at stop. Runs the real dataplane briefly on null and ring ports.

use serde_json::Value;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use wasmdp::dataplane::{self, Overrides, RunOptions};

fn run(yaml: &str, secs: f64) -> Value {
    let cfg = wasmdp::config::parse(yaml, "test").unwrap();
    let dp = dataplane::build(&cfg, &Overrides::default()).unwrap();
    let opts = RunOptions { duration: Some(Duration::from_secs_f64(secs)), ..RunOptions::default() };
    let report = dataplane::run(dp, &opts, Arc::new(AtomicBool::new(false))).unwrap();
    assert_eq!(report.leaked, 0, "buffers not returned: {}", report.json);
    report.json
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Per stream: received + generated == transmitted + dropped (nothing stays inside a stream).
fn assert_streams_balance(j: &Value) {
    for s in j["streams"].as_array().unwrap() {
        assert_eq!(
            u(&s["rx_packets"]) + u(&s["generated"]) + u(&s["redirected_in"]),
            u(&s["tx_packets"]) + u(&s["dropped"]) + u(&s["redirected_out"]),
            "stream {s}"
        );
    }
}

#[test]
fn null_ports_every_engine_balances_and_reports_the_documented_keys() {
    for engine in ["io", "mac", "macswap", "5tswap", "copy", "rxonly", "txonly"] {
        let yaml = format!(
            "engine: {engine}\nports:\n  - {{name: a, driver: null, frame: {{flows: 4}}}}\n  - {{name: b, driver: null, frame: {{size: 1518}}}}\n"
        );
        let j = run(&yaml, 0.2);
        assert_streams_balance(&j);
        let moved = if engine == "rxonly" { "rx_packets" } else { "tx_packets" };
        assert!(u(&j["totals"][moved]) > 0, "{engine}: nothing forwarded: {j}");
        for key in ["duration_s", "mpps", "simd"] {
            assert!(!j[key].is_null(), "missing {key}");
        }
        for p in j["ports"].as_array().unwrap() {
            for key in ["name", "rx_packets", "tx_packets", "dropped"] {
                assert!(!p[key].is_null(), "port missing {key}");
            }
        }
        assert_eq!(j["streams"][0]["engine"], engine);
        let t = &j["totals"];
        if engine == "rxonly" {
            assert_eq!(u(&t["dropped"]), u(&t["rx_packets"]));
        } else {
            assert_eq!(u(&t["dropped"]), 0, "{engine}: {t}");
        }
    }
}

#[test]
fn ring_loop_keeps_every_seeded_packet_in_flight_or_counted() {
    let yaml = "burst: 16\nports:\n  - {name: r0, driver: ring, ring: {peer: r1, size: 64}, tx_first: 3, engine: macswap}\n  - {name: r1, driver: ring, ring: {peer: r0, size: 64}, tx_first: 2}\n";
    let j = run(yaml, 0.3);
    assert_streams_balance(&j);
    let t = &j["totals"];
    assert_eq!(u(&t["generated"]), 5 * 16);
    // Only seeds create packets; each ends dropped or still looping at stop.
    assert_eq!(u(&t["generated"]), u(&t["dropped"]) + u(&t["in_flight"]), "{t}");
    assert!(u(&t["tx_packets"]) > 1000, "the seeds did not loop: {t}");
}

#[test]
fn a_full_ring_drops_with_the_tx_full_reason() {
    // 10 bursts of 32 into rings of 64 with no retry: most of the seeds cannot fit.
    let yaml = "tx_retry: {count: 0}\nports:\n  - {name: r0, driver: ring, ring: {peer: r1, size: 64}, tx_first: 10}\n  - {name: r1, driver: ring, ring: {peer: r0, size: 64}}\n";
    let j = run(yaml, 0.2);
    assert_streams_balance(&j);
    let t = &j["totals"];
    assert!(u(&t["dropped_by_reason"]["tx_full"]) >= 320 - 64, "{t}");
    assert_eq!(u(&t["dropped"]), u(&t["dropped_by_reason"]["tx_full"]));
    assert_eq!(u(&t["generated"]), u(&t["dropped"]) + u(&t["in_flight"]), "{t}");
}

#[test]
fn an_exhausted_pool_counts_rx_nombuf_and_keeps_forwarding() {
    // 64 buffers, rings that can hold them all: tx_first takes the whole pool, the null port then
    // finds none.
    let yaml = "pool: {size: 64, cache_size: 8}\nburst: 32\nstreams:\n  - {rx: n, tx: r0}\n  - {rx: r1, tx: r1}\nports:\n  - {name: n, driver: null}\n  - {name: r0, driver: ring, ring: {peer: r1, size: 1024}}\n  - {name: r1, driver: ring, ring: {peer: r0, size: 1024}}\n";
    let j = run(yaml, 0.2);
    assert_streams_balance(&j);
    let t = &j["totals"];
    assert!(u(&t["rx_nombuf"]) > 0, "{t}");
    // All 64 buffers ended up waiting on r0's RX queue, which no stream polls.
    assert_eq!(u(&t["in_flight"]), 64, "{t}");
}
