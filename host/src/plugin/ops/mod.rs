//! The semantics of the host functions on [`HostState`], below both the wasmtime glue
//! (`crate::plugin::hostfns`: guest pointers, `Caller`) and the native host (`native::host`), and
//! used by the burst area's apply step: one file per concern, as in the glue. Each takes the state
//! and plain Rust values, checks every index, offset and length, and returns the ABI's code; a bad
//! one touches nothing. Every one does work bounded by the burst (at most `MAX_BURST` packets of at
//! most the pool's data room) or by a fixed small size: none can hold a call past its deadline by
//! more than a few microseconds.

pub(crate) mod area;
pub(crate) mod decide;
pub(crate) mod events;
pub(crate) mod info;
pub(crate) mod maps;
pub(crate) mod packets;

use super::state::HostState;
use wasmdp_abi::err;

/// A packet index the plugin may act on, checked: in the burst and neither dropped, sent nor freed
/// by an engine in this call. Returns its position in the burst.
pub(crate) fn live(st: &mut HostState, i: i32) -> Result<usize, i32> {
    st.burst().ok_or(err::NO_BURST)?;
    let i = usize::try_from(i).ok().filter(|&i| i < st.view.len).ok_or(err::BAD_INDEX)?;
    if st.view.gone(i) {
        return Err(err::GONE);
    }
    Ok(st.view.position(i))
}

/// `off..off+len` inside `limit`, as a range.
pub(crate) fn span(off: i32, len: i32, limit: usize) -> Option<std::ops::Range<usize>> {
    let (off, len) = (usize::try_from(off).ok()?, usize::try_from(len).ok()?);
    let end = off.checked_add(len)?;
    (end <= limit).then_some(off..end)
}
