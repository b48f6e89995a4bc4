//! The host's side of the burst area (ABI 1.1, `wasmdp_abi::area`): before a call, the burst's
//! header, descriptors and windows (or, for heads, the windows alone: [`heads`]) are written into
//! the plugin's memory; after it, the plugin's
//! decisions are read back, checked in full, and only then carried out: length changes, the windows
//! it changed, verdicts, engines, offloads.
//!
//! Nothing read back is trusted: an engine id, a port, a verdict or a dirty length out of range fails
//! the call before anything was changed (the port's failure policy applies, as for an error return);
//! a length change that does not fit the buffer drops that packet, counted as `headroom`.

use crate::mbuf::{flags, Burst, Pkt};
use crate::offload::{self, TxOffloads};
use crate::plugin::state::HostState;
use crate::simd::Simd;
use wasmdp_abi::area::{desc, hdr, rx, verdict, DESC, HEADER};
use wasmdp_abi::err;

mod direct;
mod heads;

pub(crate) use direct::fill as fill_direct;

/// A registered area: `max_pkts` descriptors and windows of `window` bytes at `ptr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Area {
    pub ptr: usize,
    pub max_pkts: usize,
    pub window: usize,
    /// Whether each descriptor gets the host's flow hash (`area::FLOW_HASH`).
    pub flow_hash: bool,
    /// Windows without descriptors (`area::HEADS`).
    pub heads: bool,
    /// Descriptors pointing at the packets in the stream's region (`area::DIRECT`).
    pub direct: bool,
}

impl Area {
    /// One past its last byte (None on overflow).
    pub fn end(&self) -> Option<usize> {
        let shape = wasmdp_abi::area::Shape {
            window: self.window,
            flow_hash: self.flow_hash,
            heads: self.heads,
            direct: self.direct,
        };
        self.ptr.checked_add(shape.size(self.max_pkts))
    }

    /// Its bytes in the plugin's memory, when they are all there.
    #[inline(always)]
    fn region<'m>(&self, mem: &'m mut [u8]) -> Option<&'m mut [u8]> {
        mem.get_mut(self.ptr..self.end()?)
    }
}

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
    let (h, rest) = region.split_at_mut(HEADER);
    fill_header(h, a, burst, s);
    let pkts = &burst[..burst.len().min(a.max_pkts)];
    if a.heads {
        heads::fill(a, pkts, rest, simd);
        return true;
    }
    let (descs, wins) = rest.split_at_mut(a.max_pkts * DESC);
    // One loop per kind of area, so that a loop does not test per packet what the area asked for
    // (a test per packet, measurable in the loop with windows).
    match (a.window, a.flow_hash) {
        (0, false) => fill_descriptors::<false>(pkts, descs),
        (0, true) => fill_descriptors::<true>(pkts, descs),
        (w, false) => with_const!(w, W in [16, 32, 64] => fill_windows::<false, W>(pkts, descs, wins, stale, w, simd)),
        (w, true) => with_const!(w, W in [16, 32, 64] => fill_windows::<true, W>(pkts, descs, wins, stale, w, simd)),
    }
    true
}

/// The header, its out fields reset.
#[inline(always)]
fn fill_header(h: &mut [u8], a: &Area, burst: &Burst, s: &Stamp) {
    h.fill(0);
    put(h, hdr::LEN, &(burst.len() as u32).to_le_bytes());
    put(h, hdr::PORT, &s.port.to_le_bytes());
    put(h, hdr::QUEUE, &s.queue.to_le_bytes());
    put(h, hdr::TX_PORT, &s.tx_port.to_le_bytes());
    put(h, hdr::WINDOW, &(a.window as u16).to_le_bytes());
    put(h, hdr::ENGINE, &(-1i32).to_le_bytes());
    put(h, hdr::NOW_NS, &s.now_ns.to_le_bytes());
}

/// Descriptors without windows (`chunks_exact_mut` refuses a chunk of 0).
fn fill_descriptors<const HASH: bool>(pkts: &[Pkt], descs: &mut [u8]) {
    for (p, d) in pkts.iter().zip(descs.chunks_exact_mut(DESC)) {
        put(d, 0, &descriptor::<HASH>(p, 0));
    }
}

/// Descriptors and windows of `window` bytes, as zipped chunks: the slots' bounds are checked
/// once, not per packet. Out of line, each instance: inlined into `fill` beside the others, the
/// loop's registers were allocated for the whole function (moves and reloads per packet, found
/// after an unrelated change).
#[inline(never)]
fn fill_windows<const HASH: bool, const W: usize>(
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
fn descriptor<const HASH: bool>(p: &Pkt, win: usize) -> [u8; DESC] {
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

#[inline(always)]
fn put(b: &mut [u8], at: usize, v: &[u8]) {
    if let Some(d) = b.get_mut(at..at + v.len()) {
        d.copy_from_slice(v);
    }
}

#[inline(always)]
fn get<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    b.get(at..).and_then(<[u8]>::first_chunk::<N>).copied().unwrap_or([0; N])
}

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

/// One packet's decisions, checked.
#[derive(Debug, Clone, Copy, Default)]
struct Decision {
    verdict: u8,
    arg: u16,
    head: i16,
    tail: i16,
    dirty: u16,
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
    if a.heads {
        // Direct heads wrote the packets in place: nothing to copy back.
        if header.changed && !a.direct {
            heads::copy_back(a, region.get(HEADER..).ok_or(err::BAD_MEMORY)?, st)?;
        }
        if let Some(e) = header.engine.filter(|_| len > 0) {
            let rc = super::hostfns::run_whole(st, e);
            if rc < 0 {
                return Err(rc);
            }
        }
        offload_all(header.offloads, st);
        return Ok(());
    }
    let n = if header.changed { len.min(a.max_pkts) } else { 0 };
    let descs = region.get(HEADER..HEADER + n * DESC).ok_or(err::BAD_MEMORY)?;
    let seen = check_all(descs, a.window, st)?;
    let wins = region.get(HEADER + a.max_pkts * DESC..).ok_or(err::BAD_MEMORY)?;
    if seen.only_passes() && st.view.untouched() {
        // Every packet stays and runs the header's engine: the windows back, then one engine run.
        if seen.dirty {
            copy_back(descs, wins, a.window, st)?;
        }
        if let Some(e) = header.engine.filter(|_| len > 0) {
            let rc = super::hostfns::run_whole(st, e);
            if rc < 0 {
                return Err(rc);
            }
        }
    } else {
        let header_engine = header.engine.map_or(u8::MAX, |e| e as u8);
        // An engine code per packet, in an array sized for bursts of up to 64 when the burst fits:
        // set whole each time, one of the largest burst (512) was a `rep stosb`, cheap in
        // instructions but not in time.
        if len <= 64 {
            carry_and_run::<64>(descs, wins, a, header_engine, st)?;
        } else {
            carry_and_run::<{ crate::mbuf::MAX_BURST }>(descs, wins, a, header_engine, st)?;
        }
    }
    offload_all(header.offloads, st);
    Ok(())
}

/// The header's offloads requested for every packet still in the burst.
fn offload_all(offloads: Option<TxOffloads>, st: &mut HostState) {
    if let Some(tx) = offloads {
        st.with_call(|burst, _, _, view| {
            for i in (0..view.len).filter(|&i| !view.gone(i)) {
                offload::request(&mut burst[view.position(i)], &tx);
            }
        });
    }
}

/// [`carry_out`] then [`run_engines`] with an engine array of `N` (at least the burst's length).
#[inline(always)]
fn carry_and_run<const N: usize>(
    descs: &[u8],
    wins: &[u8],
    a: &Area,
    header_engine: u8,
    st: &mut HostState,
) -> Result<(), i32> {
    let len = st.view.len;
    let mut engines = [u8::MAX; N];
    let engines = engines.get_mut(..len).ok_or(err::NO_BURST)?;
    carry_out(descs, wins, a, header_engine, engines, st)?;
    run_engines(engines, st)
}

/// What the checked descriptors ask for, in sum.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    /// A verdict other than `PASS`.
    verdicts: bool,
    /// A length change.
    lengths: bool,
    /// A window to copy back.
    dirty: bool,
}

impl Seen {
    fn only_passes(&self) -> bool {
        !self.verdicts && !self.lengths
    }
}

/// Checks every descriptor (all before any is carried out) and sums up what they ask for. A burst
/// of plain passes (out bytes before `DIRTY` all 0: no verdict, argument or length change; the
/// dirty count within the window) needs nothing decoded: one word and one count a packet. At the
/// first other descriptor, every descriptor is decoded and checked instead.
fn check_all(descs: &[u8], window: usize, st: &HostState) -> Result<Seen, i32> {
    let mut dirty = 0u16;
    for d in descs.chunks_exact(DESC) {
        let out = u64::from_le_bytes(get(d, desc::VERDICT));
        let k = u16::from_le_bytes(get(d, desc::DIRTY));
        if out != 0 || usize::from(k) > window {
            return check_each(descs, window, st);
        }
        dirty |= k;
    }
    Ok(Seen { verdicts: false, lengths: false, dirty: dirty != 0 })
}

/// [`check_all`] for a burst with other decisions: every descriptor decoded and checked. The sums
/// are plain ORs of the raw fields.
fn check_each(descs: &[u8], window: usize, st: &HostState) -> Result<Seen, i32> {
    let (mut verdicts, mut lengths, mut dirty) = (0u8, 0u32, 0u16);
    for d in descs.chunks_exact(DESC) {
        let d = decode(d);
        if d.verdict != verdict::PASS || usize::from(d.dirty) > window {
            check(&d, window, st)?;
        }
        verdicts |= d.verdict;
        lengths |= (d.head as u16 as u32) << 16 | u32::from(d.tail as u16);
        dirty |= d.dirty;
    }
    Ok(Seen { verdicts: verdicts != 0, lengths: lengths != 0, dirty: dirty != 0 })
}

/// The changed window bytes into the packets, when no packet moved or left during the call (plugin
/// index `i` is burst position `i`) and none changes length.
fn copy_back(descs: &[u8], wins: &[u8], window: usize, st: &mut HostState) -> Result<(), i32> {
    if window == 0 {
        return Ok(()); // `check` allows no dirty bytes then
    }
    with_const!(window, W in [16, 32, 64] => copy_back_windows::<W>(descs, wins, window, st))
}

fn copy_back_windows<const W: usize>(descs: &[u8], wins: &[u8], window: usize, st: &mut HostState) -> Result<(), i32> {
    let simd = st.simd;
    st.with_call(|burst, _, _, _| {
        for (p, (d, w)) in burst.iter_mut().zip(descs.chunks_exact(DESC).zip(wins.chunks_exact(window))) {
            let k = usize::from(decode(d).dirty).min(p.len());
            copy_window::<W>(simd, &mut p.data_mut()[..k], &w[..k]);
        }
    })
    .ok_or(err::NO_BURST)
}

fn read_header(region: &[u8]) -> Result<Header, i32> {
    let engine = i32::from_le_bytes(get(region, hdr::ENGINE));
    let engine = match engine {
        -1 => None,
        e => Some(u32::try_from(e).ok().filter(|&e| crate::engines::by_abi_id(e).is_some()).ok_or(err::BAD_ENGINE)?),
    };
    let changed = u32::from_le_bytes(get(region, hdr::CHANGED)) != 0;
    let f = u64::from_le_bytes(get(region, hdr::OFFLOADS));
    if f & !wasmdp_abi::flags::ALLOWED != 0 {
        return Err(err::BAD_FLAGS);
    }
    let offloads = (f != 0).then(|| TxOffloads {
        flags: f,
        vlan_tci: u16::from_le_bytes(get(region, hdr::VLAN_TCI)),
        vlan_tci_outer: u16::from_le_bytes(get(region, hdr::VLAN_OUTER)),
    });
    Ok(Header { engine, changed, offloads })
}

/// A descriptor's out fields as written (unchecked: [`check`] checks them).
#[inline(always)]
fn decode(d: &[u8]) -> Decision {
    let d: [u8; DESC] = get(d, 0);
    Decision {
        verdict: d[desc::VERDICT],
        arg: u16::from_le_bytes([d[desc::ARG], d[desc::ARG + 1]]),
        head: i16::from_le_bytes([d[desc::HEAD], d[desc::HEAD + 1]]),
        tail: i16::from_le_bytes([d[desc::TAIL], d[desc::TAIL + 1]]),
        dirty: u16::from_le_bytes([d[desc::DIRTY], d[desc::DIRTY + 1]]),
    }
}

/// A decision the host can carry out, or the code the call fails with.
#[inline(always)]
fn check(d: &Decision, window: usize, st: &HostState) -> Result<(), i32> {
    match d.verdict {
        verdict::PASS | verdict::DROP => {}
        verdict::SEND if st.env.injects.get(usize::from(d.arg)).is_some_and(Option::is_some) => {}
        verdict::SEND => return Err(err::BAD_PORT),
        verdict::ENGINE if crate::engines::by_abi_id(u32::from(d.arg)).is_some() => {}
        verdict::ENGINE => return Err(err::BAD_ENGINE),
        _ => return Err(err::BAD_RANGE),
    }
    if usize::from(d.dirty) > window {
        return Err(err::BAD_RANGE);
    }
    Ok(())
}

/// Per packet with a descriptor: the length changes (front, then tail; one that does not fit drops
/// the packet as `headroom`), the changed window bytes, drops and sends as requests (carried out
/// after the call with the 1.0 ones), and the engine it is to run (`u8::MAX`: none) into `engines`;
/// packets past the descriptors get the header's engine.
fn carry_out(
    descs: &[u8],
    wins: &[u8],
    a: &Area,
    header_engine: u8,
    engines: &mut [u8],
    st: &mut HostState,
) -> Result<(), i32> {
    let (simd, window) = (st.simd, a.window);
    // With direct access the plugin wrote every byte a length change adds, in place: none is
    // zeroed (with windows, those the window does not write are).
    let written = if a.direct { usize::MAX } else { 0 };
    st.with_call(|burst, _, _, view| {
        let n = descs.len() / DESC;
        engines[n..].fill(header_engine);
        let descs = descs.chunks_exact(DESC).map(decode);
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
fn carry_one(
    p: &mut Pkt,
    d: &Decision,
    (w, written): (&[u8], usize),
    header_engine: u8,
    simd: Simd,
    view: &mut super::state::View,
    i: usize,
) -> u8 {
    let refused = (d.head != 0 || d.tail != 0)
        && if written == usize::MAX {
            p.reframe(d.head.into(), d.tail.into()).is_err()
        } else {
            super::hostfns::adjust_then_write(p, (d.head, d.tail, d.dirty), written).is_err()
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
    match d.verdict {
        verdict::DROP => {
            view.request(i, None);
            u8::MAX
        }
        verdict::SEND => {
            view.request(i, Some(d.arg));
            u8::MAX
        }
        verdict::ENGINE => d.arg as u8, // checked: an engine id
        _ => header_engine,
    }
}

/// Each engine on its runs of consecutive packets.
fn run_engines(engines: &[u8], st: &mut HostState) -> Result<(), i32> {
    let mut i = 0;
    while i < engines.len() {
        let e = engines[i];
        let start = i;
        while i < engines.len() && engines[i] == e {
            i += 1;
        }
        if e == u8::MAX {
            continue;
        }
        let rc = super::hostfns::run_engine(st, i32::from(e), start as i32, (i - start) as i32);
        if rc < 0 {
            return Err(rc);
        }
    }
    Ok(())
}

/// A window's bytes, in `W` bytes of fixed moves when there are `W` (a whole window of a size
/// `fill` and `copy_back` instantiate, which is most packets': cheaper than [`copy_small`]'s tests
/// of the length; BENCHMARKS.md has the figures).
#[inline(always)]
fn copy_window<const W: usize>(simd: Simd, dst: &mut [u8], src: &[u8]) {
    if W != 0 && dst.len() == W {
        return dst.copy_from_slice(&src[..W]);
    }
    copy_small(simd, dst, src)
}

/// Zeroes each window from its packet's end (`WIN` of the descriptors just written) to `to`.
#[cold]
#[inline(never)]
fn zero_stale(descs: &[u8], wins: &mut [u8], window: usize, to: usize) {
    for (d, w) in descs.chunks_exact(DESC).zip(wins.chunks_exact_mut(window)) {
        let win = usize::from(u16::from_le_bytes(get(d, desc::WIN)));
        if let Some(stale) = w.get_mut(win..to.min(window)) {
            stale.fill(0);
        }
    }
}

/// A window's bytes: most are a few dozen, where fixed-size moves that may overlap (for 17..=32
/// bytes: 0..16 and n-16..n) beat a call into memcpy and the SIMD copy's dispatch (measured with
/// the VXLAN encapsulation plugin's 50..64-byte windows: BENCHMARKS.md).
#[inline(always)]
fn copy_small(simd: Simd, dst: &mut [u8], src: &[u8]) {
    let n = dst.len();
    let src = &src[..n];
    if n > 32 {
        if n > 64 {
            return crate::simd::copy_dyn(simd, dst, src);
        }
        dst[16..32].copy_from_slice(&src[16..32]);
        dst[n - 32..n - 16].copy_from_slice(&src[n - 32..n - 16]);
    }
    if n >= 16 {
        dst[..16].copy_from_slice(&src[..16]);
        dst[n - 16..].copy_from_slice(&src[n - 16..]);
    } else if n >= 8 {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..].copy_from_slice(&src[n - 8..]);
    } else {
        dst.copy_from_slice(src);
    }
}

/// Whether a packet's RX flags include what the area reports (keeps the two bit sets in step).
const _: () = assert!(flags::RX_VLAN as u32 == rx::VLAN && flags::RX_TUNNEL as u32 == rx::TUNNEL);

/// [`check_all`]'s word covers the out fields before `DIRTY` and nothing else.
const _: () = assert!(desc::VERDICT + 8 == desc::DIRTY && desc::VERDICT < desc::ARG && desc::TAIL < desc::DIRTY);

/// Engine ids fit the `u8` codes of `apply`, with `u8::MAX` left for "none".
const _: () = assert!(wasmdp_abi::engine::COUNT < u8::MAX as u32);

#[cfg(test)]
mod tests {
    #[test]
    fn small_copies_are_exact_at_every_length() {
        let simd = crate::simd::Simd::detect();
        let src: Vec<u8> = (0..200u8).collect();
        for n in 0..=130 {
            let mut dst = vec![0xEEu8; n + 8];
            super::copy_small(simd, &mut dst[4..4 + n], &src[1..1 + n]);
            assert_eq!(&dst[4..4 + n], &src[1..1 + n], "length {n}");
            assert!(dst[..4].iter().chain(&dst[4 + n..]).all(|&b| b == 0xEE), "length {n}: outside touched");
        }
    }

    #[test]
    fn window_copies_are_exact_for_whole_and_partial_windows() {
        fn each_length<const W: usize>() {
            let simd = crate::simd::Simd::detect();
            let src: Vec<u8> = (0..200u8).collect();
            for n in 0..=W + 2 {
                let mut dst = vec![0xEEu8; n + 8];
                super::copy_window::<W>(simd, &mut dst[4..4 + n], &src[1..1 + n]);
                assert_eq!(&dst[4..4 + n], &src[1..1 + n], "window {W}, length {n}");
                assert!(
                    dst[..4].iter().chain(&dst[4 + n..]).all(|&b| b == 0xEE),
                    "window {W}, length {n}: outside touched"
                );
            }
        }
        each_length::<16>();
        each_length::<32>();
        each_length::<64>();
        each_length::<0>();
    }
}
