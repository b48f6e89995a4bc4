//! [`Burst`] and [`Packet`]: the packets `wasmdp_on_burst` decides on, as handles to host memory.

use core::ops::{Bound, RangeBounds};

use wasmdp_abi::ALL_PACKETS;

use crate::area::{Held, Windows};
#[cfg(doc)]
use crate::Window;
use crate::{sys, Engine, Error, Heads, Offloads};

/// The burst being decided on: packets `0..len()` of the port's current RX burst. The bytes stay in
/// the host; a plugin reads and writes them with [`Packet::read`] / [`Packet::write`] and runs native
/// engines on ranges of them.
///
/// A `Burst` is only handed out for the duration of one `on_burst` call (or made with
/// [`Burst::current`] inside one). After `on_burst` returns, every packet not dropped is transmitted,
/// on the stream's TX port or the one given to [`Burst::send_to`].
///
/// Ranges are anything like `..`, `a..b`, `a..=b`, `a..` over packet indexes; one past the burst is
/// [`Error::BadIndex`]. An empty range makes no host call.
///
/// With a burst area ([`Policy::AREA`](crate::Policy::AREA)), the burst also hands out the
/// packets' [`Window`]s ([`Burst::windows`]) and takes burst-wide decisions without a host call
/// ([`Burst::pass_with`], [`Burst::offload_all`]).
#[derive(Debug)]
pub struct Burst {
    len: u32,
    area: Option<Held>,
}

impl Burst {
    /// The burst as `wasmdp_on_burst` was told (`burst_len`), for a policy whose area is `spec`
    /// (its `Policy::AREA`). Used by the generated export. The area's shape is then a constant of
    /// the policy's code, not read from the registration, so that what depends on it (which
    /// heads, where the verdict bytes are) is decided when the plugin is compiled. Without an area
    /// registered as `spec`, the burst has none.
    #[doc(hidden)]
    #[inline(always)]
    pub fn __from_host_as(len: u32, spec: crate::AreaSpec) -> Burst {
        Burst { len, area: Held::take_as(spec) }
    }

    /// The current burst, asking the host for its length ([`Error::NoBurst`] outside `on_burst`). For
    /// hand-written exports and tests; [`export_policy!`](crate::export_policy) hands it to
    /// [`Policy::on_burst`](crate::Policy::on_burst).
    pub fn current() -> Result<Burst, Error> {
        sys::burst_len().map(|len| Burst { len, area: Held::take() })
    }

    /// Packets in the burst.
    pub const fn len(&self) -> u32 {
        self.len
    }

    /// Whether the burst is empty.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A handle to packet `idx`. Not checked here: a handle past the burst gives
    /// [`Error::BadIndex`] when used.
    pub const fn packet(&self, idx: u32) -> Packet<'_> {
        Packet { idx, _burst: self }
    }

    /// Every packet, in order.
    pub fn packets(&self) -> impl Iterator<Item = Packet<'_>> + '_ {
        (0..self.len).map(move |i| self.packet(i))
    }

    /// `(start, count)` of a range of packet indexes.
    fn span(&self, range: impl RangeBounds<u32>) -> Result<(u32, u32), Error> {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.checked_add(1).ok_or(Error::BadIndex)?,
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.checked_add(1).ok_or(Error::BadIndex)?,
            Bound::Excluded(&e) => e,
            Bound::Unbounded => self.len,
        };
        if start > end || end > self.len {
            return Err(Error::BadIndex);
        }
        Ok((start, end - start))
    }

    /// Runs a native engine on a range of packets (`run_engine`). The engine marks the packets with the
    /// TX port's offloads as it does natively: request the plugin's own offloads after it.
    pub fn run_engine(&self, engine: Engine, range: impl RangeBounds<u32>) -> Result<(), Error> {
        let (start, count) = self.span(range)?;
        if count == 0 {
            return Ok(());
        }
        sys::run_engine(engine.id(), start, count).map(drop)
    }

    /// The native SIMD MAC swap on a range of packets (`macswap`): the bytes only.
    pub fn macswap(&self, range: impl RangeBounds<u32>) -> Result<(), Error> {
        let (start, count) = self.span(range)?;
        if count == 0 {
            return Ok(());
        }
        sys::macswap(start, count).map(drop)
    }

    /// Requests TX offloads for every packet of the burst (`set_offloads` with
    /// [`ALL_PACKETS`]).
    pub fn set_offloads(&self, offloads: Offloads) -> Result<(), Error> {
        sys::set_offloads(ALL_PACKETS, offloads.flags, offloads.vlan_tci, offloads.vlan_tci_outer)
    }

    /// Drops packet `idx` (`drop_pkt`; counted as a `policy` drop).
    pub fn drop(&self, idx: u32) -> Result<(), Error> {
        sys::drop_pkt(idx)
    }

    /// Sends packet `idx` out of port `port` instead of the stream's TX port (`send_to`).
    pub fn send_to(&self, idx: u32, port: u32) -> Result<(), Error> {
        sys::send_to(idx, port)
    }

    /// Copies `len` bytes from packet `src` at `src_off` to packet `dst` at `dst_off` (`pkt_copy`,
    /// native memcpy).
    pub fn copy(&self, dst: u32, dst_off: u32, src: u32, src_off: u32, len: u32) -> Result<(), Error> {
        sys::pkt_copy(dst, dst_off, src, src_off, len).map(drop)
    }
}

/// ABI 1.1: the burst area and length changes.
impl Burst {
    /// Each packet's [`Window`] (descriptor and first bytes), in order; [`Error::NotInit`] when the
    /// policy asked for no windows ([`Policy::AREA`](crate::Policy::AREA)).
    pub fn windows(&mut self) -> Result<Windows<'_>, Error> {
        let len = self.len as usize;
        match &mut self.area {
            Some(held) if held.has_windows() => held.view().and_then(|a| a.into_windows(len)).ok_or(Error::NotInit),
            _ => Err(Error::NotInit),
        }
    }

    /// [`Burst::windows`] of the `W` bytes the policy asked for
    /// ([`AreaSpec::Windows`](crate::AreaSpec::Windows)`(W)`; else [`Error::NotInit`]): the size a
    /// constant in the policy's loop (a shift for each window's place, no size kept in a register).
    pub fn windows_of<const W: usize>(&mut self) -> Result<Windows<'_, W>, Error> {
        let len = self.len as usize;
        match &mut self.area {
            Some(held) if held.has_windows() && W != 0 => {
                held.view().and_then(|a| a.into_windows::<W>(len)).ok_or(Error::NotInit)
            }
            _ => Err(Error::NotInit),
        }
    }

    /// Each packet's length and first `N` bytes ([`Heads`]), when the policy asked for
    /// [`AreaSpec::Heads`](crate::AreaSpec::Heads)`(N)` (else [`Error::NotInit`]).
    pub fn heads<const N: usize>(&mut self) -> Result<Heads<'_, N>, Error> {
        let len = self.len as usize;
        self.area.as_mut().and_then(|held| held.heads::<N>(len)).ok_or(Error::NotInit)
    }

    /// Runs `engine` natively, after the call, on every packet whose verdict is still pass: written
    /// into the area's header when there is one, else returned by `wasmdp_on_burst` (ABI 1.1
    /// `verdict::RUN_ENGINE`). Neither is a host call: the engine runs after `on_burst` returns
    /// `Ok` (not at all after `Err`), after the packets it dropped or sent elsewhere have left the
    /// burst. Called again, the last engine counts. Offloads asked for afterwards without an area
    /// (`set_offloads`) make it run first, with `run_engine`, so that they are applied after it.
    pub fn pass_with(&mut self, engine: Engine) -> Result<(), Error> {
        match self.area.as_mut() {
            Some(held) => held.header().set_engine(Some(engine)),
            None => crate::verdict::set(engine.id()),
        }
        Ok(())
    }

    /// Requests `offloads` for every packet transmitted: in the area's header (carried out after the
    /// call, after the engines) when there is one, else `set_offloads` on the whole burst now.
    pub fn offload_all(&mut self, offloads: Offloads) -> Result<(), Error> {
        match self.area.as_mut() {
            Some(held) => {
                held.header().set_offloads(offloads);
                Ok(())
            }
            None => self.set_offloads(offloads),
        }
    }

    /// The host's monotonic clock when the burst arrived (from the area's header, else `now_ns`).
    pub fn now_ns(&mut self) -> u64 {
        match self.area.as_mut() {
            Some(held) => held.header().now_ns(),
            None => crate::now_ns(),
        }
    }

    /// Changes packet `idx`'s length now (`pkt_adjust`): `head > 0` prepends that many bytes (their
    /// content unspecified), `head < 0` strips; `tail` likewise at the end. Returns the new length;
    /// [`Error::NoRoom`] (nothing changed) when it does not fit. For packets in windows, prefer
    /// [`Window::prepend`] & co., carried out after the call with the window's bytes.
    pub fn adjust(&self, idx: u32, head: i32, tail: i32) -> Result<u32, Error> {
        sys::pkt_adjust(idx, head, tail)
    }

    /// `(headroom, tailroom)` of packet `idx` (`pkt_room`).
    pub fn room(&self, idx: u32) -> Result<(u32, u32), Error> {
        sys::pkt_room(idx)
    }
}

/// A handle to one packet of the current burst (its index); it cannot outlive the [`Burst`].
#[derive(Debug, Clone, Copy)]
pub struct Packet<'b> {
    idx: u32,
    _burst: &'b Burst,
}

impl Packet<'_> {
    /// Index in the burst.
    pub const fn index(&self) -> u32 {
        self.idx
    }

    /// Length in bytes (`pkt_len`).
    pub fn len(&self) -> Result<u32, Error> {
        sys::pkt_len(self.idx)
    }

    /// Whether the packet has no bytes.
    pub fn is_empty(&self) -> Result<bool, Error> {
        self.len().map(|l| l == 0)
    }

    /// Copies bytes `off..off + buf.len()` into `buf` (`pkt_read`). The whole range must be inside the
    /// packet ([`Error::BadRange`]); see [`Packet::read_prefix`] for "as much as there is".
    pub fn read(&self, off: u32, buf: &mut [u8]) -> Result<(), Error> {
        sys::pkt_read(self.idx, off, buf).map(drop)
    }

    /// Reads up to `buf.len()` bytes from the start of the packet; returns the bytes read (the packet
    /// length when it is shorter than `buf`).
    pub fn read_prefix(&self, buf: &mut [u8]) -> Result<usize, Error> {
        let n = (self.len()? as usize).min(buf.len());
        match buf.get_mut(..n) {
            Some(head) => sys::pkt_read(self.idx, 0, head),
            None => Err(Error::BadRange),
        }
    }

    /// Copies `data` into the packet at `off` (`pkt_write`); the range must be inside the packet.
    pub fn write(&self, off: u32, data: &[u8]) -> Result<(), Error> {
        sys::pkt_write(self.idx, off, data).map(drop)
    }

    /// Requests TX offloads for this packet (`set_offloads`).
    pub fn set_offloads(&self, offloads: Offloads) -> Result<(), Error> {
        // The index fits an i32, or it is no packet: ALL_PACKETS must not be reached by accident.
        let idx = i32::try_from(self.idx).map_err(|_| Error::BadIndex)?;
        sys::set_offloads(idx, offloads.flags, offloads.vlan_tci, offloads.vlan_tci_outer)
    }

    /// Drops the packet (`drop_pkt`).
    pub fn drop(&self) -> Result<(), Error> {
        sys::drop_pkt(self.idx)
    }

    /// Sends the packet out of `port` (`send_to`).
    pub fn send_to(&self, port: u32) -> Result<(), Error> {
        sys::send_to(self.idx, port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::{self, Call};
    use wasmdp_abi::{engine, flags};

    fn frame(dst: u8, src: u8, len: usize) -> std::vec::Vec<u8> {
        let mut f = std::vec![0u8; len];
        f[..6].fill(dst);
        f[6..12].fill(src);
        f
    }

    #[test]
    fn for_each_over_windows_visits_each_once_in_order_whatever_the_burst_size() {
        // Four a loop turn while four are left, then one at a time: every size from 0 to 9.
        for n in 0..10u8 {
            mock::reset();
            mock::set_area(crate::AreaSpec::Windows(16));
            let frames: std::vec::Vec<_> = (0..n).map(|i| frame(i, 0, 60)).collect();
            mock::begin_burst(&frames.iter().map(|f| f.as_slice()).collect::<std::vec::Vec<_>>());
            let mut b = Burst::current().unwrap();
            let mut seen = std::vec::Vec::new();
            b.windows_of::<16>().unwrap().for_each(|w| seen.push((w.index(), w.bytes()[0])));
            let want: std::vec::Vec<_> = (0..n).map(|i| (u32::from(i), i)).collect();
            assert_eq!(seen, want, "burst of {n}");
            let mut w = b.windows().unwrap();
            w.next();
            assert_eq!(w.fold(0, |k, w| k + w.index()), (1..u32::from(n)).sum(), "after one next, burst of {n}");
            drop(b);
            mock::end_burst();
        }
    }

    #[test]
    fn windows_of_the_size_asked_for_are_the_windows_and_another_size_is_refused() {
        mock::reset();
        mock::set_area(crate::AreaSpec::Windows(16));
        // Lengths from 14 to 28: windows filled with fewer bytes than 16, and with 16.
        let frames: std::vec::Vec<_> = (0..8u8).map(|i| frame(i, 0, 14 + 2 * usize::from(i))).collect();
        mock::begin_burst(&frames.iter().map(|f| f.as_slice()).collect::<std::vec::Vec<_>>());
        let mut b = Burst::current().unwrap();
        let seen = |w: crate::Window<'_>| (w.index(), w.len(), w.bytes().to_vec());
        let want: std::vec::Vec<_> = b.windows().unwrap().map(seen).collect();
        assert_eq!(b.windows_of::<16>().unwrap().map(seen).collect::<std::vec::Vec<_>>(), want);
        assert_eq!(want[7].2.len(), 16);
        assert!(matches!(b.windows_of::<32>(), Err(Error::NotInit)));
        assert!(matches!(b.windows_of::<0>(), Err(Error::NotInit)));
        drop(b);
        mock::end_burst();
    }

    #[test]
    fn windows_skip_and_nth_land_on_the_packet_asked_for() {
        mock::reset();
        mock::set_area(crate::AreaSpec::Windows(16));
        let frames: std::vec::Vec<_> = (0..10u8).map(|i| frame(i, 0, 60)).collect();
        mock::begin_burst(&frames.iter().map(|f| f.as_slice()).collect::<std::vec::Vec<_>>());
        let mut b = Burst::current().unwrap();
        let picked: std::vec::Vec<_> =
            b.windows().unwrap().skip(3).take(4).map(|w| (w.index(), w.bytes()[0])).collect();
        assert_eq!(picked, [(3, 3), (4, 4), (5, 5), (6, 6)]);
        let mut w = b.windows().unwrap();
        assert_eq!((w.nth(7).map(|w| w.index()), w.nth(1).map(|w| w.index())), (Some(7), Some(9)));
        assert!(w.nth(1).is_none() && w.next().is_none(), "past the end");
        assert!(b.windows().unwrap().nth(10).is_none() && b.windows().unwrap().nth(usize::MAX).is_none());
        assert_eq!(b.windows().unwrap().skip(9).count(), 1);
        drop(b);
        mock::end_burst();
    }

    #[test]
    fn hashed_windows_carry_the_flow_hash_without_the_bytes() {
        let frames: std::vec::Vec<_> = (0..4u8).map(|i| frame(i, 9, 60)).collect();
        let refs: std::vec::Vec<_> = frames.iter().map(|f| f.as_slice()).collect();
        for (spec, hashed) in [(crate::AreaSpec::HashedWindows(0), true), (crate::AreaSpec::Windows(0), false)] {
            mock::reset();
            mock::set_area(spec);
            mock::begin_burst(&refs);
            let mut b = Burst::current().unwrap();
            let got: std::vec::Vec<_> = b.windows().unwrap().map(|w| (w.hash(), w.bytes().len())).collect();
            let want: std::vec::Vec<_> =
                frames.iter().map(|f| (if hashed { crate::flow_hash(f) } else { 0 }, 0)).collect();
            assert_eq!(got, want, "{spec:?}");
            drop(b);
            mock::end_burst();
        }
    }

    #[test]
    fn a_burst_for_a_policys_area_has_it_only_when_that_area_is_the_one_registered() {
        let frames: std::vec::Vec<_> = [60, 30].iter().map(|&n| frame(1, 2, n)).collect();
        let refs: std::vec::Vec<_> = frames.iter().map(|f| f.as_slice()).collect();
        mock::reset();
        mock::set_area(crate::AreaSpec::HeadsWithDrops(16));
        mock::begin_burst(&refs);
        // Another spec than the registration's (a policy's AREA is what it registered, so only a
        // hand-made export can differ): no area, and the area is not held by it afterwards.
        for other in [crate::AreaSpec::Heads(16), crate::AreaSpec::HeadsWithDrops(32), crate::AreaSpec::None] {
            let mut b = Burst::__from_host_as(2, other);
            assert_eq!(b.heads::<16>().unwrap_err(), Error::NotInit, "{other:?}");
        }
        let mut b = Burst::__from_host_as(2, crate::AreaSpec::HeadsWithDrops(16));
        assert_eq!(
            Burst::__from_host_as(2, crate::AreaSpec::HeadsWithDrops(16)).heads::<16>().unwrap_err(),
            Error::NotInit,
            "held by the first"
        );
        let mut heads = b.heads::<16>().unwrap();
        assert_eq!((heads.packet_len(0), heads.packet_len(1), heads.packet_len(2)), (Some(60), Some(30), None));
        heads.verdicts().unwrap().nth(1).unwrap().1.drop();
        drop(b);
        let out = mock::end_burst();
        assert_eq!(
            out.iter().map(|p| p.dropped).collect::<std::vec::Vec<_>>(),
            [false, true],
            "the verdicts of its area"
        );
    }

    #[test]
    fn heads_are_there_only_for_the_size_asked_for_and_go_back_only_when_taken_to_change() {
        let frames: std::vec::Vec<_> = [60, 14, 30].iter().map(|&n| frame(1, 2, n)).collect();
        let refs: std::vec::Vec<_> = frames.iter().map(|f| f.as_slice()).collect();
        mock::reset();
        mock::set_area(crate::AreaSpec::Heads(16));
        for change in [false, true] {
            mock::begin_burst(&refs);
            let mut b = Burst::current().unwrap();
            assert_eq!(b.heads::<32>().unwrap_err(), Error::NotInit, "another size");
            assert_eq!(b.windows().unwrap_err(), Error::NotInit, "no descriptors");
            let mut heads = b.heads::<16>().unwrap();
            let lens: std::vec::Vec<_> = (0..4).map(|i| heads.packet_len(i)).collect();
            assert_eq!(lens, [Some(60), Some(14), Some(30), None]);
            assert_eq!(heads.heads().unwrap()[1][12..], [0, 0, 0, 0], "zeros past a 14-byte packet");
            if change {
                heads.iter_mut().for_each(|(len, h)| h[0] = len as u8);
            }
            drop(b);
            let out = mock::end_burst();
            let firsts: std::vec::Vec<_> = out.iter().map(|o| (o.data[0], o.data.len())).collect();
            let want = if change { [(60, 60), (14, 14), (30, 30)] } else { [(1, 60), (1, 14), (1, 30)] };
            assert_eq!(firsts, want, "changed: {change}");
        }
        mock::reset();
        mock::set_area(crate::AreaSpec::Windows(16));
        mock::begin_burst(&refs);
        assert_eq!(Burst::current().unwrap().heads::<16>().unwrap_err(), Error::NotInit, "windows, not heads");
        mock::end_burst();
    }

    #[test]
    fn window_writes_and_front_changes_compose_or_are_refused() {
        // Once, bytes_mut then strip copied the old outer header back over the inner frame.
        let f: std::vec::Vec<u8> = (0..80u8).collect();
        mock::reset();
        mock::set_area(crate::AreaSpec::Windows(64));
        mock::begin_burst(&[&f, &f, &f, &f]);
        let mut b = Burst::current().unwrap();
        let mut ws = b.windows().unwrap();
        // Strip, then write what is now the first byte: the window shows the packet as it will be.
        let mut w = ws.next().unwrap();
        w.strip(14).unwrap();
        assert_eq!(w.bytes()[0], 14);
        w.bytes_mut()[6] = 0xAA;
        assert_eq!(w.strip(1), Err(Error::BadRange), "one change at the front");
        // Write, then strip: refused, and the packet keeps its front with the byte written.
        let mut w = ws.next().unwrap();
        w.bytes_mut()[20] = 0xBB;
        assert_eq!(w.strip(14), Err(Error::BadRange));
        // Prepend, then write after the new bytes... within them.
        let mut w = ws.next().unwrap();
        w.prepend(4).unwrap().copy_from_slice(&[1, 2, 3, 4]);
        assert_eq!(w.bytes(), [1, 2, 3, 4], "the window holds the new bytes");
        w.bytes_mut()[0] = 9;
        // Write, then prepend: refused.
        let mut w = ws.next().unwrap();
        w.bytes_mut()[0] = 0xCC;
        assert_eq!(w.prepend(4).unwrap_err(), Error::BadRange);
        drop(b);
        let out = mock::end_burst();
        let mut want = f[14..].to_vec();
        want[6] = 0xAA;
        assert_eq!(out[0].data, want);
        let mut want = f.clone();
        want[20] = 0xBB;
        assert_eq!(out[1].data, want);
        let mut want = std::vec![9, 2, 3, 4];
        want.extend_from_slice(&f);
        assert_eq!(out[2].data, want);
        let mut want = f.clone();
        want[0] = 0xCC;
        assert_eq!(out[3].data, want);
    }

    #[test]
    fn for_each_mut_visits_every_head_once_in_order_whatever_the_burst_size() {
        mock::reset();
        mock::set_area(crate::AreaSpec::Heads(16));
        // Eight a loop turn, then one at a time: every size from 0 to 19.
        for n in 0..=19usize {
            let frames: std::vec::Vec<_> = (0..n).map(|i| frame(1, 2, 14 + i)).collect();
            let refs: std::vec::Vec<_> = frames.iter().map(|f| f.as_slice()).collect();
            mock::begin_burst(&refs);
            let mut b = Burst::current().unwrap();
            let mut seen = std::vec::Vec::new();
            b.heads::<16>().unwrap().for_each_mut(|len, h| {
                seen.push(len as usize);
                h[0] = seen.len() as u8;
            });
            drop(b);
            let out = mock::end_burst();
            assert_eq!(seen, (14..14 + n).collect::<std::vec::Vec<_>>(), "{n} packets: lengths in order");
            let firsts: std::vec::Vec<_> = out.iter().map(|o| o.data[0] as usize).collect();
            assert_eq!(
                firsts,
                (1..=n).collect::<std::vec::Vec<_>>(),
                "{n} packets: each head once, back in its packet"
            );
        }
    }

    #[test]
    fn outside_a_burst() {
        mock::reset();
        assert_eq!(Burst::current().unwrap_err(), Error::NoBurst);
        let b = Burst::__from_host_as(4, crate::AreaSpec::None);
        assert_eq!(b.packet(0).len(), Err(Error::NoBurst));
        assert_eq!(b.run_engine(Engine::Io, ..), Err(Error::NoBurst));
    }

    #[test]
    fn ranges_and_engines() {
        mock::reset();
        let (a, b, c) = (frame(1, 2, 60), frame(3, 4, 60), frame(5, 6, 60));
        mock::begin_burst(&[&a, &b, &c]);
        let burst = Burst::current().unwrap();
        assert_eq!(burst.len(), 3);
        burst.run_engine(Engine::Macswap, 1..).unwrap();
        burst.run_engine(Engine::Io, ..1).unwrap();
        burst.run_engine(Engine::Copy, 3..3).unwrap(); // empty: no call
        assert_eq!(burst.run_engine(Engine::Io, 2..4), Err(Error::BadIndex));
        assert_eq!(burst.macswap((Bound::Included(2), Bound::Excluded(1))), Err(Error::BadIndex));
        assert_eq!(burst.macswap((Bound::Excluded(u32::MAX), Bound::Unbounded)), Err(Error::BadIndex));
        burst.macswap(0..=0).unwrap();
        let calls = mock::with(|h| h.calls.clone());
        assert_eq!(
            calls,
            [
                Call::RunEngine { engine: engine::MACSWAP, start: 1, count: 2 },
                Call::RunEngine { engine: engine::IO, start: 0, count: 1 },
                Call::Macswap { start: 0, count: 1 },
            ]
        );
        let out = mock::end_burst();
        assert_eq!(&out[0].data[..12], &frame(2, 1, 12)[..]);
        assert_eq!(&out[1].data[..12], &frame(4, 3, 12)[..]);
        assert_eq!(out[2].engines, [engine::MACSWAP]);
    }

    #[test]
    fn read_write_offloads_drop_send() {
        mock::reset();
        let a: std::vec::Vec<u8> = (0..64).collect();
        mock::begin_burst(&[&a, &a[..10]]);
        let burst = Burst::current().unwrap();
        let p = burst.packet(0);
        let mut buf = [0u8; 4];
        p.read(60, &mut buf).unwrap();
        assert_eq!(buf, [60, 61, 62, 63]);
        assert_eq!(p.read(61, &mut buf), Err(Error::BadRange));
        assert_eq!(p.read(u32::MAX, &mut buf), Err(Error::BadRange));
        p.write(0, &[9, 9]).unwrap();
        assert_eq!(p.write(63, &[9, 9]), Err(Error::BadRange));
        let mut big = [0u8; 64];
        assert_eq!(burst.packet(1).read_prefix(&mut big), Ok(10));
        assert_eq!(big[9], 9);
        assert_eq!(burst.packet(2).len(), Err(Error::BadIndex));
        assert_eq!(burst.packet(u32::MAX).len(), Err(Error::BadIndex));
        assert_eq!(burst.packet(u32::MAX).set_offloads(Offloads::new()), Err(Error::BadIndex));
        burst.set_offloads(Offloads::new().ipv4_cksum()).unwrap();
        p.set_offloads(Offloads::new().vlan(5)).unwrap();
        assert_eq!(p.set_offloads(Offloads { flags: 1, ..Offloads::NONE }), Err(Error::BadFlags));
        burst.copy(1, 0, 0, 0, 2).unwrap();
        burst.send_to(1, 1).unwrap();
        assert_eq!(burst.packet(1).len(), Err(Error::Gone));
        assert_eq!(p.send_to(7), Err(Error::BadPort));
        p.drop().unwrap();
        assert_eq!(burst.drop(0), Err(Error::Gone));
        let out = mock::end_burst();
        assert_eq!(out[0].flags, flags::TX_IP_CKSUM | flags::TX_VLAN);
        assert_eq!(out[0].vlan_tci, 5);
        assert!(out[0].dropped);
        assert_eq!(&out[0].data[..3], &[9, 9, 2]);
        assert_eq!((&out[1].data[..3], out[1].sent_to), (&[9u8, 9, 2][..], Some(1)));
        assert_eq!(out[1].flags, flags::TX_IP_CKSUM);
    }
}
