//! What the plugin knows and tells: `counter_register`, `counter_add`, `param_get`, `now_ns`, `log`,
//! and in 1.1 `gauge_register`, `gauge_set`, `context`.

use crate::plugin::logs::message;
use crate::plugin::state::HostState;
use wasmdp_abi::{context as cx, err, level};

/// Longest parameter key looked up; a longer one is `NOT_FOUND` without being read.
pub const MAX_PARAM_KEY: usize = 256;
/// Longest counter or gauge name.
const MAX_COUNTER_NAME: usize = 64;

pub(crate) fn counter_register(st: &mut HostState, name: Option<&[u8]>) -> i32 {
    // Outside init: NO_BURST, as in 1.0 (the 1.1 imports say NOT_INIT).
    name_of(st, name, err::NO_BURST).map_or_else(|e| e, |n| st.counters.register(n))
}

pub(crate) fn gauge_register(st: &mut HostState, name: Option<&[u8]>) -> i32 {
    name_of(st, name, err::NOT_INIT).map_or_else(|e| e, |n| st.counters.gauges.register(n))
}

pub(crate) fn counter_add(st: &HostState, id: i32, v: i64) -> i32 {
    match u64::try_from(v) {
        Ok(v) => st.counters.add(id, v),
        Err(_) => err::BAD_RANGE,
    }
}

/// A counter's or gauge's name, during init only (`late`: the code otherwise).
fn name_of(st: &HostState, name: Option<&[u8]>, late: i32) -> Result<String, i32> {
    if !st.in_init {
        return Err(late);
    }
    let name = name.ok_or(err::BAD_MEMORY)?;
    if !(1..=MAX_COUNTER_NAME).contains(&name.len()) {
        return Err(err::BAD_RANGE);
    }
    // Control characters (newlines, terminal escapes) would reach logs, `ctl top` and the
    // metrics' labels as they are: each becomes U+FFFD, as bytes that are not UTF-8 do.
    let name = String::from_utf8_lossy(name);
    Ok(name.chars().map(|c| if c.is_control() { char::REPLACEMENT_CHARACTER } else { c }).collect())
}

/// Copies the context (`wasmdp_abi::context`) to `out`.
pub(crate) fn context(st: &mut HostState, out: Option<&mut [u8]>) -> i32 {
    let env = &st.env;
    let size = cx::HEADER + cx::PORT * env.ports.len();
    let Some(out) = out else { return err::BAD_MEMORY };
    if out.len() < size {
        return err::TOO_SMALL;
    }
    let out = &mut out[..size];
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
        let sendable = env.can_send(i);
        put16(e, cx::FLAGS, if sendable { cx::SENDABLE } else { 0 });
    }
    size as i32
}

/// The value of param `key` (`total` bytes long in the plugin, of which `key` holds at most
/// [`MAX_PARAM_KEY`]) into `out`.
pub(crate) fn param_get(st: &HostState, key: &[u8], total: usize, out: Option<&mut [u8]>) -> i32 {
    let Some(value) = std::str::from_utf8(key).ok().filter(|_| total <= MAX_PARAM_KEY).and_then(|k| st.params.get(k))
    else {
        return err::NOT_FOUND;
    };
    let Some(out) = out else { return err::BAD_MEMORY };
    if value.len() > out.len() {
        return err::TOO_SMALL;
    }
    out[..value.len()].copy_from_slice(value.as_bytes());
    value.len() as i32
}

/// A log line of the plugin (`total` bytes long, of which `bytes` holds what is logged), with the
/// lines the rate limit kept back before it.
pub(crate) fn log(st: &HostState, lvl: i32, bytes: &[u8], total: usize, suppressed: u64) {
    let mut msg = message(bytes, total);
    if suppressed > 0 {
        msg.push_str(&format!(" ({suppressed} earlier lines over the rate limit were not logged)"));
    }
    let label = &st.label;
    match lvl as u32 {
        level::ERROR => tracing::error!(plugin = %label, "{msg}"),
        level::WARN => tracing::warn!(plugin = %label, "{msg}"),
        level::DEBUG => tracing::debug!(plugin = %label, "{msg}"),
        _ => tracing::info!(plugin = %label, "{msg}"),
    }
}
