//! Heads (`area::HEADS`): windows without descriptors. Before the call each packet's length goes
//! into the lengths and its first bytes into its window, zeros after a short packet's end; after
//! it, when the header says `CHANGED`, every window goes back into its packet. Nothing per packet
//! is read from the plugin, so nothing per packet needs checking: the lengths copied are the
//! host's own.

use super::{copy_small, Area};
use crate::mbuf::Pkt;
use crate::plugin::state::HostState;
use crate::simd::Simd;
use wasmdp_abi::area::LEN_BYTES;
use wasmdp_abi::err;

/// The lengths and windows of `pkts` into `rest` (the area past its header).
pub(super) fn fill(a: &Area, pkts: &[Pkt], rest: &mut [u8], simd: Simd) {
    let w = a.window();
    let (lens, wins) = rest.split_at_mut(a.max_pkts() * LEN_BYTES);
    with_const!(w, W in [16, 32, 64, 128] => if W == 16 {
        fill_heads_16(pkts, lens, wins, simd)
    } else {
        crate::simd_scoped!(simd => fill_heads::<W>(pkts, lens, wins, w, simd))
    });
}

/// 16-byte heads are one move in baseline code as in any variant's, and their loop in each
/// variant's instance measured dearer (its dispatch and `vzeroupper`): one instance for all.
#[inline(never)]
fn fill_heads_16(pkts: &[Pkt], lens: &mut [u8], wins: &mut [u8], simd: Simd) {
    fill_heads::<16>(pkts, lens, wins, 16, simd)
}

/// Out of line, each instance (its registers allocated for its loop alone): in
/// [`crate::simd_scoped!`]'s function for the variant, so that a window is copied in the CPU's
/// widest moves (64 bytes: one AVX-512 move or two AVX2 ones, where baseline code takes four).
#[inline(always)]
fn fill_heads<const W: usize>(pkts: &[Pkt], lens: &mut [u8], wins: &mut [u8], window: usize, simd: Simd) {
    // A constant stride where there is one: the loop's shape then does not depend on what the
    // optimiser makes of a run-time window.
    let window = if W != 0 { W } else { window };
    let n = pkts.len().min(lens.len() / LEN_BYTES).min(wins.len() / window);
    let (pkts, lens, wins) = (&pkts[..n], &mut lens[..n * LEN_BYTES], &mut wins[..n * window]);
    if W != 0 && W <= 64 {
        // A packet of at least a window, the common case, in one fixed move from the packet's
        // address as it is (`Pkt::head`); a shorter one out of line (`fill_short`, which finds
        // the packet's bytes itself). Four packets a loop turn; each window reached by its index
        // in its four only in the branch that uses it, so that the move takes the packet's and
        // the window's addresses in its operands (a window passed by reference, or the packet's
        // bytes for the short path, were computed before the branch: an `lea` and two `add`s a
        // packet).
        let (lens, _) = lens.as_chunks_mut::<LEN_BYTES>();
        let (wins, _) = wins.as_chunks_mut::<W>();
        let one = |p: &Pkt, l: &mut [u8; LEN_BYTES], w: &mut [[u8; W]], i: usize| {
            *l = (p.len() as u32).to_le_bytes();
            match p.head::<W>() {
                Some(h) => w[i] = h,
                None => fill_short(&mut w[i], p, simd),
            }
        };
        let ((p4, pr), (l4, lr), (w4, wr)) =
            (pkts.as_chunks::<4>(), lens.as_chunks_mut::<4>(), wins.as_chunks_mut::<4>());
        for ((p, l), w) in p4.iter().zip(l4).zip(w4) {
            for i in 0..4 {
                one(&p[i], &mut l[i], w, i);
            }
        }
        for ((p, l), w) in pr.iter().zip(lr).zip(wr.chunks_exact_mut(1)) {
            one(p, l, w, 0);
        }
        return;
    }
    for (p, (l, w)) in pkts.iter().zip(lens.chunks_exact_mut(LEN_BYTES).zip(wins.chunks_exact_mut(window))) {
        let data = p.data();
        l.copy_from_slice(&(data.len() as u32).to_le_bytes());
        if W > 64 && data.len() < W {
            // A packet shorter than a large window (a 64-byte frame in `dnat`'s 128 bytes): the
            // window zeroed whole in fixed stores, then its bytes, where zeroing from the packet's
            // end was a call into memset per packet.
            w.fill(0);
            let k = data.len();
            copy_small(simd, &mut w[..k], data);
            continue;
        }
        let k = copy_prefix::<W>(simd, w, data);
        if k < window {
            // The window's bytes past the packet read as zeros, not as an earlier burst's packet.
            w[k..].fill(0);
        }
    }
}

/// A window of a packet shorter than it: its bytes, then zeros. The packet's address is found
/// here, not on the hot path (where its move takes it in its operand).
#[cold]
#[inline(never)]
fn fill_short(w: &mut [u8], p: &Pkt, simd: Simd) {
    let k = copy_prefix::<0>(simd, w, p.data());
    w[k..].fill(0);
}

/// Copies the first `min(dst.len(), src.len())` bytes of `src` into `dst` and returns how many.
/// `W` is 0 or the window's size, and one side is a window: when both hold `W` bytes that is all
/// there is, tested once and copied in fixed moves, without the `min` (measured in the fill and the
/// copy-back alike: BENCHMARKS.md).
#[inline(always)]
fn copy_prefix<const W: usize>(simd: Simd, dst: &mut [u8], src: &[u8]) -> usize {
    if let (Some(d), Some(s)) = (dst.first_chunk_mut::<W>().filter(|_| W != 0), src.first_chunk::<W>()) {
        *d = *s;
        return W;
    }
    let k = dst.len().min(src.len());
    copy_small(simd, &mut dst[..k], &src[..k]);
    k
}

/// Every window's first `min(len, window)` bytes into its packet: packet `i` of the call, where it
/// still is (the 1.0 imports may have dropped or sent packets during the call). `rest` is the area
/// past its header.
pub(super) fn copy_back(a: &Area, rest: &[u8], st: &mut HostState) -> Result<(), i32> {
    let (w, simd) = (a.window(), st.simd);
    let wins = rest.get(a.max_pkts() * LEN_BYTES..).ok_or(err::BAD_MEMORY)?;
    let n = st.view.len.min(a.max_pkts());
    st.with_call(|burst, _, _, view| {
        if view.untouched() {
            let n = n.min(burst.len());
            let pkts = &mut burst[..n];
            with_const!(w, W in [16, 32, 64, 128] => if W == 16 {
                copy_back_heads_16(pkts, wins, simd)
            } else {
                crate::simd_scoped!(simd => copy_back_heads::<W>(pkts, wins, w, simd))
            });
            return;
        }
        for (i, win) in wins.chunks_exact(w).take(n).enumerate() {
            if let Some(p) = burst.get_mut(view.position(i)).filter(|_| !view.gone(i)) {
                copy_prefix::<0>(simd, p.data_mut(), win);
            }
        }
    })
    .ok_or(err::NO_BURST)
}

/// A window into a packet shorter than it: the packet's bytes.
#[cold]
#[inline(never)]
fn back_short(p: &mut Pkt, win: &[u8], simd: Simd) {
    copy_prefix::<0>(simd, p.data_mut(), win);
}

/// One instance for all variants, as [`fill_heads_16`].
#[inline(never)]
fn copy_back_heads_16(pkts: &mut [Pkt], wins: &[u8], simd: Simd) {
    copy_back_heads::<16>(pkts, wins, 16, simd)
}

/// In [`crate::simd_scoped!`]'s function, as [`fill_heads`].
#[inline(always)]
fn copy_back_heads<const W: usize>(pkts: &mut [Pkt], wins: &[u8], window: usize, simd: Simd) {
    let window = if W != 0 { W } else { window };
    if W != 0 && W <= 64 {
        // As in `fill_heads`: a whole window in one fixed move to the packet's address, four
        // packets a loop turn, a shorter packet out of line (in line, its copy split the loop's
        // straight path with a jump a packet).
        let (wins, _) = wins.as_chunks::<W>();
        let n = pkts.len().min(wins.len());
        let (pkts, wins) = (&mut pkts[..n], &wins[..n]);
        let one = |p: &mut Pkt, w: &[[u8; W]], i: usize| {
            if !p.set_head(&w[i]) {
                back_short(p, &w[i], simd);
            }
        };
        let ((p4, pr), (w4, wr)) = (pkts.as_chunks_mut::<4>(), wins.as_chunks::<4>());
        for (p, w) in p4.iter_mut().zip(w4) {
            for (i, p) in p.iter_mut().enumerate() {
                one(p, w, i);
            }
        }
        for (p, w) in pr.iter_mut().zip(wr.chunks_exact(1)) {
            one(p, w, 0);
        }
        return;
    }
    for (p, win) in pkts.iter_mut().zip(wins.chunks_exact(window)) {
        copy_prefix::<W>(simd, p.data_mut(), win);
    }
}
