//! TX offloads: what a port asks for (`tx_offloads:` in the config), how engines mark packets with it
//! (as testpmd's macswap does), and how software ports carry it out at transmit time.

use crate::mbuf::{flags, Pkt};
use crate::wire::{self, ethertype, L3};

/// A port's TX offload request, resolved from the config.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxOffloads {
    /// `ol_flags` bits every transmitted packet gets (`flags::TX_*`).
    pub flags: u64,
    /// Inner (or only) VLAN TCI to insert.
    pub vlan_tci: u16,
    /// Outer VLAN TCI to insert with QinQ.
    pub vlan_tci_outer: u16,
}

/// One offload a port can be asked for, with its config name.
#[derive(Debug, Clone, Copy)]
pub struct OffloadName {
    /// Name in `tx_offloads:`.
    pub name: &'static str,
    /// The flag it sets.
    pub flag: u64,
}

/// Every `tx_offloads:` name, in the order the docs list them.
pub const OFFLOADS: &[OffloadName] = &[
    OffloadName { name: "vlan_insert", flag: flags::TX_VLAN },
    OffloadName { name: "qinq_insert", flag: flags::TX_QINQ },
    OffloadName { name: "macsec_insert", flag: flags::TX_MACSEC },
    OffloadName { name: "ipv4_cksum", flag: flags::TX_IP_CKSUM },
    OffloadName { name: "udp_cksum", flag: flags::TX_UDP_CKSUM },
    OffloadName { name: "tcp_cksum", flag: flags::TX_TCP_CKSUM },
];

/// The flag for an offload name.
pub fn flag_for(name: &str) -> Option<u64> {
    OFFLOADS.iter().find(|o| o.name == name).map(|o| o.flag)
}

/// The names of the offloads in `flags`, for logs.
pub fn names(flags: u64) -> Vec<&'static str> {
    OFFLOADS.iter().filter(|o| flags & o.flag != 0).map(|o| o.name).collect()
}

/// Marks one packet for transmission with `tx`: keeps only the buffer-attachment flags, adds the
/// port's TX flags and VLAN TCIs, and, when the port asks for offloads (which need them), sets
/// l2/l3/l4 lengths from the packet's actual headers (tags, IPv4 IHL, IPv6) instead of testpmd's fixed
/// 14/20. Without offloads the header walk is skipped and the lengths are left at 0 (unknown), and
/// so are the TCIs: they are read only under the VLAN and QinQ flags (testpmd's `vlan_qinq_set`
/// writes them only then too).
#[inline(always)]
pub fn mark(p: &mut Pkt, tx: &TxOffloads) {
    let h = if tx.flags == 0 { wire::Headers::default() } else { wire::parse(p.data()) };
    mark_with(p, tx, &h);
}

/// The flags a packet keeps when it is marked for a port without TX offloads: the
/// buffer-attachment flags only. For a loop that writes the flags word once with its own flag
/// added, instead of calling [`mark`] and then adding it.
#[inline(always)]
pub fn unmarked(ol_flags: u64) -> u64 {
    ol_flags & flags::ATTACH_MASK
}

/// [`mark`] with headers the caller knows (an engine that just wrote them), without parsing.
#[inline(always)]
pub fn mark_with(p: &mut Pkt, tx: &TxOffloads, h: &wire::Headers) {
    let keep = unmarked(p.meta().ol_flags);
    if tx.flags == 0 {
        p.meta_mut().set_ol_flags(keep);
        return;
    }
    let l3_flag = match h.l3 {
        L3::Ipv4 => flags::TX_IPV4,
        L3::Ipv6 => flags::TX_IPV6,
        L3::Other => 0,
    };
    p.meta_mut()
        .set_ol_flags(keep | tx.flags | l3_flag)
        .set_vlan(tx.vlan_tci, tx.vlan_tci_outer)
        .set_lens(h.l2_len as u8, h.l3_len, h.l4_len)
        .set_packet_type(h.l3 as u32);
}

/// Adds a plugin's offload request to a packet (which an engine may already have marked with the
/// port's offloads): ORs the flags in, takes the inner TCI when the request has VLAN or QinQ and the
/// outer TCI when it has QinQ, and sets the header lengths from the packet.
#[inline]
pub fn request(p: &mut Pkt, add: &TxOffloads) {
    let m = p.meta();
    let mut tx = TxOffloads {
        flags: (m.ol_flags & (flags::TX_SW_MASK | flags::TX_MACSEC)) | add.flags,
        vlan_tci: m.vlan_tci,
        vlan_tci_outer: m.vlan_tci_outer,
    };
    if add.flags & (flags::TX_VLAN | flags::TX_QINQ) != 0 {
        tx.vlan_tci = add.vlan_tci;
    }
    if add.flags & flags::TX_QINQ != 0 {
        tx.vlan_tci_outer = add.vlan_tci_outer;
    }
    mark(p, &tx);
}

/// Why a software offload could not be carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffloadError {
    /// Not enough headroom to insert the tags.
    NoHeadroom,
    /// MACsec asked of a port that has no MACsec keys to build a SecTAG with.
    NoMacsec,
}

/// Bytes of VLAN tags the TX offload flags `tx_offloads` insert (QinQ: two tags).
pub fn tag_bytes(tx_offloads: u64) -> usize {
    if tx_offloads & flags::TX_QINQ != 0 {
        8
    } else if tx_offloads & flags::TX_VLAN != 0 {
        4
    } else {
        0
    }
}

/// What a TX port does with offload requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Caps {
    /// The port carries out the offloads in software at transmit ([`apply_sw`]).
    pub software: bool,
    /// The port can transmit MACsec (`TX_MACSEC`); a packet asking it of a port that cannot is
    /// dropped as `offload`.
    pub macsec: bool,
}

/// Carries out the packet's TX offload flags in software: checksums first (on the headers as they
/// are), then tag insertion (QinQ: outer 802.1ad, inner 802.1Q). Clears the flags it carried out.
/// Checksum requests on packets that are not IPv4/TCP/UDP are ignored, as a NIC would. `TX_MACSEC`
/// on a port without MACsec (`caps.macsec` false) is an error: the packet must not leave without
/// the protection it asked for.
#[inline]
pub fn apply_sw(p: &mut Pkt, caps: Caps) -> Result<(), OffloadError> {
    let f = p.meta().ol_flags;
    if f & (flags::TX_SW_MASK | flags::TX_MACSEC) == 0 {
        return Ok(());
    }
    apply_flags(p, caps, f)
}

/// [`apply_sw`] for a packet with offloads to carry out: out of line, so that the check above is
/// all a TX loop inlines (whatever the wire crate's parsing and checksums inline into this).
#[inline(never)]
fn apply_flags(p: &mut Pkt, caps: Caps, f: u64) -> Result<(), OffloadError> {
    if f & flags::TX_MACSEC != 0 && !caps.macsec {
        return Err(OffloadError::NoMacsec);
    }
    if f & (flags::TX_IP_CKSUM | flags::TX_UDP_CKSUM | flags::TX_TCP_CKSUM) != 0 {
        apply_cksums(p, f);
    }
    if f & flags::TX_QINQ != 0 {
        let (inner, outer) = (p.meta().vlan_tci, p.meta().vlan_tci_outer);
        insert(p, ethertype::VLAN, inner)?;
        insert(p, ethertype::QINQ, outer)?;
    } else if f & flags::TX_VLAN != 0 {
        let tci = p.meta().vlan_tci;
        insert(p, ethertype::VLAN, tci)?;
    }
    p.meta_mut().set_ol_flags(f & !flags::TX_SW_MASK);
    Ok(())
}

fn apply_cksums(p: &mut Pkt, f: u64) {
    let h = wire::parse(p.data());
    let frame = p.data_mut();
    if f & flags::TX_IP_CKSUM != 0 {
        wire::fill_ipv4_cksum(frame, &h);
    }
    let l4 = match h.l4_proto {
        6 => f & flags::TX_TCP_CKSUM != 0,
        17 => f & flags::TX_UDP_CKSUM != 0,
        _ => false,
    };
    if l4 {
        wire::fill_l4_cksum(frame, &h);
    }
}

fn insert(p: &mut Pkt, tpid: u16, tci: u16) -> Result<(), OffloadError> {
    if p.len() < wire::ETH_HLEN {
        return Ok(());
    }
    let frame = p.prepend(4).map_err(|_| OffloadError::NoHeadroom)?;
    wire::insert_tag(frame, tpid, tci);
    let l2 = p.meta().l2_len;
    if l2 != 0 {
        let (l3, l4) = (p.meta().l3_len, p.meta().l4_len);
        p.meta_mut().set_lens(l2 + 4, l3, l4);
    }
    Ok(())
}
