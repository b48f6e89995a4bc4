//! Heads ([`AreaSpec::Heads`](crate::AreaSpec::Heads)): each packet's first `N` bytes and its
//! length, without descriptors, for policies that rewrite every packet's headers in place.

/// The burst's heads ([`Burst::heads`](crate::Burst::heads)): packet `i`'s length and its first
/// `min(len, N)` bytes (zeros after a shorter packet's end), in burst order.
///
/// Reading changes nothing. After [`heads_mut`](Heads::heads_mut) or
/// [`iter_mut`](Heads::iter_mut), once `on_burst` returns `Ok`, every packet's first `min(len, N)`
/// bytes are replaced by its head, changed or not (to change a few packets, or to decide per packet,
/// ask for [`Windows`](crate::AreaSpec::Windows)).
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
}

#[derive(Debug)]
enum Kind<'a, const N: usize> {
    /// Copies side by side in the area.
    Copied { lens: &'a [[u8; 4]], heads: &'a mut [[u8; N]] },
    /// Entries pointing at the packets (`wasmdp_abi::area::direct_head`).
    Direct { entries: &'a [[u8; wasmdp_abi::area::DIRECT_HEAD]] },
}

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
    pub(crate) fn new(n: usize, lens: &'a [[u8; 4]], heads: &'a mut [[u8; N]], changed: &'a mut [u8; 4]) -> Self {
        let n = n.min(lens.len()).min(heads.len());
        Heads { kind: Kind::Copied { lens: &lens[..n], heads: &mut heads[..n] }, changed }
    }

    /// The first `n` packets' direct-heads entries.
    pub(crate) fn direct(
        n: usize,
        entries: &'a [[u8; wasmdp_abi::area::DIRECT_HEAD]],
        changed: &'a mut [u8; 4],
    ) -> Self {
        Heads { kind: Kind::Direct { entries: &entries[..n.min(entries.len())] }, changed }
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
    /// buffer's end gets a copy, written back). For a short `f`: the loop goes four packets a turn,
    /// and WebAssembly checks the epoch deadline at every loop header, so a short per-packet body (a
    /// MAC swap) pays that check, and the registers spilled around it, once in four packets rather
    /// than once or twice in two. `f` is called from five places (four in the loop, one for the last
    /// packets), so LLVM keeps a long `f` out of line, a call per packet: for a body that parses
    /// headers, use `iter_mut`.
    #[inline(always)]
    pub fn for_each_mut(&mut self, mut f: impl FnMut(u32, &mut [u8; N])) {
        *self.changed = 1u32.to_le_bytes();
        match &mut self.kind {
            Kind::Copied { lens, heads } => {
                let (lens, heads) = (lens.as_chunks::<4>(), heads.as_chunks_mut::<4>());
                for (l, h) in lens.0.iter().zip(heads.0.iter_mut()) {
                    let [h0, h1, h2, h3] = h;
                    f(u32::from_le_bytes(l[0]), h0);
                    f(u32::from_le_bytes(l[1]), h1);
                    f(u32::from_le_bytes(l[2]), h2);
                    f(u32::from_le_bytes(l[3]), h3);
                }
                for (l, h) in lens.1.iter().zip(heads.1.iter_mut()) {
                    f(u32::from_le_bytes(*l), h);
                }
            }
            Kind::Direct { entries } => {
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
        }
    }
}
