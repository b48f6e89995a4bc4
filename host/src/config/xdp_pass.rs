//! `af_xdp.pass`: the frames an af_xdp port's XDP program leaves to the kernel, so that the host
//! keeps its own traffic (ARP, neighbour discovery, management) on an interface wasmdp shares.

use serde::de::{self, Deserializer};
use serde::Deserialize;
use std::net::Ipv4Addr;

/// Most entries of one port's list: each adds a few instructions to the XDP program.
pub const MAX_PASS: usize = 16;

/// An EtherType (0x0600 and above: the values that are types, not 802.3 lengths).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EtherType(pub u16);

/// One entry of `af_xdp.pass`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XdpPass {
    /// `arp`: frames of EtherType 0x0806.
    Arp,
    /// `ndp`: IPv6 neighbour discovery (ICMPv6 types 133-137 right after the fixed header).
    Ndp,
    /// `not_our_mac`: frames whose destination MAC is not the port's `mac:` (broadcast and
    /// multicast included).
    NotOurMac,
    /// `{ethertype: N}`: frames of this EtherType (untagged).
    Ethertype(EtherType),
    /// `{ipv4_dst: A.B.C.D}`: untagged IPv4 packets to this address (the host's own).
    Ipv4Dst(Ipv4Addr),
}

const ALLOWED: &str = "allowed: arp, ndp, not_our_mac, {ethertype: 0x0600..=0xffff}, {ipv4_dst: A.B.C.D}";

fn entry(v: &serde_yaml::Value) -> Result<XdpPass, String> {
    use serde_yaml::Value;
    let shown = || serde_yaml::to_string(v).unwrap_or_default().trim().to_string();
    match v {
        Value::String(s) => match s.as_str() {
            "arp" => Ok(XdpPass::Arp),
            "ndp" => Ok(XdpPass::Ndp),
            "not_our_mac" => Ok(XdpPass::NotOurMac),
            other => Err(format!("unknown entry `{other}`; {ALLOWED}")),
        },
        Value::Mapping(m) if m.len() == 1 => {
            let (k, val) = m.iter().next().ok_or_else(|| format!("an empty entry; {ALLOWED}"))?;
            match k.as_str() {
                Some("ethertype") => match val.as_u64() {
                    Some(t @ 0x0600..=0xffff) => Ok(XdpPass::Ethertype(EtherType(t as u16))),
                    _ => Err(format!("`{}`: an EtherType is 0x0600..=0xffff; {ALLOWED}", shown())),
                },
                Some("ipv4_dst") => val
                    .as_str()
                    .and_then(|s| s.parse().ok())
                    .map(XdpPass::Ipv4Dst)
                    .ok_or_else(|| format!("`{}`: not an IPv4 address; {ALLOWED}", shown())),
                _ => Err(format!("unknown entry `{}`; {ALLOWED}", shown())),
            }
        }
        _ => Err(format!("unknown entry `{}`; {ALLOWED}", shown())),
    }
}

/// The list, at most [`MAX_PASS`] entries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassList(pub Vec<XdpPass>);

impl<'de> Deserialize<'de> for PassList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let items = Vec::<serde_yaml::Value>::deserialize(d)?;
        if items.len() > MAX_PASS {
            return Err(de::Error::custom(format!("{} entries; at most {MAX_PASS}", items.len())));
        }
        items.iter().map(entry).collect::<Result<_, _>>().map(PassList).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<PassList, String> {
        serde_yaml::from_str(yaml).map_err(|e| e.to_string())
    }

    #[test]
    fn entries_and_refusals() {
        let l = parse("[arp, ndp, not_our_mac, {ethertype: 0x88cc}, {ipv4_dst: 10.0.0.1}]").unwrap();
        assert_eq!(
            l.0,
            [
                XdpPass::Arp,
                XdpPass::Ndp,
                XdpPass::NotOurMac,
                XdpPass::Ethertype(EtherType(0x88cc)),
                XdpPass::Ipv4Dst(Ipv4Addr::new(10, 0, 0, 1))
            ]
        );
        for (bad, says) in [
            ("[icmp]", "unknown entry `icmp`"),
            ("[{ethertype: 1500}]", "0x0600..=0xffff"),
            ("[{ethertype: 0x10000}]", "0x0600..=0xffff"),
            ("[{ipv4_dst: 10.0.0}]", "not an IPv4 address"),
            ("[{ipv4_dst: 10.0.0.1, ethertype: 0x800}]", "unknown entry"),
            ("[7]", "unknown entry `7`"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(says) && e.contains("allowed: arp"), "{bad}: {e}");
        }
        let many = format!("[{}]", vec!["arp"; 17].join(", "));
        assert!(parse(&many).unwrap_err().contains("17 entries; at most 16"));
    }
}
