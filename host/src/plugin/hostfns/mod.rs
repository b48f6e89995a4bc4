//! The host functions of the ABI (1.0 and 1.1), one file per concern: packets, decisions, what the
//! plugin knows (counters, gauges, params, log, context), maps, the burst area. Every index, offset,
//! length and guest pointer is checked; a bad one returns an error code and touches nothing. Every
//! one does work bounded by the burst (at most `MAX_BURST` packets of at most the pool's data room)
//! or by a fixed small size: none can hold a call past its deadline by more than a few microseconds.

pub(crate) mod area;
pub(crate) mod decide;
pub(crate) mod info;
pub(crate) mod maps;
pub(crate) mod packets;

use super::state::HostState;
use wasmdp_abi::{err, IMPORT_MODULE};
use wasmtime::{Caller, Linker};

type C<'a> = Caller<'a, HostState>;

pub(crate) use decide::{run_engine, run_whole};
pub use info::MAX_PARAM_KEY;
pub(crate) use packets::adjust_then_write;

/// Registers every host function.
pub(crate) fn link(linker: &mut Linker<HostState>) -> anyhow::Result<()> {
    let m = IMPORT_MODULE;
    packets::link(linker, m)?;
    decide::link(linker, m)?;
    info::link(linker, m)?;
    maps::link(linker, m)?;
    area::link(linker, m)?;
    Ok(())
}

/// A packet index the plugin may act on, checked: in the burst and neither dropped, sent nor freed
/// by an engine in this call. Returns its position in the burst.
pub(super) fn live(st: &mut HostState, i: i32) -> Result<usize, i32> {
    st.burst().ok_or(err::NO_BURST)?;
    let i = usize::try_from(i).ok().filter(|&i| i < st.view.len).ok_or(err::BAD_INDEX)?;
    if st.view.gone(i) {
        return Err(err::GONE);
    }
    Ok(st.view.position(i))
}

/// `off..off+len` inside `limit`, as a range.
pub(super) fn span(off: i32, len: i32, limit: usize) -> Option<std::ops::Range<usize>> {
    let (off, len) = (usize::try_from(off).ok()?, usize::try_from(len).ok()?);
    let end = off.checked_add(len)?;
    (end <= limit).then_some(off..end)
}

/// What of a guest memory host functions may read and write: its first `len` bytes but the
/// stream's packet region (`hole`; direct packet access), which the host reaches only through the
/// packets' own buffers.
#[derive(Debug, Clone)]
pub(crate) struct Limit {
    pub len: usize,
    pub hole: std::ops::Range<usize>,
}

impl HostState {
    /// The [`Limit`] of this instance's memory of `len` bytes.
    pub(crate) fn limit(&self, len: usize) -> Limit {
        Limit { len, hole: self.direct.as_ref().map_or(0..0, |m| m.range()) }
    }
}

/// A guest pointer/length pair as a range of its memory, outside the packet region. Pointers are
/// `i32` bit patterns of u32 addresses.
pub(super) fn guest_span(ptr: i32, len: i32, limit: &Limit) -> Option<std::ops::Range<usize>> {
    let (ptr, len) = (ptr as u32 as usize, usize::try_from(len).ok()?);
    let end = ptr.checked_add(len)?;
    let clear = end <= limit.hole.start || ptr >= limit.hole.end || limit.hole.is_empty();
    (end <= limit.len && clear).then_some(ptr..end)
}

/// At most `max` bytes of guest memory at `ptr..ptr+len` (checked against the whole range), and the
/// length asked for.
pub(super) fn guest_bytes(c: &mut C<'_>, ptr: i32, len: i32, max: usize) -> Result<(Vec<u8>, usize), i32> {
    let mem = c.data().memory.ok_or(err::BAD_MEMORY)?;
    let data = mem.data(&*c);
    let r = guest_span(ptr, len, &c.data().limit(data.len())).ok_or(err::BAD_MEMORY)?;
    let total = r.len();
    Ok((data[r.start..r.start + total.min(max)].to_vec(), total))
}
