//! The shape every vector memcpy shares, after DPDK `rte_memcpy` (x86), written once and
//! instantiated per vector width by [`vector_memcpy!`]: copies of up to a few vectors as `K` vectors
//! from the start and `K` ending at `n` (overlapping in the middle, all loads before the stores), and
//! larger ones as the first vector unaligned, then from the next aligned destination address
//! 128-byte blocks (unaligned loads, aligned stores), then the rest with one 64- or 128-byte move
//! ending exactly at `n`.

/// `vector_memcpy! { feature, vector type, width, loadu, storeu, store (aligned), and the arms of
/// the size `match` }` expands to `pub(super) unsafe fn memcpy` and its helpers, with the variant's
/// `#[target_feature]` on each (so the intrinsics inline). An arm is `lo..=hi => head_tail(K)`
/// (`K * W <= lo`, `hi <= 2 * K * W`), `lo..=hi => small` (the shared [`super::memcpy_small`] moves),
/// or `lo..=hi => half` (two overlapping moves of half a vector, for the widest variant).
macro_rules! vector_memcpy {
    (
        feature: $feat:literal, vector: $v:ty, width: $w:literal,
        loadu: $loadu:path, storeu: $storeu:path, store: $store:path,
        arms: { $($lo:literal ..= $hi:literal => $how:ident $(($k:literal))?),* $(,)? }
    ) => {
        /// Vector width in bytes.
        const W: usize = $w;

        /// Copies `n` bytes from `src` to `dst`.
        ///
        /// # Safety
        /// `src` valid for reads of `n` bytes, `dst` for writes of `n` bytes, no overlap, and the CPU
        /// has the variant's features.
        #[inline]
        #[target_feature(enable = $feat)]
        pub(super) unsafe fn memcpy(dst: *mut u8, src: *const u8, n: usize) {
            // SAFETY: forwarded contract in every arm; each arm's range satisfies its helper's
            // bounds (`K * W <= n <= 2 * K * W` for head_tail, `n > 256` for copy_big).
            unsafe {
                match n {
                    $($lo..=$hi => super::memcpy_vec::vector_memcpy!(@arm $how $(($k))?, dst, src, n),)*
                    _ => copy_big(dst, src, n),
                }
            }
        }

        /// Copies `K * W <= n <= 2 * K * W` bytes: `K` vectors from the start and `K` ending at `n`.
        ///
        /// # Safety
        /// As for [`memcpy`], and `K * W <= n <= 2 * K * W`.
        #[inline]
        #[target_feature(enable = $feat)]
        unsafe fn head_tail<const K: usize>(d: *mut u8, s: *const u8, n: usize) {
            debug_assert!(K * W <= n && n <= 2 * K * W);
            let last = n - K * W;
            // SAFETY: `[0, K * W)` and `[last, n)` lie in `[0, n)` of both ranges; unaligned moves;
            // an all-zero vector is a valid value.
            unsafe {
                let (mut head, mut tail): ([$v; K], [$v; K]) = (core::mem::zeroed(), core::mem::zeroed());
                for i in 0..K {
                    head[i] = $loadu(s.add(i * W).cast());
                    tail[i] = $loadu(s.add(last + i * W).cast());
                }
                for i in 0..K {
                    $storeu(d.add(i * W).cast(), head[i]);
                    $storeu(d.add(last + i * W).cast(), tail[i]);
                }
            }
        }

        /// Loads `K` vectors at `s`, then stores them at `d` (aligned stores when `ALIGNED`).
        ///
        /// # Safety
        /// `[s, s + K * W)` readable, `[d, d + K * W)` writable, no overlap; `d` W-aligned when
        /// `ALIGNED`.
        #[inline]
        #[target_feature(enable = $feat)]
        unsafe fn mov<const K: usize, const ALIGNED: bool>(d: *mut u8, s: *const u8) {
            // SAFETY: the caller's contract; an all-zero vector is a valid value.
            unsafe {
                let mut v: [$v; K] = core::mem::zeroed();
                for i in 0..K {
                    v[i] = $loadu(s.add(i * W).cast());
                }
                for i in 0..K {
                    if ALIGNED {
                        $store(d.add(i * W).cast(), v[i]);
                    } else {
                        $storeu(d.add(i * W).cast(), v[i]);
                    }
                }
            }
        }

        /// Copies `n > 256` bytes: the first vector unaligned, then 128-byte blocks to the
        /// `W`-aligned destination, then one 64- or 128-byte move ending at `n`.
        ///
        /// # Safety
        /// As for [`memcpy`], and `n > 256`.
        #[target_feature(enable = $feat)]
        unsafe fn copy_big(dst: *mut u8, src: *const u8, n: usize) {
            debug_assert!(n > 256);
            const BLOCK: usize = 128 / W;
            // SAFETY: every access stays in `[0, n)` of both ranges: the first vector (`W < n`), each
            // block ends at or before the end, and the tail moves end exactly at `n` (`n > 256`).
            unsafe {
                let (dst_end, src_end) = (dst.add(n), src.add(n));
                let (mut d, mut s, mut left) = (dst, src, n);
                let misalign = d.addr() & (W - 1);
                if misalign != 0 {
                    mov::<1, false>(d, s);
                    let skip = W - misalign;
                    (d, s, left) = (d.add(skip), s.add(skip), left - skip);
                }
                while left >= 128 {
                    debug_assert_eq!(d.addr() % W, 0);
                    mov::<BLOCK, true>(d, s);
                    (d, s, left) = (d.add(128), s.add(128), left - 128);
                }
                if left > 64 {
                    mov::<BLOCK, false>(dst_end.sub(128), src_end.sub(128));
                } else if left > 0 {
                    mov::<{ 64 / W }, false>(dst_end.sub(64), src_end.sub(64));
                }
            }
        }
    };
    (@arm small, $d:expr, $s:expr, $n:expr) => { super::memcpy_small::copy_le32($d, $s, $n) };
    (@arm half, $d:expr, $s:expr, $n:expr) => { copy_halves($d, $s, $n) };
    (@arm head_tail($k:literal), $d:expr, $s:expr, $n:expr) => { head_tail::<$k>($d, $s, $n) };
}

pub(super) use vector_memcpy;
