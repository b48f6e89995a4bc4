//! [`Offloads`] (TX offload requests) and [`Sticky`] (handing a port back to a native engine).

use wasmdp_abi::flags;

use crate::{sys, Engine, Error};

/// TX offloads to request for packets: `ol_flags` bits ([`wasmdp_abi::flags`]) and the VLAN TCIs the
/// tag insertions use. Built with the `const` builder methods:
///
/// ```
/// use wasmdp_sdk::Offloads;
/// let o = Offloads::new().qinq(100, 42).ipv4_cksum().udp_cksum();
/// assert_eq!((o.vlan_tci_outer, o.vlan_tci), (100, 42));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Offloads {
    /// `ol_flags` bits, a subset of [`flags::ALLOWED`] (others are refused with
    /// [`Error::BadFlags`]).
    pub flags: u64,
    /// TCI of the 802.1Q tag (the inner one with QinQ).
    pub vlan_tci: u16,
    /// TCI of the outer 802.1ad tag (QinQ).
    pub vlan_tci_outer: u16,
}

impl Offloads {
    /// No offloads.
    pub const NONE: Offloads = Offloads { flags: 0, vlan_tci: 0, vlan_tci_outer: 0 };

    /// No offloads.
    pub const fn new() -> Self {
        Self::NONE
    }

    /// Inserts an 802.1Q tag with `tci` ([`flags::TX_VLAN`]).
    pub const fn vlan(mut self, tci: u16) -> Self {
        self.flags |= flags::TX_VLAN;
        self.vlan_tci = tci;
        self
    }

    /// Inserts an 802.1ad tag with `outer` and, inside it, an 802.1Q tag with `inner`
    /// ([`flags::TX_QINQ`]).
    pub const fn qinq(mut self, outer: u16, inner: u16) -> Self {
        self.flags |= flags::TX_QINQ;
        self.vlan_tci = inner;
        self.vlan_tci_outer = outer;
        self
    }

    /// Fills the IPv4 header checksum ([`flags::TX_IP_CKSUM`]).
    pub const fn ipv4_cksum(mut self) -> Self {
        self.flags |= flags::TX_IP_CKSUM;
        self
    }

    /// Fills the UDP checksum ([`flags::TX_UDP_CKSUM`]).
    pub const fn udp_cksum(mut self) -> Self {
        self.flags |= flags::TX_UDP_CKSUM;
        self
    }

    /// Fills the TCP checksum ([`flags::TX_TCP_CKSUM`]).
    pub const fn tcp_cksum(mut self) -> Self {
        self.flags |= flags::TX_TCP_CKSUM;
        self
    }

    /// Adds a MACsec SecTAG ([`flags::TX_MACSEC`]; ports without MACsec refuse it at TX).
    pub const fn macsec(mut self) -> Self {
        self.flags |= flags::TX_MACSEC;
        self
    }

    /// Whether nothing is requested.
    pub const fn is_empty(self) -> bool {
        self.flags == 0
    }

    /// Adds the offload called `name` (the port config's `tx_offloads:` names: `vlan_insert`,
    /// `qinq_insert`, `macsec_insert`, `ipv4_cksum`, `udp_cksum`, `tcp_cksum`); `None` for another name.
    /// `vlan_insert` and `qinq_insert` only set the flag: set the TCIs with the fields.
    pub fn with_name(mut self, name: &str) -> Option<Self> {
        self.flags |= match name {
            "vlan_insert" => flags::TX_VLAN,
            "qinq_insert" => flags::TX_QINQ,
            "macsec_insert" => flags::TX_MACSEC,
            "ipv4_cksum" => flags::TX_IP_CKSUM,
            "udp_cksum" => flags::TX_UDP_CKSUM,
            "tcp_cksum" => flags::TX_TCP_CKSUM,
            _ => return None,
        };
        Some(self)
    }

    /// Parses a comma-separated list of offload names (spaces around names and empty items are
    /// ignored); `Err` carries the first unknown name.
    ///
    /// ```
    /// use wasmdp_sdk::Offloads;
    /// let o = Offloads::parse_list("vlan_insert, ipv4_cksum").unwrap();
    /// assert_eq!(o, Offloads::new().vlan(0).ipv4_cksum());
    /// assert_eq!(Offloads::parse_list("ipv4_cksum,gro"), Err("gro"));
    /// ```
    pub fn parse_list(list: &str) -> Result<Self, &str> {
        let mut o = Offloads::NONE;
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            o = o.with_name(name).ok_or(name)?;
        }
        Ok(o)
    }
}

/// A sticky decision: "for the next bursts, don't call me; run this engine with these offloads".
/// The port then runs at native speed until the decision runs out or is cleared.
///
/// ```no_run
/// use wasmdp_sdk::{Engine, Offloads, Sticky};
/// // From now on, until clear(): macswap plus VLAN 100, without calling the plugin.
/// Sticky::new(Engine::Macswap).offloads(Offloads::new().vlan(100)).set().ok();
/// // Later, e.g. from `tick`:
/// Sticky::clear().ok();
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sticky {
    /// Engine the host runs.
    pub engine: Engine,
    /// Offloads it requests on every packet.
    pub offloads: Offloads,
    /// Bursts the decision lasts; -1 until [`Sticky::clear`].
    pub bursts: i32,
}

impl Sticky {
    /// `engine` with no offloads, until cleared.
    pub const fn new(engine: Engine) -> Self {
        Sticky { engine, offloads: Offloads::NONE, bursts: -1 }
    }

    /// With these offloads.
    pub const fn offloads(mut self, offloads: Offloads) -> Self {
        self.offloads = offloads;
        self
    }

    /// For the next `n` bursts only (`n` ≥ 1, capped at `i32::MAX`; 0 is refused by the host with
    /// [`Error::BadRange`]).
    pub const fn bursts(mut self, n: u32) -> Self {
        self.bursts = if n > i32::MAX as u32 { i32::MAX } else { n as i32 };
        self
    }

    /// Until [`Sticky::clear`] (the default).
    pub const fn until_cleared(mut self) -> Self {
        self.bursts = -1;
        self
    }

    /// Hands the port to the host (`set_sticky`). Called from `on_burst`, the current burst is still
    /// the plugin's: the decision starts with the next one.
    pub fn set(&self) -> Result<(), Error> {
        let o = self.offloads;
        sys::set_sticky(self.engine.id(), o.flags, o.vlan_tci, o.vlan_tci_outer, self.bursts)
    }

    /// Ends the sticky decision in force (`clear_sticky`): `on_burst` is called again.
    pub fn clear() -> Result<(), Error> {
        sys::clear_sticky()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builders() {
        let o = Offloads::new().vlan(7).ipv4_cksum().udp_cksum().tcp_cksum();
        assert_eq!(o.flags, flags::TX_VLAN | flags::TX_IP_CKSUM | flags::TX_UDP_CKSUM | flags::TX_TCP_CKSUM);
        assert_eq!((o.vlan_tci, o.vlan_tci_outer), (7, 0));
        let q = Offloads::new().qinq(300, 20);
        assert_eq!((q.flags, q.vlan_tci, q.vlan_tci_outer), (flags::TX_QINQ, 20, 300));
        assert!(Offloads::new().is_empty() && !q.is_empty());
        assert_eq!(Offloads::new().macsec().flags & !flags::ALLOWED, 0);
        assert_eq!(Offloads::parse_list(" , udp_cksum,,tcp_cksum "), Ok(Offloads::new().udp_cksum().tcp_cksum()));
        assert_eq!(Offloads::parse_list("qinq_insert").unwrap().flags, flags::TX_QINQ);
        assert_eq!(Offloads::parse_list(""), Ok(Offloads::NONE));
        assert_eq!(Sticky::new(Engine::Io).bursts(u32::MAX).bursts, i32::MAX);
        assert_eq!(Sticky::new(Engine::Io).bursts(3).until_cleared().bursts, -1);
    }
}
