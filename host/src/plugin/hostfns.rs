//! The host functions of ABI v1. Every index, offset, length and guest pointer is checked; a bad one
//! returns an error code and touches nothing. Every one does work bounded by the burst (at most
//! `MAX_BURST` packets of at most the pool's data room) or by a fixed small size: none can hold a
//! call past its deadline by more than a few microseconds.

use super::logs::{message, MAX_LOG_BYTES};
use super::state::{HostState, Sticky};
use crate::engines::ENGINES;
use crate::mbuf::{Burst, Pkt};
use crate::offload::{self, TxOffloads};
use crate::simd;
use wasmdp_abi::{engine, err, flags, import, level, ALL_PACKETS, IMPORT_MODULE};
use wasmtime::{Caller, Linker};

type C<'a> = Caller<'a, HostState>;

/// Longest parameter key looked up; a longer one is `NOT_FOUND` without being read.
pub const MAX_PARAM_KEY: usize = 256;
/// Longest counter name.
const MAX_COUNTER_NAME: usize = 64;

/// Registers every host function.
pub(crate) fn link(linker: &mut Linker<HostState>) -> anyhow::Result<()> {
    let m = IMPORT_MODULE;
    linker.func_wrap(m, import::BURST_LEN, |mut c: C<'_>| {
        let st = c.data_mut();
        if st.burst().is_none() {
            return err::NO_BURST;
        }
        st.view.len as i32
    })?;
    linker.func_wrap(m, import::PKT_LEN, |mut c: C<'_>, i: i32| with_pkt(&mut c, i, |p| p.len() as i32))?;
    linker.func_wrap(m, import::PKT_READ, |mut c: C<'_>, i: i32, off: i32, ptr: i32, len: i32| {
        guest_io(&mut c, i, off, ptr, len, false)
    })?;
    linker.func_wrap(m, import::PKT_WRITE, |mut c: C<'_>, i: i32, off: i32, ptr: i32, len: i32| {
        guest_io(&mut c, i, off, ptr, len, true)
    })?;
    linker.func_wrap(m, import::PKT_COPY, pkt_copy)?;
    linker.func_wrap(m, import::RUN_ENGINE, |mut c: C<'_>, e: i32, start: i32, n: i32| {
        run_engine(c.data_mut(), e, start, n)
    })?;
    linker.func_wrap(m, import::MACSWAP, macswap)?;
    linker.func_wrap(m, import::SET_OFFLOADS, set_offloads)?;
    linker.func_wrap(m, import::DROP_PKT, |mut c: C<'_>, i: i32| request(c.data_mut(), i, None))?;
    linker.func_wrap(m, import::SEND_TO, send_to)?;
    linker.func_wrap(m, import::SET_STICKY, set_sticky)?;
    linker.func_wrap(m, import::CLEAR_STICKY, |mut c: C<'_>| {
        c.data_mut().sticky = None;
        0
    })?;
    linker.func_wrap(m, import::COUNTER_REGISTER, counter_register)?;
    linker.func_wrap(m, import::COUNTER_ADD, |c: C<'_>, id: i32, v: i64| match u64::try_from(v) {
        Ok(v) => c.data().counters.add(id, v),
        Err(_) => err::BAD_RANGE,
    })?;
    linker.func_wrap(m, import::PARAM_GET, param_get)?;
    linker.func_wrap(m, import::NOW_NS, |_: C<'_>| super::counters::now_ns() as i64)?;
    linker.func_wrap(m, import::LOG, log)?;
    Ok(())
}

/// A packet index the plugin may act on, checked: in the burst and neither dropped, sent nor freed
/// by an engine in this call. Returns its position in the burst.
fn live(st: &mut HostState, i: i32) -> Result<usize, i32> {
    st.burst().ok_or(err::NO_BURST)?;
    let i = usize::try_from(i).ok().filter(|&i| i < st.view.len).ok_or(err::BAD_INDEX)?;
    if st.view.gone(i) {
        return Err(err::GONE);
    }
    Ok(st.view.position(i))
}

fn with_pkt(c: &mut C<'_>, i: i32, f: impl FnOnce(&mut Pkt) -> i32) -> i32 {
    let st = c.data_mut();
    match live(st, i) {
        Ok(p) => st.burst().map_or(err::NO_BURST, |b| f(&mut b[p])),
        Err(e) => e,
    }
}

/// `off..off+len` inside `limit`, as a range.
fn span(off: i32, len: i32, limit: usize) -> Option<std::ops::Range<usize>> {
    let (off, len) = (usize::try_from(off).ok()?, usize::try_from(len).ok()?);
    let end = off.checked_add(len)?;
    (end <= limit).then_some(off..end)
}

/// A guest pointer/length pair as a range of its memory. Pointers are `i32` bit patterns of u32
/// addresses.
fn guest_span(ptr: i32, len: i32, limit: usize) -> Option<std::ops::Range<usize>> {
    let (ptr, len) = (ptr as u32 as usize, usize::try_from(len).ok()?);
    let end = ptr.checked_add(len)?;
    (end <= limit).then_some(ptr..end)
}

fn guest_io(c: &mut C<'_>, i: i32, off: i32, ptr: i32, len: i32, write: bool) -> i32 {
    let Some(mem) = c.data().memory else { return err::BAD_MEMORY };
    let (guest, st) = mem.data_and_store_mut(c);
    let simd = st.simd;
    let p = match live(st, i) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let Some(b) = st.burst() else { return err::NO_BURST };
    let pkt = &mut b[p];
    let Some(pr) = span(off, len, pkt.len()) else { return err::BAD_RANGE };
    let Some(gr) = guest_span(ptr, len, guest.len()) else { return err::BAD_MEMORY };
    if write {
        simd::copy_dyn(simd, &mut pkt.data_mut()[pr], &guest[gr]);
    } else {
        simd::copy_dyn(simd, &mut guest[gr], &pkt.data()[pr]);
    }
    len
}

fn pkt_copy(mut c: C<'_>, di: i32, doff: i32, si: i32, soff: i32, len: i32) -> i32 {
    let st = c.data_mut();
    let simd = st.simd;
    let (d, s) = match (live(st, di), live(st, si)) {
        (Ok(d), Ok(s)) => (d, s),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    let Some(b) = st.burst() else { return err::NO_BURST };
    let Some(sr) = span(soff, len, b[s].len()) else { return err::BAD_RANGE };
    let Some(dr) = span(doff, len, b[d].len()) else { return err::BAD_RANGE };
    if d == s {
        b[d].data_mut().copy_within(sr, dr.start);
    } else {
        let (dp, sp) = two(b, d, s);
        simd::copy_dyn(simd, &mut dp.data_mut()[dr], &sp.data()[sr]);
    }
    len
}

fn two(b: &mut Burst, d: usize, s: usize) -> (&mut Pkt, &Pkt) {
    if d < s {
        let (l, r) = b.split_at_mut(s);
        (&mut l[d], &r[0])
    } else {
        let (l, r) = b.split_at_mut(d);
        (&mut r[0], &l[s])
    }
}

/// An index range of the call's burst.
fn index_range(st: &mut HostState, start: i32, n: i32) -> Result<std::ops::Range<usize>, i32> {
    st.burst().ok_or(err::NO_BURST)?;
    span(start, n, st.view.len).ok_or(err::BAD_INDEX)
}

fn run_engine(st: &mut HostState, e: i32, start: i32, n: i32) -> i32 {
    let simd = st.simd;
    let Some(id) = u32::try_from(e).ok().filter(|&e| e < engine::COUNT) else { return err::BAD_ENGINE };
    let range = match index_range(st, start, n) {
        Ok(r) => r,
        Err(e) => return e,
    };
    if id == engine::RXONLY {
        for i in range {
            if !st.view.gone(i) {
                st.view.request(i, None);
            }
        }
        return n;
    }
    let desc = ENGINES[id as usize];
    let run = desc.run.get(simd);
    st.with_call(|burst, ctx, scratch, view| {
        let (first, count) = view.present(range.clone());
        if count == 0 {
            return;
        }
        if desc.keeps_packets && first == 0 && count == burst.len() {
            return run(ctx, burst);
        }
        scratch.extend_from(burst.drain_range(first..first + count));
        if desc.keeps_packets {
            run(ctx, scratch);
            return burst.splice_in(first, scratch);
        }
        // The engine may free or replace packets: tag each with its index, and settle after.
        let live = range.clone().filter(|&i| !(view.dirty && view.consumed.has(i)));
        for (p, i) in scratch.iter_mut().zip(live) {
            p.meta_mut().set_slot(i as u16);
        }
        run(ctx, scratch);
        view.settle(burst, range, first, scratch);
    })
    .map_or(err::NO_BURST, |()| n)
}

fn macswap(mut c: C<'_>, start: i32, n: i32) -> i32 {
    let st = c.data_mut();
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

fn tx_of(f: i64, tci: i32, outer: i32) -> Result<TxOffloads, i32> {
    let f = u64::try_from(f).ok().filter(|f| f & !flags::ALLOWED == 0).ok_or(err::BAD_FLAGS)?;
    let (tci, outer) = match (u16::try_from(tci), u16::try_from(outer)) {
        (Ok(t), Ok(o)) => (t, o),
        _ => return Err(err::BAD_RANGE),
    };
    Ok(TxOffloads { flags: f, vlan_tci: tci, vlan_tci_outer: outer })
}

fn set_offloads(mut c: C<'_>, i: i32, f: i64, tci: i32, outer: i32) -> i32 {
    let tx = match tx_of(f, tci, outer) {
        Ok(tx) => tx,
        Err(e) => return e,
    };
    let st = c.data_mut();
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
fn request(st: &mut HostState, i: i32, send: Option<u16>) -> i32 {
    match live(st, i) {
        Ok(_) => {
            st.view.request(i as usize, send);
            0
        }
        Err(e) => e,
    }
}

fn send_to(mut c: C<'_>, i: i32, port: i32) -> i32 {
    let st = c.data_mut();
    if let Err(e) = live(st, i) {
        return e;
    }
    match usize::try_from(port).ok().filter(|&p| st.injects.get(p).is_some_and(Option::is_some)) {
        Some(port) => request(st, i, Some(port as u16)),
        None => err::BAD_PORT,
    }
}

fn set_sticky(mut c: C<'_>, e: i32, f: i64, tci: i32, outer: i32, bursts: i32) -> i32 {
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
    c.data_mut().sticky =
        Some(Sticky { engine, flags: tx.flags, vlan_tci: tx.vlan_tci, vlan_tci_outer: tx.vlan_tci_outer, left });
    0
}

/// At most `max` bytes of guest memory at `ptr..ptr+len` (checked against the whole range), and the
/// length asked for.
fn guest_bytes(c: &mut C<'_>, ptr: i32, len: i32, max: usize) -> Result<(Vec<u8>, usize), i32> {
    let mem = c.data().memory.ok_or(err::BAD_MEMORY)?;
    let data = mem.data(&*c);
    let r = guest_span(ptr, len, data.len()).ok_or(err::BAD_MEMORY)?;
    let total = r.len();
    Ok((data[r.start..r.start + total.min(max)].to_vec(), total))
}

fn counter_register(mut c: C<'_>, ptr: i32, len: i32) -> i32 {
    if !c.data().in_init {
        return err::NO_BURST;
    }
    let (name, total) = match guest_bytes(&mut c, ptr, len, MAX_COUNTER_NAME) {
        Ok(n) => n,
        Err(e) => return e,
    };
    if !(1..=MAX_COUNTER_NAME).contains(&total) {
        return err::BAD_RANGE;
    }
    c.data().counters.register(String::from_utf8_lossy(&name).into_owned())
}

fn param_get(mut c: C<'_>, kp: i32, kl: i32, op: i32, cap: i32) -> i32 {
    let (key, total) = match guest_bytes(&mut c, kp, kl, MAX_PARAM_KEY) {
        Ok(k) => k,
        Err(e) => return e,
    };
    let params = c.data().params.clone();
    let Some(value) = std::str::from_utf8(&key).ok().filter(|_| total <= MAX_PARAM_KEY).and_then(|k| params.get(k))
    else {
        return err::NOT_FOUND;
    };
    let Some(mem) = c.data().memory else { return err::BAD_MEMORY };
    let data = mem.data_mut(&mut c);
    let Some(r) = guest_span(op, cap, data.len()) else { return err::BAD_MEMORY };
    if value.len() > r.len() {
        return err::TOO_SMALL;
    }
    data[r.start..r.start + value.len()].copy_from_slice(value.as_bytes());
    value.len() as i32
}

fn log(mut c: C<'_>, lvl: i32, ptr: i32, len: i32) {
    // The rate is checked first: a line over it reads nothing.
    let Some(suppressed) = c.data_mut().logs.allow() else { return };
    let Ok((bytes, total)) = guest_bytes(&mut c, ptr, len, MAX_LOG_BYTES) else { return };
    let mut msg = message(&bytes, total);
    if suppressed > 0 {
        msg.push_str(&format!(" ({suppressed} earlier lines over the rate limit were not logged)"));
    }
    let label = c.data().label.clone();
    match lvl as u32 {
        level::ERROR => tracing::error!(plugin = %label, "{msg}"),
        level::WARN => tracing::warn!(plugin = %label, "{msg}"),
        level::DEBUG => tracing::debug!(plugin = %label, "{msg}"),
        _ => tracing::info!(plugin = %label, "{msg}"),
    }
}
