//! Heads (`area::HEADS`, ABI 1.1): windows without descriptors, end to end in WAT. The area sits at
//! 1024: header 64 bytes, 32 packet lengths of 4 bytes (from 1088), 32 heads of 16 bytes (from 1216).

mod common;

use common::{run_yaml, write_wat, Wire};
use wasmdp_abi::area;

const WINDOW: u32 = 16 | area::HEADS;

/// A module that registers 16-byte heads for 32 packets, runs `init` after, and `burst` per burst
/// (local `$i` and a loop over the burst's packets, with `$len` and `$head` set for each).
fn heads_module(init: &str, burst: &str) -> String {
    format!(
        r#"(module
          (import "wasmdp" "burst_area" (func $area (param i32 i32 i32) (result i32)))
          (import "wasmdp" "drop_pkt" (func $drop (param i32) (result i32)))
          (memory (export "memory") 1)
          (func (export "wasmdp_abi_version") (result i32) (i32.const 65537))
          (func (export "wasmdp_init") (param i32 i32) (result i32)
            {init}
            (if (i32.ne (call $area (i32.const 1024) (i32.const 32) (i32.const {WINDOW})) (i32.const 0))
              (then (return (i32.const 1))))
            (i32.const 0))
          (func (export "wasmdp_on_burst") (param i32 i32) (result i32) (local $i i32) (local $len i32) (local $head i32)
            (block $done (loop $next
              (br_if $done (i32.ge_u (local.get $i) (local.get 1)))
              (local.set $len (i32.load (i32.add (i32.const 1088) (i32.mul (local.get $i) (i32.const 4)))))
              (local.set $head (i32.add (i32.const 1216) (i32.mul (local.get $i) (i32.const 16))))
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

/// Each head gets its packet's length in bytes 0..4 and its bytes 14..16 (zeros past a 14-byte
/// packet's end) in bytes 4..6; each packet gets its head back, `min(len, 16)` bytes, whatever its
/// length.
#[test]
fn heads_hold_each_packets_length_and_first_bytes_and_go_back_into_it() {
    let burst = format!(
        "{CHANGED}
         (i32.store16 (i32.add (local.get $head) (i32.const 4)) (i32.load16_u (i32.add (local.get $head) (i32.const 14))))
         (i32.store (local.get $head) (local.get $len))"
    );
    let p = write_wat("heads-lengths", &heads_module("", &burst));
    let mut w = Wire::new(&format!("engine: io, {}", policy(&p)));
    let want = |f: &[u8]| {
        let mut o = f.to_vec();
        o[..4].copy_from_slice(&(f.len() as u32).to_le_bytes());
        let past = [f.get(14).copied().unwrap_or(0), f.get(15).copied().unwrap_or(0)];
        o[4..6].copy_from_slice(&past);
        o
    };
    // Long frames first, so that short ones in the next burst sit where long ones were.
    let long: Vec<Vec<u8>> = (0..5).map(|i| frame(64 + i * 100, i as u8)).collect();
    assert_eq!(w.send(&long), long.iter().map(|f| want(f)).collect::<Vec<_>>());
    let short: Vec<Vec<u8>> = [14, 15, 16, 17, 60].iter().map(|&n| frame(n, n as u8)).collect();
    let out = w.send(&short);
    assert_eq!(out, short.iter().map(|f| want(f)).collect::<Vec<_>>());
    assert_eq!(&out[0][4..6], [0, 0], "a 14-byte packet's head holds zeros past its end, not old bytes");
}

/// Heads written without `CHANGED` go nowhere; the header's engine (macswap) still runs.
#[test]
fn heads_not_marked_changed_leave_the_packets_alone() {
    let burst = "(i64.store (local.get $head) (i64.const -1)) (i32.store (i32.const 1036) (i32.const 2))";
    let p = write_wat("heads-unchanged", &heads_module("", burst));
    let mut w = Wire::new(&format!("engine: io, {}", policy(&p)));
    let frames: Vec<Vec<u8>> = (0..4).map(|i| frame(64, i)).collect();
    assert_eq!(w.send(&frames), frames.iter().map(|f| common::swapped(f)).collect::<Vec<_>>());
}

/// A packet dropped with the 1.0 `drop_pkt` during the call is not written; the others get their
/// own heads back, in their places.
#[test]
fn heads_after_a_1_0_drop_go_back_into_their_own_packets() {
    let burst = format!(
        "{CHANGED} (if (i32.eqz (local.get $i)) (then (drop (call $drop (i32.const 0)))))
         (i32.store8 (local.get $head) (i32.add (local.get $i) (i32.const 0xE0)))"
    );
    let p = write_wat("heads-1-0-drop", &heads_module("", &burst));
    let mut w = Wire::new(&format!("engine: io, {}", policy(&p)));
    let frames: Vec<Vec<u8>> = (0..4).map(|i| frame(64, i)).collect();
    let want: Vec<Vec<u8>> = frames[1..]
        .iter()
        .zip(1u8..)
        .map(|(f, i)| {
            let mut o = f.clone();
            o[0] = 0xE0 + i;
            o
        })
        .collect();
    assert_eq!(w.send(&frames), want);
    assert_eq!(w.counts().drops.policy, 1);
}

/// What `burst_area` refuses with `HEADS`, as documented: with `FLOW_HASH` (no descriptor to hold
/// it) or a window of 0 bytes (`BAD_RANGE`, -2), an area past the memory (`BAD_MEMORY`, -3); an
/// area that fits as heads (64 + 32 x 20 bytes) but not with descriptors is accepted.
#[test]
fn heads_registrations_are_checked_by_their_own_size() {
    let init = format!(
        "(if (i32.ne (call $area (i32.const 0) (i32.const 32) (i32.const {hashed})) (i32.const -2)) (then (return (i32.const 2))))
         (if (i32.ne (call $area (i32.const 0) (i32.const 32) (i32.const {empty})) (i32.const -2)) (then (return (i32.const 3))))
         (if (i32.ne (call $area (i32.const 64833) (i32.const 32) (i32.const {WINDOW})) (i32.const -3)) (then (return (i32.const 4))))
         (if (i32.ne (call $area (i32.const 64832) (i32.const 32) (i32.const 16)) (i32.const -3)) (then (return (i32.const 5))))
         (if (i32.ne (call $area (i32.const 64832) (i32.const 32) (i32.const {WINDOW})) (i32.const 0)) (then (return (i32.const 6))))",
        hashed = WINDOW | area::FLOW_HASH,
        empty = area::HEADS,
    );
    assert_eq!(65536 - area::heads_size(32, 16), 64832);
    let p = write_wat("heads-refusals", &heads_module(&init, ""));
    let j = run_yaml(
        &format!("engine: io\nports:\n  - {{name: a, driver: null, {}}}\n  - {{name: b, driver: null}}\n", policy(&p)),
        0.1,
    );
    let a = &j["ports"][0];
    assert!(a["plugin_calls"].as_u64().unwrap() > 0, "the port started: every code was as documented: {a}");
}

/// Every window size the host copies in fixed moves (16, 32, 64) and others, against frames
/// shorter than, as long as and longer than the window: the plugin inverts every head byte, and
/// exactly each packet's first `min(len, window)` bytes come out inverted.
#[test]
fn heads_of_every_size_go_back_exactly_over_each_packets_first_bytes() {
    let lens = [14, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 200];
    let frames: Vec<Vec<u8>> = lens.iter().map(|&n| frame(n, n as u8)).collect();
    for window in [1u32, 7, 16, 17, 32, 33, 64, 100] {
        let burst = format!(
            "{CHANGED} (local.set $head (i32.add (i32.const 1088) (i32.mul (local.get $i) (i32.const {window}))))
             (local.set $head (i32.add (local.get $head) (i32.const 128)))
             (local.set $len (i32.const 0))
             (block $end (loop $byte
               (br_if $end (i32.ge_u (local.get $len) (i32.const {window})))
               (i32.store8 (i32.add (local.get $head) (local.get $len))
                 (i32.xor (i32.load8_u (i32.add (local.get $head) (local.get $len))) (i32.const 0xFF)))
               (local.set $len (i32.add (local.get $len) (i32.const 1)))
               (br $byte)))"
        );
        let module = heads_module("", &burst)
            .replace(&format!("(i32.const {WINDOW})"), &format!("(i32.const {})", window | area::HEADS));
        let p = write_wat(&format!("heads-window-{window}"), &module);
        let mut w = Wire::new(&format!("engine: io, {}", policy(&p)));
        let want: Vec<Vec<u8>> = frames
            .iter()
            .map(|f| {
                let mut o = f.clone();
                let k = f.len().min(window as usize);
                o[..k].iter_mut().for_each(|b| *b ^= 0xFF);
                o
            })
            .collect();
        assert_eq!(w.send(&frames), want, "window {window}");
    }
}

/// The host fills and copies back heads four packets a turn, then one at a time: every burst size
/// from 1 to 9, with short packets among them, at each window size with a fixed-move path (16, 32,
/// 64), gets each packet's own head, in place, the rest of each packet unchanged.
#[test]
fn heads_go_back_into_their_own_packets_whatever_the_burst_size() {
    for window in [16u32, 32, 64] {
        let burst = format!(
            "{CHANGED} (local.set $head (i32.add (i32.const 1088) (i32.mul (local.get $i) (i32.const {window}))))
             (local.set $head (i32.add (local.get $head) (i32.const 128)))
             (i32.store8 (local.get $head) (i32.xor (i32.load8_u (local.get $head)) (i32.const 0xFF)))
             (i32.store8 (i32.add (local.get $head) (i32.const {last}))
               (i32.add (i32.load8_u (i32.add (local.get $head) (i32.const {last}))) (local.get $i)))",
            last = window - 1
        );
        let module = heads_module("", &burst)
            .replace(&format!("(i32.const {WINDOW})"), &format!("(i32.const {})", window | area::HEADS));
        let p = write_wat(&format!("heads-bursts-{window}"), &module);
        let mut w = Wire::new(&format!("engine: io, {}", policy(&p)));
        for n in 1..=9usize {
            // Every third packet shorter than the window (its head goes back only its bytes).
            let frames: Vec<Vec<u8>> = (0..n)
                .map(|i| frame(if i % 3 == 2 { window as usize - 3 } else { 60 + 7 * i }, (n * 10 + i) as u8))
                .collect();
            let want: Vec<Vec<u8>> = frames
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let mut o = f.clone();
                    o[0] ^= 0xFF;
                    if let Some(b) = o.get_mut(window as usize - 1) {
                        *b = b.wrapping_add(i as u8);
                    }
                    o
                })
                .collect();
            assert_eq!(w.send(&frames), want, "window {window}, a burst of {n}");
        }
    }
}

/// The lengths are the host's, not read back: a plugin that overwrites them (here with
/// `u32::MAX`) changes no packet's length, and its heads still go back `min(len, 16)` bytes each.
#[test]
fn lengths_overwritten_by_the_plugin_change_nothing() {
    let burst = format!(
        "{CHANGED} (i32.store (i32.add (i32.const 1088) (i32.mul (local.get $i) (i32.const 4))) (i32.const -1))
         (v128.store (local.get $head) (v128.const i8x16 -85 -85 -85 -85 -85 -85 -85 -85 -85 -85 -85 -85 -85 -85 -85 -85))"
    );
    let p = write_wat("heads-hostile-lengths", &heads_module("", &burst));
    let mut w = Wire::new(&format!("engine: io, {}", policy(&p)));
    let frames: Vec<Vec<u8>> = [14, 15, 64, 300].iter().map(|&n| frame(n, 3)).collect();
    let want: Vec<Vec<u8>> = frames
        .iter()
        .map(|f| {
            let mut o = f.clone();
            let k = f.len().min(16);
            o[..k].fill(0xAB);
            o
        })
        .collect();
    assert_eq!(w.send(&frames), want);
}
