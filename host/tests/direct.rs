//! Direct packet access (`area::DIRECT`), end to end in WAT: descriptors whose `DATA` is where each
//! packet is in the plugin's own memory, read and written in place. The area sits at 1024: header
//! 64 bytes, then 32 descriptors of 32 bytes (from 1088). The packet region starts where the memory
//! ended when `burst_area` was called (global `$region`) and is `DIRECT_BUFFERS` strides long.
//!
//! The bench's ports are rings, so every packet enters the stream as a copy into its own pool and
//! leaves it as a copy (`crate::lcore::stream`): the wire bytes below went through both.

mod common;

use common::{run_yaml, write_wat, Wire};
use wasmdp_abi::area;

/// Bytes of the region: `DIRECT_BUFFERS` buffers of a metadata page and one data page (the default
/// 128-byte headroom and 2048-byte data room).
const REGION: u32 = wasmdp::plugin::DIRECT_BUFFERS as u32 * 8192;

/// A module that registers a direct area for 32 packets after `pre_init`, runs `init` after, and
/// per burst `pre`, then `burst` for each packet (locals `$i`, `$d` its descriptor, `$data` and
/// `$len` its bytes).
fn direct_module(pre_init: &str, init: &str, pre: &str, burst: &str) -> String {
    let flags = area::DIRECT;
    format!(
        r#"(module
          (import "wasmdp" "burst_area" (func $area (param i32 i32 i32) (result i32)))
          (import "wasmdp" "counter_register" (func $reg (param i32 i32) (result i32)))
          (import "wasmdp" "counter_add" (func $add (param i32 i64) (result i32)))
          (memory (export "memory") 1)
          (global $region (mut i32) (i32.const 0))
          (global $saved (mut i32) (i32.const 0))
          (data (i32.const 0) "seen")
          (func (export "wasmdp_abi_version") (result i32) (i32.const 65537))
          (func (export "wasmdp_init") (param i32 i32) (result i32)
            (global.set $region (i32.mul (memory.size) (i32.const 65536)))
            {pre_init}
            (if (i32.ne (call $area (i32.const 1024) (i32.const 32) (i32.const {flags})) (i32.const 0))
              (then (return (i32.const 1))))
            {init}
            (i32.const 0))
          (func (export "wasmdp_on_burst") (param i32 i32) (result i32)
            (local $i i32) (local $d i32) (local $data i32) (local $len i32) (local $p i32)
            {pre}
            (block $done (loop $next
              (br_if $done (i32.ge_u (local.get $i) (local.get 1)))
              (local.set $d (i32.add (i32.const 1088) (i32.mul (local.get $i) (i32.const 32))))
              (local.set $data (i32.load offset=4 (local.get $d)))
              (local.set $len (i32.load (local.get $d)))
              {burst}
              (local.set $i (i32.add (local.get $i) (i32.const 1)))
              (br $next)))
            (i32.const 0)))"#
    )
}

fn policy(path: &std::path::Path) -> String {
    format!("policy: {{plugin: {}, limits: {{deadline_us: 500000}}}}", path.display())
}

fn frame(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| seed.wrapping_mul(31).wrapping_add(i as u8)).collect()
}

/// Marks the header `CHANGED` (at 1040).
const CHANGED: &str = "(i32.store (i32.const 1040) (i32.const 1))";

/// Each packet's first byte becomes its index plus 0xD0, its last its length's low byte, written
/// in place (no `CHANGED`, no window): the wire shows both, and `LEN` was each packet's length.
#[test]
fn writes_in_place_reach_the_wire() {
    let burst = "(i32.store8 (local.get $data) (i32.add (local.get $i) (i32.const 0xD0)))
         (i32.store8 (i32.sub (i32.add (local.get $data) (local.get $len)) (i32.const 1)) (local.get $len))";
    let p = write_wat("direct-in-place", &direct_module("", "", "", burst));
    let mut w = Wire::new(&format!("engine: io, {}", policy(&p)));
    for round in 0..3u8 {
        let frames: Vec<Vec<u8>> = (0..5).map(|i| frame(60 + i * 111, i as u8 + round)).collect();
        let want: Vec<Vec<u8>> = frames
            .iter()
            .zip(0u8..)
            .map(|(f, i)| {
                let mut o = f.clone();
                o[0] = 0xD0 + i;
                *o.last_mut().unwrap() = f.len() as u8;
                o
            })
            .collect();
        assert_eq!(w.send(&frames), want, "round {round}");
    }
    let c = w.counts();
    assert_eq!((c.flow.rx_packets, c.flow.tx_packets), (15, 15));
}

/// Bytes written in front of a packet become its own with a positive `HEAD`, bytes written after
/// its end with a positive `TAIL`; a negative `TAIL` trims. `DROP` drops, counted.
#[test]
fn length_changes_take_the_bytes_written_around_the_packet() {
    let burst = format!(
        "{CHANGED}
         (if (i32.eq (local.get $i) (i32.const 0)) (then
            (i32.store (i32.sub (local.get $data) (i32.const 4)) (i32.const 0xEEEEEEEE))
            (i32.store16 offset=20 (local.get $d) (i32.const 4))))
         (if (i32.eq (local.get $i) (i32.const 1)) (then
            (i32.store16 (i32.add (local.get $data) (local.get $len)) (i32.const 0xBBBB))
            (i32.store16 offset=22 (local.get $d) (i32.const 2))))
         (if (i32.eq (local.get $i) (i32.const 2)) (then (i32.store16 offset=22 (local.get $d) (i32.const -10))))
         (if (i32.eq (local.get $i) (i32.const 3)) (then (i32.store8 offset=16 (local.get $d) (i32.const 1))))"
    );
    let p = write_wat("direct-lengths", &direct_module("", "", "", &burst));
    let mut w = Wire::new(&format!("engine: io, {}", policy(&p)));
    let frames: Vec<Vec<u8>> = (0..5).map(|i| frame(64, i)).collect();
    let out = w.send(&frames);
    assert_eq!(out.len(), 4, "one dropped");
    assert_eq!(out[0], [&[0xEE; 4][..], &frames[0]].concat());
    assert_eq!(out[1], [&frames[1][..], &[0xBB, 0xBB]].concat());
    assert_eq!(out[2], frames[2][..54].to_vec());
    assert_eq!(out[3], frames[4]);
    assert_eq!(w.counts().drops.policy, 1);
}

/// Hostile: every byte of the region overwritten each burst, and every descriptor's in fields
/// (`LEN`, `DATA`, the rooms) with garbage before the verdicts: only packet bytes change, the
/// lengths stay the host's, the accounting is exact and every buffer comes back (the bench checks
/// at drop).
#[test]
fn overwriting_the_whole_region_and_the_descriptors_changes_packet_bytes_only() {
    let pre = format!("(memory.fill (global.get $region) (i32.const 0xEE) (i32.const {REGION}))");
    let burst = "(i64.store (local.get $d) (i64.const -1)) (i64.store offset=8 (local.get $d) (i64.const -1))
         (i32.store offset=26 (local.get $d) (i32.const -1)) (i32.store16 offset=30 (local.get $d) (i32.const -1))";
    let p = write_wat("direct-overwrite", &direct_module("", "", &pre, burst));
    let mut w = Wire::new(&format!("engine: io, {}", policy(&p)));
    for _ in 0..3 {
        let frames: Vec<Vec<u8>> = (0..7).map(|i| frame(60 + i * 200, i as u8)).collect();
        let out = w.send(&frames);
        let want: Vec<Vec<u8>> = frames.iter().map(|f| vec![0xEE; f.len()]).collect();
        assert_eq!(out, want);
    }
    let c = w.counts();
    assert_eq!((c.flow.rx_packets, c.flow.tx_packets, c.drops.total()), (21, 21, 0));
}

/// Hostile: an offset kept from one burst and written through in the next, when its packet has
/// long left (sent, its buffer freed and perhaps reused). The packets of the first burst went out
/// as they were; in the second, what the write can change is a byte of a buffer of this stream: at
/// most the one packet now in that buffer, at that place, and nothing else.
#[test]
fn a_stale_offset_writes_only_into_a_buffer_of_the_stream() {
    let pre = "(if (global.get $saved) (then (i32.store8 (global.get $saved) (i32.const 0xBB))))";
    let burst =
        "(if (i32.eqz (global.get $saved)) (then (global.set $saved (i32.add (local.get $data) (i32.const 20)))))";
    let p = write_wat("direct-stale", &direct_module("", "", pre, burst));
    let mut w = Wire::new(&format!("engine: io, {}", policy(&p)));
    let first: Vec<Vec<u8>> = (0..4).map(|i| frame(64, i)).collect();
    assert_eq!(w.send(&first), first);
    let second: Vec<Vec<u8>> = (0..4).map(|i| frame(64, 10 + i)).collect();
    let out = w.send(&second);
    let mut changed = 0;
    for (o, f) in out.iter().zip(&second) {
        if o != f {
            let mut g = f.clone();
            g[20] = 0xBB;
            assert_eq!(o, &g, "only byte 20 of a packet can differ");
            changed += 1;
        }
    }
    assert!(changed <= 1, "{changed} packets changed by one write");
    assert_eq!(w.counts().flow.tx_packets, 8);
}

/// During init the region is inaccessible: a read traps (instantiation fails and says so), and a
/// host function given a pointer into it refuses it (`BAD_MEMORY`, -3) rather than touch it.
#[test]
fn the_region_is_closed_during_init_and_host_functions_refuse_pointers_into_it() {
    let reads = write_wat("direct-init-read", &direct_module("", "(drop (i32.load (global.get $region)))", "", ""));
    let cfg =
        wasmdp::config::parse(&format!("ports:\n  - {{name: a, driver: null, {}}}\n", policy(&reads)), "test").unwrap();
    let plugin =
        wasmdp::plugin::Plugin::load(&wasmdp::plugin::Runtime::new().unwrap(), cfg.ports[0].policy.first().unwrap())
            .unwrap();
    let env = std::sync::Arc::new(wasmdp::plugin::StreamEnv::alone(std::sync::Arc::from(vec![None])));
    let err = wasmdp::plugin::Runner::new(plugin, env, wasmdp::simd::Simd::detect(), Default::default())
        .err()
        .expect("a read of the closed region traps");
    assert!(err.to_string().contains("init"), "{err}");

    let init =
        "(if (i32.ne (call $reg (global.get $region) (i32.const 4)) (i32.const -3)) (then (return (i32.const 7))))";
    let refused = write_wat("direct-init-pointer", &direct_module("", init, "", ""));
    let mut w = Wire::new(&format!("engine: io, {}", policy(&refused)));
    let frames = vec![frame(64, 1)];
    assert_eq!(w.send(&frames), frames);
}

/// A second registration once the region is mapped is refused (`BAD_RANGE`): another area could
/// overlap the region. `DIRECT` with a window is refused likewise.
#[test]
fn direct_registrations_are_checked() {
    let again = format!(
        "(if (i32.ne (call $area (i32.const 1024) (i32.const 32) (i32.const {})) (i32.const -2)) (then (return (i32.const 2))))
         (if (i32.ne (call $area (i32.const 1024) (i32.const 32) (i32.const 16)) (i32.const -2)) (then (return (i32.const 3))))",
        area::DIRECT
    );
    let window = format!(
        "(if (i32.ne (call $area (i32.const 1024) (i32.const 32) (i32.const {})) (i32.const -2)) (then (return (i32.const 4))))",
        area::DIRECT | 16
    );
    let p = write_wat("direct-registrations", &direct_module(&window, &again, "", ""));
    let mut w = Wire::new(&format!("engine: io, {}", policy(&p)));
    let frames = vec![frame(64, 2)];
    assert_eq!(w.send(&frames), frames);
}

/// A plugin cannot read another port's packets: one that scans its whole region for a marker never
/// finds one that only another stream (its own pool, its own region) received, and finds it once
/// its own stream receives it.
#[test]
fn a_plugin_cannot_read_another_ports_packets() {
    // Counts, per burst, the 8-byte marker at 8-byte steps of the region.
    let pre = format!(
        "(local.set $p (global.get $region))
         (block $end (loop $scan
           (br_if $end (i32.ge_u (local.get $p) (i32.add (global.get $region) (i32.const {REGION}))))
           (if (i64.eq (i64.load (local.get $p)) (i64.const 0x5345435245544B59))
             (then (drop (call $add (i32.const 0) (i64.const 1)))))
           (local.set $p (i32.add (local.get $p) (i32.const 8)))
           (br $scan)))"
    );
    let init = "(drop (call $reg (i32.const 0) (i32.const 4)))";
    let scan = write_wat("direct-scan", &direct_module("", init, &pre, ""));
    let pass = write_wat("direct-pass", &direct_module("", "", "", ""));
    let mut marked = frame(64, 3);
    marked[16..24].copy_from_slice(&0x5345435245544B59u64.to_le_bytes());
    let mut other = Wire::new(&format!("engine: io, {}", policy(&pass)));
    let mut mine = Wire::new(&format!("engine: io, {}", policy(&scan)));
    for _ in 0..3 {
        assert_eq!(other.send(std::slice::from_ref(&marked)), vec![marked.clone()]);
        assert_eq!(mine.send(&[frame(64, 4)]).len(), 1);
    }
    let seen = |w: &Wire| w.plugin().named().get("seen").copied().unwrap_or(0);
    assert_eq!(seen(&mine), 0, "the other stream's packets are not in this plugin's memory");
    mine.send(std::slice::from_ref(&marked));
    assert!(seen(&mine) >= 1, "the scan does see its own stream's packets");
}

/// Two queues of one port on two lcores, each plugin overwriting its whole region every burst:
/// the run ends with exact accounting (everything received was sent), nothing crashed.
#[test]
fn two_queues_on_two_lcores_write_concurrently_with_exact_accounting() {
    let pre = format!("(memory.fill (global.get $region) (i32.const 0x77) (i32.const {REGION}))");
    let p = write_wat("direct-two-queues", &direct_module("", "", &pre, ""));
    let yaml = format!(
        "lcores: [0, 1]\nports:\n  - {{name: a, driver: null, queues: 2, {}}}\n  - {{name: b, driver: null, queues: 2}}\nstreams:\n  - {{rx: a, rx_queue: 0, tx: b, tx_queue: 0, lcore: 0}}\n  - {{rx: a, rx_queue: 1, tx: b, tx_queue: 1, lcore: 1}}\n",
        policy(&p)
    );
    // `run_yaml` checks that each stream balances and no buffer leaked.
    let j = run_yaml(&yaml, 1.0);
    for s in j["streams"].as_array().unwrap() {
        assert!(s["rx_packets"].as_u64().unwrap() > 1000, "both queues forwarded: {s}");
        assert_eq!(s["dropped"], 0, "{s}");
    }
    assert!(!j.to_string().contains("\"traps\":1"), "{j}");
}

/// A trapped instance is replaced (`on_failure: reload`) by one that maps the same pool: after the
/// trap, once the new instance runs, the packets are written in place again, and nothing leaked.
#[test]
fn a_reinstantiated_plugin_maps_the_same_region() {
    // Traps on its second burst (a global counts them), writes byte 0 of every packet otherwise.
    let pre = "(global.set $saved (i32.add (global.get $saved) (i32.const 1)))
         (if (i32.eq (global.get $saved) (i32.const 2)) (then unreachable))";
    let burst = "(i32.store8 (local.get $data) (i32.const 0xAB))";
    let p = write_wat("direct-revive", &direct_module("", "", pre, burst));
    let mut w = Wire::new(&format!(
        "engine: io, policy: {{plugin: {}, on_failure: reload, limits: {{deadline_us: 500000}}}}",
        p.display()
    ));
    let frames = vec![frame(64, 5)];
    let mut marked = frames[0].clone();
    marked[0] = 0xAB;
    assert_eq!(w.send(&frames), vec![marked.clone()], "the first instance writes in place");
    assert_eq!(w.send(&frames), frames, "its trap: the burst goes out as the failure policy says");
    let mut again = false;
    for _ in 0..500 {
        if w.send(&frames) == vec![marked.clone()] {
            again = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert!(again, "the new instance writes in place through its own mapping of the pool");
    assert_eq!(w.plugin().traps.load(std::sync::atomic::Ordering::Relaxed), 1);
}

/// Direct heads (`DIRECT` with `HEADS`, a window of 0): per packet 8 bytes, its length, the bytes to
/// its buffer's end and where it is; the plugin writes in place and nothing is read back per packet
/// (`CHANGED` means nothing: the bytes are already there). The header's engine still runs.
#[test]
fn direct_heads_give_length_room_and_place_and_nothing_is_copied() {
    let flags = area::DIRECT | area::HEADS;
    let wat = format!(
        r#"(module
          (import "wasmdp" "burst_area" (func $area (param i32 i32 i32) (result i32)))
          (memory (export "memory") 1)
          (func (export "wasmdp_abi_version") (result i32) (i32.const 65537))
          (func (export "wasmdp_init") (param i32 i32) (result i32)
            (call $area (i32.const 1024) (i32.const 32) (i32.const {flags})))
          (func (export "wasmdp_on_burst") (param i32 i32) (result i32) (local $i i32) (local $e i32) (local $data i32)
            (block $done (loop $next
              (br_if $done (i32.ge_u (local.get $i) (local.get 1)))
              (local.set $e (i32.add (i32.const 1088) (i32.mul (local.get $i) (i32.const 8))))
              (local.set $data (i32.load offset=4 (local.get $e)))
              ;; byte 13: the length's low byte; byte 14: 1 when the buffer reaches 2048 bytes past the start
              (i32.store8 offset=13 (local.get $data) (i32.load16_u (local.get $e)))
              (i32.store8 offset=14 (local.get $data) (i32.ge_u (i32.load16_u offset=2 (local.get $e)) (i32.const 1900)))
              (local.set $i (i32.add (local.get $i) (i32.const 1)))
              (br $next)))
            (i32.store (i32.const 1036) (i32.const {macswap}))
            (i32.const 0)))"#,
        macswap = wasmdp_abi::engine::MACSWAP
    );
    let p = write_wat("direct-heads", &wat);
    let mut w = Wire::new(&format!("engine: io, {}", policy(&p)));
    let frames: Vec<Vec<u8>> = (0..6).map(|i| frame(60 + i * 150, i as u8)).collect();
    let want: Vec<Vec<u8>> = frames
        .iter()
        .map(|f| {
            let mut o = f.clone();
            o[13] = f.len() as u8;
            o[14] = 1;
            common::swapped(&o)
        })
        .collect();
    assert_eq!(w.send(&frames), want);
}

/// `SEND` from a stream with its own pool: each packet leaves for the other port's stream (another
/// pool, possibly another thread) as a copy; everything balances and no buffer of either pool leaks.
#[test]
fn packets_sent_to_another_port_leave_as_copies() {
    let burst = format!(
        "{CHANGED} (i32.store8 offset=16 (local.get $d) (i32.const 2)) (i32.store16 offset=18 (local.get $d) (i32.const 1))"
    );
    let p = write_wat("direct-send", &direct_module("", "", "", &burst));
    let yaml = format!(
        "engine: io\ntopology: loop\nports:\n  - {{name: a, driver: null, {}}}\n  - {{name: b, driver: null}}\n",
        policy(&p)
    );
    // `run_yaml` checks that each stream balances and that no buffer leaked.
    let j = run_yaml(&yaml, 0.3);
    let (a, b) = (&j["ports"][0], &j["ports"][1]);
    let rx_a = a["rx_packets"].as_u64().unwrap();
    assert!(rx_a > 1000, "{a}");
    assert_eq!(a["tx_packets"], 0, "nothing left on a's own TX: {a}");
    assert_eq!(a["dropped"], 0, "{a}");
    assert!(b["tx_packets"].as_u64().unwrap() >= rx_a, "a's packets left on b: {b}");
}

/// `HEADROOM` is what the plugin's memory shows in front of the packet, no more: prepending all of
/// it puts the plugin's bytes on the wire; one byte more (which would reach into the buffer's gap
/// before its data page, bytes the plugin cannot see or write) drops the packet, counted as
/// `headroom`. Each packet's headroom is at least the configured 128 bytes, whatever its buffer's
/// colour (`mbuf::shared`).
#[test]
fn headroom_is_what_the_plugin_sees_and_a_prepend_past_it_is_refused() {
    let burst = format!(
        "{CHANGED}
         (local.set $p (i32.load16_u offset=26 (local.get $d)))
         (memory.fill (i32.sub (local.get $data) (local.get $p)) (i32.const 0xAB) (local.get $p))
         (i32.store16 offset=20 (local.get $d)
            (i32.add (local.get $p) (i32.and (local.get $i) (i32.const 1))))"
    );
    let p = write_wat("direct-headroom", &direct_module("", "", "", &burst));
    let mut w = Wire::new(&format!("engine: io, {}", policy(&p)));
    let mut sent = 0;
    for round in 0..4u8 {
        let frames: Vec<Vec<u8>> = (0..32).map(|i| frame(64, i + round)).collect();
        let out = w.send(&frames);
        assert_eq!(out.len(), 16, "round {round}: the odd packets dropped");
        for (o, f) in out.iter().zip(frames.iter().step_by(2)) {
            let h = o.len() - f.len();
            assert!(h >= 128, "round {round}: a headroom of {h}");
            assert_eq!(o[..h], vec![0xAB; h][..], "round {round}: the bytes prepended are the plugin's");
            assert_eq!(&o[h..], &f[..]);
        }
        sent += 16;
    }
    let c = w.counts();
    assert_eq!((c.flow.tx_packets, c.drops.headroom, c.drops.total()), (sent, sent, sent), "{c:?}");
}

/// A chain whose first link (windows) prepends 1000 bytes, more than the second link's (direct)
/// alias shows in front of most packets (the rest is the gap before each buffer's data page): the
/// host moves each such packet onto its data page before the second link's call, which then reads
/// and writes all of it, first byte and last.
#[test]
fn a_packet_prepended_past_what_a_direct_link_sees_is_moved_where_it_sees_it() {
    let grow = r#"(module
      (import "wasmdp" "burst_area" (func $area (param i32 i32 i32) (result i32)))
      (memory (export "memory") 1)
      (func (export "wasmdp_abi_version") (result i32) (i32.const 65537))
      (func (export "wasmdp_init") (param i32 i32) (result i32)
        (call $area (i32.const 1024) (i32.const 32) (i32.const 64)))
      (func (export "wasmdp_on_burst") (param i32 i32) (result i32) (local $i i32)
        (i32.store (i32.const 1040) (i32.const 1))
        (block $done (loop $next
          (br_if $done (i32.ge_u (local.get $i) (local.get 1)))
          (i32.store16 offset=20 (i32.add (i32.const 1088) (i32.mul (local.get $i) (i32.const 32))) (i32.const 1000))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br $next)))
        (i32.const 0)))"#;
    let mark = "(i32.store8 (local.get $data) (i32.const 0xD0))
         (i32.store8 (i32.sub (i32.add (local.get $data) (local.get $len)) (i32.const 1)) (i32.const 0xD1))";
    let grow = write_wat("direct-chain-grow", grow);
    let mark = write_wat("direct-chain-mark", &direct_module("", "", "", mark));
    let link = |name: &str, p: &std::path::Path| {
        format!("{{name: {name}, plugin: {}, limits: {{deadline_us: 500000}}}}", p.display())
    };
    let mut w = Wire::new(&format!("engine: io, policy: [{}, {}]", link("grow", &grow), link("mark", &mark)));
    for round in 0..3u8 {
        let frames: Vec<Vec<u8>> = (0..32).map(|i| frame(64 + i * 7, i as u8 + round)).collect();
        let want: Vec<Vec<u8>> = frames
            .iter()
            .map(|f| {
                let mut o = [&[0u8; 1000][..], f].concat();
                o[0] = 0xD0;
                *o.last_mut().unwrap() = 0xD1;
                o
            })
            .collect();
        assert_eq!(w.send(&frames), want, "round {round}");
    }
    let c = w.counts();
    assert_eq!((c.flow.tx_packets, c.drops.total()), (96, 0), "{c:?}");
}
