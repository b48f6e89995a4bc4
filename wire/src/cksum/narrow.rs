//! The ones' complement sum on 32-bit words in the machine's byte order, for WebAssembly: no
//! 128-bit loads, and no byte-swap instruction (each swap costs a dozen operations), so the words are
//! summed as they lie and the result swapped once.

use super::fold_carries;

/// [`super::sum`]: `data` added to the running sum `initial`, folded to at most 0xFFFF.
#[inline(always)]
pub(super) fn sum(data: &[u8], initial: u32) -> u32 {
    // Summed in the machine's byte order, the running sum swapped into it and the result back (RFC
    // 1071, 2(B): the sum of byte-swapped words is the byte-swapped sum): two swaps per call instead
    // of one per word, which WebAssembly, without a byte-swap instruction, pays a dozen operations for.
    let mut acc = u64::from(u16::from_be(fold_carries(u64::from(initial)) as u16));
    // 32-bit words are summed as a pair of 16-bit words each: 2^16 ≡ 1 modulo 0xFFFF. Twice fewer
    // additions, and no overflow within a block: 2^16 words of less than 2^32 each stay under 2^48.
    let (words, rest) = data.as_chunks::<4>();
    for block in words.chunks(1 << 16) {
        for w in block {
            acc += u64::from(u32::from_ne_bytes(*w));
        }
        acc = u64::from(fold_carries(acc));
    }
    let (pairs, odd) = rest.as_chunks::<2>();
    for p in pairs {
        acc += u64::from(u16::from_ne_bytes(*p));
    }
    if let [b] = odd {
        acc += u64::from(u16::from_ne_bytes([*b, 0]));
    }
    // At most 0xFFFF after folding: the cast keeps every bit.
    u32::from(u16::to_be(fold_carries(acc) as u16))
}
