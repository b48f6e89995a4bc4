//! Packet access: `burst_len`, `pkt_len`, `pkt_read`, `pkt_write`, `pkt_copy`, and the 1.1 length
//! changes `pkt_adjust`, `pkt_room`.

use super::{live, span};
use crate::mbuf::{Burst, Pkt};
use crate::plugin::state::HostState;
use crate::simd;
use wasmdp_abi::err;

pub(crate) fn burst_len(st: &mut HostState) -> i32 {
    match st.burst() {
        Some(_) => st.view.len as i32,
        None => err::NO_BURST,
    }
}

pub(crate) fn pkt_len(st: &mut HostState, i: i32) -> i32 {
    with_pkt(st, i, |p| p.len() as i32)
}

pub(crate) fn pkt_adjust(st: &mut HostState, i: i32, head: i32, tail: i32) -> i32 {
    with_pkt(st, i, |p| adjust(p, head, tail).map_or_else(|e| e, |n| n as i32))
}

pub(crate) fn pkt_room(st: &mut HostState, i: i32) -> i64 {
    match live(st, i) {
        Ok(pos) => st.burst().map_or(i64::from(err::NO_BURST), |b| {
            let p = &b[pos];
            (p.headroom() as i64) << 32 | p.tailroom() as i64
        }),
        Err(e) => i64::from(e),
    }
}

/// A length change: `head` bytes at the front (`> 0` prepends, `< 0` strips), then `tail` at the end
/// (`> 0` appends, `< 0` trims). Both are checked before either is made: on `NO_ROOM` the packet is
/// as it was. Returns the new length.
///
/// The bytes a growth adds are zeroed: the buffer's headroom and tailroom hold whatever earlier
/// packets left there, possibly another port's, which the plugin has no right to see (XDP's
/// `bpf_xdp_adjust_tail` clears them likewise). The cost is the growth's own size.
pub(crate) fn adjust(p: &mut Pkt, head: i32, tail: i32) -> Result<usize, i32> {
    p.reframe(head as isize, tail as isize).map_err(|_| err::NO_ROOM)?;
    if head > 0 || tail > 0 {
        zero_grown(p.data_mut(), head, tail, 0);
    }
    Ok(p.len())
}

/// The area's length change (`head`, `tail`) of a packet whose first `min(dirty, window)` bytes
/// the window copy writes next: the grown bytes among them are not zeroed first.
#[inline(always)]
pub(crate) fn adjust_then_write(
    p: &mut Pkt,
    (head, tail, dirty): (i16, i16, u16),
    window: usize,
) -> Result<usize, i32> {
    let (head, tail) = (i32::from(head), i32::from(tail));
    p.reframe(head as isize, tail as isize).map_err(|_| err::NO_ROOM)?;
    let (written, len) = (usize::from(dirty).min(window), p.len());
    // Only when some grown byte is not among those the window writes: the usual prepend (a
    // header written through the window) calls nothing.
    if (head > 0 && (head as usize).min(len) > written) || (tail > 0 && written < len) {
        zero_grown(p.data_mut(), head, tail, written);
    }
    Ok(len)
}

/// Zeroes the bytes a change of `head` and `tail` added to `data`, except the first `written`.
#[cold]
#[inline(never)]
fn zero_grown(data: &mut [u8], head: i32, tail: i32, written: usize) {
    let len = data.len();
    if head > 0 {
        // A trim in the same change may have taken some of them again.
        let end = (head as usize).min(len);
        if let Some(b) = data.get_mut(written.min(end)..end) {
            b.fill(0);
        }
    }
    if tail > 0 {
        let start = (len - tail as usize).max(written.min(len));
        data[start..].fill(0);
    }
}

fn with_pkt(st: &mut HostState, i: i32, f: impl FnOnce(&mut Pkt) -> i32) -> i32 {
    match live(st, i) {
        Ok(p) => st.burst().map_or(err::NO_BURST, |b| f(&mut b[p])),
        Err(e) => e,
    }
}

/// The plugin's side of a packet read or write.
pub(crate) enum Buf<'a> {
    /// `pkt_read` into it.
    Read(&'a mut [u8]),
    /// `pkt_write` from it.
    Write(&'a [u8]),
}

/// `pkt_read` / `pkt_write` of `len` bytes at `off` of packet `i`, with `buf` (None: not in the
/// plugin's memory).
pub(crate) fn pkt_io(st: &mut HostState, i: i32, off: i32, len: i32, buf: Option<Buf<'_>>) -> i32 {
    let simd = st.simd;
    let p = match live(st, i) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let Some(b) = st.burst() else { return err::NO_BURST };
    let pkt = &mut b[p];
    let Some(pr) = span(off, len, pkt.len()) else { return err::BAD_RANGE };
    match buf {
        Some(Buf::Write(data)) if data.len() == pr.len() => simd::copy_dyn(simd, &mut pkt.data_mut()[pr], data),
        Some(Buf::Read(out)) if out.len() == pr.len() => simd::copy_dyn(simd, out, &pkt.data()[pr]),
        _ => return err::BAD_MEMORY,
    }
    len
}

pub(crate) fn pkt_copy(st: &mut HostState, di: i32, doff: i32, si: i32, soff: i32, len: i32) -> i32 {
    let simd = st.simd;
    let (d, s) = match (live(st, di), live(st, si)) {
        (Ok(d), Ok(s)) => (d, s),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    let Some(b) = st.burst() else { return err::NO_BURST };
    let Some(sr) = span(soff, len, b[s].len()) else { return err::BAD_RANGE };
    let Some(dr) = span(doff, len, b[d].len()) else { return err::BAD_RANGE };
    if d == s {
        b[d].data_mut().copy_within(sr, dr.start);
    } else {
        let (dp, sp) = two(b, d, s);
        simd::copy_dyn(simd, &mut dp.data_mut()[dr], &sp.data()[sr]);
    }
    len
}

fn two(b: &mut Burst, d: usize, s: usize) -> (&mut Pkt, &Pkt) {
    if d < s {
        let (l, r) = b.split_at_mut(s);
        (&mut l[d], &r[0])
    } else {
        let (l, r) = b.split_at_mut(d);
        (&mut r[0], &l[s])
    }
}

#[cfg(test)]
mod tests {
    use crate::mbuf::{Pool, PoolConfig};

    #[test]
    fn grown_bytes_are_zeros_never_what_the_buffer_held() {
        let mut c = Pool::new(PoolConfig { size: 8, cache_size: 1, headroom: 128, data_room: 2048 }).unwrap().cache();
        // A buffer that held another packet's bytes everywhere, headroom and tailroom included.
        let mut p = c.alloc().unwrap();
        let room = p.headroom();
        p.prepend(room).unwrap();
        let all = p.len() + p.tailroom();
        p.set_data_len(all).unwrap();
        p.data_mut().fill(0xAB);
        let buffer = p.meta_ptr();
        c.free(p);
        let mut p = c.alloc().unwrap();
        assert_eq!(p.meta_ptr(), buffer, "the same buffer, back from the cache");
        p.copy_from(&[7u8; 64]).unwrap();
        assert_eq!(super::adjust(&mut p, 100, 1400), Ok(1564));
        let d = p.data();
        assert!(d[..100].iter().all(|&b| b == 0), "prepended bytes are zeros");
        assert_eq!(d[100..164], [7u8; 64], "the packet's own bytes are kept");
        assert!(d[164..].iter().all(|&b| b == 0), "appended bytes are zeros");
        // Grown at the front and trimmed in the same change: what is left of the new bytes is zeros.
        let mut q = c.alloc().unwrap();
        q.copy_from(&[9u8; 20]).unwrap();
        assert_eq!(super::adjust(&mut q, 16, -20), Ok(16));
        assert_eq!(q.data(), [0u8; 16]);
        c.free(p);
        c.free(q);
    }
}
