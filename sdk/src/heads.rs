//! Heads ([`AreaSpec::Heads`](crate::AreaSpec::Heads)): each packet's first `N` bytes and its
//! length, without descriptors, for policies that rewrite every packet's headers in place.

/// The burst's heads ([`Burst::heads`](crate::Burst::heads)): packet `i`'s length and its first
/// `min(len, N)` bytes (zeros after a shorter packet's end), in burst order.
///
/// Reading changes nothing. After [`heads_mut`](Heads::heads_mut) or
/// [`iter_mut`](Heads::iter_mut), once `on_burst` returns `Ok`, every packet's first `min(len, N)`
/// bytes are replaced by its head, changed or not (to change a few packets, or to decide per packet,
/// ask for [`Windows`](crate::AreaSpec::Windows)).
#[derive(Debug)]
pub struct Heads<'a, const N: usize> {
    lens: &'a [[u8; 4]],
    heads: &'a mut [[u8; N]],
    changed: &'a mut [u8; 4],
}

impl<'a, const N: usize> Heads<'a, N> {
    /// The first `n` packets' lengths and heads (fewer when the area holds fewer); `changed` is the
    /// header's `CHANGED` field.
    pub(crate) fn new(n: usize, lens: &'a [[u8; 4]], heads: &'a mut [[u8; N]], changed: &'a mut [u8; 4]) -> Self {
        let n = n.min(lens.len()).min(heads.len());
        Heads { lens: &lens[..n], heads: &mut heads[..n], changed }
    }

    /// Packets in the burst (with a head each).
    pub fn len(&self) -> usize {
        self.heads.len()
    }

    /// Whether the burst is empty.
    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    /// Packet `i`'s length in bytes (None past the burst).
    pub fn packet_len(&self, i: usize) -> Option<u32> {
        self.lens.get(i).map(|l| u32::from_le_bytes(*l))
    }

    /// The heads, to read.
    pub fn heads(&self) -> &[[u8; N]] {
        self.heads
    }

    /// The heads, to change in place: all are copied back into their packets after the call.
    pub fn heads_mut(&mut self) -> &mut [[u8; N]] {
        *self.changed = 1u32.to_le_bytes();
        self.heads
    }

    /// Each packet's length with its head, to change in place (as [`heads_mut`](Heads::heads_mut)).
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (u32, &mut [u8; N])> + '_ {
        *self.changed = 1u32.to_le_bytes();
        self.lens.iter().map(|l| u32::from_le_bytes(*l)).zip(self.heads.iter_mut())
    }

    /// Calls `f` with each packet's length and head, in burst order, to change in place (as
    /// [`iter_mut`](Heads::iter_mut)). For a short `f`: the loop goes four packets a turn, and
    /// WebAssembly checks the epoch deadline at every loop header, so a short per-packet body (a MAC
    /// swap) pays that check, and the registers spilled around it, once in four packets rather than
    /// once or twice in two (wasm_macswap: 176.3 -> 171.6 instructions a packet). `f` is called
    /// from five places (four in the loop, one for the last packets), so LLVM keeps a long `f` out
    /// of line, a call per packet: for a body that parses headers, use `iter_mut` (dscp_remark:
    /// 309.6 instructions a packet with `iter_mut`, 356.1 with `for_each_mut`).
    #[inline(always)]
    pub fn for_each_mut(&mut self, mut f: impl FnMut(u32, &mut [u8; N])) {
        *self.changed = 1u32.to_le_bytes();
        let (lens, heads) = (self.lens.as_chunks::<4>(), self.heads.as_chunks_mut::<4>());
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
}
