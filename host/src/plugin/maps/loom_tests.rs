//! Model checks of the tables' protocol (`slot`): every interleaving loom can reach, under the C11
//! memory model loom simulates, of small tables that one thread reads while another writes.
//! Run with `cargo test -p wasmdp --features loom --lib loom_tests` (the tables then use loom's
//! atomics and lock, so the other tests do not run under the feature). Each side runs in a thread
//! of its own: loom explored a single interleaving when the model's main thread was one side.

use super::{MapKind, MapSpec, Table, WordBatch};
use loom::sync::Arc;
use loom::thread;

fn table(key_size: u32, value_size: u32, capacity: u32) -> Arc<Table> {
    Arc::new(Table::new(&MapSpec { name: "t".into(), kind: MapKind::Hash, key_size, value_size, capacity, ttl_ms: 0 }))
}

/// Two 4-byte keys whose probes start at the same slot (the loom build's hash key is fixed, so
/// this is the same pair in every execution).
fn colliding(t: &Table) -> ([u8; 4], [u8; 4]) {
    let home = |k: u32| t.home(&[u64::from(k)]);
    let b = (1..1000u32).find(|&k| home(k) == home(0)).expect("two keys share a home slot");
    (0u32.to_le_bytes(), b.to_le_bytes())
}

/// Runs `a` and `b` on the table in two threads.
fn both<A, B>(t: &Arc<Table>, a: impl FnOnce(&Table) -> A + 'static, b: impl FnOnce(&Table) -> B + 'static) -> (A, B)
where
    A: Send + 'static,
    B: Send + 'static,
{
    let (ta, tb) = (t.clone(), t.clone());
    let ha = thread::spawn(move || a(&ta));
    let hb = thread::spawn(move || b(&tb));
    (ha.join().unwrap(), hb.join().unwrap())
}

#[test]
fn a_reader_never_sees_a_value_half_rewritten() {
    loom::model(|| {
        let t = table(4, 16, 2);
        t.update(b"pair", &[1; 16]).unwrap();
        let ((), out) = both(
            &t,
            |t| t.update(b"pair", &[2; 16]).unwrap(),
            |t| {
                let mut out = [0u8; 16];
                assert!(t.lookup(b"pair", &mut out), "present throughout");
                out
            },
        );
        assert!(out == [1; 16] || out == [2; 16], "torn: {out:?}");
    });
}

#[test]
fn a_key_moved_back_by_a_deletion_is_never_reported_absent() {
    // A and B share a home slot, so B sits after A; deleting A moves B back into A's slot while a
    // reader probes for B. One-word values take the batch path's probe, 16-byte ones the general.
    for vs in [4usize, 16] {
        loom::model(move || {
            let t = table(4, vs as u32, 2);
            let (a, b) = colliding(&t);
            t.update(&a, &vec![1; vs]).unwrap();
            t.update(&b, &vec![2; vs]).unwrap();
            let (deleted, out) = both(
                &t,
                move |t| t.delete(&a),
                move |t| {
                    let mut out = vec![0u8; vs];
                    assert!(t.lookup(&b, &mut out), "B present throughout ({vs}-byte values)");
                    out
                },
            );
            assert!(deleted);
            assert_eq!(out, vec![2; vs]);
        });
    }
}

/// A batch of one-word keys (the test's side of [`WordBatch`]).
struct Keys {
    keys: Vec<u64>,
    found: Vec<Option<u64>>,
}

impl WordBatch for Keys {
    fn len(&self) -> usize {
        self.keys.len()
    }

    unsafe fn key<const KW: usize>(&self, i: usize) -> [u64; KW] {
        std::array::from_fn(|j| if j == 0 { self.keys[i] } else { 0 })
    }

    unsafe fn value(&self, _: usize) -> u64 {
        0
    }

    unsafe fn put(&mut self, i: usize, value: Option<u64>) {
        self.found[i] = value;
    }
}

#[test]
fn a_batch_never_reports_absent_a_key_a_deletion_moved_back() {
    // As above through a batch, whose run of probes reads the deletion count once: the deletion
    // may begin before, between or after the two probes of B.
    loom::model(|| {
        let t = table(4, 4, 2);
        let (a, b) = colliding(&t);
        t.update(&a, &[1; 4]).unwrap();
        t.update(&b, &[2; 4]).unwrap();
        let key = u64::from(u32::from_le_bytes(b));
        let (deleted, found) = both(
            &t,
            move |t| t.delete(&a),
            move |t| {
                let mut io = Keys { keys: vec![key, key], found: vec![None; 2] };
                assert_eq!(t.lookup_words(&mut io), 2, "B present throughout");
                io.found
            },
        );
        assert!(deleted);
        assert_eq!(found, [Some(0x0202_0202); 2]);
    });
}

/// One thread writes to A (`write`) while the other deletes A and inserts B (with `b_value`),
/// which takes A's slot (their home); A held zeros before. The table after, B, and what the write
/// answered.
fn write_while_its_slot_is_taken<R: Send + 'static>(
    write: impl FnOnce(&Table, [u8; 4]) -> R + Send + 'static,
    b_value: [u8; 8],
) -> (Arc<Table>, [u8; 4], R) {
    let t = table(4, 8, 2);
    let (a, b) = colliding(&t);
    t.update(&a, &[0; 8]).unwrap();
    let (written, ()) = both(
        &t,
        move |t| write(t, a),
        move |t| {
            assert!(t.delete(&a));
            t.update(&b, &b_value).unwrap();
        },
    );
    (t, b, written)
}

#[test]
fn an_add_never_lands_on_the_key_that_took_its_slot() {
    loom::model(|| {
        let (t, b, added) = write_while_its_slot_is_taken(|t, a| t.add(&a, 0, 1).unwrap(), [0; 8]);
        assert_eq!(added, 1, "the add counted once, on A");
        let mut out = [0u8; 8];
        assert!(t.lookup(&b, &mut out) && out == [0; 8], "B untouched: {out:?}");
    });
}

#[test]
fn an_update_never_lands_on_the_key_that_took_its_slot() {
    // As for an add, through a single update (one-word values: its home slots rewritten in line):
    // A gets its new value or is inserted again after its deletion; B keeps its own.
    loom::model(|| {
        let (t, b, ()) = write_while_its_slot_is_taken(|t, a| t.update(&a, &[7; 8]).unwrap(), [1; 8]);
        let mut out = [0u8; 8];
        assert!(t.lookup(&b, &mut out) && out == [1; 8], "B untouched: {out:?}");
        let a = colliding(&t).0;
        if t.lookup(&a, &mut out) {
            assert_eq!(out, [7; 8], "A present only with its update's value");
        }
    });
}

#[test]
fn two_adds_on_one_key_are_both_counted() {
    loom::model(|| {
        let t = table(4, 8, 2);
        t.update(b"hits", &[0; 8]).unwrap();
        both(&t, |t| t.add(b"hits", 0, 1).unwrap(), |t| t.add(b"hits", 0, 1).unwrap());
        let mut out = [0u8; 8];
        assert!(t.lookup(b"hits", &mut out));
        assert_eq!(u64::from_le_bytes(out), 2);
    });
}
