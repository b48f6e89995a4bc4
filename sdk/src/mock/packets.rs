//! The mock's packet imports: `burst_len`, `pkt_len`, `pkt_read`, `pkt_write`, `pkt_copy`, and the
//! 1.1 length changes `pkt_adjust`, `pkt_room`.

use super::{rc, with, MockPacket};
use wasmdp_abi::err;

fn byte_range(len: usize, off: i32, n: i32) -> Result<core::ops::Range<usize>, i32> {
    let (Ok(off), Ok(n)) = (usize::try_from(off), usize::try_from(n)) else {
        return Err(err::BAD_RANGE);
    };
    match off.checked_add(n) {
        Some(end) if end <= len => Ok(off..end),
        _ => Err(err::BAD_RANGE),
    }
}

pub(crate) fn burst_len() -> i32 {
    with(|h| rc(h.burst().map(|b| b.len() as i32)))
}

pub(crate) fn pkt_len(idx: i32) -> i32 {
    with(|h| rc(h.pkt(idx).map(|p| p.data.len() as i32)))
}

pub(crate) fn pkt_read(idx: i32, off: i32, buf: &mut [u8], len: i32) -> i32 {
    with(|h| {
        rc((|| {
            let p = h.pkt(idx)?;
            let r = byte_range(p.data.len(), off, len)?;
            buf.copy_from_slice(&p.data[r]);
            Ok(len)
        })())
    })
}

pub(crate) fn pkt_write(idx: i32, off: i32, data: &[u8], len: i32) -> i32 {
    with(|h| {
        rc((|| {
            let p = h.pkt(idx)?;
            let r = byte_range(p.data.len(), off, len)?;
            p.data[r].copy_from_slice(data);
            Ok(len)
        })())
    })
}

pub(crate) fn pkt_copy(dst_idx: i32, dst_off: i32, src_idx: i32, src_off: i32, len: i32) -> i32 {
    with(|h| {
        rc((|| {
            let src = h.pkt(src_idx)?;
            let r = byte_range(src.data.len(), src_off, len)?;
            let bytes = src.data[r].to_vec();
            let dst = h.pkt(dst_idx)?;
            let r = byte_range(dst.data.len(), dst_off, len)?;
            dst.data[r].copy_from_slice(&bytes);
            Ok(len)
        })())
    })
}

/// Applies a length change if it fits (front, then tail); false (nothing changed) otherwise.
pub(super) fn adjust(p: &mut MockPacket, head: i32, tail: i32) -> bool {
    let len = p.data.len() as i64;
    let (head64, tail64) = (i64::from(head), i64::from(tail));
    let fits =
        head64 <= p.headroom as i64 && tail64 <= p.tailroom as i64 && len + head64 >= 14 && len + head64 + tail64 >= 14;
    if !fits {
        return false;
    }
    if head > 0 {
        p.data.splice(0..0, core::iter::repeat_n(0u8, head as usize));
    } else {
        p.data.drain(..(-head) as usize);
    }
    p.headroom = (p.headroom as i64 - i64::from(head)) as usize;
    if tail > 0 {
        p.data.extend(core::iter::repeat_n(0u8, tail as usize));
    } else {
        p.data.truncate((p.data.len() as i64 + i64::from(tail)) as usize);
    }
    p.tailroom = (p.tailroom as i64 - i64::from(tail)) as usize;
    true
}

pub(crate) fn pkt_adjust(idx: i32, head: i32, tail: i32) -> i32 {
    with(|h| match h.pkt(idx) {
        Ok(p) => {
            if adjust(p, head, tail) {
                p.data.len() as i32
            } else {
                err::NO_ROOM
            }
        }
        Err(e) => e,
    })
}

pub(crate) fn pkt_room(idx: i32) -> i64 {
    with(|h| match h.pkt(idx) {
        Ok(p) => ((p.headroom.min(u32::MAX as usize) as i64) << 32) | p.tailroom.min(u32::MAX as usize) as i64,
        Err(e) => e.into(),
    })
}
