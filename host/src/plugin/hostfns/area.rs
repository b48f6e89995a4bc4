//! `burst_area` (1.1) linked to `ops::area`, and the stream's packet region mapped into the
//! plugin's memory when it asks for direct access.

use super::C;
use crate::plugin::ops::area::burst_area;
use crate::plugin::state::HostState;
use wasmdp_abi::{err, import};
use wasmtime::Linker;

pub(super) fn link(linker: &mut Linker<HostState>, m: &str) -> anyhow::Result<()> {
    linker.func_wrap(m, import::BURST_AREA, |mut c: C<'_>, ptr: i32, max_pkts: i32, window: i32| {
        let size = c.data().memory.map_or(0, |mem| mem.data_size(&c));
        let rc = burst_area(c.data_mut(), ptr as u32 as usize, max_pkts, window, size);
        if rc != 0 || !c.data().area.is_some_and(|a| a.direct()) {
            return rc;
        }
        // Direct access: the stream's packet region after the memory's end (the area, checked
        // above, lies before it).
        let Some(mem) = c.data().memory else { return err::BAD_MEMORY };
        let slot = std::sync::Arc::clone(&c.data().env.direct);
        match crate::plugin::direct::map(&slot, &mut c, mem) {
            Ok(m) => {
                c.data_mut().direct = Some(m);
                0
            }
            Err(rc) => {
                c.data_mut().area = None;
                rc
            }
        }
    })?;
    Ok(())
}
