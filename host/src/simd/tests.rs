//! Every variant against the scalar reference, byte for byte.
//!
//! Each test exists once per variant (`simd::tests::<variant>::<test>`) and returns early, with a
//! note on stdout, when this CPU lacks the variant.

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

use super::scalar::reference_copy;
use super::{Avx2, Avx512, Kernel, Scalar, Sse};

/// Largest length the exhaustive memcpy test covers.
const MAX_LEN: usize = 4096;
/// Alignments are taken modulo this (the widest vector).
const ALIGN: usize = 64;
/// Bytes checked on each side of a destination range.
const GUARD: usize = 64;

/// splitmix64: a small deterministic generator for buffer contents.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let r = self.next().to_le_bytes();
            chunk.copy_from_slice(&r[..chunk.len()]);
        }
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = vec![0; n];
        self.fill(&mut v);
        v
    }
}

/// Whether to run the tests of `K`; prints a note if not.
fn supported<K: Kernel>() -> bool {
    let ok = K::SIMD.is_supported();
    if !ok {
        println!("note: skipping simd variant `{}`: not supported by this CPU", K::SIMD);
    }
    ok
}

/// A byte buffer in which `at(a)` is an index whose address is `a` modulo [`ALIGN`], with at least
/// [`GUARD`] bytes before it and `room + GUARD` bytes from it on.
struct Buf {
    data: Vec<u8>,
    base: usize,
}

impl Buf {
    fn new(rng: &mut Rng, room: usize) -> Buf {
        let data = rng.bytes(ALIGN + GUARD + ALIGN + room + GUARD);
        let base = (ALIGN - data.as_ptr().addr() % ALIGN) % ALIGN + GUARD;
        Buf { data, base }
    }

    fn at(&self, align: usize) -> usize {
        let i = self.base + align;
        debug_assert_eq!(self.data[i..].as_ptr().addr() % ALIGN, align);
        i
    }
}

/// Source and destination buffers, plus the destination's original contents.
struct CopyBufs {
    src: Buf,
    dst: Buf,
    orig: Vec<u8>,
}

impl CopyBufs {
    fn new(seed: u64, room: usize) -> CopyBufs {
        let mut rng = Rng(seed);
        let src = Buf::new(&mut rng, room);
        let dst = Buf::new(&mut rng, room);
        let orig = dst.data.clone();
        CopyBufs { src, dst, orig }
    }

    /// Copies `len` bytes with `K` from source alignment `sa` to destination alignment `da`,
    /// checks the copied range and the [`GUARD`] bytes on each side, and restores the
    /// destination. With `with_reference`, the expected destination is built with
    /// [`reference_copy`]; without, the copied range is compared with the source directly (the
    /// same thing, cheaper in debug builds).
    fn check<K: Kernel>(&mut self, len: usize, da: usize, sa: usize, with_reference: bool) {
        let (s, d) = (self.src.at(sa), self.dst.at(da));
        let src = &self.src.data[s..s + len];
        // SAFETY: the ranges are inside two distinct vectors; tests call this only for supported
        // variants.
        unsafe { K::memcpy(self.dst.data[d..].as_mut_ptr(), src.as_ptr(), len) };
        let window = d - GUARD..d + len + GUARD;
        let ctx = || format!("{}: len {len}, dst align {da}, src align {sa}", K::SIMD);
        if with_reference {
            let mut expected = self.orig[window.clone()].to_vec();
            reference_copy(&mut expected[GUARD..GUARD + len], src);
            assert!(self.dst.data[window.clone()] == expected[..], "{}", ctx());
        } else {
            assert!(self.dst.data[d..d + len] == *src, "{}: copied bytes differ", ctx());
            assert!(self.dst.data[d - GUARD..d] == self.orig[d - GUARD..d], "{}: wrote before dst", ctx());
            let after = d + len..d + len + GUARD;
            assert!(self.dst.data[after.clone()] == self.orig[after], "{}: wrote after dst+n", ctx());
        }
        self.dst.data[window.clone()].copy_from_slice(&self.orig[window]);
    }
}

/// Every length 0..=4096 at every destination alignment, the source alignment varying with both.
fn memcpy_every_len<K: Kernel>() {
    let mut bufs = CopyBufs::new(1, MAX_LEN);
    for len in 0..=MAX_LEN {
        for da in 0..ALIGN {
            bufs.check::<K>(len, da, (da * 7 + len) % ALIGN, false);
        }
    }
}

/// Lengths around every size-class boundary of every variant, at every (dst, src) alignment pair.
fn memcpy_boundaries<K: Kernel>() {
    let mut bufs = CopyBufs::new(2, MAX_LEN);
    // With every alignment pair, 254..=258 and 382..=386 reach every misalignment skip and tail
    // shape of the > 256 path; longer lengths are covered (at 64 alignment pairs each) by
    // `memcpy_every_len`.
    let boundaries = [0, 2, 4, 8, 16, 32, 64, 128, 256, 256 + 128];
    let lens = boundaries.iter().flat_map(|&b: &usize| b.saturating_sub(2)..=(b + 2).min(MAX_LEN));
    for len in lens {
        for da in 0..ALIGN {
            for sa in 0..ALIGN {
                bufs.check::<K>(len, da, sa, true);
            }
        }
    }
}

/// Pages mapped read-write between two inaccessible pages: any access outside faults.
#[cfg(unix)]
struct GuardedPages {
    base: *mut u8,
    page: usize,
    len: usize,
}

#[cfg(unix)]
impl GuardedPages {
    fn new(pages: usize) -> GuardedPages {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).expect("page size");
        let total = (pages + 2) * page;
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
        // SAFETY: a fresh anonymous mapping; the result is checked.
        let base = unsafe { libc::mmap(core::ptr::null_mut(), total, prot, flags, -1, 0) };
        assert!(base != libc::MAP_FAILED, "mmap failed");
        let base = base.cast::<u8>();
        // SAFETY: the first and last page are inside the mapping just made.
        unsafe {
            assert_eq!(libc::mprotect(base.cast(), page, libc::PROT_NONE), 0);
            assert_eq!(libc::mprotect(base.add(total - page).cast(), page, libc::PROT_NONE), 0);
        }
        GuardedPages { base, page, len: pages * page }
    }

    /// The accessible bytes.
    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: the `len` bytes after the first page are mapped read-write and owned by `self`.
        unsafe { core::slice::from_raw_parts_mut(self.base.add(self.page), self.len) }
    }
}

#[cfg(unix)]
impl Drop for GuardedPages {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`.
        unsafe { libc::munmap(self.base.cast(), self.len + 2 * self.page) };
    }
}

/// Copies of every length with the source or the destination flush against an inaccessible page,
/// on either side: a read or write outside the ranges crashes the test.
#[cfg(unix)]
fn memcpy_stays_in_bounds<K: Kernel>() {
    let mut src = GuardedPages::new(MAX_LEN.div_ceil(4096) + 1);
    let mut dst = GuardedPages::new(MAX_LEN.div_ceil(4096) + 1);
    Rng(3).fill(src.bytes());
    let (src, dst) = (src.bytes(), dst.bytes());
    let (sl, dl) = (src.len(), dst.len());
    for len in 0..=MAX_LEN {
        for (s, d) in [(0, dl - len), (sl - len, 0), (0, 0), (sl - len, dl - len)] {
            // SAFETY: both ranges are inside their (distinct) mappings; `K` is supported.
            unsafe { K::memcpy(dst[d..].as_mut_ptr(), src[s..].as_ptr(), len) };
            assert!(dst[d..d + len] == src[s..s + len], "{}: len {len}, src at {s}, dst at {d}", K::SIMD);
        }
    }
}

/// Random lengths and alignments, checked against [`reference_copy`].
fn memcpy_proptest<K: Kernel>() {
    let bufs = core::cell::RefCell::new(CopyBufs::new(4, 5000));
    let strategy = (0usize..=5000, 0..ALIGN, 0..ALIGN);
    run(strategy, |(len, da, sa)| {
        bufs.borrow_mut().check::<K>(len, da, sa, true);
        Ok(())
    });
}

/// Runs a proptest property (without failure persistence files).
fn run<S: Strategy>(strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>) {
    let config = Config { failure_persistence: None, ..Config::default() };
    let result = TestRunner::new(config).run(&strategy, test);
    if let Err(e) = result {
        panic!("{e}");
    }
}

/// Size of each frame's region in the macswap buffers: guard, alignment slack, frame, guard.
const REGION: usize = GUARD + ALIGN + 64 + GUARD;

/// Checks one frame of `after` (at `at`, header length `hlen`) against `before`: MACs swapped,
/// bytes 12..16 and everything else in the region unchanged.
fn check_frame(before: &[u8], after: &[u8], at: usize, hlen: usize, ctx: &str) {
    assert_eq!(after[at..at + 6], before[at + 6..at + 12], "{ctx}: destination MAC");
    assert_eq!(after[at + 6..at + 12], before[at..at + 6], "{ctx}: source MAC");
    assert_eq!(after[at + 12..at + hlen.max(16)], before[at + 12..at + hlen.max(16)], "{ctx}: bytes 12..");
    assert_eq!(after[..at], before[..at], "{ctx}: bytes before the frame");
    assert_eq!(after[at + 16..], before[at + 16..], "{ctx}: bytes after the frame");
}

/// One frame with a `hlen`-byte header at alignment `align`, in a random buffer: `macswap1` of `K`
/// equals scalar's and swaps exactly the MACs.
fn check_macswap1<K: Kernel>(rng: &mut Rng, hlen: usize, align: usize) {
    let mut buf = Buf::new(rng, 64);
    let at = buf.at(align);
    let before = buf.data.clone();
    let mut expected = buf.data.clone();
    // SAFETY: at least 16 bytes (the contract's minimum, covering `hlen`) follow `at`.
    unsafe {
        Scalar::macswap1(expected[at..].as_mut_ptr());
        K::macswap1(buf.data[at..].as_mut_ptr());
    }
    let ctx = format!("{} macswap1: header {hlen} B, align {align}", K::SIMD);
    assert_eq!(buf.data, expected, "{ctx}: differs from scalar");
    check_frame(&before, &buf.data, at, hlen, &ctx);
}

/// Four frames (header lengths `hlens`, alignments `aligns`) in distinct regions of one random
/// buffer: `macswap4` of `K` equals scalar's.
fn check_macswap4<K: Kernel>(rng: &mut Rng, hlens: [usize; 4], aligns: [usize; 4]) {
    let mut buf = rng.bytes(4 * REGION + ALIGN);
    let base = (ALIGN - buf.as_ptr().addr() % ALIGN) % ALIGN;
    let at: [usize; 4] = core::array::from_fn(|i| base + i * REGION + GUARD + aligns[i]);
    let before = buf.clone();
    let mut expected = buf.clone();
    let ptr = buf.as_mut_ptr();
    let eptr = expected.as_mut_ptr();
    // SAFETY: each frame has at least 16 bytes of its own region (disjoint from the others).
    unsafe {
        Scalar::macswap4(at.map(|i| eptr.add(i)));
        K::macswap4(at.map(|i| ptr.add(i)));
    }
    let ctx = format!("{} macswap4: headers {hlens:?} B, aligns {aligns:?}", K::SIMD);
    assert_eq!(buf, expected, "{ctx}: differs from scalar");
    for (i, &a) in at.iter().enumerate() {
        let region = a - GUARD - aligns[i]..a - GUARD - aligns[i] + REGION;
        let (b, r) = (&before[region.clone()], &buf[region]);
        check_frame(b, r, GUARD + aligns[i], hlens[i], &format!("{ctx}, frame {i}"));
    }
}

/// Header lengths 14..=64 at every alignment 0..64, for `macswap1` and `macswap4`.
fn macswap_every_len_and_alignment<K: Kernel>() {
    let mut rng = Rng(5);
    for hlen in 14..=64 {
        for a in 0..ALIGN {
            check_macswap1::<K>(&mut rng, hlen, a);
            let aligns = [a, (a + 13) % ALIGN, (a + 29) % ALIGN, (a + 47) % ALIGN];
            check_macswap4::<K>(&mut rng, [hlen, 78 - hlen, hlen, 78 - hlen], aligns);
        }
    }
}

/// Random frames, alignments and contents.
fn macswap_proptest<K: Kernel>() {
    let frame = (14usize..=64, 0..ALIGN);
    let strategy = ([frame.clone(), frame.clone(), frame.clone(), frame], proptest::num::u64::ANY);
    run(strategy, |(frames, seed)| {
        let mut rng = Rng(seed);
        check_macswap1::<K>(&mut rng, frames[0].0, frames[0].1);
        check_macswap4::<K>(&mut rng, frames.map(|f| f.0), frames.map(|f| f.1));
        Ok(())
    });
}

/// The tests, once per variant.
macro_rules! variant_tests {
    ($($module:ident: $kernel:ty),* $(,)?) => {$(
        mod $module {
            use super::*;

            #[test]
            fn memcpy_every_len_and_dst_alignment() {
                if supported::<$kernel>() {
                    memcpy_every_len::<$kernel>();
                }
            }

            #[test]
            fn memcpy_size_class_boundaries_every_alignment_pair() {
                if supported::<$kernel>() {
                    memcpy_boundaries::<$kernel>();
                }
            }

            #[cfg(unix)]
            #[test]
            fn memcpy_never_touches_outside_ranges() {
                if supported::<$kernel>() {
                    memcpy_stays_in_bounds::<$kernel>();
                }
            }

            #[test]
            fn memcpy_random() {
                if supported::<$kernel>() {
                    memcpy_proptest::<$kernel>();
                }
            }

            #[test]
            fn macswap_every_header_len_and_alignment() {
                if supported::<$kernel>() {
                    macswap_every_len_and_alignment::<$kernel>();
                }
            }

            #[test]
            fn macswap_random() {
                if supported::<$kernel>() {
                    macswap_proptest::<$kernel>();
                }
            }
        }
    )*};
}

variant_tests!(scalar: Scalar, sse: Sse, avx2: Avx2, avx512: Avx512);
