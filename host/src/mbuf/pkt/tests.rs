//! Length changes against a model: a `Vec` of the bytes the packet must hold, plus the room the
//! buffer must have left. Neighbouring buffers are filled with a pattern that must survive.

use super::*;
use crate::mbuf::{Pool, PoolCache, PoolConfig};
use proptest::prelude::*;

const HEADROOM: u16 = 64;
const DATA_ROOM: u16 = 256;

fn cache() -> PoolCache {
    let cfg = PoolConfig { size: 64, cache_size: 8, headroom: HEADROOM, data_room: DATA_ROOM };
    Pool::new(cfg).unwrap().cache()
}

/// A packet with `len` bytes 0, 1, 2, ... and two neighbours, whole buffers filled with 0xEE.
fn packet(c: &mut PoolCache, len: usize) -> (Pkt, [Pkt; 2]) {
    let fill = |p: &mut Pkt| {
        let room = p.headroom();
        p.prepend(room).unwrap();
        let all = p.len() + p.tailroom();
        p.set_data_len(all).unwrap();
        p.data_mut().fill(0xEE);
    };
    let mut before = c.alloc().unwrap();
    let mut p = c.alloc().unwrap();
    let mut after = c.alloc().unwrap();
    fill(&mut before);
    fill(&mut after);
    let bytes: Vec<u8> = (0..len).map(|i| i as u8).collect();
    p.copy_from(&bytes).unwrap();
    (p, [before, after])
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Prepend(usize),
    Adj(usize),
    Append(usize),
    Trim(usize),
    Crop(usize, usize),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let n = 0usize..400;
    let op = prop_oneof![
        n.clone().prop_map(Op::Prepend),
        n.clone().prop_map(Op::Adj),
        n.clone().prop_map(Op::Append),
        n.clone().prop_map(Op::Trim),
        (n.clone(), n).prop_map(|(a, b)| Op::Crop(a, b)),
    ];
    prop::collection::vec(op, 0..24)
}

/// What the model expects of one operation: the new contents, or the error.
fn model(op: Op, data: &[u8], headroom: usize, tailroom: usize, stamp: u8) -> Result<Vec<u8>, RoomError> {
    let len = data.len();
    match op {
        Op::Prepend(n) if n > headroom => Err(RoomError::NoHeadroom { need: n, have: headroom }),
        Op::Prepend(n) => Ok([vec![stamp; n], data.to_vec()].concat()),
        Op::Append(n) if n > tailroom => Err(RoomError::NoTailroom { need: n, have: tailroom }),
        Op::Append(n) => Ok([data.to_vec(), vec![stamp; n]].concat()),
        Op::Adj(n) | Op::Trim(n) if len < n || len - n < MIN_FRAME => Err(RoomError::TooShort { remove: n, len }),
        Op::Adj(n) => Ok(data[n..].to_vec()),
        Op::Trim(n) => Ok(data[..len - n].to_vec()),
        Op::Crop(at, n) if at + n > len || n < MIN_FRAME => {
            Err(RoomError::TooShort { remove: len.saturating_sub(n), len })
        }
        Op::Crop(at, n) => Ok(data[at..at + n].to_vec()),
    }
}

fn apply(p: &mut Pkt, op: Op, stamp: u8) -> Result<(), RoomError> {
    match op {
        Op::Prepend(n) => p.prepend(n).map(|d| d[..n].fill(stamp)),
        Op::Append(n) => p.append(n).map(|t| {
            assert_eq!(t.len(), n, "append returns exactly the new tail");
            t.fill(stamp)
        }),
        Op::Adj(n) => p.adj(n),
        Op::Trim(n) => p.trim(n),
        Op::Crop(at, n) => p.crop(at, n),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Any sequence of length changes keeps the bytes the model says, the room in balance, the
    /// metadata lengths equal, and the neighbouring buffers untouched; refusals change nothing.
    #[test]
    fn length_changes_follow_the_model(start in 14usize..=256, ops in ops()) {
        let mut c = cache();
        let (mut p, neighbours) = packet(&mut c, start);
        let mut want: Vec<u8> = p.data().to_vec();
        let total = usize::from(HEADROOM) + usize::from(DATA_ROOM);
        for (k, op) in ops.into_iter().enumerate() {
            let stamp = 0x80 | k as u8;
            let expect = model(op, &want, p.headroom(), p.tailroom(), stamp);
            let got = apply(&mut p, op, stamp);
            match expect {
                Ok(bytes) => { prop_assert_eq!(got, Ok(())); want = bytes; }
                Err(e) => prop_assert_eq!(got, Err(e)),
            }
            prop_assert_eq!(p.data(), &want[..]);
            prop_assert_eq!(p.headroom() + p.len() + p.tailroom(), total);
            prop_assert_eq!(p.meta().pkt_len as usize, p.len());
        }
        for n in &neighbours {
            prop_assert!(n.data().iter().all(|&b| b == 0xEE), "a neighbouring buffer changed");
        }
        c.free(p);
        for n in neighbours { c.free(n); }
    }
}

#[test]
fn refusals_say_what_to_raise() {
    let mut c = cache();
    let mut p = c.alloc().unwrap();
    p.copy_from(&[0; 60]).unwrap();
    let e = p.prepend(65).unwrap_err();
    assert_eq!(e, RoomError::NoHeadroom { need: 65, have: 64 });
    assert!(e.to_string().contains("pool.headroom"), "{e}");
    let e = p.append(197).unwrap_err();
    assert!(e.to_string().contains("196 left") && e.to_string().contains("pool.data_room"), "{e}");
    let e = p.trim(47).unwrap_err();
    assert_eq!(e.to_string(), "removing 47 of 60 bytes would leave less than a 14-byte Ethernet header");
    assert_eq!(p.len(), 60);
    c.free(p);
}

/// `reframe` against the two steps it stands for, front then tail, on every small change: the same
/// result (bytes, room) when both steps succeed, and the packet untouched when either fails.
#[test]
fn reframe_is_the_front_then_the_tail_change() {
    let mut c = cache();
    let changes = (-80isize..=80).step_by(3).chain([-1, 0, 1, HEADROOM as isize, -(MIN_FRAME as isize)]);
    let changes: Vec<isize> = changes.collect();
    for len in [MIN_FRAME, 20, 60, 200] {
        for &head in &changes {
            for &tail in &changes {
                let bytes: Vec<u8> = (0..len).map(|i| i as u8).collect();
                let (mut p, mut q) = (c.alloc().unwrap(), c.alloc().unwrap());
                p.copy_from(&bytes).unwrap();
                q.copy_from(&bytes).unwrap();
                let steps = (|| {
                    match head {
                        1.. => q.prepend(head as usize).map(|_| ())?,
                        ..0 => q.adj(head.unsigned_abs())?,
                        0 => {}
                    }
                    match tail {
                        1.. => q.append(tail as usize).map(|_| ()),
                        ..0 => q.trim(tail.unsigned_abs()),
                        0 => Ok(()),
                    }
                })();
                let one = p.reframe(head, tail);
                let what = format!("len {len}, head {head}, tail {tail}");
                assert_eq!(one.is_ok(), steps.is_ok(), "{what}: {one:?} vs {steps:?}");
                if one.is_err() {
                    assert_eq!((p.len(), p.headroom()), (len, HEADROOM as usize), "{what}: changed on error");
                } else {
                    let (pl, ql) = ((p.len(), p.headroom(), p.tailroom()), (q.len(), q.headroom(), q.tailroom()));
                    assert_eq!(pl, ql, "{what}");
                    // The bytes the packet had that it keeps (not the ones prepended or appended).
                    let kept = head.max(0) as usize..p.len() - tail.max(0) as usize;
                    if !kept.is_empty() {
                        assert_eq!(p.data()[kept.clone()], q.data()[kept], "{what}");
                    }
                }
                c.free(p);
                c.free(q);
            }
        }
    }
}

/// A head of `W` bytes is the packet's first `W` bytes, read and written; a packet shorter than
/// `W` gives none and takes none (its bytes past the end stay as they were).
#[test]
fn heads_are_the_first_bytes_and_only_of_a_packet_that_long() {
    let mut c = cache();
    let mut p = c.alloc().unwrap();
    let frame: Vec<u8> = (0..20).collect();
    p.copy_from(&frame).unwrap();
    let first: [u8; 16] = frame[..16].try_into().unwrap();
    assert_eq!(p.head::<16>(), Some(first));
    assert_eq!(p.head::<20>().map(|h| h.to_vec()), Some(frame.clone()));
    assert_eq!(p.head::<21>(), None);
    assert!(p.set_head(&[0xaa; 16]));
    assert_eq!(p.data()[..16], [0xaa; 16]);
    assert_eq!(p.data()[16..], frame[16..]);
    p.set_data_len(12).unwrap();
    assert!(!p.set_head(&[0xbb; 16]), "a 12-byte packet takes no 16-byte head");
    p.set_data_len(20).unwrap();
    assert_eq!(p.data()[12..16], [0xaa; 4], "nothing was written past its end");
}
