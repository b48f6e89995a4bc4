//! The host's side of the burst area (ABI 1.1, `wasmdp_abi::area`): before a call, the burst's
//! header, descriptors and windows are written into the plugin's memory; after it, the plugin's
//! decisions are read back, checked in full, and only then carried out: length changes, the windows
//! it changed, verdicts, engines, offloads.
//!
//! Nothing read back is trusted: an engine id, a port, a verdict or a dirty length out of range fails
//! the call before anything was changed (the port's failure policy applies, as for an error return);
//! a length change that does not fit the buffer drops that packet, counted as `headroom`.

use crate::mbuf::{flags, Burst, Pkt};
use crate::offload::{self, TxOffloads};
use crate::plugin::state::HostState;
use wasmdp_abi::area::{desc, hdr, rx, verdict, DESC, HEADER};
use wasmdp_abi::err;

/// A registered area: `max_pkts` descriptors and windows of `window` bytes at `ptr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Area {
    pub ptr: usize,
    pub max_pkts: usize,
    pub window: usize,
}

impl Area {
    /// One past its last byte (None on overflow).
    pub fn end(&self) -> Option<usize> {
        self.ptr.checked_add(wasmdp_abi::area::size(self.max_pkts, self.window))
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
#[inline]
pub(crate) fn fill(a: &Area, mem: &mut [u8], burst: &Burst, s: &Stamp, simd: crate::simd::Simd) -> bool {
    let Some(region) = a.region(mem) else { return false };
    let (h, rest) = region.split_at_mut(HEADER);
    h.fill(0);
    put(h, hdr::LEN, &(burst.len() as u32).to_le_bytes());
    put(h, hdr::PORT, &s.port.to_le_bytes());
    put(h, hdr::QUEUE, &s.queue.to_le_bytes());
    put(h, hdr::TX_PORT, &s.tx_port.to_le_bytes());
    put(h, hdr::WINDOW, &(a.window as u16).to_le_bytes());
    put(h, hdr::ENGINE, &(-1i32).to_le_bytes());
    put(h, hdr::NOW_NS, &s.now_ns.to_le_bytes());
    let (descs, wins) = rest.split_at_mut(a.max_pkts * DESC);
    let n = burst.len().min(a.max_pkts);
    for (i, p) in burst[..n].iter().enumerate() {
        let win = p.len().min(a.window);
        if let Some(d) = descs.get_mut(i * DESC..).and_then(<[u8]>::first_chunk_mut::<DESC>) {
            *d = descriptor(p, win);
        }
        if let Some(w) = wins.get_mut(i * a.window..i * a.window + win) {
            crate::simd::copy_dyn(simd, w, &p.data()[..win]);
        }
    }
    true
}

/// A packet's descriptor with its out fields zero.
#[inline(always)]
fn descriptor(p: &Pkt, win: usize) -> [u8; DESC] {
    let m = p.meta();
    let mut d = [0u8; DESC];
    put(&mut d, desc::LEN, &(p.len() as u32).to_le_bytes());
    put(&mut d, desc::WIN, &(win as u16).to_le_bytes());
    put(&mut d, desc::PORT, &m.port.to_le_bytes());
    put(&mut d, desc::HASH, &m.hash.to_le_bytes());
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
pub(crate) fn apply(a: &Area, mem: &mut [u8], st: &mut HostState) -> Result<(), i32> {
    let region = a.region(mem).ok_or(err::BAD_MEMORY)?;
    let header = read_header(region)?;
    let n = st.view.len.min(a.max_pkts);
    let mut decided = [Decision::default(); crate::mbuf::MAX_BURST];
    if header.changed {
        for (i, d) in decided[..n].iter_mut().enumerate() {
            *d = read_decision(region, a, i, st)?;
        }
        lengths_and_windows(region, a, &decided[..n], st)?;
    }
    verdicts(&decided[..n], header.engine, st)?;
    if let Some(tx) = header.offloads {
        st.with_call(|burst, _, _, view| {
            for i in (0..view.len).filter(|&i| !view.gone(i)) {
                offload::request(&mut burst[view.position(i)], &tx);
            }
        });
    }
    Ok(())
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

fn read_decision(region: &[u8], a: &Area, i: usize, st: &HostState) -> Result<Decision, i32> {
    let d: [u8; DESC] = get(region, HEADER + i * DESC);
    let arg = u16::from_le_bytes(get(&d, desc::ARG));
    let verdict = d[desc::VERDICT];
    match verdict {
        verdict::PASS | verdict::DROP => {}
        verdict::SEND if st.env.injects.get(usize::from(arg)).is_some_and(Option::is_some) => {}
        verdict::SEND => return Err(err::BAD_PORT),
        verdict::ENGINE if crate::engines::by_abi_id(u32::from(arg)).is_some() => {}
        verdict::ENGINE => return Err(err::BAD_ENGINE),
        _ => return Err(err::BAD_RANGE),
    }
    let dirty = u16::from_le_bytes(get(&d, desc::DIRTY));
    if usize::from(dirty) > a.window {
        return Err(err::BAD_RANGE);
    }
    let head = i16::from_le_bytes(get(&d, desc::HEAD));
    let tail = i16::from_le_bytes(get(&d, desc::TAIL));
    Ok(Decision { verdict, arg, head, tail, dirty })
}

/// Length changes (head, then tail), then the changed window bytes, packet by packet. A change that
/// does not fit drops the packet as `headroom`.
fn lengths_and_windows(region: &[u8], a: &Area, decided: &[Decision], st: &mut HostState) -> Result<(), i32> {
    let wins = HEADER + a.max_pkts * DESC;
    let simd = st.simd;
    st.with_call(|burst, _, _, view| {
        for (i, d) in decided.iter().enumerate() {
            if (d.head == 0 && d.tail == 0 && d.dirty == 0) || view.gone(i) {
                continue;
            }
            let p = &mut burst[view.position(i)];
            if (d.head != 0 || d.tail != 0) && super::hostfns::adjust(p, i32::from(d.head), i32::from(d.tail)).is_err()
            {
                view.request_room_drop(i);
                continue;
            }
            let n = usize::from(d.dirty).min(p.len());
            if let Some(w) = region.get(wins + i * a.window..wins + i * a.window + n) {
                crate::simd::copy_dyn(simd, &mut p.data_mut()[..n], w);
            }
        }
    })
    .ok_or(err::NO_BURST)
}

/// Drops and sends as requests (carried out after the call, with the 1.0 ones), then each engine on
/// its runs of consecutive packets: `ENGINE e` packets run `e`, `PASS` packets the header's engine.
fn verdicts(decided: &[Decision], header_engine: Option<u32>, st: &mut HostState) -> Result<(), i32> {
    let len = st.view.len;
    let engine_of = |i: usize| match decided.get(i) {
        Some(d) if d.verdict == verdict::ENGINE => Some(u32::from(d.arg)),
        Some(d) if d.verdict != verdict::PASS => None,
        _ => header_engine,
    };
    for (i, d) in decided.iter().enumerate() {
        if st.view.gone(i) {
            continue;
        }
        match d.verdict {
            verdict::DROP => st.view.request(i, None),
            verdict::SEND => st.view.request(i, Some(d.arg)),
            _ => {}
        }
    }
    let mut i = 0;
    while i < len {
        let Some(e) = engine_of(i) else {
            i += 1;
            continue;
        };
        let start = i;
        while i < len && engine_of(i) == Some(e) {
            i += 1;
        }
        let rc = super::hostfns::run_engine(st, e as i32, start as i32, (i - start) as i32);
        if rc < 0 {
            return Err(rc);
        }
    }
    Ok(())
}

/// Whether a packet's RX flags include what the area reports (keeps the two bit sets in step).
const _: () = assert!(flags::RX_VLAN as u32 == rx::VLAN && flags::RX_TUNNEL as u32 == rx::TUNNEL);
