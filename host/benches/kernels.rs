//! Native kernels: memcpy per variant against `core::ptr::copy_nonoverlapping` (libc `memcpy`,
//! which is also what the scalar variant calls), and macswap over a burst of 32 frames.
//!
//! `cargo bench -p wasmdp --bench kernels` (about half a minute); `-- memcpy/avx2` and the like
//! filter. Variants this CPU lacks are skipped.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use wasmdp::simd::{Avx2, Avx512, Kernel, Scalar, Sse};

/// Copy sizes: a small header, a minimum frame, and larger frames up to a full 1518-byte one.
const SIZES: [usize; 5] = [16, 64, 256, 1024, 1518];
/// Frames per macswap burst (testpmd's default burst).
const BURST: usize = 32;
/// Distance between frames in the macswap burst: the mbuf pool's element stride for the default
/// 128 + 128 + 2048 bytes (an odd number of cache lines, against 4K aliasing).
const FRAME_STRIDE: usize = 37 * 64;

/// A buffer of `len` bytes starting at a 64-byte boundary (as mbuf data does).
struct Aligned {
    data: Vec<u8>,
    off: usize,
}

impl Aligned {
    fn new(len: usize) -> Aligned {
        let data: Vec<u8> = (0..len + 64).map(|i| i as u8).collect();
        let off = (64 - data.as_ptr().addr() % 64) % 64;
        Aligned { data, off }
    }

    fn ptr(&mut self) -> *mut u8 {
        self.data[self.off..].as_mut_ptr()
    }
}

fn memcpy_variant<K: Kernel>(c: &mut Criterion) {
    if !K::SIMD.is_supported() {
        eprintln!("skipping memcpy/{}: not supported by this CPU", K::SIMD);
        return;
    }
    let mut group = c.benchmark_group("memcpy");
    let (mut src, mut dst) = (Aligned::new(2048), Aligned::new(2048));
    let (s, d) = (src.ptr(), dst.ptr());
    for n in SIZES {
        group.throughput(Throughput::Bytes(n as u64));
        group.bench_with_input(BenchmarkId::new(K::SIMD.name(), n), &n, |b, &n| {
            // SAFETY: both buffers hold 2048 >= n bytes and are distinct; `K` is supported.
            b.iter(|| unsafe { K::memcpy(black_box(d), black_box(s), black_box(n)) })
        });
    }
    group.finish();
}

fn memcpy_libc(c: &mut Criterion) {
    let mut group = c.benchmark_group("memcpy");
    let (mut src, mut dst) = (Aligned::new(2048), Aligned::new(2048));
    let (s, d) = (src.ptr(), dst.ptr());
    for n in SIZES {
        group.throughput(Throughput::Bytes(n as u64));
        group.bench_with_input(BenchmarkId::new("libc", n), &n, |b, &n| {
            // SAFETY: both buffers hold 2048 >= n bytes and are distinct.
            b.iter(|| unsafe { core::ptr::copy_nonoverlapping(black_box(s), black_box(d), black_box(n)) })
        });
    }
    group.finish();
}

fn macswap_variant<K: Kernel>(c: &mut Criterion) {
    if !K::SIMD.is_supported() {
        eprintln!("skipping macswap/{}: not supported by this CPU", K::SIMD);
        return;
    }
    let mut pool = Aligned::new(BURST * FRAME_STRIDE);
    let base = pool.ptr();
    // SAFETY: every frame start is inside the pool, with FRAME_STRIDE >= 16 bytes to itself.
    let frames: [*mut u8; BURST] = core::array::from_fn(|i| unsafe { base.add(i * FRAME_STRIDE) });
    let mut flags = [0u64; BURST];
    c.bench_function(&format!("macswap/{}/burst{BURST}", K::SIMD.name()), |b| {
        b.iter(|| {
            let frames = black_box(&frames);
            for (i, f) in frames.chunks_exact(4).enumerate() {
                let quad = [f[0], f[1], f[2], f[3]];
                // The caller's offload-metadata writes, then the kernel.
                flags[4 * i..4 * i + 4].fill(black_box(1));
                // SAFETY: distinct frames, 16 bytes each inside the pool; `K` is supported.
                unsafe { K::macswap4(quad) };
            }
        })
    });
    black_box(&flags);
}

fn kernels(c: &mut Criterion) {
    memcpy_libc(c);
    memcpy_variant::<Sse>(c);
    memcpy_variant::<Avx2>(c);
    memcpy_variant::<Avx512>(c);
    macswap_variant::<Scalar>(c);
    macswap_variant::<Sse>(c);
    macswap_variant::<Avx2>(c);
    macswap_variant::<Avx512>(c);
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(900))
        .sample_size(30)
}

criterion_group! {
    name = benches;
    config = config();
    targets = kernels
}
criterion_main!(benches);
