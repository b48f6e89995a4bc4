//! Filling the area before a call: the header, and each packet's descriptor and window (the
//! windows zeroed past each packet's end, so a plugin never sees an earlier packet's bytes).

use super::copy::copy_window;
use super::{get, put, Area};
use crate::mbuf::{Burst, Pkt};
use crate::simd::Simd;
use wasmdp_abi::area::{desc, hdr, rx, DESC, HEADER};

/// What the stream tells the plugin in the header besides the burst.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stamp {
    pub port: u16,
    pub queue: u16,
    pub tx_port: u16,
    pub now_ns: u64,
}

/// Writes the header, and the descriptor and window of each packet up to `max_pkts`, with every
/// out field reset. False when the area is no longer inside the memory.
// Not inlined (nor `apply`): their per-packet loops then compile the same whatever the runner
// around them; inlined, their cost moved with unrelated changes to the runner (callgrind).
#[inline(never)]
pub(crate) fn fill(a: &Area, mem: &mut [u8], stale: &mut usize, burst: &Burst, s: &Stamp, simd: Simd) -> bool {
    let Some(region) = a.region(mem) else { return false };
    let pkts = &burst[..burst.len().min(a.max_pkts())];
    super::drops::reset(a, region, pkts.len());
    let (h, rest) = region.split_at_mut(HEADER);
    fill_header(h, a, burst, s);
    if a.heads() {
        super::heads::fill(a, pkts, rest, simd);
        return true;
    }
    let (descs, wins) = rest.split_at_mut(a.max_pkts() * DESC);
    // One loop per kind of area, so that a loop does not test per packet what the area asked for
    // (a test per packet, measurable in the loop with windows).
    match (a.window(), a.flow_hash()) {
        (0, false) => fill_descriptors::<false>(pkts, descs),
        (0, true) => fill_descriptors::<true>(pkts, descs),
        (w, false) => {
            with_const!(w, W in [16, 32, 64] => crate::simd_scoped!(simd => fill_windows::<false, W>(pkts, descs, wins, stale, w, simd)))
        }
        (w, true) => {
            with_const!(w, W in [16, 32, 64] => crate::simd_scoped!(simd => fill_windows::<true, W>(pkts, descs, wins, stale, w, simd)))
        }
    }
    true
}

/// The header, its out fields reset.
#[inline(always)]
pub(super) fn fill_header(h: &mut [u8], a: &Area, burst: &Burst, s: &Stamp) {
    h.fill(0);
    put(h, hdr::LEN, &(burst.len() as u32).to_le_bytes());
    put(h, hdr::PORT, &s.port.to_le_bytes());
    put(h, hdr::QUEUE, &s.queue.to_le_bytes());
    put(h, hdr::TX_PORT, &s.tx_port.to_le_bytes());
    put(h, hdr::WINDOW, &(a.window() as u16).to_le_bytes());
    put(h, hdr::ENGINE, &(-1i32).to_le_bytes());
    put(h, hdr::NOW_NS, &s.now_ns.to_le_bytes());
}

/// Descriptors without windows (`chunks_exact_mut` refuses a chunk of 0).
pub(super) fn fill_descriptors<const HASH: bool>(pkts: &[Pkt], descs: &mut [u8]) {
    for (p, d) in pkts.iter().zip(descs.chunks_exact_mut(DESC)) {
        put(d, 0, &descriptor::<HASH>(p, 0));
    }
}

/// Descriptors and windows of `window` bytes, as zipped chunks: the slots' bounds are checked
/// once, not per packet. Out of line, each instance: inlined into `fill` beside the others, the
/// loop's registers were allocated for the whole function (moves and reloads per packet, found
/// after an unrelated change); inlined into [`crate::simd_scoped!`]'s function for the variant,
/// which is out of line, so that windows are copied in the CPU's widest moves.
#[inline(always)]
pub(super) fn fill_windows<const HASH: bool, const W: usize>(
    pkts: &[Pkt],
    descs: &mut [u8],
    wins: &mut [u8],
    stale: &mut usize,
    window: usize,
    simd: Simd,
) {
    // What earlier, longer packets may have left after a shorter one's bytes is zeroed (`stale`:
    // how far into their windows any slot may hold such bytes): `WIN` tells the plugin to ignore
    // them, but it should not be shown them at all (the heads path clears them likewise). A pass
    // over the descriptors just written bounds the longest and the shortest (OR and AND of their
    // lengths); a second, for bursts with a packet shorter than what may be stale, zeroes: packets
    // of one size never take it. (Any of it in the filling loop made that loop spill registers
    // per packet.)
    for (p, (d, w)) in pkts.iter().zip(descs.chunks_exact_mut(DESC).zip(wins.chunks_exact_mut(window))) {
        // The packet's bytes first: its length is then read once, before the stores into the
        // area (which the compiler cannot tell apart from the packet's metadata).
        let data = p.data();
        let win = data.len().min(window);
        put(d, 0, &descriptor::<HASH>(p, win));
        copy_window::<W>(simd, &mut w[..win], &data[..win]);
    }
    let (old, mut top, mut bottom) = (*stale, 0, usize::MAX);
    for d in descs[..pkts.len() * DESC].chunks_exact(DESC) {
        let win = usize::from(u16::from_le_bytes(get(d, desc::WIN)));
        (top, bottom) = (top | win, bottom & win);
    }
    if bottom < old {
        zero_stale(&descs[..pkts.len() * DESC], wins, window, old);
    }
    // Slots past this burst keep what they held.
    *stale = if pkts.len() * DESC >= descs.len() { top } else { old.max(top) }.min(window);
}

/// A packet's descriptor with its out fields zero; its hash the host's flow hash with `HASH`,
/// else the RX port's.
#[inline(always)]
pub(super) fn descriptor<const HASH: bool>(p: &Pkt, win: usize) -> [u8; DESC] {
    let m = p.meta();
    let hash = if HASH { crate::wire::flow_hash(p.data()) } else { m.hash };
    let mut d = [0u8; DESC];
    put(&mut d, desc::LEN, &(p.len() as u32).to_le_bytes());
    put(&mut d, desc::WIN, &(win as u16).to_le_bytes());
    put(&mut d, desc::PORT, &m.port.to_le_bytes());
    put(&mut d, desc::HASH, &hash.to_le_bytes());
    let rx_flags = (m.ol_flags as u32) & (rx::VLAN | rx::TUNNEL);
    put(&mut d, desc::RX_FLAGS, &rx_flags.to_le_bytes());
    put(&mut d, desc::HEADROOM, &(p.headroom().min(u16::MAX.into()) as u16).to_le_bytes());
    put(&mut d, desc::TAILROOM, &(p.tailroom().min(u16::MAX.into()) as u16).to_le_bytes());
    d
}

/// Zeroes each window from its packet's end (`WIN` of the descriptors just written) to `to`.
#[cold]
#[inline(never)]
pub(super) fn zero_stale(descs: &[u8], wins: &mut [u8], window: usize, to: usize) {
    for (d, w) in descs.chunks_exact(DESC).zip(wins.chunks_exact_mut(window)) {
        let win = usize::from(u16::from_le_bytes(get(d, desc::WIN)));
        if let Some(stale) = w.get_mut(win..to.min(window)) {
            stale.fill(0);
        }
    }
}
