//! Network-typed params (ABI 1.1 SDK): IPv4 and IPv6 addresses, CIDR prefixes, MAC addresses and
//! lists of numbers, parsed with `core::net` where it can and checked in full.

use core::net::{Ipv4Addr, Ipv6Addr};

use crate::{Params, Refusal};

/// An address prefix: `addr/len` (the bits past `len` are cleared).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cidr {
    /// IPv4.
    V4([u8; 4], u8),
    /// IPv6.
    V6([u8; 16], u8),
}

impl Cidr {
    /// Parses `a.b.c.d/n` or `x:y::z/n` (a bare address is a /32 or /128).
    pub fn parse(s: &str) -> Option<Cidr> {
        let (addr, len) = match s.split_once('/') {
            Some((a, l)) => (a, Some(l.parse::<u8>().ok()?)),
            None => (s, None),
        };
        if let Ok(a) = addr.parse::<Ipv4Addr>() {
            let len = len.unwrap_or(32);
            return (len <= 32).then(|| Cidr::V4(mask(a.octets(), len), len));
        }
        let a = addr.parse::<Ipv6Addr>().ok()?;
        let len = len.unwrap_or(128);
        (len <= 128).then(|| Cidr::V6(mask(a.octets(), len), len))
    }

    /// Whether the IPv4 address is inside (an IPv6 prefix holds no IPv4 address). Per packet,
    /// [`Cidr::v4`]'s prefix, made once, spares building the mask each time.
    #[inline]
    pub fn contains_v4(&self, a: [u8; 4]) -> bool {
        self.v4().is_some_and(|p| p.contains(a))
    }

    /// The IPv4 prefix as a word and a mask, ready for per-packet checks (None for IPv6).
    #[inline]
    pub fn v4(&self) -> Option<Prefix4> {
        let Cidr::V4(net, len) = *self else { return None };
        // The prefix's bits compared as one word in the machine's byte order (the mask's bytes put
        // in that order once), not byte by byte.
        let mask = u32::MAX.checked_shl(32 - u32::from(len.min(32))).unwrap_or(0).to_be();
        Some(Prefix4 { net: u32::from_ne_bytes(net) & mask, mask })
    }

    /// Whether the IPv6 address is inside.
    pub fn contains_v6(&self, a: [u8; 16]) -> bool {
        matches!(*self, Cidr::V6(net, len) if mask(a, len) == net)
    }
}

/// An IPv4 prefix as one word and its mask, in the machine's byte order ([`Cidr::v4`]): a check is
/// an XOR and an AND (built for each check, the mask was a measurable part of dnat's work per
/// packet in WebAssembly).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefix4 {
    net: u32,
    mask: u32,
}

impl Prefix4 {
    /// Whether `a` is inside.
    #[inline(always)]
    pub fn contains(self, a: [u8; 4]) -> bool {
        (u32::from_ne_bytes(a) ^ self.net) & self.mask == 0
    }
}

/// `a` with the bits past the first `len` cleared.
fn mask<const N: usize>(mut a: [u8; N], len: u8) -> [u8; N] {
    for (i, b) in a.iter_mut().enumerate() {
        let keep = (usize::from(len)).saturating_sub(i * 8).min(8);
        *b &= !(0xFFu8.checked_shr(keep as u32).unwrap_or(0));
    }
    a
}

/// Parses `aa:bb:cc:dd:ee:ff` (or with `-`).
pub fn parse_mac(s: &str) -> Option<[u8; 6]> {
    let mut out = [0u8; 6];
    let mut parts = s.split([':', '-']);
    for b in &mut out {
        let p = parts.next()?;
        if p.len() != 2 {
            return None;
        }
        *b = u8::from_str_radix(p, 16).ok()?;
    }
    parts.next().is_none().then_some(out)
}

impl Params {
    /// `key` as an IPv4 address (`192.0.2.1`).
    pub fn get_ipv4(&self, key: &str) -> Result<Option<[u8; 4]>, Refusal> {
        self.typed(key, "an IPv4 address", |s| s.parse::<Ipv4Addr>().ok().map(|a| a.octets()))
    }

    /// `key` as an IPv6 address (`2001:db8::1`).
    pub fn get_ipv6(&self, key: &str) -> Result<Option<[u8; 16]>, Refusal> {
        self.typed(key, "an IPv6 address", |s| s.parse::<Ipv6Addr>().ok().map(|a| a.octets()))
    }

    /// `key` as a prefix (`10.0.0.0/8`, `2001:db8::/32`).
    pub fn get_cidr(&self, key: &str) -> Result<Option<Cidr>, Refusal> {
        self.typed(key, "an address prefix such as 10.0.0.0/8", Cidr::parse)
    }

    /// `key` as a MAC address (`02:00:00:00:00:01`).
    pub fn get_mac(&self, key: &str) -> Result<Option<[u8; 6]>, Refusal> {
        self.typed(key, "a MAC address such as 02:00:00:00:00:01", parse_mac)
    }

    /// `key` as a comma-separated list of up to `N` numbers `0..=65535` (ports, ids); returns the
    /// array and how many were given.
    pub fn get_u16_list<const N: usize>(&self, key: &str) -> Result<Option<([u16; N], usize)>, Refusal> {
        self.typed(key, "a list of numbers 0..=65535", |s| {
            let mut out = [0u16; N];
            let mut n = 0;
            for part in s.split(',').map(str::trim) {
                *out.get_mut(n)? = crate::parse_u64(part).and_then(|v| u16::try_from(v).ok())?;
                n += 1;
            }
            Some((out, n))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock;
    use std::string::String;

    #[test]
    fn addresses_prefixes_macs_and_lists() {
        mock::reset();
        for (k, v) in
            [("a", "192.0.2.1"), ("b", "2001:db8::1"), ("c", "10.1.2.3/8"), ("m", "02:00:00:00:00:0a"), ("l", "1, 2,3")]
        {
            mock::set_param(k, v);
        }
        mock::set_param("bad", "300.1.1.1");
        let p = Params::host();
        assert_eq!(p.get_ipv4("a").unwrap(), Some([192, 0, 2, 1]));
        assert_eq!(p.get_ipv6("b").unwrap().unwrap()[15], 1);
        let c = p.get_cidr("c").unwrap().unwrap();
        assert_eq!(c, Cidr::V4([10, 0, 0, 0], 8));
        assert!(c.contains_v4([10, 200, 0, 1]) && !c.contains_v4([11, 0, 0, 1]));
        assert_eq!(
            Cidr::parse("2001:db8::/33"),
            Some(Cidr::V6(mask([0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], 33), 33))
        );
        assert_eq!(Cidr::parse("10.0.0.0/33"), None);
        assert_eq!(p.get_mac("m").unwrap(), Some([2, 0, 0, 0, 0, 10]));
        assert_eq!(parse_mac("02:00:00:00:00"), None);
        assert_eq!(p.get_u16_list::<4>("l").unwrap(), Some(([1, 2, 3, 0], 3)));
        assert!(p.get_u16_list::<2>("l").is_err());
        let e = p.get_ipv4("bad").unwrap_err();
        assert_eq!(String::from(e.reason()), "param `bad`: `300.1.1.1` is not an IPv4 address");
    }

    #[test]
    fn contains_v4_agrees_with_the_bytewise_mask_at_every_length() {
        let net = [192, 168, 77, 129];
        let probes = [net, [192, 168, 77, 128], [192, 168, 76, 129], [193, 168, 77, 129], [0; 4], [255; 4]];
        for len in 0..=32u8 {
            let c = Cidr::V4(mask(net, len), len);
            for a in probes {
                assert_eq!(c.contains_v4(a), mask(a, len) == mask(net, len), "/{len} {a:?}");
                assert_eq!(c.v4().map(|p| p.contains(a)), Some(mask(a, len) == mask(net, len)), "/{len} {a:?}");
            }
            // Bits past the length in the prefix given do not matter.
            assert_eq!(Cidr::V4(net, len).v4(), c.v4(), "/{len}");
        }
        assert!(!Cidr::V6([0; 16], 0).contains_v4(net), "an IPv6 prefix holds no IPv4 address");
        assert_eq!(Cidr::V6([0; 16], 0).v4(), None);
    }
}
