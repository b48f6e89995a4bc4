//! The burst area (ABI 1.1): the whole burst in the plugin's own memory, placed there by the host
//! before `on_burst`, so that deciding on every packet takes plain loads and stores and no host call.
//!
//! A policy asks for it with [`Policy::AREA`](crate::Policy::AREA): [`AreaSpec::Header`] for the
//! burst-wide decisions alone ([`Burst::pass_with`](crate::Burst::pass_with),
//! [`Burst::offload_all`](crate::Burst::offload_all)), [`AreaSpec::Windows`] for those plus, per
//! packet, a [`Window`]: the first bytes of the packet to read and change, its length, input port,
//! hash and room, and its verdict (pass, drop, send, run an engine) and length changes;
//! [`AreaSpec::Heads`] for the decisions plus each packet's length and first bytes without
//! descriptors ([`Heads`](crate::Heads)), for policies that rewrite every packet in place.
//!
//! Windows and length changes: a window holds the packet's first `min(len, window)` bytes as they were
//! when the burst arrived. Changes are made after `on_burst` returns, in this order: the front
//! ([`Window::prepend`] / [`Window::strip`]), the tail ([`Window::extend`] / [`Window::trim`]), then
//! the window's first `dirty` bytes are copied into the packet, as its new first bytes. So an
//! encapsulation prepends and writes its headers at the start of the window (the inner bytes stay
//! in the packet, untouched); a decapsulation strips and writes nothing.

pub(crate) mod registry;
mod views;

#[cfg(all(not(target_arch = "wasm32"), any(test, feature = "mock")))]
pub(crate) use registry::in_use;
pub(crate) use registry::{register, Held};
pub use views::{Window, Windows};
use wasmdp_abi::area::HEADER;

/// What the host places in the plugin's memory before each burst.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AreaSpec {
    /// Nothing: packets only through the 1.0 imports (the default).
    None,
    /// The header: burst-wide decisions without a host call.
    Header,
    /// The header and, per packet, a descriptor and a window of this many bytes (at most
    /// [`wasmdp_abi::area::MAX_WINDOW`]).
    Windows(u16),
    /// As `Windows` (0 bytes: descriptors only), and each packet's [`Window::hash`] is the host's
    /// [`flow_hash`](crate::flow_hash) of the whole packet, computed natively before the call: a
    /// policy keying on flows reads it instead of hashing in WebAssembly.
    HashedWindows(u16),
    /// The header and each packet's first this many bytes (1 to
    /// [`wasmdp_abi::area::MAX_WINDOW`]), back to back without descriptors
    /// ([`Burst::heads`](crate::Burst::heads)): for policies that rewrite every packet's headers in
    /// place and decide nothing per packet. No per-packet copy of metadata in or verdict out, so the
    /// cheapest way to touch every packet.
    Heads(u16),
    /// Heads in place (direct packet access, `wasmdp_abi::area::DIRECT` with `HEADS`): as
    /// [`AreaSpec::Heads`] of this many bytes, but each head is the packet's own first bytes, in the
    /// stream's packet region the host maps into the plugin's memory (docs/ABI.md, "Direct packet
    /// access"; the region counts in the policy's `limits.memory_kib`). Per packet the host writes
    /// 8 bytes before the call and reads nothing after it. Native builds (`plugin: native:NAME`,
    /// and the mock host of unit tests) have no region: there the SDK registers
    /// [`AreaSpec::Heads`] of this many bytes instead, so the same code runs on either.
    DirectHeads(u16),
    /// [`AreaSpec::Heads`] with a verdict per packet (`wasmdp_abi::area::DROPS`): read with
    /// [`Heads::verdicts`](crate::Heads::verdicts) or
    /// [`verdicts_mut`](crate::Heads::verdicts_mut), each packet's first bytes and a
    /// [`Verdict`](crate::Verdict) that can drop it. For a filter that drops some packets on what
    /// their headers say (an ACL, a firewall, a rate limiter) or a rewrite that drops what it cannot
    /// rewrite, without a descriptor a packet.
    HeadsWithDrops(u16),
    /// [`AreaSpec::DirectHeads`] with a verdict per packet: as [`AreaSpec::HeadsWithDrops`], the
    /// packets read and written in place. The fewest host instructions a packet for a filter, but
    /// in time copied heads measured faster (docs/ABI.md, "Drops": the direct pool's page-aligned
    /// buffers meet on the same cache sets). Native builds get [`AreaSpec::HeadsWithDrops`] of this
    /// many bytes instead.
    DirectHeadsWithDrops(u16),
}

impl AreaSpec {
    /// The spec without the verdict bytes, and whether it had them.
    const fn without_drops(self) -> (AreaSpec, bool) {
        match self {
            AreaSpec::HeadsWithDrops(w) => (AreaSpec::Heads(w), true),
            AreaSpec::DirectHeadsWithDrops(w) => (AreaSpec::DirectHeads(w), true),
            other => (other, false),
        }
    }

    /// Bytes of memory the area takes (for up to [`wasmdp_abi::MAX_BURST`] packets).
    pub const fn bytes(self) -> usize {
        match self.without_drops() {
            (base, true) => base.bytes() + wasmdp_abi::MAX_BURST as usize,
            (base, false) => base.bytes_without_drops(),
        }
    }

    const fn bytes_without_drops(self) -> usize {
        match self {
            AreaSpec::None => 0,
            AreaSpec::Header => HEADER,
            AreaSpec::Windows(w) | AreaSpec::HashedWindows(w) => {
                wasmdp_abi::area::size(wasmdp_abi::MAX_BURST as usize, w as usize)
            }
            AreaSpec::Heads(w) => wasmdp_abi::area::heads_size(wasmdp_abi::MAX_BURST as usize, w as usize),
            AreaSpec::DirectHeads(_) if DIRECT => wasmdp_abi::area::direct_heads_size(wasmdp_abi::MAX_BURST as usize),
            AreaSpec::DirectHeads(w) => wasmdp_abi::area::heads_size(wasmdp_abi::MAX_BURST as usize, w as usize),
            AreaSpec::HeadsWithDrops(_) | AreaSpec::DirectHeadsWithDrops(_) => 0, // not without drops
        }
    }

    /// `(max_pkts, window)` to register.
    pub(crate) const fn shape(self) -> (u32, u32) {
        match self.without_drops().0 {
            AreaSpec::None | AreaSpec::Header => (0, 0),
            AreaSpec::Windows(w) | AreaSpec::HashedWindows(w) | AreaSpec::Heads(w) => (wasmdp_abi::MAX_BURST, w as u32),
            AreaSpec::DirectHeads(_) if DIRECT => (wasmdp_abi::MAX_BURST, 0),
            AreaSpec::DirectHeads(w) => (wasmdp_abi::MAX_BURST, w as u32),
            AreaSpec::HeadsWithDrops(_) | AreaSpec::DirectHeadsWithDrops(_) => (0, 0), // not without drops
        }
    }

    /// The flags registered with the window's bytes (`wasmdp_abi::area::FLOW_HASH`).
    pub(crate) const fn flags(self) -> u32 {
        let (base, drops) = self.without_drops();
        base.flags_without_drops() | if drops { wasmdp_abi::area::DROPS } else { 0 }
    }

    const fn flags_without_drops(self) -> u32 {
        match self {
            AreaSpec::HashedWindows(_) => wasmdp_abi::area::FLOW_HASH,
            AreaSpec::Heads(_) => wasmdp_abi::area::HEADS,
            AreaSpec::DirectHeads(_) if DIRECT => wasmdp_abi::area::DIRECT | wasmdp_abi::area::HEADS,
            AreaSpec::DirectHeads(_) => wasmdp_abi::area::HEADS,
            _ => 0,
        }
    }
}

/// Whether this build reaches packets in place ([`AreaSpec::DirectHeads`]): WebAssembly, where the
/// host maps the packet region into the memory; native builds get copies instead.
const DIRECT: bool = cfg!(target_arch = "wasm32");

#[cfg(test)]
mod tests {
    use super::AreaSpec;

    /// Every spec registers the bytes, packets and flags whose shape the ABI sizes the same (what
    /// the host checks the area against), the verdict bytes of drops included.
    #[test]
    fn each_spec_is_the_size_its_registration_says() {
        for w in [1u16, 16, 64, 128, 1024] {
            for spec in [
                AreaSpec::Windows(w),
                AreaSpec::HashedWindows(w),
                AreaSpec::Heads(w),
                AreaSpec::DirectHeads(w),
                AreaSpec::HeadsWithDrops(w),
                AreaSpec::DirectHeadsWithDrops(w),
            ] {
                let (max_pkts, window) = spec.shape();
                let shape = wasmdp_abi::area::parse_window(window | spec.flags()).expect("a valid registration");
                assert_eq!(shape.size(max_pkts as usize), spec.bytes(), "{spec:?}");
                let drops = matches!(spec, AreaSpec::HeadsWithDrops(_) | AreaSpec::DirectHeadsWithDrops(_));
                assert_eq!(shape.drops, drops, "{spec:?}");
            }
        }
        assert_eq!(AreaSpec::Header.bytes(), wasmdp_abi::area::HEADER);
    }
}
