//! Reading the area back after a call: the header's and the descriptors' decisions checked in full,
//! then carried out on the burst (length changes, changed windows, verdicts, engines, offloads).

use super::copy::{copy_small, copy_window};
use super::{get, Area};
use crate::mbuf::{Marks, Pkt, MAX_BURST};
use crate::offload::{self, TxOffloads};
use crate::plugin::state::{HostState, View};
use crate::simd::Simd;
use wasmdp_abi::area::{desc, verdict, DESC, HEADER};
use wasmdp_abi::decision::{Decision, HeaderOut};
use wasmdp_abi::err;

/// The header's decisions, checked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Header {
    /// Engine for the `PASS` packets.
    pub engine: Option<u32>,
    /// Whether the descriptors are to be read.
    pub changed: bool,
    /// Offloads for every transmitted packet.
    pub offloads: Option<TxOffloads>,
}

/// After a call that returned 0: reads and checks everything, then carries it out on the burst
/// (through the call's view, so drops and sends happen with the 1.0 requests). `Err` is the code the
/// call fails with; the burst is then as the plugin's imports left it.
///
/// The descriptors are read from the plugin's memory where they are needed rather than copied out:
/// the plugin is not running, so they cannot change between the check and the use. A burst whose
/// descriptors are untouched (`CHANGED` 0) costs nothing per packet.
#[inline(never)]
pub(crate) fn apply(a: &Area, mem: &mut [u8], st: &mut HostState) -> Result<(), i32> {
    let region = a.region(mem).ok_or(err::BAD_MEMORY)?;
    let header = read_header(region)?;
    let len = st.view.len;
    if a.heads() && a.drops() {
        return heads_with_drops(a, region, &header, st);
    }
    if a.heads() {
        copy_back_heads(a, region, &header, st)?;
        run_header_engine(&header, st)?;
        offload_all(header.offloads, st);
        return Ok(());
    }
    let n = if header.changed { len.min(a.max_pkts()) } else { 0 };
    let descs = region.get(HEADER..HEADER + n * DESC).ok_or(err::BAD_MEMORY)?;
    let seen = check_all(descs, a.window(), st)?;
    let wins = region.get(HEADER + a.max_pkts() * DESC..).ok_or(err::BAD_MEMORY)?;
    if let Some(sets) = seen.sets.filter(|_| !seen.dirty && st.view.untouched()) {
        // Passes, drops and sends alone (an ACL's or a balancer's decisions): recorded at once, the
        // header's engine run on the runs of passes between them.
        record_and_run(&sets, header.engine, st)?;
    } else if seen.only_passes() && st.view.untouched() {
        // Every packet stays and runs the header's engine: the windows back, then one engine run.
        if seen.dirty {
            copy_back(descs, wins, a.window(), st)?;
        }
        run_header_engine(&header, st)?;
    } else {
        let header_engine = header.engine.map_or(u8::MAX, |e| e as u8);
        // An engine code per packet, in an array sized for bursts of up to 64 when the burst fits:
        // set whole each time, one of the largest burst (512) was a `rep stosb`, cheap in
        // instructions but not in time.
        if len <= 64 {
            carry_and_run::<64>(descs, wins, a, header_engine, seen, st)?;
        } else {
            carry_and_run::<{ crate::mbuf::MAX_BURST }>(descs, wins, a, header_engine, seen, st)?;
        }
    }
    offload_all(header.offloads, st);
    Ok(())
}

/// The header's engine on the whole burst, when it names one and the burst is not empty.
fn run_header_engine(header: &Header, st: &mut HostState) -> Result<(), i32> {
    if let Some(e) = header.engine.filter(|_| st.view.len > 0) {
        let rc = crate::plugin::ops::decide::run_whole(st, e);
        if rc < 0 {
            return Err(rc);
        }
    }
    Ok(())
}

/// [`apply`] for heads with drops (`area::DROPS`): the verdict bytes read and checked before
/// anything is carried out, the heads copied back (copied heads, `CHANGED`), the drops, then the
/// header's engine on the rest and its offloads. Out of line, so that heads without drops keep
/// their code.
#[inline(never)]
fn heads_with_drops(a: &Area, region: &mut [u8], header: &Header, st: &mut HostState) -> Result<(), i32> {
    let (len, verdicts) = (st.view.len, a.verdicts(region));
    let n = len.min(a.max_pkts());
    // A burst whose bytes are all `PASS` (most bursts) is told so in a few word loads: no drop
    // gathered per packet, nor any byte that could be out of range.
    if super::drops::all_pass(verdicts, n)? {
        copy_back_heads(a, region, header, st)?;
        run_header_engine(header, st)?;
    } else {
        let drops = super::drops::read(verdicts, n)?;
        copy_back_heads(a, region, header, st)?;
        if drops.next(0, len, true).is_some() {
            drop_then_run(&drops, header.engine, st)?;
        } else {
            run_header_engine(header, st)?;
        }
    }
    offload_all(header.offloads, st);
    Ok(())
}

/// Copied heads back into their packets, when the header says `CHANGED` (direct heads were
/// written in place).
#[inline(always)]
fn copy_back_heads(a: &Area, region: &[u8], header: &Header, st: &mut HostState) -> Result<(), i32> {
    if header.changed && !a.direct() {
        super::heads::copy_back(a, region.get(HEADER..).ok_or(err::BAD_MEMORY)?, st)?;
    }
    Ok(())
}

/// Heads with drops: the packets whose verdict byte is `DROP` dropped (those a 1.0 import dropped
/// or sent during the call already gone), the header's engine run on the others.
fn drop_then_run(drops: &Marks, engine: Option<u32>, st: &mut HostState) -> Result<(), i32> {
    if st.view.untouched() {
        return record_and_run(&Sets { drops: *drops, sent: Marks::default() }, engine, st);
    }
    let header_engine = engine.map_or(u8::MAX, |e| e as u8);
    let mut engines = [u8::MAX; MAX_BURST];
    let engines = engines.get_mut(..st.view.len).ok_or(err::NO_BURST)?;
    for (i, e) in engines.iter_mut().enumerate() {
        if st.view.gone(i) {
            continue;
        }
        let v = if drops.has(i) { verdict::DROP } else { verdict::PASS };
        *e = verdict_of(v, 0, header_engine, &mut st.view, i);
    }
    run_engines(engines, st)
}

/// The header's offloads requested for every packet still in the burst. The test in line, the
/// work out of line: most bursts ask for none, and a call to learn that cost one a burst.
#[inline(always)]
pub(super) fn offload_all(offloads: Option<TxOffloads>, st: &mut HostState) {
    if let Some(tx) = offloads {
        offload_each(&tx, st);
    }
}

#[inline(never)]
fn offload_each(tx: &TxOffloads, st: &mut HostState) {
    st.with_call(|burst, _, _, view| {
        for i in (0..view.len).filter(|&i| !view.gone(i)) {
            offload::request(&mut burst[view.position(i)], tx);
        }
    });
}

/// [`carry_out`] (or [`carry_verdicts`], when that is all the descriptors ask for) then
/// [`run_engines`] with an engine array of `N` (at least the burst's length).
#[inline(always)]
pub(super) fn carry_and_run<const N: usize>(
    descs: &[u8],
    wins: &[u8],
    a: &Area,
    header_engine: u8,
    seen: Seen,
    st: &mut HostState,
) -> Result<(), i32> {
    let len = st.view.len;
    let mut engines = [u8::MAX; N];
    let engines = engines.get_mut(..len).ok_or(err::NO_BURST)?;
    if !seen.lengths && !seen.dirty && st.view.untouched() {
        carry_verdicts(descs, header_engine, engines, &mut st.view);
    } else {
        carry_out(descs, wins, a, header_engine, engines, st)?;
    }
    run_engines(engines, st)
}

/// [`carry_out`] for descriptors that ask for verdicts alone (no length change, no window byte
/// written: what an ACL decides), when no packet moved or left during the call: each packet's
/// verdict and argument read, nothing else decoded, no packet touched. What it records is what
/// [`carry_one`] records for such a descriptor.
#[inline(never)]
pub(super) fn carry_verdicts(descs: &[u8], header_engine: u8, engines: &mut [u8], view: &mut View) {
    let n = (descs.len() / DESC).min(engines.len());
    engines[n..].fill(header_engine);
    for (i, (d, e)) in descs.chunks_exact(DESC).zip(engines.iter_mut()).enumerate() {
        // Only the verdict and the argument of the decoded descriptor are read.
        let d = Decision::decode(d);
        *e = verdict_of(d.verdict, d.arg, header_engine, view, i);
    }
}

/// The drops and sends of a burst whose descriptors ask for nothing else, when no packet moved or
/// left during the call: recorded in the view all at once (what [`carry_verdicts`] records one by
/// one; the sends' ports are in the view already), then the header's engine run on each run of
/// passing packets (what [`run_engines`] runs for such a burst).
fn record_and_run(sets: &Sets, engine: Option<u32>, st: &mut HostState) -> Result<(), i32> {
    st.view.drops = sets.drops;
    st.view.sent = sets.sent;
    st.view.dirty = true;
    let Some(e) = engine else { return Ok(()) };
    let (len, gone) = (st.view.len, sets.drops.union(&sets.sent));
    let mut i = 0;
    while let Some(start) = gone.next(i, len, false) {
        let end = gone.next(start, len, true).unwrap_or(len);
        let rc = crate::plugin::ops::decide::run_engine(st, e as i32, start as i32, (end - start) as i32);
        if rc < 0 {
            return Err(rc);
        }
        i = end;
    }
    Ok(())
}

/// Which packets a burst of passes, drops and sends drops, and which it sends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Sets {
    drops: Marks,
    sent: Marks,
}

/// What the checked descriptors ask for, in sum.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Seen {
    /// A verdict other than `PASS`.
    verdicts: bool,
    /// A length change.
    lengths: bool,
    /// A window to copy back.
    dirty: bool,
    /// When every verdict is `PASS`, `DROP` or `SEND` with no other change: the drops and sends.
    sets: Option<Sets>,
}

impl Seen {
    fn only_passes(&self) -> bool {
        !self.verdicts && !self.lengths
    }
}

/// Checks every descriptor (all before any is carried out) and sums up what they ask for. A burst
/// of plain passes (out bytes before `DIRTY` all 0: no verdict, argument or length change; the
/// dirty count within the window) needs nothing decoded: one word and one count a packet. From the
/// first other descriptor on, [`verdicts_alone`] takes over.
pub(super) fn check_all(descs: &[u8], window: usize, st: &mut HostState) -> Result<Seen, i32> {
    let mut dirty = 0u16;
    for (i, d) in descs.chunks_exact(DESC).enumerate() {
        let out = u64::from_le_bytes(get(d, desc::VERDICT));
        let k = u16::from_le_bytes(get(d, desc::DIRTY));
        if out != 0 || usize::from(k) > window {
            return match verdicts_alone(descs, i, dirty, window, st) {
                Some(seen) => Ok(seen),
                None => check_each(descs, window, st),
            };
        }
        dirty |= k;
    }
    Ok(Seen { verdicts: false, lengths: false, dirty: dirty != 0, sets: None })
}

/// [`check_all`] from descriptor `from` on (those before it plain passes whose dirty counts OR to
/// `dirty`): a burst of passes, drops and sends, when no packet moved or left during the call, gets
/// its drops and sends as bit sets ([`sets_from`], which writes the sends' ports into the view).
/// None for any other, which [`check_each`] checks.
fn verdicts_alone(descs: &[u8], from: usize, dirty: u16, window: usize, st: &mut HostState) -> Option<Seen> {
    if !st.view.untouched() {
        return None;
    }
    let env = &st.env;
    let port_ok = |port: u16| env.can_send(usize::from(port));
    let (sets, more) = sets_from(descs, from, window, port_ok, &mut st.view.targets)?;
    let verdicts = !(sets.drops.is_empty() && sets.sent.is_empty());
    Some(Seen { verdicts, lengths: false, dirty: dirty | more != 0, sets: verdicts.then_some(sets) })
}

/// The drops and sends of descriptors `from..` and the OR of their dirty counts, when each is a
/// pass, a drop or a send to a port `port_ok` accepts, with no other change (the out bytes before
/// `DIRTY` all 0 but the verdict and a send's port; the dirty count within the window); each
/// send's port written to `targets`. A pass or a drop costs one compare and two shifts more than a
/// plain pass in [`check_all`]. None at the first other descriptor, or past [`MAX_BURST`]
/// descriptors (`targets` may then hold ports of the sends before it).
#[inline(never)]
fn sets_from(
    descs: &[u8],
    from: usize,
    window: usize,
    port_ok: impl Fn(u16) -> bool,
    targets: &mut [u16; MAX_BURST],
) -> Option<(Sets, u16)> {
    if descs.len() > MAX_BURST * DESC {
        return None;
    }
    let (mut drops, mut sent) = ([0u64; MAX_BURST / 64], [0u64; MAX_BURST / 64]);
    let (mut dirty, n) = (0u16, descs.len() / DESC);
    // A send: the verdict, then the port in bytes 2 and 3 of the out word; no other bit.
    const SEND_MASK: u64 = !0xFFFF_0000;
    // The sets take bits 0 and 1 of the verdict.
    const _: () = assert!(verdict::PASS == 0 && verdict::DROP == 1 && verdict::SEND == 2);
    let mut i = from;
    while i < n {
        // Up to the next multiple of 64: one word of each set, its bits shifted in from the top
        // (by constants: no shift count to keep in a register).
        let end = ((i / 64 + 1) * 64).min(n);
        let (mut d_word, mut s_word) = (0u64, 0u64);
        for (j, d) in descs.get(i * DESC..end * DESC)?.chunks_exact(DESC).enumerate() {
            let out = u64::from_le_bytes(get(d, desc::VERDICT));
            let k = u16::from_le_bytes(get(d, desc::DIRTY));
            if out > u64::from(verdict::DROP) {
                let port = (out >> 16) as u16;
                if out & SEND_MASK != u64::from(verdict::SEND) || !port_ok(port) {
                    return None;
                }
                *targets.get_mut(i + j)? = port;
            }
            if usize::from(k) > window {
                return None;
            }
            // Now `out` is 0 (PASS), 1 (DROP) or a SEND (bit 1 set, bit 0 clear).
            d_word = d_word >> 1 | out << 63;
            s_word = s_word >> 1 | (out >> 1) << 63;
            dirty |= k;
        }
        let shift = |w: u64| w >> (64 - (end - i)) << (i % 64);
        (drops[i / 64], sent[i / 64]) = (shift(d_word), shift(s_word));
        i = end;
    }
    Some((Sets { drops: Marks::from_words(drops), sent: Marks::from_words(sent) }, dirty))
}

/// [`check_all`] for a burst with other decisions: every descriptor decoded and checked. The sums
/// are plain ORs of the raw fields.
pub(super) fn check_each(descs: &[u8], window: usize, st: &HostState) -> Result<Seen, i32> {
    let (mut verdicts, mut lengths, mut dirty) = (0u8, 0u32, 0u16);
    for d in descs.chunks_exact(DESC) {
        let d = Decision::decode(d);
        if d.verdict != verdict::PASS || usize::from(d.dirty) > window {
            check(&d, window, st)?;
        }
        verdicts |= d.verdict;
        lengths |= (d.head as u16 as u32) << 16 | u32::from(d.tail as u16);
        dirty |= d.dirty;
    }
    Ok(Seen { verdicts: verdicts != 0, lengths: lengths != 0, dirty: dirty != 0, sets: None })
}

/// The changed window bytes into the packets, when no packet moved or left during the call (plugin
/// index `i` is burst position `i`) and none changes length.
pub(super) fn copy_back(descs: &[u8], wins: &[u8], window: usize, st: &mut HostState) -> Result<(), i32> {
    if window == 0 {
        return Ok(()); // `check` allows no dirty bytes then
    }
    let simd = st.simd;
    with_const!(window, W in [16, 32, 64] => crate::simd_scoped!(simd => copy_back_windows::<W>(descs, wins, window, st)))
}

/// In [`crate::simd_scoped!`]'s function for the variant (out of line), as `fill_windows`.
#[inline(always)]
pub(super) fn copy_back_windows<const W: usize>(
    descs: &[u8],
    wins: &[u8],
    window: usize,
    st: &mut HostState,
) -> Result<(), i32> {
    let simd = st.simd;
    st.with_call(|burst, _, _, _| {
        for (p, (d, w)) in burst.iter_mut().zip(descs.chunks_exact(DESC).zip(wins.chunks_exact(window))) {
            let k = usize::from(Decision::decode(d).dirty).min(p.len());
            copy_window::<W>(simd, &mut p.data_mut()[..k], &w[..k]);
        }
    })
    .ok_or(err::NO_BURST)
}

pub(super) fn read_header(region: &[u8]) -> Result<Header, i32> {
    let h = HeaderOut::decode(region);
    let engine = h.check(|e| crate::engines::by_abi_id(e).is_some())?;
    let offloads = (h.offloads != 0).then_some(TxOffloads {
        flags: h.offloads,
        vlan_tci: h.vlan_tci,
        vlan_tci_outer: h.vlan_outer,
    });
    Ok(Header { engine, changed: h.changed, offloads })
}

/// `d` checked by the ABI's rule (`Decision::check`) against this stream's ports and the engine
/// table.
#[inline(always)]
pub(super) fn check(d: &Decision, window: usize, st: &HostState) -> Result<(), i32> {
    d.check(
        window,
        |port| st.env.can_send(usize::from(port)),
        |engine| crate::engines::by_abi_id(u32::from(engine)).is_some(),
    )
}

/// Per packet with a descriptor: the length changes (front, then tail; one that does not fit drops
/// the packet as `headroom`), the changed window bytes, drops and sends as requests (carried out
/// after the call with the 1.0 ones), and the engine it is to run (`u8::MAX`: none) into `engines`;
/// packets past the descriptors get the header's engine.
pub(super) fn carry_out(
    descs: &[u8],
    wins: &[u8],
    a: &Area,
    header_engine: u8,
    engines: &mut [u8],
    st: &mut HostState,
) -> Result<(), i32> {
    let (simd, window) = (st.simd, a.window());
    // With direct access the plugin wrote every byte a length change adds, in place: none is
    // zeroed (with windows, those the window does not write are).
    let written = if a.direct() { usize::MAX } else { 0 };
    st.with_call(|burst, _, _, view| {
        let n = descs.len() / DESC;
        engines[n..].fill(header_engine);
        let descs = descs.chunks_exact(DESC).map(Decision::decode);
        if view.untouched() {
            // Index i is position i and names its packet (what this loop requests moves nothing):
            // the slots are walked together, their bounds checked once.
            if window == 0 {
                for (i, (p, d)) in burst.iter_mut().zip(descs).enumerate() {
                    engines[i] = carry_one(p, &d, (&[], written), header_engine, simd, view, i);
                }
            } else {
                let slots = burst.iter_mut().zip(descs.zip(wins.chunks_exact(window)));
                for (i, (p, (d, w))) in slots.enumerate() {
                    engines[i] = carry_one(p, &d, (w, w.len()), header_engine, simd, view, i);
                }
            }
            return;
        }
        for (i, d) in descs.enumerate() {
            if view.gone(i) {
                continue;
            }
            let w = wins.get(i * window..(i + 1) * window).unwrap_or_default();
            let written = written.max(w.len());
            engines[i] = carry_one(&mut burst[view.position(i)], &d, (w, written), header_engine, simd, view, i);
        }
    })
    .ok_or(err::NO_BURST)
}

/// One packet's decision carried out on `p`, whose window is `w` (and `written` the bytes of it the
/// plugin wrote: `w`'s length, or all of them with direct access); the engine it is to run.
#[inline(always)]
pub(super) fn carry_one(
    p: &mut Pkt,
    d: &Decision,
    (w, written): (&[u8], usize),
    header_engine: u8,
    simd: Simd,
    view: &mut View,
    i: usize,
) -> u8 {
    let refused = (d.head != 0 || d.tail != 0)
        && if written == usize::MAX {
            // Direct access: the bytes in front are the plugin's only as far as its alias shows
            // them (not into the buffer's gap, `crate::mbuf::shared`).
            let seen = crate::mbuf::shared::visible(p.meta_ptr() as usize, p.meta().data_off);
            seen.is_none_or(|h| i32::from(d.head) > i32::from(h)) || p.reframe(d.head.into(), d.tail.into()).is_err()
        } else {
            crate::plugin::ops::packets::adjust_then_write(p, (d.head, d.tail, d.dirty), written).is_err()
        };
    if refused {
        view.request_room_drop(i);
        return u8::MAX;
    }
    if d.dirty != 0 {
        // `dirty` is at most the window (checked).
        let k = usize::from(d.dirty).min(p.len()).min(w.len());
        copy_small(simd, &mut p.data_mut()[..k], &w[..k]);
    }
    verdict_of(d.verdict, d.arg, header_engine, view, i)
}

/// Packet `i`'s verdict and its argument (checked) recorded: a drop or a send requested of `view`;
/// the engine it is to run (`u8::MAX`: none, `header_engine` for a pass).
#[inline(always)]
fn verdict_of(verdict: u8, arg: u16, header_engine: u8, view: &mut View, i: usize) -> u8 {
    match verdict {
        verdict::DROP => {
            view.request(i, None);
            u8::MAX
        }
        verdict::SEND => {
            view.request(i, Some(arg));
            u8::MAX
        }
        verdict::ENGINE => arg as u8, // checked: an engine id
        _ => header_engine,
    }
}

/// Each engine on its runs of consecutive packets.
pub(super) fn run_engines(engines: &[u8], st: &mut HostState) -> Result<(), i32> {
    let mut i = 0;
    while i < engines.len() {
        let e = engines[i];
        let start = i;
        i = run_end(engines, i, e);
        if e == u8::MAX {
            continue;
        }
        let rc = crate::plugin::ops::decide::run_engine(st, i32::from(e), start as i32, (i - start) as i32);
        if rc < 0 {
            return Err(rc);
        }
    }
    Ok(())
}

/// Where the run of `e` that starts at `i` ends: eight codes compared at a time while they all
/// are `e` (a burst that runs one engine, or none, is one run), then one at a time.
#[inline(always)]
fn run_end(engines: &[u8], mut i: usize, e: u8) -> usize {
    let eight = u64::from_ne_bytes([e; 8]);
    while let Some(w) = engines.get(i..).and_then(|r| r.first_chunk::<8>()) {
        if u64::from_ne_bytes(*w) != eight {
            break;
        }
        i += 8;
    }
    while engines.get(i) == Some(&e) {
        i += 1;
    }
    i
}

/// [`check_all`]'s word covers the out fields before `DIRTY` and nothing else.
const _: () = assert!(desc::VERDICT + 8 == desc::DIRTY && desc::VERDICT < desc::ARG && desc::TAIL < desc::DIRTY);

/// Engine ids fit the `u8` codes of `apply`, with `u8::MAX` left for "none".
const _: () = assert!(wasmdp_abi::engine::COUNT < u8::MAX as u32);

#[cfg(test)]
mod tests {
    use super::{run_end, sets_from, Sets};
    use crate::mbuf::MAX_BURST;
    use proptest::prelude::*;
    use wasmdp_abi::area::{desc, verdict, DESC};

    proptest! {
        /// On descriptors of passes, drops and sends to ports 0..3 (some dirty), the drops and sends
        /// from any index on are those a decode of each finds, and each send's port is written; a
        /// descriptor of anything else, anywhere from there, gives None.
        #[test]
        fn sets_from_finds_what_a_decode_of_each_finds(
            verdicts in proptest::collection::vec((0u8..=2, 0u16..3), 0..=520),
            dirty in proptest::collection::vec(prop_oneof![Just(0u16), 1u16..=80], 520),
            from in 0usize..=520, other in proptest::option::of((0usize..520, 0usize..7)),
        ) {
            let n = verdicts.len();
            let mut descs = vec![0u8; n * DESC];
            for (i, d) in descs.chunks_exact_mut(DESC).enumerate() {
                let (v, port) = verdicts[i];
                d[desc::VERDICT] = v;
                if v == verdict::SEND {
                    d[desc::ARG..desc::ARG + 2].copy_from_slice(&port.to_le_bytes());
                }
                d[desc::DIRTY..desc::DIRTY + 2].copy_from_slice(&dirty[i].min(64).to_le_bytes());
                d[desc::LEN] = 0xAA; // in fields are not looked at
            }
            let mut spoiled = None;
            if let Some((at, what)) = other.filter(|(at, _)| *at < n) {
                let d = &mut descs[at * DESC..(at + 1) * DESC];
                match what {
                    0 => d[desc::VERDICT] = verdict::ENGINE,
                    1 => { d[desc::VERDICT] = verdict::SEND; d[desc::ARG] = 3 } // a port refused
                    2 => { d[desc::VERDICT] = verdict::DROP; d[desc::ARG] = 1 } // an argument on a drop
                    3 => d[desc::TAIL] = 1,
                    4 => d[desc::HEAD + 1] = 0xFF,
                    5 => d[desc::VERDICT + 1] = 1, // the byte between verdict and argument
                    _ => d[desc::DIRTY..desc::DIRTY + 2].copy_from_slice(&65u16.to_le_bytes()),
                }
                spoiled = Some(at);
            }
            let mut targets = [u16::MAX; MAX_BURST];
            let got = sets_from(&descs, from, 64, |p| p < 3, &mut targets);
            if n > MAX_BURST || spoiled.is_some_and(|at| at >= from) {
                prop_assert!(got.is_none());
            } else {
                let mut want = Sets::default();
                for i in from..n {
                    match verdicts[i].0 {
                        verdict::DROP => want.drops.set(i),
                        verdict::SEND => {
                            want.sent.set(i);
                            prop_assert_eq!(targets[i], verdicts[i].1);
                        }
                        _ => {}
                    }
                }
                let want_dirty = (from..n).fold(0, |a, i| a | dirty[i].min(64));
                prop_assert_eq!(got, Some((want, want_dirty)));
                // The packets the engine skips: the first is the first drop or send.
                let first = (from..n).find(|&i| verdicts[i].0 != verdict::PASS);
                prop_assert_eq!(want.drops.union(&want.sent).next(0, n, true), first);
            }
        }
    }

    /// Every run found, of every length from 1 to past two words, wherever it starts: the end is
    /// where a test per code finds it.
    #[test]
    fn run_end_finds_the_end_of_every_run() {
        for len in 1..40 {
            for start in 0..len {
                for end in start + 1..=len {
                    let mut codes = vec![7u8; len];
                    codes[start..end].fill(3);
                    let got = run_end(&codes, start, 3);
                    assert_eq!(got, end, "a run of 3 at {start}..{end} in {len} codes");
                }
            }
        }
        assert_eq!(run_end(&[u8::MAX; 32], 0, u8::MAX), 32);
    }
}
