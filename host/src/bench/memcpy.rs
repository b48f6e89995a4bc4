//! `wasmdp bench memcpy`: the layout of DPDK's memcpy_perf_autotest. For each size, aligned and
//! unaligned (dst+1, src+5), four columns: cache to cache (both buffers 8 KiB, so they stay in L1/L2),
//! cache to memory, memory to cache, memory to memory (100 MiB buffers, random offsets, so the copies
//! miss). Each cell: time-stamp-counter ticks per copy of wasmdp's memcpy and of libc's memcpy,
//! copies in batches of 100 at random offsets, the two alternating batch by batch (and which goes
//! first) with fresh offsets each (so neither warms the cache for the other), and the difference in
//! percent.

use super::clock::ticks;
use crate::simd::{self, Avx2, Avx512, Kernel, Scalar, Simd, Sse};
use clap::Args;
use serde_json::json;
use std::hint::black_box;
use std::path::PathBuf;

/// `wasmdp bench memcpy` options.
#[derive(Debug, Args, Clone)]
pub struct MemcpyArgs {
    /// Copies per cell and implementation (in batches of 100).
    #[arg(long, default_value_t = 20_000, value_parser = |s: &str| crate::config::in_range(s, 1, 100_000_000))]
    pub iters: usize,
    /// Kernel variant of wasmdp's memcpy (default: the widest this CPU supports).
    #[arg(long)]
    pub simd: Option<String>,
    /// Write the table as JSON to PATH.
    #[arg(long, value_name = "PATH")]
    pub json: Option<PathBuf>,
}

const SMALL: usize = 8 * 1024;
const LARGE: usize = 100 * 1024 * 1024;
const BATCH: usize = 100;

/// The sizes of DPDK's table.
pub fn sizes() -> Vec<usize> {
    let mut v: Vec<usize> = (1..=9).chain([12, 15, 16, 17]).collect();
    for c in [32, 64, 128, 192, 256, 320, 384, 448, 512, 768, 1024] {
        v.extend([c - 1, c, c + 1]);
    }
    v.extend([1518, 1522, 1536, 1600, 2048]);
    v.extend((2560..=8192).step_by(512));
    v
}

/// The four columns: (name, dst buffer is large, src buffer is large).
const COLUMNS: [(&str, bool, bool); 4] =
    [("c2c", false, false), ("c2m", true, false), ("m2c", false, true), ("m2m", true, true)];

struct Buffers {
    small_src: Vec<u8>,
    small_dst: Vec<u8>,
    large_src: Vec<u8>,
    large_dst: Vec<u8>,
}

/// A tiny xorshift generator: reproducible offsets without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Random offsets for a batch: inside `len - size - 64`, aligned to 64, plus `shift`.
fn offsets(rng: &mut Rng, len: usize, size: usize, shift: usize, out: &mut [usize; BATCH]) {
    let room = (len - size - 64).max(64);
    for o in out.iter_mut() {
        *o = (rng.next() as usize % room) & !63;
        *o += shift;
    }
}

type CopyFn = unsafe fn(*mut u8, *const u8, usize);

unsafe fn libc_copy(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: forwarded: the caller keeps both ranges inside their buffers.
    unsafe { libc::memcpy(dst.cast(), src.cast(), n) };
}

unsafe fn kernel_copy<K: Kernel>(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY: forwarded; K was resolved against this CPU before the bench started.
    unsafe { K::memcpy(dst, src, n) }
}

/// The copy of the variant `s` proves this CPU runs.
fn wasmdp_copy(s: Simd) -> CopyFn {
    crate::simd::PerSimd::new(
        kernel_copy::<Scalar> as CopyFn,
        kernel_copy::<Sse>,
        kernel_copy::<Avx2>,
        kernel_copy::<Avx512>,
    )
    .get(s)
}

/// Ticks per copy of (wasmdp, libc) for one cell.
fn cell(
    b: &mut Buffers,
    rng: &mut Rng,
    size: usize,
    col: (bool, bool),
    unaligned: bool,
    iters: usize,
    ours: CopyFn,
) -> (f64, f64) {
    let (dst_shift, src_shift) = if unaligned { (1, 5) } else { (0, 0) };
    let mut total = [0u64; 2];
    let (mut d, mut s) = ([0usize; BATCH], [0usize; BATCH]);
    for batch in 0..iters.div_ceil(BATCH) {
        // Alternate which goes first, so that neither gains from running after the other.
        let order = if batch % 2 == 0 { [0, 1] } else { [1, 0] };
        for k in order {
            let f = [ours, libc_copy as CopyFn][k];
            let dst = if col.0 { &mut b.large_dst } else { &mut b.small_dst };
            let src = if col.1 { &b.large_src } else { &b.small_src };
            offsets(rng, dst.len(), size, dst_shift, &mut d);
            offsets(rng, src.len(), size, src_shift, &mut s);
            let (dp, sp) = (dst.as_mut_ptr(), src.as_ptr());
            let t = ticks();
            for i in 0..BATCH {
                // SAFETY: every offset + size + 5 stays below the buffer length (`offsets` leaves 64
                // bytes of room), and source and destination are different buffers.
                unsafe { f(black_box(dp.add(d[i])), black_box(sp.add(s[i])), size) };
            }
            total[k] += ticks() - t;
            black_box(dst);
        }
    }
    let n = (iters.div_ceil(BATCH) * BATCH) as f64;
    (total[0] as f64 / n, total[1] as f64 / n)
}

/// Prints (and optionally writes) the table.
pub fn main(args: &MemcpyArgs) -> anyhow::Result<()> {
    let s = match &args.simd {
        Some(n) => {
            let v = simd::Variant::from_name(n)
                .ok_or_else(|| anyhow::anyhow!("--simd `{n}`: allowed scalar, sse, avx2, avx512"))?;
            simd::resolve(simd::SimdChoice::Fixed(v)).map_err(|e| anyhow::anyhow!(e))?
        }
        None => Simd::detect(),
    };
    if ticks() == 0 {
        anyhow::bail!("bench memcpy counts time-stamp-counter ticks, which this CPU does not expose");
    }
    let mut b = Buffers {
        small_src: (0..SMALL + 128).map(|i| i as u8).collect(),
        small_dst: vec![0; SMALL + 128],
        large_src: (0..LARGE).map(|i| (i * 7) as u8).collect(),
        large_dst: vec![1; LARGE],
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let ours = wasmdp_copy(s);
    // Warm-up: page tables, caches and frequency settle before the first measured cell.
    for (_, dl, sl) in COLUMNS {
        cell(&mut b, &mut rng, 64, (dl, sl), false, args.iters, ours);
    }
    crate::output::print_lossy(&format!(
        "** wasmdp memcpy ({s}) vs libc memcpy: ticks per copy, wasmdp - libc (difference) **\n"
    ));
    crate::output::print_lossy("   Size   Cache to cache     Cache to mem      Mem to cache        Mem to mem\n");
    let mut rows = Vec::new();
    for (label, unaligned) in [("64B aligned", false), ("Unaligned (dst+1, src+5)", true)] {
        crate::output::print_lossy(&format!("============================ {label} ============================\n"));
        for &size in &sizes() {
            let mut line = format!("{size:>7}");
            let mut cols = serde_json::Map::new();
            for (name, dl, sl) in COLUMNS {
                let (w, l) = cell(&mut b, &mut rng, size, (dl, sl), unaligned, args.iters, ours);
                let pct = (w - l) / l * 100.0;
                line.push_str(&format!(" {w:>5.0} -{l:>5.0}({pct:>6.1}%)"));
                cols.insert(name.into(), json!({"wasmdp": w, "libc": l, "diff_pct": pct}));
            }
            crate::output::print_lossy(&format!("{line}\n"));
            rows.push(json!({"size": size, "unaligned": unaligned, "columns": cols}));
        }
    }
    if let Some(path) = &args.json {
        let doc = json!({"simd": s.name(), "iters": args.iters, "rows": rows});
        std::fs::write(path, serde_json::to_string_pretty(&doc)? + "\n")
            .map_err(|e| anyhow::anyhow!("--json {}: {e}", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sizes_are_dpdks() {
        let s = sizes();
        assert_eq!(&s[..13], &[1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17]);
        for edge in [32, 64, 128, 192, 256, 320, 384, 448, 512, 768, 1024] {
            assert!(s.contains(&(edge - 1)) && s.contains(&edge) && s.contains(&(edge + 1)), "{edge}");
        }
        assert!([1518, 1522, 1536, 1600, 2048].iter().all(|x| s.contains(x)));
        assert_eq!(&s[s.len() - 12..], &(2560..=8192).step_by(512).collect::<Vec<_>>()[..]);
    }

    #[test]
    fn offsets_stay_inside_the_buffer_with_their_shift() {
        let mut rng = Rng(7);
        let mut out = [0; BATCH];
        for size in [1, 64, 8192] {
            offsets(&mut rng, SMALL + 128, size, 5, &mut out);
            assert!(out.iter().all(|&o| o % 64 == 5 && o + size + 5 <= SMALL + 128), "{size}");
        }
    }
}
