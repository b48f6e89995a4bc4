//! What the plugin knows and tells: `counter_register`, `counter_add`, `param_get`, `now_ns`, `log`,
//! and in 1.1 `gauge_register`, `gauge_set`, `context`.

use super::{guest_bytes, guest_span, C};
use crate::plugin::logs::{message, MAX_LOG_BYTES};
use crate::plugin::state::HostState;
use wasmdp_abi::{context as cx, err, import, level};
use wasmtime::Linker;

/// Longest parameter key looked up; a longer one is `NOT_FOUND` without being read.
pub const MAX_PARAM_KEY: usize = 256;
/// Longest counter or gauge name.
const MAX_COUNTER_NAME: usize = 64;

pub(super) fn link(linker: &mut Linker<HostState>, m: &str) -> anyhow::Result<()> {
    linker.func_wrap(m, import::COUNTER_REGISTER, |mut c: C<'_>, ptr: i32, len: i32| {
        // Outside init: NO_BURST, as in 1.0 (the 1.1 imports say NOT_INIT).
        name_of(&mut c, ptr, len, err::NO_BURST).map_or_else(|e| e, |n| c.data().counters.register(n))
    })?;
    linker.func_wrap(m, import::COUNTER_ADD, |c: C<'_>, id: i32, v: i64| match u64::try_from(v) {
        Ok(v) => c.data().counters.add(id, v),
        Err(_) => err::BAD_RANGE,
    })?;
    linker.func_wrap(m, import::GAUGE_REGISTER, |mut c: C<'_>, ptr: i32, len: i32| {
        name_of(&mut c, ptr, len, err::NOT_INIT).map_or_else(|e| e, |n| c.data().counters.gauges.register(n))
    })?;
    linker.func_wrap(m, import::GAUGE_SET, |c: C<'_>, id: i32, v: i64| c.data().counters.gauges.set(id, v))?;
    linker.func_wrap(m, import::PARAM_GET, param_get)?;
    linker.func_wrap(m, import::NOW_NS, |_: C<'_>| crate::plugin::counters::now_ns() as i64)?;
    linker.func_wrap(m, import::LOG, log)?;
    linker.func_wrap(m, import::CONTEXT, context)?;
    Ok(())
}

/// A counter's or gauge's name, during init only (`late`: the code otherwise).
fn name_of(c: &mut C<'_>, ptr: i32, len: i32, late: i32) -> Result<String, i32> {
    if !c.data().in_init {
        return Err(late);
    }
    let (name, total) = guest_bytes(c, ptr, len, MAX_COUNTER_NAME)?;
    if !(1..=MAX_COUNTER_NAME).contains(&total) {
        return Err(err::BAD_RANGE);
    }
    Ok(String::from_utf8_lossy(&name).into_owned())
}

/// Copies the context (`wasmdp_abi::context`) to `ptr`.
fn context(mut c: C<'_>, ptr: i32, cap: i32) -> i32 {
    let env = c.data().env.clone();
    let size = cx::HEADER + cx::PORT * env.ports.len();
    let Some(mem) = c.data().memory else { return err::BAD_MEMORY };
    let data = mem.data_mut(&mut c);
    let Some(r) = guest_span(ptr, cap, data.len()) else { return err::BAD_MEMORY };
    if r.len() < size {
        return err::TOO_SMALL;
    }
    let out = &mut data[r.start..r.start + size];
    out.fill(0);
    let put16 = |o: &mut [u8], at: usize, v: u16| o[at..at + 2].copy_from_slice(&v.to_le_bytes());
    put16(out, cx::RX_PORT, env.port);
    put16(out, cx::QUEUE, env.queue);
    put16(out, cx::TX_PORT, env.tx_port);
    put16(out, cx::PORTS, env.ports.len() as u16);
    put16(out, cx::LCORE, env.lcore.and_then(|l| u16::try_from(l).ok()).unwrap_or(u16::MAX));
    for (i, p) in env.ports.iter().enumerate() {
        let e = &mut out[cx::HEADER + i * cx::PORT..][..cx::PORT];
        e[cx::MAC..cx::MAC + 6].copy_from_slice(&p.mac);
        e[cx::PEER_MAC..cx::PEER_MAC + 6].copy_from_slice(&p.peer_mac);
        let sendable = env.injects.get(i).is_some_and(Option::is_some);
        put16(e, cx::FLAGS, if sendable { cx::SENDABLE } else { 0 });
    }
    size as i32
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
