//! The decision imports (`run_engine`, `macswap`, `set_offloads`, `drop_pkt`, `send_to`,
//! `set_sticky`, `clear_sticky`) linked to their semantics in `ops::decide`.

use super::C;
use crate::plugin::ops::decide::{clear_sticky, macswap, request, run_engine, send_to, set_offloads, set_sticky};
use crate::plugin::state::HostState;
use wasmdp_abi::import;
use wasmtime::Linker;

pub(super) fn link(linker: &mut Linker<HostState>, m: &str) -> anyhow::Result<()> {
    linker.func_wrap(m, import::RUN_ENGINE, |mut c: C<'_>, e: i32, start: i32, n: i32| {
        run_engine(c.data_mut(), e, start, n)
    })?;
    linker.func_wrap(m, import::MACSWAP, |mut c: C<'_>, start: i32, n: i32| macswap(c.data_mut(), start, n))?;
    linker.func_wrap(m, import::SET_OFFLOADS, |mut c: C<'_>, i: i32, f: i64, tci: i32, outer: i32| {
        set_offloads(c.data_mut(), i, f, tci, outer)
    })?;
    linker.func_wrap(m, import::DROP_PKT, |mut c: C<'_>, i: i32| request(c.data_mut(), i, None))?;
    linker.func_wrap(m, import::SEND_TO, |mut c: C<'_>, i: i32, port: i32| send_to(c.data_mut(), i, port))?;
    linker.func_wrap(m, import::SET_STICKY, |mut c: C<'_>, e: i32, f: i64, tci: i32, outer: i32, bursts: i32| {
        set_sticky(c.data_mut(), e, f, tci, outer, bursts)
    })?;
    linker.func_wrap(m, import::CLEAR_STICKY, |mut c: C<'_>| clear_sticky(c.data_mut()))?;
    Ok(())
}
