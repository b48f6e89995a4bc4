//! Views of the area of the current call: the header's burst-wide decisions, the descriptors and
//! windows of the packets ([`Window`]), over the bytes a [`Held`](super::registry::Held) lends.

use super::AreaSpec;
use crate::{Engine, Error, Offloads};
use wasmdp_abi::area::{desc, hdr, verdict, DESC, HEADER};

/// The area's header: the burst-wide decisions.
#[derive(Debug)]
pub(crate) struct Header<'a>(pub(super) &'a mut [u8; HEADER]);

impl Header<'_> {
    #[inline]
    pub(crate) fn set_engine(&mut self, e: Option<Engine>) {
        let id = e.map_or(-1, |e| e.id() as i32);
        self.0[hdr::ENGINE..hdr::ENGINE + 4].copy_from_slice(&id.to_le_bytes());
    }

    #[inline]
    pub(crate) fn set_offloads(&mut self, o: Offloads) {
        self.0[hdr::OFFLOADS..hdr::OFFLOADS + 8].copy_from_slice(&o.flags.to_le_bytes());
        self.0[hdr::VLAN_TCI..hdr::VLAN_TCI + 2].copy_from_slice(&o.vlan_tci.to_le_bytes());
        self.0[hdr::VLAN_OUTER..hdr::VLAN_OUTER + 2].copy_from_slice(&o.vlan_tci_outer.to_le_bytes());
    }

    #[inline]
    pub(crate) fn now_ns(&self) -> u64 {
        u64::from_le_bytes(*self.0[hdr::NOW_NS..].first_chunk::<8>().unwrap_or(&[0; 8]))
    }
}

/// The area of the current call: the header, and the descriptors and windows.
#[derive(Debug)]
pub(crate) struct Area<'a> {
    hdr: &'a mut [u8],
    descs: &'a mut [u8],
    wins: &'a mut [u8],
    window: usize,
}

impl<'a> Area<'a> {
    /// The area in `buf`, registered as `spec`.
    pub(crate) fn new(buf: &'a mut [u8], spec: AreaSpec) -> Option<Area<'a>> {
        let (max_pkts, window) = spec.shape();
        if buf.len() < HEADER {
            return None;
        }
        let (hdr, rest) = buf.split_at_mut(HEADER);
        let (descs, wins) = rest.split_at_mut((max_pkts as usize * DESC).min(rest.len()));
        Some(Area { hdr, descs, wins, window: window as usize })
    }

    fn put(&mut self, at: usize, v: &[u8]) {
        if let Some(d) = self.hdr.get_mut(at..at + v.len()) {
            d.copy_from_slice(v);
        }
    }

    /// The windows of the first `n` packets (fewer when the area holds fewer), marking the
    /// descriptors as to be read back.
    pub(crate) fn into_windows<const W: usize>(mut self, n: usize) -> Option<Windows<'a, W>> {
        if W != 0 && W != self.window {
            return None;
        }
        self.put(hdr::CHANGED, &1u32.to_le_bytes());
        let held = (self.descs.len() / DESC).min(self.wins.len().checked_div(self.window).unwrap_or(usize::MAX));
        let end = n.min(held).min(u32::MAX as usize) as u32;
        Some(Windows {
            descs: self.descs.as_mut_ptr(),
            wins: self.wins.as_mut_ptr(),
            window: self.window,
            index: 0,
            end,
            area: core::marker::PhantomData,
        })
    }
}

/// The packets' [`Window`]s, in order ([`Burst::windows`](crate::Burst::windows)).
///
/// Raw pointers rather than two shrinking slices: every bound is checked once, when the iterator is
/// made, and the loop per packet is an index compare (the slices cost bounds checks and spilled
/// lengths per packet in wasmtime's code). The pointers move to the next descriptor and window
/// (rather than an index into both): the fields of a window are then a constant offset from one
/// value in the policy's loop, which WebAssembly's loads take as their offset, where a base plus an
/// index was an address computed and a base reloaded per field. `W` is the window's size when it is
/// known when the policy is compiled ([`Burst::windows_of`](crate::Burst::windows_of)), else 0.
#[derive(Debug)]
pub struct Windows<'a, const W: usize = 0> {
    /// The next descriptor; it and the `end - index - 1` after it are in the area.
    descs: *mut u8,
    /// The next window; it and the `end - index - 1` after it, `window` bytes each, are in the
    /// area.
    wins: *mut u8,
    window: usize,
    index: u32,
    end: u32,
    area: core::marker::PhantomData<&'a mut [u8]>,
}

impl<'a, const W: usize> Windows<'a, W> {
    /// The window's size: a constant when known (the window's offset a shift, its bound a compare
    /// with a constant, and one value fewer live in the policy's loop).
    #[inline(always)]
    fn size(&self) -> usize {
        if W == 0 {
            self.window
        } else {
            W
        }
    }

    /// The `k`-th window from the next one.
    ///
    /// # Safety
    /// `k < end - index`, and that window not given out before (the iterator's methods move past
    /// each window they ask for).
    #[inline(always)]
    unsafe fn window_at(&self, k: u32) -> Window<'a> {
        let (k, window) = (k as usize, self.size());
        // SAFETY: `k < end - index` (the caller's promise), and `into_windows` made `end` at most
        // the descriptors and the windows the area's slices hold, which it borrowed mutably for
        // `'a`; the pointers stay `index` descriptors and windows into them; each window is given
        // out once (the caller's promise), aliasing nothing else given out.
        let (desc, bytes) = unsafe {
            (
                &mut *self.descs.add(k * DESC).cast::<[u8; DESC]>(),
                core::slice::from_raw_parts_mut(self.wins.add(k * window), window),
            )
        };
        let filled = usize::from(u16::from_le_bytes([desc[desc::WIN], desc[desc::WIN + 1]])).min(window);
        Window { index: self.index + k as u32, desc, bytes, filled, skip: 0 }
    }

    /// Moves past `n` windows.
    ///
    /// # Safety
    /// `n <= end - index`.
    #[inline(always)]
    unsafe fn advance(&mut self, n: u32) {
        self.index += n;
        // SAFETY: at most to the end of what `into_windows` checked the area holds (the caller's
        // promise), one past the last descriptor and window at the most.
        unsafe {
            self.descs = self.descs.add(n as usize * DESC);
            self.wins = self.wins.add(n as usize * self.size());
        }
    }
}

impl<'a, const W: usize> Iterator for Windows<'a, W> {
    type Item = Window<'a>;

    #[inline]
    fn next(&mut self) -> Option<Window<'a>> {
        if self.index >= self.end {
            return None;
        }
        // SAFETY: `0 < end - index`, and the iterator moves past it at once.
        let w = unsafe { self.window_at(0) };
        // SAFETY: `1 <= end - index`.
        unsafe { self.advance(1) };
        Some(w)
    }

    /// Four windows a loop turn while four are left: a `for_each` (or any fold) over the windows
    /// then passes one epoch check per four packets in wasmtime's code, where a `for` loop passes
    /// one per packet, with the values the loop carries reloaded from their stack slots after each
    /// (an epoch check may call into wasmtime, which only callee-saved registers survive).
    #[inline]
    fn fold<B, F: FnMut(B, Window<'a>) -> B>(mut self, init: B, mut f: F) -> B {
        let mut acc = init;
        while self.end - self.index >= 4 {
            // SAFETY: `3 < end - index` (four were left), each of the four is asked for once, and
            // the iterator moves past all four before the next turn.
            let w = unsafe { self.window_at(0) };
            acc = f(acc, w);
            // SAFETY: as above.
            let w = unsafe { self.window_at(1) };
            acc = f(acc, w);
            // SAFETY: as above.
            let w = unsafe { self.window_at(2) };
            acc = f(acc, w);
            // SAFETY: as above.
            let w = unsafe { self.window_at(3) };
            acc = f(acc, w);
            // SAFETY: `4 <= end - index`.
            unsafe { self.advance(4) };
        }
        for w in self {
            acc = f(acc, w);
        }
        acc
    }

    /// The `n`-th next window. Skipped windows are never given out, so moving past them is all
    /// there is to do: the default, `next` `n` times, is a loop, and `skip(k).take(m)` over it
    /// compiles to a loop inside the loop, which WebAssembly pays an epoch check for at each
    /// header, every packet (measured in the ratelimit example).
    #[inline]
    fn nth(&mut self, n: usize) -> Option<Window<'a>> {
        let left = self.end - self.index;
        // SAFETY: at most `left`.
        unsafe { self.advance(u32::try_from(n).map_or(left, |n| n.min(left))) };
        self.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.end - self.index) as usize;
        (left, Some(left))
    }
}

/// One packet of the burst in the area: its descriptor and window.
#[derive(Debug)]
pub struct Window<'a> {
    index: u32,
    desc: &'a mut [u8; DESC],
    bytes: &'a mut [u8],
    /// Bytes of the window that hold packet bytes.
    filled: usize,
    /// Bytes at the window's start a [`Window::strip`] took off the packet, still in the window
    /// (they are moved out only when the window is written: [`Window::bytes_mut`]).
    skip: usize,
}

impl Window<'_> {
    #[inline(always)]
    fn get<const N: usize>(&self, at: usize) -> [u8; N] {
        let mut b = [0; N];
        b.copy_from_slice(&self.desc[at..at + N]);
        b
    }

    #[inline(always)]
    fn put(&mut self, at: usize, v: &[u8]) {
        self.desc[at..at + v.len()].copy_from_slice(v);
    }

    /// The packet's index in the burst.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The packet's length.
    pub fn len(&self) -> u32 {
        u32::from_le_bytes(self.get(desc::LEN))
    }

    /// Whether the packet is empty (never, for received packets).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The packet's first bytes as they will be (all of it when it fits the window): after
    /// [`Window::strip`], those after the stripped ones; after [`Window::prepend`], the new ones
    /// alone.
    #[inline(always)]
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[self.skip..self.filled]
    }

    /// [`Window::bytes`], to change: they are all copied back into the packet, as its first bytes
    /// after any length change.
    #[inline(always)]
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.settle();
        let n = self.filled;
        self.set_dirty(n);
        &mut self.bytes[..n]
    }

    /// The whole window, to write the first bytes of a packet that grows ([`Window::prepend`]); call
    /// [`Window::set_dirty`] with how many of them are to go into the packet.
    pub fn raw_mut(&mut self) -> &mut [u8] {
        self.settle();
        self.bytes
    }

    /// Copy the window's first `n` bytes into the packet (more than the window holds: all of it).
    #[inline(always)]
    pub fn set_dirty(&mut self, n: usize) {
        self.settle();
        let n = n.min(self.bytes.len()) as u16;
        let cur = u16::from_le_bytes(self.get(desc::DIRTY));
        self.put(desc::DIRTY, &n.max(cur).to_le_bytes());
    }

    /// Moves the bytes a strip left at the window's start out of it, so that the window's first
    /// bytes are the packet's first bytes after the strip, as the host copies them.
    #[inline(always)]
    fn settle(&mut self) {
        if self.skip != 0 {
            self.bytes.copy_within(self.skip..self.filled, 0);
            self.filled -= self.skip;
            self.skip = 0;
        }
    }

    /// The input port.
    pub fn port(&self) -> u16 {
        u16::from_le_bytes(self.get(desc::PORT))
    }

    /// With [`AreaSpec::HashedWindows`], the host's [`flow_hash`](crate::flow_hash) of the whole
    /// packet; else the hash the RX port gave (0: none; [`crate::flow_hash`] computes the host's on
    /// the window).
    pub fn hash(&self) -> u32 {
        u32::from_le_bytes(self.get(desc::HASH))
    }

    /// RX flags ([`wasmdp_abi::area::rx`]).
    pub fn rx_flags(&self) -> u32 {
        u32::from_le_bytes(self.get(desc::RX_FLAGS))
    }

    /// `(headroom, tailroom)`: what [`Window::prepend`] and [`Window::extend`] may add.
    pub fn room(&self) -> (u32, u32) {
        (u16::from_le_bytes(self.get(desc::HEADROOM)).into(), u16::from_le_bytes(self.get(desc::TAILROOM)).into())
    }

    fn verdict(&mut self, v: u8, arg: u16) {
        self.put(desc::VERDICT, &[v]);
        self.put(desc::ARG, &arg.to_le_bytes());
    }

    /// Drops the packet (counted as a `policy` drop).
    #[allow(clippy::should_implement_trait)] // the name `Packet::drop` and `Burst::drop` have too
    pub fn drop(&mut self) {
        self.verdict(verdict::DROP, 0);
    }

    /// Transmits the packet on `port` instead of the stream's TX port.
    pub fn send_to(&mut self, port: u16) {
        self.verdict(verdict::SEND, port);
    }

    /// Runs `engine` on the packet natively (after the call), then transmits it.
    pub fn run(&mut self, engine: Engine) {
        self.verdict(verdict::ENGINE, engine.id() as u16);
    }

    /// Transmits the packet (after the burst's engine, if any): the verdict every packet starts with.
    pub fn pass(&mut self) {
        self.verdict(verdict::PASS, 0);
    }

    /// Grows the packet by `n` bytes at the front and returns the window's first `n` bytes, which
    /// become them (marked to be copied in). The packet's other bytes stay where they are, after the
    /// new ones; the window then holds the new bytes alone ([`Window::bytes`]). [`Error::NoRoom`]
    /// when `n` exceeds the headroom or the window. A prepend after bytes were written, or after
    /// another change at the front, is [`Error::BadRange`]: prepend first, then write.
    #[inline]
    pub fn prepend(&mut self, n: usize) -> Result<&mut [u8], Error> {
        if n > self.room().0 as usize || n > self.bytes.len() || n > i16::MAX as usize {
            return Err(Error::NoRoom);
        }
        // One test for both refused cases: a front already changed, bytes already written.
        if u16::from_le_bytes(self.get(desc::HEAD)) | u16::from_le_bytes(self.get(desc::DIRTY)) != 0 {
            return Err(Error::BadRange);
        }
        self.put(desc::HEAD, &(n as i16).to_le_bytes());
        self.put(desc::DIRTY, &(n as u16).to_le_bytes());
        self.filled = n;
        Ok(&mut self.bytes[..n])
    }

    /// Removes `n` bytes from the front (at least an Ethernet header must stay). The window then
    /// shows the packet as it will be ([`Window::bytes`]: the bytes after the stripped ones), and
    /// bytes written after the strip ([`Window::bytes_mut`]) are its new first bytes. A strip after
    /// bytes were written, or after another change at the front, is [`Error::BadRange`]: strip
    /// first, then write (the descriptor holds one front change and one run of written bytes).
    #[inline]
    pub fn strip(&mut self, n: usize) -> Result<(), Error> {
        if n > i16::MAX as usize || (self.len() as usize) < n + 14 {
            return Err(Error::NoRoom);
        }
        // One test for both refused cases: a front already changed, bytes already written.
        if u16::from_le_bytes(self.get(desc::HEAD)) | u16::from_le_bytes(self.get(desc::DIRTY)) != 0 {
            return Err(Error::BadRange);
        }
        self.put(desc::HEAD, &(-(n as i16)).to_le_bytes());
        self.skip = n.min(self.filled);
        Ok(())
    }

    /// Grows the packet by `n` bytes at the end (their content is unspecified unless the window
    /// covers them and they are written).
    pub fn extend(&mut self, n: usize) -> Result<(), Error> {
        if n > self.room().1 as usize || n > i16::MAX as usize {
            return Err(Error::NoRoom);
        }
        self.put(desc::TAIL, &(n as i16).to_le_bytes());
        Ok(())
    }

    /// Removes `n` bytes from the end (at least an Ethernet header must stay).
    pub fn trim(&mut self, n: usize) -> Result<(), Error> {
        if n > i16::MAX as usize || (self.len() as usize) < n + 14 {
            return Err(Error::NoRoom);
        }
        self.put(desc::TAIL, &(-(n as i16)).to_le_bytes());
        Ok(())
    }
}
