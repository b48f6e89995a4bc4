//! What a call decided, carried out on the burst: a sticky decision's engine and offloads, and the
//! drops and sends the plugin requested, in the burst's order.

use crate::engines::FwdCtx;
use crate::mbuf::Burst;
use crate::offload::{self, TxOffloads};
use crate::plugin::state::{HostState, Sticky, View};
use crate::simd::Simd;
use crate::stats::Drops;

/// A sticky burst: what `run_engine(engine, 0, n)` then `set_offloads(ALL, ...)` would do.
pub(super) fn run_sticky(ctx: &mut FwdCtx<'_>, burst: &mut Burst, s: Sticky, simd: Simd) {
    if s.engine == wasmdp_abi::engine::RXONLY {
        ctx.drops.engine += burst.len() as u64;
        return ctx.cache.free_burst(burst);
    }
    if let Some(e) = crate::engines::by_abi_id(s.engine) {
        (e.run.get(simd))(ctx, burst);
    }
    if s.flags != 0 {
        let tx = TxOffloads { flags: s.flags, vlan_tci: s.vlan_tci, vlan_tci_outer: s.vlan_tci_outer };
        burst.iter_mut().for_each(|p| offload::request(p, &tx));
    }
}

/// Carries out the drops and sends of a successful call, in the burst's order: what stays keeps its
/// order, and packets sent to a port arrive there in the order they had.
pub(super) fn apply_requests(ctx: &mut FwdCtx<'_>, burst: &mut Burst, st: &mut HostState) {
    let view = &st.view;
    if !view.dirty {
        return;
    }
    // When no engine moved or freed a packet during the call, each position is its index.
    let same = !view.shifted && view.consumed.is_empty();
    if same && !view.other_drops && view.sent.is_empty() {
        // Drops alone, all the policy's (an ACL's): the packets kept stay in place, the dropped
        // ones are moved out and go back to the cache in one bulk; the whole burst (a flood the
        // policy filters) goes back as it is, with nothing moved.
        // (No index past MAX_BURST is ever marked: a longer burst is never dropped whole here.)
        if burst.len() <= crate::mbuf::MAX_BURST && view.drops.next(0, burst.len(), false).is_none() {
            ctx.drops.policy += burst.len() as u64;
            return ctx.cache.free_burst(burst);
        }
        let dropped = &mut st.scratch;
        burst.split_marked(&view.drops, dropped);
        ctx.drops.policy += dropped.len() as u64;
        return ctx.cache.free_burst(dropped);
    }
    carry_out(ctx, burst, st, same);
}

/// [`apply_requests`] packet by packet: sends, drops with other reasons, moved indexes. A function
/// of its own, so that how its loop keeps its values in registers does not turn on the code of
/// the caller it would be inlined into (a send's cost moved by 1.3% with unrelated edits there).
#[inline(never)]
fn carry_out(ctx: &mut FwdCtx<'_>, burst: &mut Burst, st: &mut HostState, same: bool) {
    let view = &st.view;
    // The index of each position (positions of consumed indexes do not exist).
    let index = (!same).then(|| {
        let mut index = [0u16; crate::mbuf::MAX_BURST];
        for i in (0..view.len).filter(|&i| !view.consumed.has(i)) {
            index[view.position(i)] = i as u16;
        }
        index
    });
    let (kept, sends, injects) = (&mut st.scratch, &mut st.sends, &st.env.injects[..]);
    // The policy's drops counted in a register and added once; those of the `rxonly` engine and of
    // length changes that did not fit (rare, flagged for the call) out of line, so that a dropped
    // packet costs one test and a count, not one test per reason.
    let mut dropped = 0;
    for (p, pkt) in burst.drain_from(0).enumerate() {
        let i = index.as_ref().map_or(p, |index| usize::from(index[p]));
        if view.drops.has(i) {
            dropped += 1;
            if view.other_drops {
                dropped -= count_other_drop(&mut ctx.drops, view, i);
            }
            ctx.cache.free(pkt);
        } else if view.sent.has(i) && view.targets[i] != st.env.tx_port {
            // From a stream with its own pool (direct packet access), a packet for another
            // stream's thread leaves as a copy in a buffer of the lcore's pool.
            match ctx.outside.as_deref_mut() {
                None => sends.add(view.targets[i], pkt, injects, ctx.cache),
                Some(out) => match out.adopt(pkt, ctx.cache) {
                    Some(copy) => sends.add(view.targets[i], copy, injects, out),
                    None => ctx.alloc_failed += 1,
                },
            }
        } else {
            // Passed, or sent to the stream's own TX port: transmitted here, in order, without a
            // trip through the port's inject queue.
            kept.push(pkt);
        }
    }
    ctx.drops.policy += dropped;
    let sent = sends.flush(injects, ctx.outside.as_deref_mut().unwrap_or(ctx.cache));
    ctx.redirected_out += sent.out;
    ctx.drops.tx_full += sent.refused;
    std::mem::swap(burst, kept);
}

/// A drop at index `i` counted by its reason if it is not the policy's: 1 then, else 0 (the
/// policy's, which [`apply_requests`] counts).
#[cold]
#[inline(never)]
fn count_other_drop(drops: &mut Drops, view: &View, i: usize) -> u64 {
    if view.engine_drops.has(i) {
        drops.engine += 1;
    } else if view.room_drops.has(i) {
        drops.headroom += 1;
    } else {
        return 0;
    }
    1
}
