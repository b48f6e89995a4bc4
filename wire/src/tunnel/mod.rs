//! VXLAN (RFC 7348) and Geneve (RFC 8926) over IPv4 or IPv6: the outer headers an encapsulation
//! writes ([`Outer`]) and the checks a decapsulation makes before it believes a frame is ours
//! ([`check()`]).
//!
//! Both tunnels carry an Ethernet frame in UDP behind an 8-byte header with a 24-bit network
//! identifier (VNI); they differ in that header only. Byte-level and allocation-free per packet, as
//! the rest of `wire`.

mod check;
mod fast;
mod lane;
mod outer;

pub use check::{check, Expect, Found, Reject};
pub use fast::{FastPath, Matcher};
pub use outer::{Outer, OuterSpec, OuterWriter};

/// One value per underlay family, the family fixed at compile time in each: what
/// [`Matcher::family`] and [`Outer::family`] return, so that a burst loop is instantiated per
/// family and no packet asks which one it is.
#[derive(Debug, Clone, Copy)]
pub enum Underlay<V4, V6> {
    /// For an IPv4 underlay.
    V4(V4),
    /// For an IPv6 underlay.
    V6(V6),
}

impl<V4, V6> Underlay<V4, V6> {
    /// `V6(v6())` for an IPv6 underlay, else `V4(v4())`.
    #[inline(always)]
    pub fn pick(is_v6: bool, v4: impl FnOnce() -> V4, v6: impl FnOnce() -> V6) -> Self {
        if is_v6 {
            Underlay::V6(v6())
        } else {
            Underlay::V4(v4())
        }
    }
}

/// Which tunnel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// VXLAN, RFC 7348.
    Vxlan,
    /// Geneve, RFC 8926.
    Geneve,
}

impl Kind {
    /// Both, in the order of [`Kind::index`].
    pub const ALL: [Kind; 2] = [Kind::Vxlan, Kind::Geneve];

    /// The IANA UDP port: 4789 for VXLAN, 6081 for Geneve.
    pub const fn default_port(self) -> u16 {
        match self {
            Kind::Vxlan => 4789,
            Kind::Geneve => 6081,
        }
    }

    /// The config key and engine prefix: `vxlan`, `geneve`.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Vxlan => "vxlan",
            Kind::Geneve => "geneve",
        }
    }

    /// 0 for VXLAN, 1 for Geneve: the slot in per-kind tables.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The value recorded in `FlowMeta::tunnel_type` (0 means no tunnel).
    pub const fn tunnel_type(self) -> u32 {
        self as u32 + 1
    }
}

/// Length of the VXLAN header and of the Geneve header without options.
pub const TUNNEL_HLEN: usize = 8;
/// Outer Ethernet + IPv4 + UDP + tunnel header: the 50 bytes an encapsulation adds over IPv4.
pub const OUTER_LEN_V4: usize = 14 + 20 + 8 + TUNNEL_HLEN;
/// The same over IPv6: 70 bytes.
pub const OUTER_LEN_V6: usize = 14 + 40 + 8 + TUNNEL_HLEN;
/// Source ports of encapsulated packets: the dynamic range RFC 7348 (section 5) recommends.
pub const SRC_PORT_MIN: u16 = 49152;

/// The UDP source port for an inner flow hash, in `SRC_PORT_MIN..=65535`, spread evenly: 14 bits
/// of the hash, taken so that the port's two bytes on the wire are the hash's two low bytes with
/// the top two bits set, which a writer stores with an `or` (no shift, no byte swap).
#[inline(always)]
pub const fn src_port(hash: u32) -> u16 {
    u16::from_be_bytes([hash as u8 | (SRC_PORT_MIN >> 8) as u8, (hash >> 8) as u8])
}

/// VXLAN: the I flag (a valid VNI follows) in the first byte.
const VXLAN_I: u8 = 0x08;
/// Geneve: the protocol type of an Ethernet payload (Transparent Ethernet Bridging).
const GENEVE_ETHERNET: u16 = 0x6558;
/// Geneve, second byte: the O (control packet) and C (critical options) bits.
const GENEVE_O: u8 = 0x80;
const GENEVE_C: u8 = 0x40;

#[cfg(test)]
mod tests;
