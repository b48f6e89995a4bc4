//! The host functions of ABI v1. Every index, offset, length and guest pointer is checked; a bad one
//! returns an error code and touches nothing.

use super::state::{HostState, Sticky};
use crate::engines::ENGINES;
use crate::mbuf::{Burst, Pkt};
use crate::offload::{self, TxOffloads};
use crate::simd;
use wasmdp_abi::{engine, err, flags, import, level, ALL_PACKETS, IMPORT_MODULE, MAX_COUNTERS};
use wasmtime::{Caller, Linker};

type C<'a> = Caller<'a, HostState>;

/// Registers every host function.
pub(crate) fn link(linker: &mut Linker<HostState>) -> anyhow::Result<()> {
    let m = IMPORT_MODULE;
    linker.func_wrap(m, import::BURST_LEN, |mut c: C<'_>| {
        c.data_mut().burst().map_or(err::NO_BURST, |b| b.len() as i32)
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
    linker.func_wrap(m, import::DROP_PKT, drop_pkt)?;
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

fn index(b: &Burst, i: i32) -> Option<usize> {
    usize::try_from(i).ok().filter(|&i| i < b.len())
}

/// A live packet of the burst: in range and neither dropped nor sent in this call.
fn live(st: &mut HostState, i: i32) -> Result<usize, i32> {
    let b = st.burst().ok_or(err::NO_BURST)?;
    let i = index(b, i).ok_or(err::BAD_INDEX)?;
    if st.gone(i) {
        return Err(err::GONE);
    }
    Ok(i)
}

fn with_pkt(c: &mut C<'_>, i: i32, f: impl FnOnce(&mut Pkt) -> i32) -> i32 {
    let st = c.data_mut();
    let i = match live(st, i) {
        Ok(i) => i,
        Err(e) => return e,
    };
    st.burst().map_or(err::NO_BURST, |b| f(&mut b[i]))
}

/// `off..off+len` inside `limit`, as a range.
fn span(off: i32, len: i32, limit: usize) -> Option<std::ops::Range<usize>> {
    let (off, len) = (usize::try_from(off).ok()?, usize::try_from(len).ok()?);
    let end = off.checked_add(len)?;
    (end <= limit).then_some(off..end)
}

fn guest_io(c: &mut C<'_>, i: i32, off: i32, ptr: i32, len: i32, write: bool) -> i32 {
    let Some(mem) = c.data().memory else { return err::BAD_MEMORY };
    let (guest, st) = mem.data_and_store_mut(c);
    let simd = st.simd;
    let i = match live(st, i) {
        Ok(i) => i,
        Err(e) => return e,
    };
    let Some(b) = st.burst() else { return err::NO_BURST };
    let p = &mut b[i];
    let Some(pr) = span(off, len, p.len()) else { return err::BAD_RANGE };
    let Some(gr) = span(ptr, len, guest.len()) else { return err::BAD_MEMORY };
    if write {
        simd::copy_dyn(simd, &mut p.data_mut()[pr], &guest[gr]);
    } else {
        simd::copy_dyn(simd, &mut guest[gr], &p.data()[pr]);
    }
    len
}

fn pkt_copy(mut c: C<'_>, di: i32, doff: i32, si: i32, soff: i32, len: i32) -> i32 {
    let st = c.data_mut();
    let simd = st.simd;
    let (di, si) = match (live(st, di), live(st, si)) {
        (Ok(d), Ok(s)) => (d, s),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    let Some(b) = st.burst() else { return err::NO_BURST };
    let Some(sr) = span(soff, len, b[si].len()) else { return err::BAD_RANGE };
    let Some(dr) = span(doff, len, b[di].len()) else { return err::BAD_RANGE };
    if di == si {
        b[di].data_mut().copy_within(sr, dr.start);
    } else {
        let (d, s) = two(b, di, si);
        simd::copy_dyn(simd, &mut d.data_mut()[dr], &s.data()[sr]);
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

fn run_engine(st: &mut HostState, e: i32, start: i32, n: i32) -> i32 {
    let simd = st.simd;
    let Some(id) = u32::try_from(e).ok().filter(|&e| e < engine::COUNT) else { return err::BAD_ENGINE };
    let Some(len) = st.burst().map(|b| b.len()) else { return err::NO_BURST };
    let Some(range) = span(start, n, len) else { return err::BAD_INDEX };
    if id == engine::RXONLY {
        for i in range.clone() {
            if !st.gone(i) {
                st.request(i, false);
            }
        }
        return n;
    }
    let Some((burst, ctx, scratch)) = st.burst_and_ctx() else { return err::NO_BURST };
    let run = ENGINES[id as usize].run.get(simd);
    if range.start == 0 && range.end == burst.len() {
        run(ctx, burst);
        return burst.len() as i32;
    }
    scratch.extend_from(burst.drain_range(range.clone()));
    run(ctx, scratch);
    let got = scratch.len() as i32;
    burst.splice_in(range.start, scratch);
    got
}

fn macswap(mut c: C<'_>, start: i32, n: i32) -> i32 {
    let st = c.data_mut();
    let swap = crate::engines::MACSWAP_ONLY.get(st.simd);
    let Some(b) = st.burst() else { return err::NO_BURST };
    let Some(range) = span(start, n, b.len()) else { return err::BAD_INDEX };
    swap(&mut b[range]);
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
        let (drops, sent) = (st.drops, st.sent);
        let Some(b) = st.burst() else { return err::NO_BURST };
        for (j, p) in b.iter_mut().enumerate() {
            if (drops[j / 64] | sent[j / 64]) & (1 << (j % 64)) == 0 {
                offload::request(p, &tx);
            }
        }
        return 0;
    }
    let i = match live(st, i) {
        Ok(i) => i,
        Err(e) => return e,
    };
    st.burst().map_or(err::NO_BURST, |b| {
        offload::request(&mut b[i], &tx);
        0
    })
}

fn drop_pkt(mut c: C<'_>, i: i32) -> i32 {
    let st = c.data_mut();
    match live(st, i) {
        Ok(i) => {
            st.request(i, false);
            0
        }
        Err(e) => e,
    }
}

fn send_to(mut c: C<'_>, i: i32, port: i32) -> i32 {
    let st = c.data_mut();
    let i = match live(st, i) {
        Ok(i) => i,
        Err(e) => return e,
    };
    let Some(port) = usize::try_from(port).ok().filter(|&p| st.injects.get(p).is_some_and(Option::is_some)) else {
        return err::BAD_PORT;
    };
    st.request(i, true);
    st.targets[i] = port as u16;
    0
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

fn guest_str(c: &mut C<'_>, ptr: i32, len: i32) -> Result<String, i32> {
    let mem = c.data().memory.ok_or(err::BAD_MEMORY)?;
    let data = mem.data(&*c);
    let r = span(ptr, len, data.len()).ok_or(err::BAD_MEMORY)?;
    Ok(String::from_utf8_lossy(&data[r]).into_owned())
}

fn counter_register(mut c: C<'_>, ptr: i32, len: i32) -> i32 {
    if !c.data().in_init {
        return err::NO_BURST;
    }
    let name = match guest_str(&mut c, ptr, len) {
        Ok(n) => n,
        Err(e) => return e,
    };
    if !(1..=64).contains(&name.len()) {
        return err::BAD_RANGE;
    }
    c.data().counters.register(name, MAX_COUNTERS as usize)
}

fn param_get(mut c: C<'_>, kp: i32, kl: i32, op: i32, cap: i32) -> i32 {
    let key = match guest_str(&mut c, kp, kl) {
        Ok(k) => k,
        Err(e) => return e,
    };
    let Some(value) = c.data().params.get(&key).cloned() else { return err::NOT_FOUND };
    let Some(mem) = c.data().memory else { return err::BAD_MEMORY };
    let data = mem.data_mut(&mut c);
    let Some(r) = span(op, cap, data.len()) else { return err::BAD_MEMORY };
    if value.len() > r.len() {
        return err::TOO_SMALL;
    }
    data[r.start..r.start + value.len()].copy_from_slice(value.as_bytes());
    value.len() as i32
}

fn log(mut c: C<'_>, lvl: i32, ptr: i32, len: i32) {
    let Ok(msg) = guest_str(&mut c, ptr, len) else { return };
    let label = c.data().label.clone();
    match lvl as u32 {
        level::ERROR => tracing::error!(plugin = %label, "{msg}"),
        level::WARN => tracing::warn!(plugin = %label, "{msg}"),
        level::DEBUG => tracing::debug!(plugin = %label, "{msg}"),
        _ => tracing::info!(plugin = %label, "{msg}"),
    }
}
