//! The packet imports (`burst_len`, `pkt_len`, `pkt_read`, `pkt_write`, `pkt_copy`, and the 1.1
//! `pkt_adjust`, `pkt_room`) linked to their semantics in `ops::packets`.

use super::{guest_span, C};
use crate::plugin::ops::packets::{burst_len, pkt_adjust, pkt_copy, pkt_io, pkt_len, pkt_room, Buf};
use wasmdp_abi::{err, import};
use wasmtime::Linker;

pub(super) fn link(linker: &mut Linker<super::HostState>, m: &str) -> anyhow::Result<()> {
    linker.func_wrap(m, import::BURST_LEN, |mut c: C<'_>| burst_len(c.data_mut()))?;
    linker.func_wrap(m, import::PKT_LEN, |mut c: C<'_>, i: i32| pkt_len(c.data_mut(), i))?;
    linker.func_wrap(m, import::PKT_READ, |mut c: C<'_>, i: i32, off: i32, ptr: i32, len: i32| {
        guest_io(&mut c, i, off, ptr, len, false)
    })?;
    linker.func_wrap(m, import::PKT_WRITE, |mut c: C<'_>, i: i32, off: i32, ptr: i32, len: i32| {
        guest_io(&mut c, i, off, ptr, len, true)
    })?;
    linker.func_wrap(m, import::PKT_COPY, |mut c: C<'_>, di: i32, doff: i32, si: i32, soff: i32, len: i32| {
        pkt_copy(c.data_mut(), di, doff, si, soff, len)
    })?;
    linker.func_wrap(m, import::PKT_ADJUST, |mut c: C<'_>, i: i32, head: i32, tail: i32| {
        pkt_adjust(c.data_mut(), i, head, tail)
    })?;
    linker.func_wrap(m, import::PKT_ROOM, |mut c: C<'_>, i: i32| pkt_room(c.data_mut(), i))?;
    Ok(())
}

fn guest_io(c: &mut C<'_>, i: i32, off: i32, ptr: i32, len: i32, write: bool) -> i32 {
    let Some(mem) = c.data().memory else { return err::BAD_MEMORY };
    let (guest, st) = mem.data_and_store_mut(c);
    let buf = guest_span(ptr, len, &st.limit(guest.len())).map(|r| &mut guest[r]);
    pkt_io(st, i, off, len, buf.map(|b| if write { Buf::Write(b) } else { Buf::Read(b) }))
}
