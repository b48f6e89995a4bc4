//! Heads with drops (`area::DROPS`), copied and direct, end to end in WAT: a verdict byte a packet
//! after the heads, reset to `PASS` by the host before every call, read and checked after it. The
//! area sits at 1024 for 32 packets: the header (64 bytes), then the heads (copied: 32 lengths of 4
//! bytes and 32 windows of 16; direct: 32 entries of 8 bytes), then the 32 verdict bytes.

mod common;

use common::{write_wat, Wire};
use std::sync::atomic::Ordering::Relaxed;
use wasmdp_abi::area;

/// Window bytes of the copied heads.
const WINDOW: u32 = 16;

/// The two kinds of heads with drops: `(name, flags, where the verdict bytes start)`.
fn kinds() -> [(&'static str, u32, u32); 2] {
    let copied = area::Shape { window: WINDOW as usize, flow_hash: false, heads: true, direct: false, drops: true };
    let direct = area::Shape { window: 0, flow_hash: false, heads: true, direct: true, drops: true };
    [
        ("copied", WINDOW | area::HEADS | area::DROPS, 1024 + copied.verdicts_at(32) as u32),
        ("direct", area::DIRECT | area::HEADS | area::DROPS, 1024 + direct.verdicts_at(32) as u32),
    ]
}

/// A module registering heads with drops (`flags`), whose on_burst runs `burst` for each packet
/// (locals `$i`, `$v` its verdict byte's address, `$first` its first byte) after `pre`, and
/// counts its calls in `$calls`.
fn drops_module(flags: u32, verdicts: u32, pre: &str, burst: &str) -> String {
    let direct = flags & area::DIRECT != 0;
    // Where packet $i's first byte is: in its window (copied), or where its entry says (direct).
    let first = if direct {
        "(i32.load8_u (i32.load offset=4 (i32.add (i32.const 1088) (i32.mul (local.get $i) (i32.const 8)))))"
            .to_string()
    } else {
        format!("(i32.load8_u (i32.add (i32.const {}) (i32.mul (local.get $i) (i32.const {WINDOW}))))", 1088 + 32 * 4)
    };
    format!(
        r#"(module
          (import "wasmdp" "burst_area" (func $area (param i32 i32 i32) (result i32)))
          (memory (export "memory") 1)
          (global $calls (mut i32) (i32.const 0))
          (func (export "wasmdp_abi_version") (result i32) (i32.const 65537))
          (func (export "wasmdp_init") (param i32 i32) (result i32)
            (call $area (i32.const 1024) (i32.const 32) (i32.const {flags})))
          (func (export "wasmdp_on_burst") (param i32 i32) (result i32)
            (local $i i32) (local $v i32) (local $first i32)
            (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
            {pre}
            (block $done (loop $next
              (br_if $done (i32.ge_u (local.get $i) (local.get 1)))
              (local.set $v (i32.add (i32.const {verdicts}) (local.get $i)))
              (local.set $first {first})
              {burst}
              (local.set $i (i32.add (local.get $i) (i32.const 1)))
              (br $next)))
            (i32.const 0)))"#
    )
}

fn policy(path: &std::path::Path) -> String {
    format!("policy: {{plugin: {}, on_failure: fail_closed, limits: {{deadline_us: 500000}}}}", path.display())
}

/// A frame of `len` bytes whose first byte is `first`.
fn frame(len: usize, first: u8) -> Vec<u8> {
    let mut f: Vec<u8> = (0..len).map(|i| (i as u8).wrapping_mul(7)).collect();
    f[0] = first;
    f
}

/// Packets whose first byte is odd are dropped, counted as the policy's; the others pass and run
/// the header's engine (MAC swap). On every other call the plugin writes no verdict at all: all of
/// that burst passes, so the bytes were reset since the call before.
#[test]
fn drops_are_what_the_verdict_bytes_say_and_the_bytes_are_reset_before_each_call() {
    for (name, flags, verdicts) in kinds() {
        let pre = format!("(i32.store (i32.const 1036) (i32.const {}))", wasmdp_abi::engine::MACSWAP);
        let burst =
            "(if (i32.and (i32.and (global.get $calls) (i32.const 1)) (i32.and (local.get $first) (i32.const 1)))
                       (then (i32.store8 (local.get $v) (i32.const 1))))";
        let p = write_wat(&format!("drops-{name}"), &drops_module(flags, verdicts, &pre, burst));
        let mut w = Wire::new(&policy(&p));
        let mut dropped = 0;
        for call in 1..=4u8 {
            let frames: Vec<Vec<u8>> = (0..9).map(|i| frame(60 + i * 37, call * 16 + i as u8)).collect();
            let want: Vec<Vec<u8>> =
                frames.iter().filter(|f| call % 2 == 0 || f[0] % 2 == 0).map(|f| common::swapped(f)).collect();
            dropped += (frames.len() - want.len()) as u64;
            assert_eq!(w.send(&frames), want, "{name}: call {call}");
        }
        assert_eq!(dropped, 8, "{name}: two calls of four odd packets each");
        assert_eq!(w.counts().drops.policy, dropped, "{name}");
        assert_eq!(w.plugin().errors.load(Relaxed), 0, "{name}");
    }
}

/// Hostile: a verdict byte other than `PASS` or `DROP`, anywhere among the burst's, fails the call
/// before anything is carried out (`fail_closed` then drops the burst, counted as the plugin's), and
/// one written past the burst's packets changes nothing.
#[test]
fn a_verdict_byte_that_is_neither_pass_nor_drop_fails_the_call() {
    for (name, flags, verdicts) in kinds() {
        for bad in [2u8, 0x80, 0xFF] {
            // The last packet's byte bad, an earlier one dropped.
            let burst = format!(
                "(if (i32.eq (local.get $i) (i32.const 0)) (then (i32.store8 (local.get $v) (i32.const 1))))
                 (if (i32.eq (local.get $i) (i32.sub (local.get 1) (i32.const 1))) (then (i32.store8 (local.get $v) (i32.const {bad}))))"
            );
            let p = write_wat(&format!("drops-bad-{name}-{bad}"), &drops_module(flags, verdicts, "", &burst));
            let mut w = Wire::new(&policy(&p));
            let frames: Vec<Vec<u8>> = (0..5).map(|i| frame(64, i)).collect();
            assert!(w.send(&frames).is_empty(), "{name}, {bad}: the burst is dropped");
            let c = w.counts();
            assert_eq!((c.drops.plugin, c.drops.policy), (5, 0), "{name}, {bad}");
            assert_eq!(w.plugin().errors.load(Relaxed), 1, "{name}, {bad}: one failed call");
        }
        // Garbage in every verdict byte past the burst's: nothing happens to the burst.
        let pre = format!(
            "(memory.fill (i32.add (i32.const {verdicts}) (local.get 1)) (i32.const 0xEE) (i32.sub (i32.const 32) (local.get 1)))"
        );
        let p = write_wat(&format!("drops-past-{name}"), &drops_module(flags, verdicts, &pre, ""));
        let mut w = Wire::new(&policy(&p));
        let frames: Vec<Vec<u8>> = (0..5).map(|i| frame(64, i)).collect();
        assert_eq!(w.send(&frames), frames, "{name}");
        assert_eq!(w.plugin().errors.load(Relaxed), 0, "{name}");
    }
}

/// A 1.0 `drop_pkt` during the call and a verdict drop of another packet both happen, each once;
/// a verdict drop of the packet the import already dropped is not counted twice.
#[test]
fn verdict_drops_after_a_1_0_drop_count_each_packet_once() {
    for (name, flags, verdicts) in kinds() {
        let wat = drops_module(
            flags,
            verdicts,
            "(drop (call $drop (i32.const 1)))",
            "(if (i32.le_u (local.get $i) (i32.const 2)) (then (i32.store8 (local.get $v) (i32.const 1))))",
        )
        .replace(
            r#"(import "wasmdp" "burst_area""#,
            r#"(import "wasmdp" "drop_pkt" (func $drop (param i32) (result i32)))
          (import "wasmdp" "burst_area""#,
        );
        let p = write_wat(&format!("drops-after-1-0-{name}"), &wat);
        let mut w = Wire::new(&policy(&p));
        let frames: Vec<Vec<u8>> = (0..5).map(|i| frame(64, i)).collect();
        assert_eq!(w.send(&frames), frames[3..].to_vec(), "{name}");
        assert_eq!(w.counts().drops.policy, 3, "{name}: packets 0, 1 and 2, once each");
    }
}

/// `DROPS` goes with heads only: with windows, with descriptors alone or with direct descriptors,
/// `burst_area` refuses it (`BAD_RANGE`), and the module's init fails.
#[test]
fn drops_without_heads_are_refused() {
    for (name, flags) in [
        ("windows", 64 | area::DROPS),
        ("descriptors", area::DROPS),
        ("direct-descriptors", area::DIRECT | area::DROPS),
        ("flow-hash", 64 | area::FLOW_HASH | area::DROPS),
    ] {
        assert_eq!(area::parse_window(flags), None, "{name}");
        let wat = drops_module(flags, 2048, "", "")
            .replace(
                "(call $area (i32.const 1024) (i32.const 32) (i32.const",
                "(i32.ne (i32.const -2) (call $area (i32.const 1024) (i32.const 32) (i32.const",
            )
            .replace(&format!("(i32.const {flags})))"), &format!("(i32.const {flags}))))"));
        let p = write_wat(&format!("drops-refused-{name}"), &wat);
        // init returns 0 only when burst_area said BAD_RANGE (-2).
        let mut w = Wire::new(&policy(&p));
        let frames: Vec<Vec<u8>> = (0..3).map(|i| frame(64, i)).collect();
        assert_eq!(w.send(&frames), frames, "{name}: the module runs, without an area");
    }
}

/// The SDK's verdicts on direct heads with drops, in WebAssembly (the `drops-probe` test plugin):
/// walked a packet a loop turn, four a turn (`for_each`) and by `nth`, each packet walked is dropped
/// when its first byte is odd, else its second byte is written in place; the wire shows exactly
/// that, and nothing of the packets not walked changed.
#[test]
fn the_sdks_verdicts_on_direct_heads_reach_the_wire() {
    let plugin = common::plugin_path("drops_probe");
    for walk in ["for", "fold", "nth"] {
        let mut w = Wire::new(&format!(
            "policy: {{plugin: {}, params: {{walk: {walk}}}, on_failure: fail_closed}}",
            plugin.display()
        ));
        // Nine packets (two runs of four and one more, for `for_each`), first bytes 0..9.
        let frames: Vec<Vec<u8>> = (0..9u8).map(|i| frame(60 + usize::from(i) * 20, i)).collect();
        let want: Vec<Vec<u8>> = frames
            .iter()
            .filter(|f| f[0] % 2 == 0)
            .map(|f| {
                let mut o = f.clone();
                if walk != "nth" {
                    o[1] = 0xAB;
                }
                o
            })
            .collect();
        assert_eq!(w.send(&frames), want, "{walk}");
        assert_eq!(w.counts().drops.policy, 4, "{walk}");
        assert_eq!(w.plugin().errors.load(Relaxed), 0, "{walk}");
    }
}
