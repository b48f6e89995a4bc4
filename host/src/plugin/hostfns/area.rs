//! `burst_area` (1.1): where in its memory the plugin wants each burst placed. Registered once, in
//! init; checked here and again before every burst (memory never shrinks, but the check is cheap).

use super::C;
use crate::mbuf::MAX_BURST;
use crate::plugin::area::Area;
use crate::plugin::state::HostState;
use wasmdp_abi::{area, err, import};
use wasmtime::Linker;

pub(super) fn link(linker: &mut Linker<HostState>, m: &str) -> anyhow::Result<()> {
    linker.func_wrap(m, import::BURST_AREA, |mut c: C<'_>, ptr: i32, max_pkts: i32, window: i32| {
        if !c.data().in_init {
            return err::NOT_INIT;
        }
        let (Ok(max_pkts), Ok(window)) = (usize::try_from(max_pkts), usize::try_from(window)) else {
            return err::BAD_RANGE;
        };
        if max_pkts > MAX_BURST || window > area::MAX_WINDOW {
            return err::BAD_RANGE;
        }
        let a = Area { ptr: ptr as u32 as usize, max_pkts, window };
        let Some(mem) = c.data().memory else { return err::BAD_MEMORY };
        if a.end().is_none_or(|end| end > mem.data_size(&c)) {
            return err::BAD_MEMORY;
        }
        c.data_mut().area = Some(a);
        0
    })?;
    Ok(())
}
