//! The frame a port generates (null RX, tx_first seeding, the txonly engine), copied into buffers in
//! whole 64-byte blocks so that the copy compiles to straight vector moves.

use crate::config::FrameCfg;
use crate::mbuf::Pkt;
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
}

impl Template {
    /// Builds the frame from a port's `frame:` section; MACs default to the port's own and its peer's.
    pub fn from_config(f: &FrameCfg, port_mac: [u8; 6], peer_mac: [u8; 6]) -> Template {
        let spec = FrameSpec {
            size: f.size.get(),
            dst_mac: f.dst_mac.map(|m| m.0).unwrap_or(peer_mac),
            src_mac: f.src_mac.map(|m| m.0).unwrap_or(port_mac),
            src_ip: f.src_ip.octets(),
            dst_ip: f.dst_ip.octets(),
            src_port: f.src_port.u16(),
            dst_port: f.dst_port.u16(),
            vlan: f.vlan.map(|v| v.u16()),
        };
        Template::new(&spec, f.flows.0 as u32)
    }

    /// Builds the frame from a spec, with `flows` UDP source ports.
    pub fn new(spec: &FrameSpec, flows: u32) -> Template {
        let frame = wire::build_udp(spec);
        let len = frame.len();
        let port_off = wire::udp_src_port_offset(spec);
        let base_cksum = u16::from_be_bytes([frame[port_off + 6], frame[port_off + 7]]);
        let mut padded = frame;
        padded.resize(len.div_ceil(BLOCK) * BLOCK, 0);
        Template { padded, len, flows: flows.max(1), port_off, base_port: spec.src_port, base_cksum }
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
        match p.room_mut(self.padded.len()) {
            Some(room) => {
                for (d, s) in room.chunks_exact_mut(BLOCK).zip(self.padded.chunks_exact(BLOCK)) {
                    d.copy_from_slice(s);
                }
            }
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

    /// Rewrites the UDP source port for flow `i`, updating the UDP checksum incrementally (RFC 1624).
    #[inline(always)]
    fn set_flow(&self, frame: &mut [u8], i: u32) {
        let port = self.base_port.wrapping_add(i as u16);
        let Some(hdr) = frame.get_mut(self.port_off..self.port_off + 8) else { return };
        hdr[..2].copy_from_slice(&port.to_be_bytes());
        if self.base_cksum == 0 {
            return;
        }
        let sum = !self.base_cksum as u32 + !self.base_port as u32 + port as u32;
        let sum = (sum & 0xffff) + (sum >> 16);
        let sum = (sum & 0xffff) + (sum >> 16);
        let ck = !(sum as u16);
        hdr[6..8].copy_from_slice(&if ck == 0 { 0xffff_u16 } else { ck }.to_be_bytes());
    }
}
