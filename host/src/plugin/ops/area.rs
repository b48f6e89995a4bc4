//! `burst_area` (1.1): where in its memory the plugin wants each burst placed. Registered once, in
//! init; checked here and again before every burst (memory never shrinks, but the check is cheap).

use crate::mbuf::MAX_BURST;
use crate::plugin::area::Area;
use crate::plugin::state::HostState;
use wasmdp_abi::{area, err};

/// Registers the area at `ptr` of a memory of `size` bytes (a wasm module's offsets; a native
/// build's addresses, with `size` the end of the address space).
pub(crate) fn burst_area(st: &mut HostState, ptr: usize, max_pkts: i32, window: i32, size: usize) -> i32 {
    if !st.in_init {
        return err::NOT_INIT;
    }
    // Registered once a region is mapped: another area could then overlap it.
    if st.direct.is_some() {
        return err::BAD_RANGE;
    }
    let Ok(max_pkts) = usize::try_from(max_pkts) else { return err::BAD_RANGE };
    let Some(shape) = area::parse_window(window as u32).filter(|_| max_pkts <= MAX_BURST) else {
        return err::BAD_RANGE;
    };
    let Some(a) = Area::new(ptr, max_pkts, shape).filter(|a| a.end() <= size) else {
        return err::BAD_MEMORY;
    };
    st.area = Some(a);
    st.area_stale = 0;
    0
}
