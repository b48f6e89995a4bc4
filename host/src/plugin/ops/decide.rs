//! Decisions: engines on runs of the burst, offloads, drops and sends, sticky decisions.

use super::{live, span};
use crate::offload::{self, TxOffloads};
use crate::plugin::state::{HostState, Sticky};
use wasmdp_abi::{engine, err, flags, ALL_PACKETS};

pub(crate) fn clear_sticky(st: &mut HostState) -> i32 {
    st.sticky = None;
    0
}

/// An index range of the call's burst.
fn index_range(st: &mut HostState, start: i32, n: i32) -> Result<std::ops::Range<usize>, i32> {
    st.burst().ok_or(err::NO_BURST)?;
    span(start, n, st.view.len).ok_or(err::BAD_INDEX)
}

/// The engine `e` on the whole burst, for the host's own burst-wide decisions (the engine
/// `wasmdp_on_burst` returned, the area header's engine): `run_engine(e, 0, len)`.
#[inline(always)]
pub(crate) fn run_whole(st: &mut HostState, e: u32) -> i32 {
    let len = st.view.len as i32;
    run_engine(st, e as i32, 0, len)
}

/// The `run_engine` import. Its common call (the whole of a burst nothing moved or left during the
/// call, with an engine that keeps packets in place: every 1.0 plugin's `run_engine(e, 0, len)` and
/// the host's [`run_whole`]) runs the engine on the burst directly, without the index bookkeeping
/// of [`run_engine_on`], in a function small enough to need no stack frame.
#[inline(always)]
pub(crate) fn run_engine(st: &mut HostState, e: i32, start: i32, n: i32) -> i32 {
    let Some(&engine) = usize::try_from(e).ok().and_then(|i| st.engines.get(i)) else { return err::BAD_ENGINE };
    let whole = start == 0 && n > 0 && n as usize == st.view.len && st.view.untouched();
    if whole && engine.keeps_packets && e as u32 != engine::RXONLY {
        return st.with_call(|burst, ctx, _, _| (engine.run)(ctx, burst)).map_or(err::NO_BURST, |()| n);
    }
    run_engine_on(st, engine, e, start, n)
}

/// [`run_engine`] on part of a burst, or on a burst the call changed.
#[inline(never)]
fn run_engine_on(st: &mut HostState, engine: crate::engines::Resolved, e: i32, start: i32, n: i32) -> i32 {
    let rxonly = e as u32 == engine::RXONLY;
    let range = match index_range(st, start, n) {
        Ok(r) => r,
        Err(e) => return e,
    };
    if rxonly {
        for i in range {
            if !st.view.gone(i) {
                st.view.request_engine_drop(i);
            }
        }
        return n;
    }
    st.with_call(|burst, ctx, scratch, view| {
        let (first, count) = view.present(range.clone());
        if count == 0 {
            return;
        }
        if engine.keeps_packets && first == 0 && count == burst.len() {
            return (engine.run)(ctx, burst);
        }
        scratch.extend_from(burst.drain_range(first..first + count));
        if engine.keeps_packets {
            (engine.run)(ctx, scratch);
            return burst.splice_in(first, scratch);
        }
        // The engine may free or replace packets: tag each with its index, and settle after.
        let live = range.clone().filter(|&i| !(view.dirty && view.consumed.has(i)));
        for (p, i) in scratch.iter_mut().zip(live) {
            p.meta_mut().set_slot(i as u16);
        }
        (engine.run)(ctx, scratch);
        view.settle(burst, range, first, scratch);
    })
    .map_or(err::NO_BURST, |()| n)
}

pub(crate) fn macswap(st: &mut HostState, start: i32, n: i32) -> i32 {
    let swap = crate::engines::MACSWAP_ONLY.get(st.simd);
    let range = match index_range(st, start, n) {
        Ok(r) => r,
        Err(e) => return e,
    };
    let (first, count) = st.view.present(range);
    let Some(b) = st.burst() else { return err::NO_BURST };
    swap(&mut b[first..first + count]);
    n
}

pub(crate) fn tx_of(f: i64, tci: i32, outer: i32) -> Result<TxOffloads, i32> {
    let f = u64::try_from(f).ok().filter(|f| f & !flags::ALLOWED == 0).ok_or(err::BAD_FLAGS)?;
    let (tci, outer) = match (u16::try_from(tci), u16::try_from(outer)) {
        (Ok(t), Ok(o)) => (t, o),
        _ => return Err(err::BAD_RANGE),
    };
    Ok(TxOffloads { flags: f, vlan_tci: tci, vlan_tci_outer: outer })
}

pub(crate) fn set_offloads(st: &mut HostState, i: i32, f: i64, tci: i32, outer: i32) -> i32 {
    let tx = match tx_of(f, tci, outer) {
        Ok(tx) => tx,
        Err(e) => return e,
    };
    if i == ALL_PACKETS {
        return st
            .with_call(|burst, _, _, view| {
                for i in (0..view.len).filter(|&i| !view.gone(i)) {
                    offload::request(&mut burst[view.position(i)], &tx);
                }
            })
            .map_or(err::NO_BURST, |()| 0);
    }
    match live(st, i) {
        Ok(p) => st.burst().map_or(err::NO_BURST, |b| {
            offload::request(&mut b[p], &tx);
            0
        }),
        Err(e) => e,
    }
}

/// `drop_pkt` (`send: None`) and `send_to`: recorded now, carried out when the call returns.
pub(crate) fn request(st: &mut HostState, i: i32, send: Option<u16>) -> i32 {
    match live(st, i) {
        Ok(_) => {
            st.view.request(i as usize, send);
            0
        }
        Err(e) => e,
    }
}

pub(crate) fn send_to(st: &mut HostState, i: i32, port: i32) -> i32 {
    if let Err(e) = live(st, i) {
        return e;
    }
    match usize::try_from(port).ok().filter(|&p| st.env.can_send(p)) {
        Some(port) => request(st, i, Some(port as u16)),
        None => err::BAD_PORT,
    }
}

pub(crate) fn set_sticky(st: &mut HostState, e: i32, f: i64, tci: i32, outer: i32, bursts: i32) -> i32 {
    let Some(engine) = u32::try_from(e).ok().filter(|&e| e < engine::COUNT) else { return err::BAD_ENGINE };
    let tx = match tx_of(f, tci, outer) {
        Ok(tx) => tx,
        Err(e) => return e,
    };
    let left = match bursts {
        -1 => u64::MAX,
        1.. => bursts as u64,
        _ => return err::BAD_RANGE,
    };
    st.sticky =
        Some(Sticky { engine, flags: tx.flags, vlan_tci: tx.vlan_tci, vlan_tci_outer: tx.vlan_tci_outer, left });
    0
}
