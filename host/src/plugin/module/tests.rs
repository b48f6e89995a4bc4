//! The instrumentation keeps what a module computes and makes every call interruptible.

use super::{prepare, StaticLimits};

const LIMITS: StaticLimits = StaticLimits { memory_bytes: 16 << 20, table_elements: 10_000 };

fn wat(text: &str) -> Vec<u8> {
    wat::parse_str(text).unwrap()
}

/// Runs export `f` of the instrumented module with wasmtime (no deadline) and returns its result,
/// or the trap's text.
fn run(module: &[u8], f: &str, args: &[i32]) -> Result<Vec<i32>, String> {
    use wasmtime::{Engine, Instance, Module, Store, Val};
    let prepared = prepare(module, &LIMITS)?;
    let engine = Engine::default();
    let m = Module::new(&engine, &prepared).map_err(|e| e.to_string())?;
    let mut store = Store::new(&engine, ());
    let inst = Instance::new(&mut store, &m, &[]).map_err(|e| e.to_string())?;
    let func = inst.get_func(&mut store, f).unwrap();
    let params: Vec<Val> = args.iter().map(|&a| Val::I32(a)).collect();
    let mut out = vec![Val::I32(0); func.ty(&store).results().len()];
    func.call(&mut store, &params, &mut out).map_err(|e| format!("{:?}", e.downcast_ref::<wasmtime::Trap>()))?;
    Ok(out.iter().map(|v| v.unwrap_i32()).collect())
}

/// A module with 4 pages of memory, a data segment, and functions that do one bulk operation and
/// return a checksum of memory (sum of bytes weighted by position, over the first 4 pages).
const BULK: &str = r#"(module
  (memory (export "memory") 4)
  (data $d "0123456789abcdefghijklmnopqrstuvwxyz")
  (func $sum (result i32) (local $i i32) (local $s i32)
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $i) (i32.const 262144)))
      (local.set $s (i32.add (local.get $s)
        (i32.mul (i32.load8_u (local.get $i)) (i32.add (local.get $i) (i32.const 1)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    (local.get $s))
  (func $seed (local $i i32)
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $i) (i32.const 262144)))
      (i32.store8 (local.get $i) (i32.mul (local.get $i) (i32.const 7)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l))))
  (func (export "fill") (param $d i32) (param $v i32) (param $n i32) (result i32)
    (call $seed) (memory.fill (local.get $d) (local.get $v) (local.get $n)) (call $sum))
  (func (export "copy") (param $d i32) (param $s i32) (param $n i32) (result i32)
    (call $seed) (memory.copy (local.get $d) (local.get $s) (local.get $n)) (call $sum))
  (func (export "init") (param $d i32) (param $s i32) (param $n i32) (result i32)
    (call $seed) (memory.init $d (local.get $d) (local.get $s) (local.get $n)) (call $sum))
  (func (export "grow") (param $n i32) (result i32) (memory.grow (local.get $n))))"#;

/// The same operation on the original module, without instrumentation.
fn reference(f: &str, args: &[i32]) -> Result<Vec<i32>, String> {
    use wasmtime::{Engine, Instance, Module, Store, Val};
    let engine = Engine::default();
    let m = Module::new(&engine, wat(BULK)).unwrap();
    let mut store = Store::new(&engine, ());
    let inst = Instance::new(&mut store, &m, &[]).unwrap();
    let func = inst.get_func(&mut store, f).unwrap();
    let params: Vec<Val> = args.iter().map(|&a| Val::I32(a)).collect();
    let mut out = vec![Val::I32(0)];
    func.call(&mut store, &params, &mut out).map_err(|e| format!("{:?}", e.downcast_ref::<wasmtime::Trap>()))?;
    Ok(vec![out[0].unwrap_i32()])
}

#[test]
fn chunked_bulk_operations_compute_what_the_originals_do() {
    let m = wat(BULK);
    let page = 65536;
    let cases: &[(&str, [i32; 3])] = &[
        ("fill", [0, 7, 0]),
        ("fill", [5, 9, 3 * page + 17]),
        ("fill", [4 * page - 10, 1, 10]),
        ("fill", [4 * page - 10, 1, 11]), // one past the end: traps
        ("fill", [-1, 1, 2]),             // the end overflows 32 bits: traps
        ("copy", [0, 100, 2 * page + 3]), // overlapping, destination below
        ("copy", [100, 0, 2 * page + 3]), // overlapping, destination above
        ("copy", [3 * page, 0, page]),
        ("copy", [0, 3 * page + 1, page]), // source past the end: traps, writes nothing
        ("init", [page - 5, 3, 20]),
        ("init", [0, 30, 7]), // past the segment's end: traps
    ];
    for (f, args) in cases {
        assert_eq!(run(&m, f, args), reference(f, args), "{f}{args:?}");
    }
    assert_eq!(run(&m, "grow", &[1]), Ok(vec![4]));
}

#[test]
fn a_call_of_bulk_fills_is_interrupted_between_chunks() {
    // 2000 straight-line fills of 16 MiB: about 2 s of work with no loop or call in between.
    let fills = "(memory.fill (i32.const 0) (i32.const 7) (i32.const 16777216))".repeat(2000);
    let m = wat(&format!(
        r#"(module (memory (export "memory") 256) (func (export "f") (result i32) {fills} (i32.const 0)))"#
    ));
    assert_interrupted(&prepare(&m, &LIMITS).unwrap());
}

/// How many times the epoch is checked during one call of export `f`. The module advances the
/// epoch itself by calling its import `t.tick` (an import call is not a check), so every check
/// after a tick sees a passed deadline and calls the callback, which counts.
fn checks_in_one_call(prepared: &[u8]) -> u64 {
    use wasmtime::{Config, Engine, Linker, Module, Store, UpdateDeadline};
    let mut cfg = Config::new();
    cfg.epoch_interruption(true);
    let engine = Engine::new(&cfg).unwrap();
    let m = Module::new(&engine, prepared).unwrap();
    let mut store = Store::new(&engine, 0u64);
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(|mut cx| {
        *cx.data_mut() += 1;
        Ok(UpdateDeadline::Continue(1))
    });
    let mut linker = Linker::new(&engine);
    let e2 = engine.clone();
    linker.func_wrap("t", "tick", move || e2.increment_epoch()).unwrap();
    let inst = linker.instantiate(&mut store, &m).unwrap();
    let f = inst.get_typed_func::<(), i32>(&mut store, "f").unwrap();
    f.call(&mut store, ()).unwrap();
    *store.data()
}

/// Ten operators, one of which advances the epoch.
const TEN: &str =
    "(call $tick) (local.set 0 (i64.add (i64.mul (local.get 0) (i64.const 3)) (i64.const 1))) (nop) (nop) (nop)";

fn module_with(body: &str) -> Vec<u8> {
    wat(&format!(
        r#"(module (import "t" "tick" (func $tick)) (func (export "f") (result i32) (local i64) {body} (i32.const 0)))"#
    ))
}

#[test]
fn long_straight_line_code_gets_epoch_checks() {
    // 100 000 operators, no loop, no call of a function of the module: wasmtime alone checks the
    // epoch once, at the entry.
    let m = module_with(&TEN.repeat(10_000));
    assert!(checks_in_one_call(&m) <= 1);
    let checks = checks_in_one_call(&prepare(&m, &LIMITS).unwrap());
    assert!((95..=105).contains(&checks), "one check per 1000 operators: {checks}");
}

#[test]
fn forward_branches_cannot_skip_the_checks() {
    // Each block runs 900 operators, then jumps over the rest of the block (where a check placed
    // every 1000 operators of the text would sit) to the next block.
    let half = TEN.repeat(90);
    let block = format!("(block {half} (br_if 0 (i32.const 1)) {half})");
    let m = module_with(&block.repeat(80));
    assert!(checks_in_one_call(&m) <= 1);
    let checks = checks_in_one_call(&prepare(&m, &LIMITS).unwrap());
    assert!(checks >= 36, "a check at least every two blocks: {checks}");
}

#[test]
fn an_unwinding_recursion_is_checked_after_every_return() {
    // 50 frames deep; after each return, 500 operators with a tick among every ten. A return is not
    // a check, and each frame's stretch is under 1000 operators: without a check after the call,
    // the whole unwinding (25 000 operators) ran unchecked.
    let stretch = TEN.repeat(50);
    let m = wat(&format!(
        r#"(module (import "t" "tick" (func $tick))
          (func $r (param $d i64)
            (if (i32.wrap_i64 (local.get $d)) (then (call $r (i64.sub (local.get $d) (i64.const 1)))))
            {stretch})
          (func (export "f") (result i32) (call $r (i64.const 50)) (i32.const 0)))"#
    ));
    // Checks count once the epoch moved: the descent ticks nothing, so wasmtime alone (entries
    // only) counts at most one; with the instrumentation, the unwinding counts one per frame.
    assert!(checks_in_one_call(&m) <= 1, "wasmtime alone");
    let checks = checks_in_one_call(&prepare(&m, &LIMITS).unwrap());
    assert!(checks >= 50, "a check after each return: {checks}");
}

#[test]
fn a_cold_call_in_a_loop_puts_its_check_on_its_own_path() {
    // 100 iterations that never take the branch with the call. The code after the block the call
    // is in runs on every iteration; the check that the call's return needs belongs on the call's
    // path, not after the merge, where each iteration passed one more check (200 counted: the
    // ticks are placed so that every check counts).
    let m = wat(r#"(module (import "t" "tick" (func $tick))
      (func $cold (result i32) (i32.const 7))
      (func (export "f") (result i32) (local i32)
        (loop $l
          (block $b
            (br_if $b (i32.lt_u (local.get 0) (i32.const 1000)))
            (drop (call $cold)))
          (call $tick)
          (local.set 0 (i32.add (local.get 0) (i32.const 1)))
          (call $tick)
          (br_if $l (i32.lt_u (local.get 0) (i32.const 100))))
        (local.get 0)))"#);
    let checks = checks_in_one_call(&prepare(&m, &LIMITS).unwrap());
    assert!((99..=101).contains(&checks), "one check per iteration, at the loop header: {checks}");
}

/// Runs export `f` with an epoch deadline of one tick and an engine ticked every 1 ms: it must trap
/// with the interrupt within a few ticks.
fn assert_interrupted(prepared: &[u8]) {
    use std::time::{Duration, Instant};
    use wasmtime::{Config, Engine, Instance, Module, Store};
    let mut cfg = Config::new();
    cfg.epoch_interruption(true);
    let engine = Engine::new(&cfg).unwrap();
    let m = Module::new(&engine, prepared).unwrap();
    let mut store = Store::new(&engine, ());
    store.set_epoch_deadline(1);
    let inst = Instance::new(&mut store, &m, &[]).unwrap();
    let f = inst.get_typed_func::<(), i32>(&mut store, "f").unwrap();
    let e2 = engine.clone();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s2 = stop.clone();
    let ticker = std::thread::spawn(move || {
        while !s2.load(std::sync::atomic::Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(1));
            e2.increment_epoch();
        }
    });
    let t = Instant::now();
    let r = f.call(&mut store, ());
    let took = t.elapsed();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    ticker.join().unwrap();
    let trap = r.unwrap_err();
    assert_eq!(trap.downcast_ref::<wasmtime::Trap>(), Some(&wasmtime::Trap::Interrupt));
    assert!(took < Duration::from_millis(200), "interrupted after {took:?}");
}

#[test]
fn static_limits_name_what_is_over() {
    let many = "(func)".repeat(10_001);
    let cases = [
        (format!("(module {many})"), "10001 functions; the limit is 10000"),
        ("(module (memory 1) (memory 1))".to_string(), "2 memories; the limit is 1"),
        ("(module (table 1 funcref) (table 1 funcref))".to_string(), "2 tables; the limit is 1"),
        ("(module (memory 257))".to_string(), "memory of 16448 KiB; limits.memory_kib is 16384"),
        ("(module (table 10001 funcref))".to_string(), "table of 10001 elements; limits.table_elements is 10000"),
        ("(module (import \"wasmdp\" \"m\" (memory 1)))".to_string(), "imports `wasmdp::m` as a memory"),
        ("(module (memory 1 1 shared))".to_string(), "not a valid WebAssembly module for this host"),
        ("(module (func (return_call 0)))".to_string(), "not a valid WebAssembly module for this host"),
    ];
    for (text, want) in cases {
        let e = prepare(&wat(&text), &LIMITS).unwrap_err();
        assert!(e.contains(want), "`{want}` missing from: {e}");
    }
    let body = "(drop (i32.const 1))".repeat(100_000);
    let e = prepare(&wat(&format!("(module (func {body}))")), &LIMITS).unwrap_err();
    assert!(e.contains("function body of") && e.contains("the limit is 262144"), "{e}");
}
