//! The mock's burst area (ABI 1.1): filled at [`begin_burst`](super::begin_burst) and carried out
//! at [`end_burst`](super::end_burst) in the host's order: length changes, window bytes, verdicts
//! and engines, offloads.

use std::vec;
use std::vec::Vec;

use super::decide::run_on;
use super::packets::adjust;
use super::{put, with, MockHost};
use crate::AreaSpec;
use wasmdp_abi::area::{self, desc, hdr, verdict, DESC, HEADER};
use wasmdp_abi::decision::{drop_verdict, Decision, HeaderOut};
use wasmdp_abi::{engine, err};

/// A registered burst area.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MockArea {
    ptr: usize,
    len: usize,
    max_pkts: usize,
    window: usize,
    /// Whether descriptors get the host's flow hash (`area::FLOW_HASH`).
    flow_hash: bool,
    /// Windows without descriptors (`area::HEADS`).
    heads: bool,
    /// Where the verdict bytes of heads with drops (`area::DROPS`) start, if there are any.
    verdicts: Option<usize>,
    /// The code the host would have failed the last call with (a bad verdict, port or engine in the
    /// area), if any.
    pub refused: Option<i32>,
}

/// Registers a thread-local burst area of `spec` for policies tested without the exports (the
/// export's `wasmdp_init` does this itself).
pub fn set_area(spec: AreaSpec) {
    let buf = vec![0u8; spec.bytes()].leak();
    // SAFETY: a leaked buffer nothing else references.
    let r = unsafe { crate::area::register(buf.as_mut_ptr(), buf.len(), spec) };
    assert!(r.is_ok(), "mock::set_area: {r:?}");
}

pub(crate) fn burst_area(area: *mut [u8], max_pkts: i32, window: i32) -> i32 {
    let (ptr, len) = (area as *mut u8 as usize, area.len());
    let Ok(max_pkts) = usize::try_from(max_pkts) else { return err::BAD_RANGE };
    let Some(shape) = area::parse_window(window as u32).filter(|_| max_pkts <= wasmdp_abi::MAX_BURST as usize) else {
        return err::BAD_RANGE;
    };
    let (window, flow_hash, heads) = (shape.window, shape.flow_hash, shape.heads);
    let verdicts = shape.drops.then(|| shape.verdicts_at(max_pkts));
    with(|h| h.area = Some(MockArea { ptr, len, max_pkts, window, flow_hash, heads, verdicts, refused: None }));
    0
}

/// The area's bytes, while no `Burst` holds them.
fn region(a: &MockArea) -> &'static mut [u8] {
    assert!(!crate::area::in_use(), "mock::begin_burst/end_burst while a Burst holds the area: drop it first");
    // SAFETY: registered through `burst_area`, whose contract makes the region the area's alone; the
    // SDK references it only through a `Burst`, and none exists now (checked above). The reference
    // lives only for this fill or apply.
    unsafe { core::slice::from_raw_parts_mut(a.ptr as *mut u8, a.len) }
}

pub(super) fn fill_area(h: &mut MockHost) {
    let Some(a) = h.area else { return };
    let r = region(&a);
    let (head, rest) = r.split_at_mut(HEADER);
    head.fill(0);
    put(head, hdr::LEN, &(h.packets.len() as u32).to_le_bytes());
    put(head, hdr::PORT, &h.context.port.to_le_bytes());
    put(head, hdr::QUEUE, &h.context.queue.to_le_bytes());
    put(head, hdr::TX_PORT, &h.context.tx_port.to_le_bytes());
    put(head, hdr::WINDOW, &(a.window as u16).to_le_bytes());
    put(head, hdr::ENGINE, &(-1i32).to_le_bytes());
    put(head, hdr::NOW_NS, &(h.now_ns as u64).to_le_bytes());
    if let Some(at) = a.verdicts {
        let n = h.packets.len().min(a.max_pkts);
        rest[at - HEADER..][..n].fill(verdict::PASS);
    }
    if a.heads {
        let (lens, wins) = rest.split_at_mut(a.max_pkts * area::LEN_BYTES);
        for (p, (l, w)) in h.packets.iter().zip(lens.chunks_exact_mut(4).zip(wins.chunks_exact_mut(a.window))) {
            l.copy_from_slice(&(p.data.len() as u32).to_le_bytes());
            let k = p.data.len().min(a.window);
            w[..k].copy_from_slice(&p.data[..k]);
            w[k..].fill(0);
        }
        return;
    }
    let (descs, wins) = rest.split_at_mut(a.max_pkts * DESC);
    for (i, p) in h.packets.iter().enumerate().take(a.max_pkts) {
        let d = &mut descs[i * DESC..][..DESC];
        d.fill(0);
        let win = p.data.len().min(a.window);
        put(d, desc::LEN, &(p.data.len() as u32).to_le_bytes());
        put(d, desc::WIN, &(win as u16).to_le_bytes());
        put(d, desc::PORT, &h.context.port.to_le_bytes());
        if a.flow_hash {
            put(d, desc::HASH, &wasmdp_abi::hash::flow_hash(&p.data).to_le_bytes());
        }
        put(d, desc::HEADROOM, &(p.headroom.min(0xFFFF) as u16).to_le_bytes());
        put(d, desc::TAILROOM, &(p.tailroom.min(0xFFFF) as u16).to_le_bytes());
        wins[i * a.window..][..win].copy_from_slice(&p.data[..win]);
    }
}

pub(super) fn apply_area(h: &mut MockHost) {
    let Some(mut a) = h.area else { return };
    if !h.in_burst {
        return;
    }
    let r = region(&a);
    let header = HeaderOut::decode(r);
    let (engine_id, offloads, changed) = (header.engine, header.offloads, header.changed);
    let n = h.packets.len().min(a.max_pkts);
    let mut decided = Vec::new();
    if changed && !a.heads {
        for i in 0..n {
            let d = &r[HEADER + i * DESC..][..DESC];
            decided.push(Decision::decode(d));
        }
    }
    // Heads with drops: one verdict byte a packet, checked by the ABI's rule.
    let drops: Result<Vec<bool>, i32> =
        a.verdicts.map_or(Ok(Vec::new()), |at| r[at..][..n].iter().map(|&v| drop_verdict(v)).collect());
    a.refused = check(&header, &decided, h.ports, a.window).or(drops.as_ref().err().copied());
    let drops = drops.unwrap_or_default();
    h.area = Some(a);
    if a.refused.is_some() {
        return;
    }
    if changed && a.heads {
        let wins = &r[HEADER + a.max_pkts * area::LEN_BYTES..];
        for (p, w) in h.packets.iter_mut().zip(wins.chunks_exact(a.window)) {
            if !p.dropped && p.sent_to.is_none() {
                let k = p.data.len().min(a.window);
                p.data[..k].copy_from_slice(&w[..k]);
            }
        }
    }
    let wins = HEADER + a.max_pkts * DESC;
    for (i, (p, d)) in h.packets.iter_mut().zip(&decided).enumerate() {
        if p.dropped || p.sent_to.is_some() {
            continue;
        }
        if (d.head != 0 || d.tail != 0) && !adjust(p, d.head.into(), d.tail.into()) {
            p.dropped = true;
            p.no_room = true;
            continue;
        }
        let k = usize::from(d.dirty).min(p.data.len());
        p.data[..k].copy_from_slice(&r[wins + i * a.window..][..k]);
    }
    for (i, p) in h.packets.iter_mut().enumerate() {
        if p.dropped || p.sent_to.is_some() {
            continue;
        }
        if drops.get(i) == Some(&true) {
            p.dropped = true;
            continue;
        }
        match decided.get(i).map_or((verdict::PASS, 0), |d| (d.verdict, d.arg)) {
            (verdict::DROP, _) => p.dropped = true,
            (verdict::SEND, port) => p.sent_to = Some(port.into()),
            (verdict::ENGINE, e) => run_on(p, e.into()),
            _ if engine_id >= 0 => run_on(p, engine_id as u32),
            _ => {}
        }
        if offloads != 0 && !p.dropped {
            p.flags |= offloads;
            p.vlan_tci = header.vlan_tci;
            p.vlan_tci_outer = header.vlan_outer;
        }
    }
}

/// What the host refuses in an area (the call then fails with the code): the ABI's rules
/// (`wasmdp_abi::decision`, which the host checks by too), with this fake host's ports and the
/// ABI's engine ids.
fn check(header: &HeaderOut, decided: &[Decision], ports: u32, window: usize) -> Option<i32> {
    let engine_ok = |e: u32| e < engine::COUNT;
    header.check(engine_ok).err().or_else(|| {
        decided.iter().find_map(|d| d.check(window, |p| u32::from(p) < ports, |e| engine_ok(e.into())).err())
    })
}
