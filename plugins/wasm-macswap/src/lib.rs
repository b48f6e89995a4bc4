//! `wasm-macswap`: the MAC swap done in WebAssembly, the baseline against the host's native engines.
//!
//! No params. ABI 1.1 burst area of 16-byte heads (`AreaSpec::Heads`): the host places each
//! packet's length and first 16 bytes in the plugin's memory before the call, without descriptors;
//! per packet the plugin swaps the two 6-byte MAC addresses with one SIMD128 shuffle in place, and
//! the host copies the heads back after the call: no host call per packet (1.0's version did a
//! `pkt_read` and a `pkt_write` each), no metadata per packet. No host engine runs, so the packets
//! carry no offload marking from the plugin. As the host's `macswap`, frames shorter than 14 bytes
//! (no Ethernet header) are left alone.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::{AreaSpec, Burst, Error, Params, Policy, Refusal};

/// The policy (stateless).
pub struct WasmMacswap;

impl Policy for WasmMacswap {
    fn init(_port: u32, _params: &Params) -> Result<Self, Refusal> {
        Ok(WasmMacswap)
    }

    const AREA: AreaSpec = AreaSpec::Heads(16);

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        swap_all(burst)
    }
}

wasmdp_sdk::export_policy!(WasmMacswap);

/// Swaps the MACs of every packet of at least 14 bytes. The SDK's loop (`for_each_mut`) is compiled
/// with `simd128`, as `swap16` is, so that `swap16` is in line in it: called, it cost wasmtime's
/// prologue and epoch check per packet, and the mask built again.
fn swap_all(burst: &mut Burst) -> Result<(), Error> {
    let swap = Swap16::new();
    burst.heads::<16>()?.for_each_mut(|len, head| {
        if len >= 14 {
            swap.swap(head);
        }
    });
    Ok(())
}

/// Swaps the MACs of a 16-byte frame head (destination, bytes 0..6, and source, 6..12; bytes 12..16
/// kept) with one `i8x16.swizzle`. `simd128` is enabled for this code only, so the module needs a
/// runtime with SIMD (wasmtime has it on by default).
///
/// The lane map is read once per burst through a volatile load. As a constant, LLVM turns the
/// swizzle into an `i8x16.shuffle` of the head with an undefined second vector, which wasmtime
/// compiles to two byte shuffles and an OR, the undefined vector kept alive across the loop. The
/// 128-bit integer version below measured dearer still.
#[cfg(target_arch = "wasm32")]
struct Swap16(core::arch::wasm32::v128);

#[cfg(target_arch = "wasm32")]
static LANES: [u8; 16] = [6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15];

#[cfg(target_arch = "wasm32")]
impl Swap16 {
    #[inline(always)]
    fn new() -> Swap16 {
        // SAFETY: `LANES` is 16 readable bytes; `v128.load` has no alignment requirement.
        Swap16(unsafe { core::ptr::read_volatile(LANES.as_ptr().cast::<core::arch::wasm32::v128>()) })
    }

    #[target_feature(enable = "simd128")]
    #[inline]
    fn swap(&self, head: &mut [u8; 16]) {
        use core::arch::wasm32::{u8x16_swizzle, v128, v128_load, v128_store};
        // SAFETY: `head` is 16 readable bytes; `v128.load` has no alignment requirement.
        let v = unsafe { v128_load(head.as_ptr().cast::<v128>()) };
        // SAFETY: `head` is 16 writable bytes, exclusively borrowed; `v128.store` has no alignment requirement.
        unsafe { v128_store(head.as_mut_ptr().cast::<v128>(), u8x16_swizzle(v, self.0)) };
    }
}

/// The same swap on native targets (the host's native build, `native:wasm_macswap`, and the tests):
/// the head as one 128-bit integer, its two 48-bit addresses exchanged with shifts.
#[cfg(not(target_arch = "wasm32"))]
struct Swap16;

#[cfg(not(target_arch = "wasm32"))]
impl Swap16 {
    fn new() -> Swap16 {
        Swap16
    }

    fn swap(&self, head: &mut [u8; 16]) {
        const MAC: u128 = (1 << 48) - 1;
        let v = u128::from_le_bytes(*head);
        let (dst, src, rest) = (v & MAC, v >> 48 & MAC, v >> 96 << 96);
        *head = (rest | dst << 48 | src).to_le_bytes();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmdp_sdk::mock;

    #[test]
    fn swaps_macs_only() {
        let f: [u8; 64] = core::array::from_fn(|i| i as u8);
        let mut want = f;
        want[..6].copy_from_slice(&f[6..12]);
        want[6..12].copy_from_slice(&f[..6]);
        let mut h = [0u8; 16];
        h.copy_from_slice(&f[..16]);
        Swap16::new().swap(&mut h);
        assert_eq!(h, want[..16]);

        mock::reset();
        mock::set_area(WasmMacswap::AREA);
        let mut p = WasmMacswap::init(0, &Params::host()).unwrap();
        mock::begin_burst(&[&f, &f[..14], &f[..13], &f[..11]]);
        p.on_burst(&mut Burst::current().unwrap()).unwrap();
        let out = mock::end_burst();
        assert_eq!(out[0].data, want);
        assert_eq!(out[1].data, want[..14]);
        assert_eq!(out[2].data, f[..13], "no Ethernet header: left alone");
        assert_eq!(out[3].data, f[..11]);
        assert!(out.iter().all(|o| o.engines.is_empty() && o.flags == 0));
        assert!(mock::with(|h| h.calls.is_empty()));
    }
}
