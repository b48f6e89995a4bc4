//! The frame a port generates (null RX, tx_first seeding, the txonly engine), copied into buffers in
//! whole 64-byte blocks so that the copy compiles to straight vector moves.

use crate::config::{FrameCfg, PortCfg};
use crate::mbuf::Pkt;
use crate::wire::cksum::{adjust, udp_nonzero, update16};
use crate::wire::tunnel::{self, Outer, OuterSpec};
use crate::wire::{self, FrameSpec};

const BLOCK: usize = 64;

/// A prebuilt frame plus what varies per flow (the UDP source port and, with it, the UDP checksum).
#[derive(Debug, Clone)]
pub struct Template {
    padded: Vec<u8>,
    len: usize,
    flows: u32,
    port_off: usize,
    base_port: u16,
    base_cksum: u16,
    /// Offset of the outer UDP checksum of a tunnelled frame, when it is not 0: it covers the inner
    /// frame, so it changes with the inner flow.
    outer_cksum_at: Option<usize>,
}

impl Template {
    /// Builds the frame from a port's `frame:` section; MACs default to the port's own and its peer's.
    /// With `frame.tunnel`, the frame is encapsulated as the port's tunnel peer would send it.
    pub fn from_config(pc: &PortCfg, port_mac: [u8; 6], peer_mac: [u8; 6]) -> Result<Template, String> {
        let inner = Template::new(&spec_of(&pc.frame, port_mac, peer_mac), pc.frame.flows.0 as u32);
        let Some(kind) = pc.frame.tunnel else { return Ok(inner) };
        let t = crate::config::tunnel_section(pc, kind)
            .ok_or_else(|| format!("frame.tunnel: no `{}:` section", kind.name()))?;
        let (Some(vni), Some(remote)) = (t.vni, t.remote_ip) else {
            return Err(format!("frame.tunnel: `{}:` needs vni and remote_ip", kind.name()));
        };
        // From the far end to us: the reverse of what this port's encapsulation would write.
        let outer = Outer::new(&OuterSpec {
            kind,
            src_mac: peer_mac,
            dst_mac: port_mac,
            src_ip: remote,
            dst_ip: t.local_ip,
            dst_port: t.port(kind),
            vni: vni.0 as u32,
            ttl: t.ttl.0 as u8,
            udp_checksum: t.checksums(),
        })?;
        Ok(inner.encapsulated(&outer))
    }

    /// This template inside `outer`'s headers; the outer UDP source port is the inner flow 0's.
    fn encapsulated(self, outer: &Outer) -> Template {
        let inner = self.bytes();
        let mut frame = [outer.bytes(), inner].concat();
        outer.write(&mut frame, tunnel::src_port(wire::flow_hash(inner)), false);
        let at = outer.len() - tunnel::TUNNEL_HLEN - 2;
        let outer_cksum_at = (frame[at..at + 2] != [0, 0]).then_some(at);
        Template { port_off: self.port_off + outer.len(), outer_cksum_at, ..Template::from_frame(frame, &self) }
    }

    /// A template of `frame` with `like`'s flows.
    fn from_frame(frame: Vec<u8>, like: &Template) -> Template {
        let len = frame.len();
        let mut padded = frame;
        padded.resize(len.div_ceil(BLOCK) * BLOCK, 0);
        Template { padded, len, ..like.clone() }
    }

    /// Builds the frame from a spec, with `flows` UDP source ports.
    pub fn new(spec: &FrameSpec, flows: u32) -> Template {
        let frame = wire::build_udp(spec);
        let len = frame.len();
        let port_off = wire::udp_src_port_offset(spec);
        let base_cksum = u16::from_be_bytes([frame[port_off + 6], frame[port_off + 7]]);
        let mut padded = frame;
        padded.resize(len.div_ceil(BLOCK) * BLOCK, 0);
        Template {
            padded,
            len,
            flows: flows.max(1),
            port_off,
            base_port: spec.src_port,
            base_cksum,
            outer_cksum_at: None,
        }
    }

    /// Frame length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: a template has at least the headers.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The frame of flow 0.
    pub fn bytes(&self) -> &[u8] {
        &self.padded[..self.len]
    }

    /// Writes the frame of flow `*flow` into `p` and advances `*flow` to the next flow.
    #[inline(always)]
    pub fn fill(&self, p: &mut Pkt, flow: &mut u32) {
        self.fill_with(p, flow, self.padded.len(), |room| {
            for (d, s) in room.chunks_exact_mut(BLOCK).zip(self.padded.chunks_exact(BLOCK)) {
                d.copy_from_slice(s);
            }
        });
    }

    /// [`Template::fill`] for every packet of `pkts`, then `each` on it. A frame of one or two
    /// blocks (up to 128 bytes: the common benchmark frames, 64 B plain and 114 B tunnelled) is
    /// copied from a copy of its blocks made once per burst: the blocks' moves a packet, without
    /// the loop over blocks and its length arithmetic (which the compiler turned into a call to
    /// `memcpy` or an unrolled loop with a remainder, depending on unrelated code).
    #[inline(always)]
    pub fn fill_burst(&self, pkts: &mut [Pkt], flow: &mut u32, each: impl Fn(&mut Pkt)) {
        match self.padded.len() / BLOCK {
            1 => self.fill_blocks::<BLOCK>(pkts, flow, each),
            2 => self.fill_blocks::<{ 2 * BLOCK }>(pkts, flow, each),
            _ => {
                for p in pkts {
                    self.fill(p, flow);
                    each(p);
                }
            }
        }
    }

    /// [`Template::fill_burst`] for a padded frame of `N` bytes.
    #[inline(always)]
    fn fill_blocks<const N: usize>(&self, pkts: &mut [Pkt], flow: &mut u32, each: impl Fn(&mut Pkt)) {
        let Ok(blocks) = <[u8; N]>::try_from(&self.padded[..]) else {
            return pkts.iter_mut().for_each(|p| {
                self.fill(p, flow);
                each(p);
            });
        };
        for p in pkts {
            self.fill_with(p, flow, N, |room| room.copy_from_slice(&blocks));
            each(p);
        }
    }

    /// Copies the padded frame (`padded` bytes, its length: a constant where the caller knows it)
    /// into `p` with `copy` (given exactly that many bytes), or the frame alone when the padding
    /// does not fit; sets the length and the flow.
    #[inline(always)]
    fn fill_with(&self, p: &mut Pkt, flow: &mut u32, padded: usize, copy: impl FnOnce(&mut [u8])) {
        match p.room_mut(padded) {
            Some(room) => copy(room),
            None => {
                if p.copy_from(self.bytes()).is_err() {
                    return;
                }
            }
        }
        if p.set_data_len(self.len).is_err() {
            return;
        }
        if self.flows > 1 {
            self.set_flow(p.data_mut(), *flow);
            *flow += 1;
            if *flow == self.flows {
                *flow = 0;
            }
        }
    }

    /// Rewrites the UDP source port for flow `i`, updating the UDP checksum incrementally (RFC 1624),
    /// and the outer UDP checksum of a tunnelled frame, which covers both words.
    #[inline(always)]
    fn set_flow(&self, frame: &mut [u8], i: u32) {
        let port = self.base_port.wrapping_add(i as u16);
        let Some(hdr) = frame.get_mut(self.port_off..self.port_off + 8) else { return };
        hdr[..2].copy_from_slice(&port.to_be_bytes());
        let mut delta = !self.base_port as u32 + port as u32;
        if self.base_cksum != 0 {
            let ck = udp_nonzero(update16(self.base_cksum, self.base_port, port));
            hdr[6..8].copy_from_slice(&ck.to_be_bytes());
            delta += !self.base_cksum as u32 + ck as u32;
        }
        if let Some(at) = self.outer_cksum_at {
            let Some(c) = frame.get_mut(at..at + 2) else { return };
            let ck = udp_nonzero(adjust(u16::from_be_bytes([c[0], c[1]]), delta));
            c.copy_from_slice(&ck.to_be_bytes());
        }
    }
}

/// The inner frame of a port's `frame:` section.
fn spec_of(f: &FrameCfg, port_mac: [u8; 6], peer_mac: [u8; 6]) -> FrameSpec {
    FrameSpec {
        size: f.size.get(),
        dst_mac: f.dst_mac.map(|m| m.0).unwrap_or(peer_mac),
        src_mac: f.src_mac.map(|m| m.0).unwrap_or(port_mac),
        src_ip: f.src_ip.octets(),
        dst_ip: f.dst_ip.octets(),
        src_port: f.src_port.u16(),
        dst_port: f.dst_port.u16(),
        vlan: f.vlan.map(|v| v.u16()),
    }
}
