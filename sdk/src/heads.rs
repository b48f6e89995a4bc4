//! Heads ([`AreaSpec::Heads`](crate::AreaSpec::Heads)): each packet's first `N` bytes and its
//! length, without descriptors, for policies that rewrite every packet's headers in place; with
//! drops ([`AreaSpec::HeadsWithDrops`](crate::AreaSpec::HeadsWithDrops)) also a verdict byte a
//! packet, for policies that drop some packets on what their headers say.

use crate::fours::{Fours, EIGHT};
use crate::Error;
use core::marker::PhantomData;

/// The burst's heads ([`Burst::heads`](crate::Burst::heads)): packet `i`'s length and its first
/// `min(len, N)` bytes (zeros after a shorter packet's end), in burst order.
///
/// Reading changes nothing. After [`heads_mut`](Heads::heads_mut) or
/// [`iter_mut`](Heads::iter_mut), once `on_burst` returns `Ok`, every packet's first `min(len, N)`
/// bytes are replaced by its head, changed or not (to drop packets, ask for heads with drops and
/// walk [`verdicts`](Heads::verdicts) or [`verdicts_mut`](Heads::verdicts_mut); to send or resize
/// them, [`Windows`](crate::AreaSpec::Windows)).
///
/// With [`AreaSpec::DirectHeads`](crate::AreaSpec::DirectHeads) (in WebAssembly) each head *is* the
/// packet's first `N` bytes, in place: nothing is copied, and past a shorter packet's end the head
/// shows the buffer's bytes (not zeros; they are not sent). [`heads`](Heads::heads) and
/// [`heads_mut`](Heads::heads_mut) need the heads side by side, so they are `None` then; use
/// [`iter_mut`](Heads::iter_mut) or [`for_each_mut`](Heads::for_each_mut), which work in both.
#[derive(Debug)]
pub struct Heads<'a, const N: usize> {
    kind: Kind<'a, N>,
    changed: &'a mut [u8; 4],
    /// The burst's verdict bytes, with drops ([`AreaSpec::HeadsWithDrops`],
    /// [`AreaSpec::DirectHeadsWithDrops`]).
    ///
    /// [`AreaSpec::HeadsWithDrops`]: crate::AreaSpec::HeadsWithDrops
    /// [`AreaSpec::DirectHeadsWithDrops`]: crate::AreaSpec::DirectHeadsWithDrops
    verdicts: Option<&'a mut [u8]>,
}

#[derive(Debug)]
enum Kind<'a, const N: usize> {
    /// Copies side by side in the area.
    Copied { lens: &'a [[u8; 4]], heads: &'a mut [[u8; N]] },
    /// Entries pointing at the packets (`wasmdp_abi::area::direct_head`).
    Direct { entries: &'a [[u8; wasmdp_abi::area::DIRECT_HEAD]] },
}

/// A packet's verdict ([`Heads::verdicts_mut`]): it is transmitted (after the header's engine)
/// unless dropped.
#[derive(Debug)]
pub struct Verdict<'a>(&'a mut u8);

impl Verdict<'_> {
    /// Drops the packet after the call (counted as the policy's drop, as
    /// [`Window::drop`](crate::Window::drop)).
    #[inline(always)]
    pub fn drop(self) {
        *self.0 = wasmdp_abi::area::verdict::DROP;
    }
}

/// [`Heads::verdicts_mut`]'s iterator: each packet's first bytes, to change in place, and its
/// verdict: each kind's heads walked with the verdict bytes (one end test for both). `for_each`
/// (any fold) takes eight packets a loop turn (the last seven or fewer one a turn), each four's
/// fields at constant offsets from one address (`crate::fours`): WebAssembly checks the epoch
/// deadline at every loop header, and the registers spilled around the check are then spilled once
/// in eight packets. For a short body (an ACL's compares, a rewrite at fixed offsets); the closure
/// is called from five places, so LLVM keeps a long one out of line, a call a packet: put a long
/// body's rare paths in a `#[cold]` `#[inline(never)]` function (as `dnat` does), or write the
/// loop with `for` (one packet a turn).
#[derive(Debug)]
pub struct VerdictsMut<'h, const N: usize>(VerdictsKind<'h, N>);

type CopiedItem<'h, const N: usize> = ((&'h [u8; 4], &'h mut [u8; N]), &'h mut u8);
type Entry = [u8; wasmdp_abi::area::DIRECT_HEAD];
type DirectItem<'h> = ((&'h Entry, &'h mut ()), &'h mut u8);

/// With a tag of its own (`repr(u8)`): with the tag in a pointer's unused null, LLVM tested that
/// pointer again for the end of a `for` loop over direct heads (`dnat`'s), and spilled more.
#[derive(Debug)]
#[repr(u8)]
enum VerdictsKind<'h, const N: usize> {
    /// The lengths, the heads and the verdict bytes.
    Copied(Walk<'h, [u8; 4], [u8; N]>),
    /// The entries and the verdict bytes (the heads are where the entries say).
    Direct(Walk<'h, Entry, ()>),
}

/// Side-by-side slices walked together: the lengths (or entries), and as many heads and verdict
/// bytes from `heads` and `verdicts`, walked with `lens` (a pointer each, where iterators would
/// each test their end). Direct heads have no heads here (`()`, taking no memory).
#[derive(Debug)]
struct Walk<'h, L, H> {
    lens: core::slice::Iter<'h, L>,
    heads: *mut H,
    verdicts: *mut u8,
    _heads: PhantomData<(&'h mut [H], &'h mut [u8])>,
}

impl<'h, L> Walk<'h, L, ()> {
    /// `lens` and `verdicts`, cut to the shorter's length (a dangling pointer is a valid `()`).
    fn without_heads(lens: &'h [L], verdicts: &'h mut [u8]) -> Self {
        let n = lens.len().min(verdicts.len());
        let heads = core::ptr::NonNull::dangling().as_ptr();
        Walk { lens: lens[..n].iter(), heads, verdicts: verdicts.as_mut_ptr(), _heads: PhantomData }
    }
}

impl<'h, L, H> Walk<'h, L, H> {
    /// The three, cut to the shortest's length.
    fn new(lens: &'h [L], heads: &'h mut [H], verdicts: &'h mut [u8]) -> Self {
        let n = lens.len().min(heads.len()).min(verdicts.len());
        Walk { lens: lens[..n].iter(), heads: heads.as_mut_ptr(), verdicts: verdicts.as_mut_ptr(), _heads: PhantomData }
    }

    /// Items left.
    #[inline(always)]
    fn len(&self) -> usize {
        self.lens.len()
    }

    #[inline(always)]
    fn next(&mut self) -> Option<((&'h L, &'h mut H), &'h mut u8)> {
        let l = self.lens.next()?;
        // SAFETY: a head and a verdict byte for each length (`new`), walked with `lens`, each once.
        unsafe {
            let (h, v) = (&mut *self.heads, &mut *self.verdicts);
            (self.heads, self.verdicts) = (self.heads.add(1), self.verdicts.add(1));
            Some(((l, h), v))
        }
    }

    #[inline(always)]
    fn nth(&mut self, n: usize) -> Option<((&'h L, &'h mut H), &'h mut u8)> {
        let l = self.lens.nth(n)?;
        // SAFETY: as in `next`: `n` was below the lengths left, and `n + 1` are walked.
        unsafe {
            let (h, v) = (&mut *self.heads.add(n), &mut *self.verdicts.add(n));
            (self.heads, self.verdicts) = (self.heads.add(n + 1), self.verdicts.add(n + 1));
            Some(((l, h), v))
        }
    }

    /// Each item left, eight a turn, each four's fields at constant offsets from one address.
    #[inline(always)]
    fn fold<B>(self, mut acc: B, mut f: impl FnMut(B, ((&'h L, &'h mut H), &'h mut u8)) -> B) -> B {
        let lens = self.lens.as_slice();
        // SAFETY: as many heads and verdict bytes left as lengths, not given out (`next`).
        let (heads, verdicts) = unsafe {
            (
                core::slice::from_raw_parts_mut(self.heads, lens.len()),
                core::slice::from_raw_parts_mut(self.verdicts, lens.len()),
            )
        };
        // Eight packets a loop turn (`EIGHT`: two fours); the last seven or fewer one a turn.
        let whole = lens.len() / EIGHT * EIGHT;
        let (heads, rest_heads) = heads.split_at_mut(whole);
        let (verdicts, rest_verdicts) = verdicts.split_at_mut(whole);
        let (mut l, mut h, mut v) = (Fours::of(lens), Fours::of_mut(heads), Fours::of_mut(verdicts));
        for _ in 0..whole / EIGHT {
            for _ in 0..EIGHT / 4 {
                // SAFETY: `whole / 4` calls each, of slices `whole` long (`lens` longer).
                let ([l0, l1, l2, l3], [h0, h1, h2, h3], [v0, v1, v2, v3]) =
                    unsafe { (l.next(), h.next_mut(), v.next_mut()) };
                acc = f(acc, ((l0, h0), v0));
                acc = f(acc, ((l1, h1), v1));
                acc = f(acc, ((l2, h2), v2));
                acc = f(acc, ((l3, h3), v3));
            }
        }
        for ((l, h), v) in lens[whole..].iter().zip(rest_heads).zip(rest_verdicts) {
            acc = f(acc, ((l, h), v));
        }
        acc
    }
}

/// A copied head's first `min(len, N)` bytes and its verdict.
#[inline(always)]
fn copied<'h, const N: usize>(((l, h), v): CopiedItem<'h, N>) -> (&'h mut [u8], Verdict<'h>) {
    let n = (u32::from_le_bytes(*l) as usize).min(N);
    (&mut h[..n], Verdict(v))
}

/// A direct head's first `min(len, N)` bytes, in place, and its verdict.
#[inline(always)]
fn direct<'h, const N: usize>(((e, _), v): DirectItem<'h>) -> (&'h mut [u8], Verdict<'h>) {
    let (len, _, data) = entry(e);
    // SAFETY: an entry the host wrote for this call: its `LEN` bytes from `DATA` are the packet's,
    // in its buffer (`END` is at least `LEN`), one buffer per entry, each given out once.
    let bytes = unsafe { core::slice::from_raw_parts_mut(data as *mut u8, (len as usize).min(N)) };
    (bytes, Verdict(v))
}

impl<'h, const N: usize> Iterator for VerdictsMut<'h, N> {
    type Item = (&'h mut [u8], Verdict<'h>);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            VerdictsKind::Copied(it) => it.next().map(copied::<N>),
            VerdictsKind::Direct(it) => it.next().map(direct::<N>),
        }
    }

    /// The `n`-th next packet, in O(1) (the default is a loop, and WebAssembly pays an epoch check
    /// at each loop header).
    #[inline(always)]
    fn nth(&mut self, n: usize) -> Option<Self::Item> {
        match &mut self.0 {
            VerdictsKind::Copied(it) => it.nth(n).map(copied::<N>),
            VerdictsKind::Direct(it) => it.nth(n).map(direct::<N>),
        }
    }

    #[inline(always)]
    fn fold<B, F: FnMut(B, Self::Item) -> B>(self, init: B, mut f: F) -> B {
        match self.0 {
            VerdictsKind::Copied(it) => it.fold(init, |acc, item| f(acc, copied::<N>(item))),
            VerdictsKind::Direct(it) => it.fold(init, |acc, item| f(acc, direct::<N>(item))),
        }
    }

    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.0 {
            VerdictsKind::Copied(it) => it.len(),
            VerdictsKind::Direct(it) => it.len(),
        };
        (n, Some(n))
    }
}

/// The packets left to walk: `len()`.
impl<const N: usize> ExactSizeIterator for VerdictsMut<'_, N> {}

/// [`Heads::verdicts`]' iterator: [`VerdictsMut`]'s, the bytes to read.
#[derive(Debug)]
pub struct Verdicts<'h, const N: usize>(VerdictsMut<'h, N>);

impl<'h, const N: usize> Iterator for Verdicts<'h, N> {
    type Item = (&'h [u8], Verdict<'h>);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(b, v)| (&*b, v))
    }

    #[inline(always)]
    fn nth(&mut self, n: usize) -> Option<Self::Item> {
        self.0.nth(n).map(|(b, v)| (&*b, v))
    }

    #[inline(always)]
    fn fold<B, F: FnMut(B, Self::Item) -> B>(self, init: B, mut f: F) -> B {
        self.0.fold(init, |acc, (b, v)| f(acc, (&*b, v)))
    }

    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

/// The packets left to walk: `len()`.
impl<const N: usize> ExactSizeIterator for Verdicts<'_, N> {}

/// One direct-heads entry read as one 8-byte word (`wasmdp_abi::area::direct_head`): the
/// packet's length, the bytes to its buffer's end, and where it is.
#[inline(always)]
fn entry(e: &[u8; wasmdp_abi::area::DIRECT_HEAD]) -> (u32, usize, usize) {
    const _: () = {
        use wasmdp_abi::area::direct_head::{DATA, END, LEN};
        assert!(LEN == 0 && END == 2 && DATA == 4);
    };
    let w = u64::from_le_bytes(*e);
    ((w & 0xFFFF) as u32, ((w >> 16) & 0xFFFF) as usize, (w >> 32) as usize)
}

/// The head of an entry whose buffer holds at least `N` bytes from the packet's start.
///
/// # Safety
/// `end >= N`, and the entry is one the host wrote for the current call.
#[inline(always)]
unsafe fn head_at<'h, const N: usize>(data: usize) -> &'h mut [u8; N] {
    // SAFETY: the host wrote the entry for this call: `END` (at least `N`, the caller's promise)
    // bytes from `DATA` are the packet's buffer, in the packet region it mapped into this memory,
    // one buffer per entry, which nothing else refers to during the call (the `Heads` borrows the
    // area mutably).
    unsafe { &mut *(data as *mut [u8; N]) }
}

/// Calls `f` on a head of fewer than `N` bytes of buffer: a copy of what there is, zeros after it,
/// copied back. Never for received packets in practice (a buffer's data room is far larger).
#[cold]
#[inline(never)]
fn short<const N: usize>(e: &[u8; wasmdp_abi::area::DIRECT_HEAD], f: &mut impl FnMut(u32, &mut [u8; N])) {
    let (len, end, data) = entry(e);
    let end = end.min(N);
    // SAFETY: as in `head_at`, for the `END` bytes there are.
    let bytes = unsafe { core::slice::from_raw_parts_mut(data as *mut u8, end) };
    let mut head = [0u8; N];
    head[..end].copy_from_slice(bytes);
    f(len, &mut head);
    bytes.copy_from_slice(&head[..end]);
}

/// [`Heads::iter_mut`]'s iterator: one `next` that tests which kind of heads once, where a chain of
/// the two kinds' iterators, each flattened out of an `Option`, compiled to three loop headers a
/// packet in wasmtime's code (an epoch check each).
struct IterMut<'h, const N: usize>(IterKind<'h, N>);

enum IterKind<'h, const N: usize> {
    Copied(core::iter::Zip<core::slice::Iter<'h, [u8; 4]>, core::slice::IterMut<'h, [u8; N]>>),
    Direct(core::slice::Iter<'h, [u8; wasmdp_abi::area::DIRECT_HEAD]>),
}

impl<'h, const N: usize> Iterator for IterMut<'h, N> {
    type Item = (u32, &'h mut [u8; N]);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.0 {
            IterKind::Copied(heads) => heads.next().map(|(l, h)| (u32::from_le_bytes(*l), h)),
            IterKind::Direct(entries) => {
                let (len, end, data) = entry(entries.next()?);
                if end < N {
                    return past_short(entries);
                }
                // SAFETY: `end >= N`, an entry of this call.
                Some((len, unsafe { head_at::<N>(data) }))
            }
        }
    }
}

/// The next direct head after one with fewer than `N` bytes of buffer (left out by
/// [`Heads::iter_mut`]). Out of line: a loop in `next` is a loop header, and an epoch check, per
/// packet in the policy's loop.
#[cold]
#[inline(never)]
fn past_short<'h, const N: usize>(
    entries: &mut core::slice::Iter<'h, [u8; wasmdp_abi::area::DIRECT_HEAD]>,
) -> Option<(u32, &'h mut [u8; N])> {
    entries.find_map(|e| {
        let (len, end, data) = entry(e);
        // SAFETY: `end >= N`, an entry of this call.
        (end >= N).then(|| (len, unsafe { head_at::<N>(data) }))
    })
}

impl<'a, const N: usize> Heads<'a, N> {
    /// The first `n` packets' lengths and heads (fewer when the area holds fewer); `changed` is the
    /// header's `CHANGED` field.
    pub(crate) fn new(
        n: usize,
        lens: &'a [[u8; 4]],
        heads: &'a mut [[u8; N]],
        changed: &'a mut [u8; 4],
        verdicts: Option<&'a mut [u8]>,
    ) -> Self {
        let n = n.min(lens.len()).min(heads.len());
        let verdicts = verdicts.map(|v| {
            let k = n.min(v.len());
            &mut v[..k]
        });
        Heads { kind: Kind::Copied { lens: &lens[..n], heads: &mut heads[..n] }, changed, verdicts }
    }

    /// The first `n` packets' direct-heads entries.
    pub(crate) fn direct(
        n: usize,
        entries: &'a [[u8; wasmdp_abi::area::DIRECT_HEAD]],
        changed: &'a mut [u8; 4],
        verdicts: Option<&'a mut [u8]>,
    ) -> Self {
        let n = n.min(entries.len());
        let verdicts = verdicts.map(|v| {
            let k = n.min(v.len());
            &mut v[..k]
        });
        Heads { kind: Kind::Direct { entries: &entries[..n] }, changed, verdicts }
    }

    /// With drops ([`AreaSpec::HeadsWithDrops`](crate::AreaSpec::HeadsWithDrops),
    /// [`AreaSpec::DirectHeadsWithDrops`](crate::AreaSpec::DirectHeadsWithDrops)): each packet's
    /// first `min(len, N)` bytes, to read, and its [`Verdict`], in burst order. Nothing is copied
    /// back (with copied heads). [`Error::NotInit`] without drops.
    #[inline(always)]
    pub fn verdicts(&mut self) -> Result<Verdicts<'_, N>, Error> {
        Ok(Verdicts(self.raw_verdicts()?))
    }

    /// As [`verdicts`](Heads::verdicts), the bytes to change in place: with copied heads every
    /// packet's first `min(len, N)` bytes are copied back after the call (as
    /// [`heads_mut`](Heads::heads_mut)); with direct heads they are the packet's.
    #[inline(always)]
    pub fn verdicts_mut(&mut self) -> Result<VerdictsMut<'_, N>, Error> {
        *self.changed = 1u32.to_le_bytes();
        self.raw_verdicts()
    }

    #[inline(always)]
    fn raw_verdicts(&mut self) -> Result<VerdictsMut<'_, N>, Error> {
        let verdicts = self.verdicts.as_deref_mut().ok_or(Error::NotInit)?;
        Ok(VerdictsMut(match &mut self.kind {
            Kind::Copied { lens, heads } => VerdictsKind::Copied(Walk::new(lens, heads, verdicts)),
            Kind::Direct { entries } => VerdictsKind::Direct(Walk::without_heads(entries, verdicts)),
        }))
    }

    /// Packets in the burst (with a head each).
    pub fn len(&self) -> usize {
        match &self.kind {
            Kind::Copied { heads, .. } => heads.len(),
            Kind::Direct { entries } => entries.len(),
        }
    }

    /// Whether the burst is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Packet `i`'s length in bytes (None past the burst).
    pub fn packet_len(&self, i: usize) -> Option<u32> {
        match &self.kind {
            Kind::Copied { lens, .. } => lens.get(i).map(|l| u32::from_le_bytes(*l)),
            Kind::Direct { entries } => entries.get(i).map(|e| entry(e).0),
        }
    }

    /// The heads side by side, to read (None with direct heads).
    pub fn heads(&self) -> Option<&[[u8; N]]> {
        match &self.kind {
            Kind::Copied { heads, .. } => Some(heads),
            Kind::Direct { .. } => None,
        }
    }

    /// The heads side by side, to change in place: all are copied back into their packets after the
    /// call (None with direct heads).
    pub fn heads_mut(&mut self) -> Option<&mut [[u8; N]]> {
        *self.changed = 1u32.to_le_bytes();
        match &mut self.kind {
            Kind::Copied { heads, .. } => Some(heads),
            Kind::Direct { .. } => None,
        }
    }

    /// Each packet's length with its head, to change in place (as [`heads_mut`](Heads::heads_mut)).
    /// With direct heads, a packet with fewer than `N` bytes to its buffer's end is left out (only
    /// with a pool whose data room is below `N`: `for_each_mut` gives such a packet a copy instead).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (u32, &mut [u8; N])> + '_ {
        *self.changed = 1u32.to_le_bytes();
        IterMut(match &mut self.kind {
            Kind::Copied { lens, heads } => IterKind::Copied(lens.iter().zip(heads.iter_mut())),
            Kind::Direct { entries } => IterKind::Direct(entries.iter()),
        })
    }

    /// Calls `f` with each packet's length and head, in burst order, to change in place (as
    /// [`iter_mut`](Heads::iter_mut); with direct heads, a packet with fewer than `N` bytes to its
    /// buffer's end gets a copy, written back). For a short `f`: on copied heads the loop goes eight
    /// packets a turn (the last seven or fewer one a turn; direct heads four a turn), and
    /// WebAssembly checks the epoch deadline at every loop header, so a short per-packet body (a MAC
    /// swap) pays that check, and the registers spilled around it, once in eight packets rather than
    /// once or twice in two. `f` is called from five places (four in the loop, one for the last
    /// packets), so LLVM keeps a long `f` out of line, a call per packet: for a body that parses
    /// headers, use `iter_mut`.
    #[inline(always)]
    pub fn for_each_mut(&mut self, f: impl FnMut(u32, &mut [u8; N])) {
        *self.changed = 1u32.to_le_bytes();
        match &mut self.kind {
            Kind::Copied { lens, heads } => each_copied(lens, heads, f),
            Kind::Direct { entries } => each_direct(entries, f),
        }
    }
}

/// [`Heads::for_each_mut`] on copied heads: a function of its own, so that the loop's few values
/// get registers (in line in a policy's `on_burst`, cranelift kept the area's base and the body's
/// constants in stack slots, reloaded for every packet). Compiled with `simd128`, so that a body
/// using SIMD128 (a shuffle of the head) is in line in it rather than called per packet: a module
/// whose body uses none comes out the same.
#[inline(never)]
#[cfg_attr(target_arch = "wasm32", target_feature(enable = "simd128"))]
fn each_copied<const N: usize>(lens: &[[u8; 4]], heads: &mut [[u8; N]], mut f: impl FnMut(u32, &mut [u8; N])) {
    let n = lens.len().min(heads.len());
    let (lens, heads) = (&lens[..n], &mut heads[..n]);
    // Eight packets a loop turn, as in `Walk::fold`.
    let whole = n - n % EIGHT;
    let (lens, rest_lens) = lens.split_at(whole);
    let (heads, rest_heads) = heads.split_at_mut(whole);
    // Each four's fields at constant offsets from one address (`crate::fours`).
    let (mut l, mut h) = (Fours::of(lens), Fours::of_mut(heads));
    for _ in 0..whole / EIGHT {
        for _ in 0..EIGHT / 4 {
            // SAFETY: `whole / 4` calls each, `lens` and `heads` being `whole` long.
            let (l, [h0, h1, h2, h3]) = unsafe { (l.next(), h.next_mut()) };
            f(u32::from_le_bytes(l[0]), h0);
            f(u32::from_le_bytes(l[1]), h1);
            f(u32::from_le_bytes(l[2]), h2);
            f(u32::from_le_bytes(l[3]), h3);
        }
    }
    for (l, h) in rest_lens.iter().zip(rest_heads) {
        f(u32::from_le_bytes(*l), h);
    }
}

/// [`Heads::for_each_mut`] on direct heads (a function of its own with `simd128`, as [`each_copied`]).
#[inline(never)]
#[cfg_attr(target_arch = "wasm32", target_feature(enable = "simd128"))]
fn each_direct<const N: usize>(entries: &[[u8; wasmdp_abi::area::DIRECT_HEAD]], mut f: impl FnMut(u32, &mut [u8; N])) {
    let mut one = |e: &[u8; wasmdp_abi::area::DIRECT_HEAD]| {
        let (len, end, data) = entry(e);
        if end >= N {
            // SAFETY: `end >= N`, an entry of this call.
            f(len, unsafe { head_at::<N>(data) });
        } else {
            short(e, &mut f);
        }
    };
    let (quads, rest) = entries.as_chunks::<4>();
    for [e0, e1, e2, e3] in quads {
        one(e0);
        one(e1);
        one(e2);
        one(e3);
    }
    rest.iter().for_each(one);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;
    use wasmdp_abi::area::verdict::{DROP, PASS};

    /// `M` copied heads of 8 bytes, packet `i` being `i + 5` bytes long (the first three shorter
    /// than the head) and its bytes `10 * i + j`.
    fn burst<const M: usize>() -> ([[u8; 4]; M], [[u8; 8]; M]) {
        (
            core::array::from_fn(|i| (i as u32 + 5).to_le_bytes()),
            core::array::from_fn(|i| core::array::from_fn(|j| (10 * i + j) as u8)),
        )
    }

    #[test]
    fn each_packet_once_in_order_with_its_own_verdict() {
        let (lens, mut heads) = burst::<7>();
        let (mut changed, mut verdicts) = ([0; 4], [PASS; 7]);
        let mut h = Heads::new(7, &lens, &mut heads, &mut changed, Some(&mut verdicts));
        let mut seen = Vec::new();
        // Two by `next`, one skipped and one taken by `nth`, the last three by `fold`.
        let mut it = h.verdicts_mut().unwrap();
        for _ in 0..2 {
            let (b, v) = it.next().unwrap();
            seen.push(b.to_vec());
            v.drop();
        }
        let (b, _) = it.nth(1).unwrap();
        b[0] = 99;
        it.for_each(|(b, v)| {
            seen.push(b.to_vec());
            if b[0] == 50 {
                v.drop();
            }
        });
        let want: Vec<Vec<u8>> =
            [0, 1, 4, 5, 6].iter().map(|&i| (0..(i + 5).min(8)).map(|j| (10 * i + j) as u8).collect()).collect();
        assert_eq!(seen, want);
        assert_eq!(verdicts, [DROP, DROP, PASS, PASS, PASS, DROP, PASS]);
        assert_eq!((heads[2][0], heads[3][0]), (20, 99));
        assert_eq!(u32::from_le_bytes(changed), 1);
    }

    #[test]
    fn fold_takes_the_eights_and_the_rest_after_any_start() {
        // 19 packets: two turns of eight and three one at a time from the start, fewer from later.
        const M: usize = 19;
        for start in 0..=M {
            let (lens, mut heads) = burst::<M>();
            let (mut changed, mut verdicts) = ([0; 4], [PASS; M]);
            let mut h = Heads::new(M, &lens, &mut heads, &mut changed, Some(&mut verdicts));
            let mut it = h.verdicts().unwrap();
            if start > 0 {
                assert!(it.nth(start - 1).is_some());
            }
            assert_eq!(it.len(), M - start, "from {start}");
            let firsts: Vec<u8> = it
                .map(|(b, v)| {
                    v.drop();
                    b[0]
                })
                .collect();
            assert_eq!(firsts, (start..M).map(|i| 10 * i as u8).collect::<Vec<_>>(), "from {start}");
            let dropped: Vec<usize> = (0..M).filter(|&i| verdicts[i] == DROP).collect();
            assert_eq!(dropped, (start..M).collect::<Vec<_>>(), "from {start}");
        }
        let (lens, mut heads) = burst::<M>();
        let (mut changed, mut verdicts) = ([0; 4], [PASS; M]);
        let mut h = Heads::new(M, &lens, &mut heads, &mut changed, Some(&mut verdicts));
        let (mut it, mut n) = (h.verdicts().unwrap(), 0);
        assert!(it.nth(M).is_none() && it.next().is_none());
        assert_eq!(it.len(), 0);
        it.for_each(|_| n += 1);
        assert_eq!(n, 0);
        // Fewer verdict bytes than heads: the walk, and its length, are theirs.
        let (lens, mut heads) = burst::<M>();
        let (mut changed, mut verdicts) = ([0; 4], [PASS; 5]);
        let mut h = Heads::new(M, &lens, &mut heads, &mut changed, Some(&mut verdicts));
        let it = h.verdicts_mut().unwrap();
        assert_eq!((it.len(), it.count()), (5, 5));
    }
}
