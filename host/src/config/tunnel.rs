//! `vxlan:` and `geneve:` of a port (the tunnel engines), `tunnel_others:`, and the checks that tie
//! them to the streams that use them.
//!
//! Which section an engine reads: an encapsulation builds the outer headers for the port it
//! transmits on (the stream's TX port: its `local_ip` is the outer source, its `mac` and `peer_mac`
//! the outer MACs); a decapsulation accepts what arrives at the port it receives on (the stream's RX
//! port: its `local_ip`, `dst_port` and `vni`).

use super::{Bounded, Config, Pair, PortCfg};
use crate::wire::tunnel::{Kind, OUTER_LEN_V4, OUTER_LEN_V6};
use serde::Deserialize;
use std::net::IpAddr;

/// `vxlan:` or `geneve:` of a port.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TunnelCfg {
    /// Network identifier, 0..=16777215. Needed to encapsulate; when decapsulating, absent accepts
    /// any.
    #[serde(default)]
    pub vni: Option<Bounded<0, 16_777_215>>,
    /// This end's underlay address (IPv4 or IPv6): outer source of encapsulated packets, the only
    /// outer destination accepted when decapsulating.
    pub local_ip: IpAddr,
    /// The far end's underlay address, of the same family: outer destination of encapsulated
    /// packets. Needed to encapsulate.
    #[serde(default)]
    pub remote_ip: Option<IpAddr>,
    /// UDP destination port; default 4789 (VXLAN) or 6081 (Geneve).
    #[serde(default)]
    pub dst_port: Option<Bounded<1, 65535>>,
    /// Outer UDP checksums: computed when encapsulating, and required of IPv6 packets when
    /// decapsulating. Default: off over IPv4 (as Linux), on over IPv6 (RFC 8200).
    #[serde(default)]
    pub udp_checksum: Option<bool>,
    /// IPv4 TTL / IPv6 hop limit of encapsulated packets.
    #[serde(default = "default_ttl")]
    pub ttl: Bounded<1, 255>,
}

fn default_ttl() -> Bounded<1, 255> {
    Bounded(64)
}

impl TunnelCfg {
    /// The UDP port, defaulted for the tunnel kind.
    pub fn port(&self, kind: Kind) -> u16 {
        self.dst_port.map_or(kind.default_port(), Bounded::u16)
    }

    /// Whether UDP checksums are on, defaulted for the underlay family.
    pub fn checksums(&self) -> bool {
        self.udp_checksum.unwrap_or(self.local_ip.is_ipv6())
    }

    /// Bytes an encapsulation adds.
    pub fn outer_len(&self) -> usize {
        if self.local_ip.is_ipv6() {
            OUTER_LEN_V6
        } else {
            OUTER_LEN_V4
        }
    }
}

/// `tunnel_others:` what a decapsulation engine does with frames that are not its tunnel's.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum TunnelOthers {
    /// Drop them, counted as `tunnel` drops.
    #[default]
    Drop,
    /// Forward them unchanged, counted as `tunnel_passed`.
    Pass,
}

/// `frame.tunnel:` a tunnel's name (`vxlan`, `geneve`), or nothing.
pub(super) fn tunnel_kind<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Kind>, D::Error> {
    let Some(s) = Option::<String>::deserialize(d)? else { return Ok(None) };
    Kind::ALL
        .into_iter()
        .find(|k| k.name() == s)
        .map(Some)
        .ok_or_else(|| serde::de::Error::custom(format!("unknown tunnel `{s}`: allowed vxlan, geneve")))
}

/// The port's section for `kind`.
pub fn section(p: &PortCfg, kind: Kind) -> Option<&TunnelCfg> {
    match kind {
        Kind::Vxlan => p.vxlan.as_ref(),
        Kind::Geneve => p.geneve.as_ref(),
    }
}

/// The tunnel engine an engine name is: (kind, encapsulates).
pub fn engine_kind(engine: &str) -> Option<(Kind, bool)> {
    Kind::ALL.into_iter().find_map(|k| {
        let rest = engine.strip_prefix(k.name())?;
        match rest {
            "_encap" => Some((k, true)),
            "_decap" => Some((k, false)),
            _ => None,
        }
    })
}

/// One port's sections on their own: families agree, an encapsulating section is complete.
pub(super) fn check_port(at: &str, p: &PortCfg) -> Result<(), String> {
    for kind in Kind::ALL {
        let Some(t) = section(p, kind) else { continue };
        let key = format!("{at}.{}", kind.name());
        if let Some(r) = t.remote_ip.filter(|r| r.is_ipv6() != t.local_ip.is_ipv6()) {
            return Err(format!(
                "{key}.remote_ip: {r} and local_ip {} are of different families; use IPv4 for both or IPv6 for both",
                t.local_ip
            ));
        }
        for (what, ip) in [("local_ip", Some(t.local_ip)), ("remote_ip", t.remote_ip)] {
            if let Some(ip) = ip.filter(|ip| ip.is_unspecified() || ip.is_multicast()) {
                return Err(format!("{key}.{what}: {ip} is not a unicast address"));
            }
        }
    }
    if let Some(k) = p.frame.tunnel {
        let t = section(p, k).ok_or_else(|| {
            format!(
                "{at}.frame.tunnel: `{}` needs the port's `{}:` section to build the outer headers from",
                k.name(),
                k.name()
            )
        })?;
        encap_ready(t).map_err(|missing| format!("{at}.{}: frame.tunnel needs {missing}", k.name()))?;
    }
    Ok(())
}

/// What an encapsulating section lacks, if anything.
fn encap_ready(t: &TunnelCfg) -> Result<(), &'static str> {
    match (t.vni, t.remote_ip) {
        (None, _) => Err("`vni`"),
        (_, None) => Err("`remote_ip`"),
        _ => Ok(()),
    }
}

/// Every stream that runs a tunnel engine natively finds the section it reads, and encapsulating
/// ports have the headroom for the outer headers.
pub(super) fn check_streams(cfg: &Config, pairs: &[Pair]) -> Result<(), String> {
    for s in pairs {
        let rx = &cfg.ports[s.rx];
        let engine = rx.engine.as_ref().unwrap_or(&cfg.engine).0.as_str();
        let Some((kind, encap)) = engine_kind(engine) else { continue };
        let (port, idx) = if encap { (&cfg.ports[s.tx], s.tx) } else { (rx, s.rx) };
        let at = format!("ports[{idx}] (`{}`)", port.name);
        let role = if encap { "transmits on" } else { "receives on" };
        let t = section(port, kind).ok_or_else(|| {
            format!(
                "{at}.{}: engine `{engine}` of the stream {} -> {} needs the `{}:` section of the port it {role}",
                kind.name(),
                rx.name,
                cfg.ports[s.tx].name,
                kind.name()
            )
        })?;
        if !encap {
            continue;
        }
        encap_ready(t).map_err(|missing| format!("{at}.{}: engine `{engine}` needs {missing}", kind.name()))?;
        let need = t.outer_len() + crate::offload::tag_bytes(port.tx_offloads.0);
        if need > cfg.pool.headroom.get() {
            return Err(format!(
                "pool.headroom: {} bytes, but `{engine}` onto `{}` prepends {need} bytes of outer headers and tags; raise pool.headroom to at least {need}",
                cfg.pool.headroom.0, port.name
            ));
        }
    }
    Ok(())
}
