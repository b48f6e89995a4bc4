//! What the plugin knows and tells (`counter_register`, `counter_add`, `gauge_register`,
//! `gauge_set`, `param_get`, `now_ns`, `log`, `context`, `event_register`, `event_emit`) linked to
//! their semantics in `ops::info` and `ops::events`.

use super::{guest_bytes, guest_span, C};
use crate::plugin::logs::MAX_LOG_BYTES;
use crate::plugin::ops::events::{event_emit, event_register};
use crate::plugin::ops::info::{context, counter_add, counter_register, gauge_register, log, param_get, MAX_PARAM_KEY};
use crate::plugin::state::HostState;
use wasmdp_abi::import;
use wasmtime::Linker;

/// Longest event layout read (32 fields of `NAME:TYPE`).
const MAX_EVENT_LAYOUT: usize = 2048;

pub(super) fn link(linker: &mut Linker<HostState>, m: &str) -> anyhow::Result<()> {
    linker.func_wrap(m, import::COUNTER_REGISTER, |mut c: C<'_>, ptr: i32, len: i32| {
        with_guest(&mut c, ptr, len, counter_register)
    })?;
    linker.func_wrap(m, import::COUNTER_ADD, |c: C<'_>, id: i32, v: i64| counter_add(c.data(), id, v))?;
    linker.func_wrap(m, import::GAUGE_REGISTER, |mut c: C<'_>, ptr: i32, len: i32| {
        with_guest(&mut c, ptr, len, gauge_register)
    })?;
    linker.func_wrap(m, import::GAUGE_SET, |c: C<'_>, id: i32, v: i64| c.data().counters.gauges.set(id, v))?;
    linker.func_wrap(m, import::PARAM_GET, |mut c: C<'_>, kp: i32, kl: i32, op: i32, cap: i32| {
        // The key is copied out first: the two ranges may overlap.
        let (key, total) = match guest_bytes(&mut c, kp, kl, MAX_PARAM_KEY) {
            Ok(k) => k,
            Err(e) => return e,
        };
        with_guest_mut(&mut c, op, cap, |st, out| param_get(st, &key, total, out))
    })?;
    linker.func_wrap(m, import::RANDOM, |mut c: C<'_>| c.data_mut().rng.u64(..) as i64)?;
    linker.func_wrap(m, import::NOW_NS, |_: C<'_>| crate::plugin::counters::now_ns() as i64)?;
    linker.func_wrap(m, import::LOG, |mut c: C<'_>, lvl: i32, ptr: i32, len: i32| {
        // The rate is checked first: a line over it reads nothing.
        let Some(suppressed) = c.data_mut().logs.allow() else { return };
        let Ok((bytes, total)) = guest_bytes(&mut c, ptr, len, MAX_LOG_BYTES) else { return };
        log(c.data(), lvl, &bytes, total, suppressed);
    })?;
    linker
        .func_wrap(m, import::CONTEXT, |mut c: C<'_>, ptr: i32, cap: i32| with_guest_mut(&mut c, ptr, cap, context))?;
    linker.func_wrap(m, import::EVENT_REGISTER, |mut c: C<'_>, np: i32, nl: i32, lp: i32, ll: i32, size: i32| {
        let limit = crate::plugin::events::MAX_NAME + 1;
        let (name, layout) = match (guest_bytes(&mut c, np, nl, limit), guest_bytes(&mut c, lp, ll, MAX_EVENT_LAYOUT)) {
            (Ok((n, nt)), Ok((l, lt))) if nt == n.len() && lt == l.len() => (n, l),
            (Ok(_), Ok(_)) => return wasmdp_abi::err::BAD_RANGE,
            (Err(e), _) | (_, Err(e)) => return e,
        };
        event_register(c.data_mut(), &name, &layout, size)
    })?;
    linker.func_wrap(m, import::EVENT_EMIT, |mut c: C<'_>, id: i32, ptr: i32, len: i32| {
        with_guest(&mut c, ptr, len, |st, b| event_emit(st, id, b))
    })?;
    Ok(())
}

/// `f` on the state and `ptr..ptr+len` of the plugin's memory (None: not all in it).
fn with_guest(c: &mut C<'_>, ptr: i32, len: i32, f: impl FnOnce(&mut HostState, Option<&[u8]>) -> i32) -> i32 {
    with_guest_mut(c, ptr, len, |st, b| f(st, b.map(|b| &*b)))
}

/// As [`with_guest`], writable.
fn with_guest_mut(c: &mut C<'_>, ptr: i32, len: i32, f: impl FnOnce(&mut HostState, Option<&mut [u8]>) -> i32) -> i32 {
    let Some(mem) = c.data().memory else { return f(c.data_mut(), None) };
    let (data, st) = mem.data_and_store_mut(c);
    let bytes = guest_span(ptr, len, &st.limit(data.len())).map(|r| &mut data[r]);
    f(st, bytes)
}
