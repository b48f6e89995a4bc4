//! `vxlan_decap`: VXLAN decapsulation (RFC 7348) as a plugin, on the burst area: the outer
//! headers are checked in each packet's window and stripped with a length change, no host call per
//! packet. (The native `vxlan_decap` engine does the same faster; this is the example of length
//! changes from a plugin, and the wasm-tax comparison.)
//!
//! | param | default | meaning |
//! |---|---|---|
//! | `local_ip` | required | our IPv4 underlay address: only frames to it are decapsulated |
//! | `vni` | any | only this VNI |
//! | `dst_port` | 4789 | UDP port |
//! | `others` | `drop` | `drop` or `pass` the frames that are not our tunnel's |
//!
//! IPv4 underlay without VLAN tags, not fragmented; the IPv4 header may have options.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::net::fast::bytes_at;
use wasmdp_sdk::net::{tunnel::Vxlan, Eth, Ipv4, Udp};
use wasmdp_sdk::{AreaSpec, Burst, Counter, Error, Params, Policy, Refusal};

/// The policy.
pub struct VxlanDecap {
    local_ip: [u8; 4],
    vni: Option<u32>,
    dst_port: u16,
    pass_others: bool,
    others: Counter,
    /// The rule as [`VxlanDecap::outer_len_fixed`] tests it: words as they lie in the frame.
    fixed: Fixed,
}

/// `local_ip`, `dst_port` and `vni` as words in memory order, so that an untagged IPv4 frame
/// without options is tested with a few loads and compares (no byte swap, no `Option` tag).
#[derive(Debug, Clone, Copy)]
struct Fixed {
    local_ip: u32,
    dst_port: u16,
    /// The flags byte's I flag, and the VNI's three bytes when `vni` is set, of the 8 bytes at 42.
    vx_mask: u64,
    vx_want: u64,
}

impl Fixed {
    fn new(local_ip: [u8; 4], dst_port: u16, vni: Option<u32>) -> Fixed {
        let i_flag = u64::from(Vxlan::<&[u8]>::I_FLAG);
        // The VNI's bytes (46..49, big-endian) as bits 32..56 of the little-endian word at 42.
        let vni_le = |v: u32| u64::from(u32::from_le_bytes([(v >> 16) as u8, (v >> 8) as u8, v as u8, 0]));
        let (vx_mask, vx_want) = match vni {
            Some(v) => (i_flag | 0x00ff_ffff << 32, i_flag | vni_le(v) << 32),
            None => (i_flag, i_flag),
        };
        Fixed {
            local_ip: u32::from_ne_bytes(local_ip),
            dst_port: u16::from_ne_bytes(dst_port.to_be_bytes()),
            vx_mask,
            vx_want,
        }
    }
}

/// Where the outer headers end in an untagged IPv4 frame without options.
const OUTER: usize = 50;
/// The bytes [`VxlanDecap::outer_len_fixed`] reads: the outer headers and an inner Ethernet header.
const FIXED: usize = OUTER + 14;

impl Policy for VxlanDecap {
    const AREA: AreaSpec = AreaSpec::Windows(128);

    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        let mut buf = [0u8; 8];
        let pass_others = match params.get("others", &mut buf) {
            None | Some("drop") => false,
            Some("pass") => true,
            Some(v) => return Err(Refusal::param("others", v, "drop or pass")),
        };
        let local_ip = params.get_ipv4("local_ip")?.ok_or_else(|| Refusal::missing("local_ip"))?;
        let (vni, dst_port) = (params.get_u32("vni")?, params.get_u16("dst_port")?.unwrap_or(4789));
        Ok(VxlanDecap {
            local_ip,
            vni,
            dst_port,
            pass_others,
            others: Counter::register("others")?,
            fixed: Fixed::new(local_ip, dst_port, vni),
        })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        let mut others = 0;
        for mut w in burst.windows_of::<128>()? {
            let f = w.bytes();
            match self.outer_len_fixed(f).unwrap_or_else(|| self.outer_len(f)) {
                Some(n) if w.strip(n).is_ok() => {}
                _ => {
                    others += 1;
                    if !self.pass_others {
                        w.drop();
                    }
                }
            }
        }
        self.others.add(others);
        Ok(())
    }
}

impl VxlanDecap {
    /// [`VxlanDecap::outer_len`] for untagged IPv4 frames without options and 64 bytes or more:
    /// the same answer (`fixed_is_general`) from words read at fixed offsets, where the views
    /// read byte by byte with a bounds check each. None: another frame, for the views.
    #[inline(always)]
    fn outer_len_fixed(&self, f: &[u8]) -> Option<Option<usize>> {
        let h: &[u8; FIXED] = f.first_chunk()?;
        // EtherType IPv4, version 4 with 5 words, and a total length that holds the header (the
        // views' `Ipv4::new`; its two bytes rotated into their big-endian order).
        let l2 = u64::from_le_bytes(bytes_at(h, 12));
        if l2 & 0xff_ffff != 0x45_0008 || ((l2 >> 32) as u32 & 0xffff).rotate_right(8) < 20 {
            return None;
        }
        let fx = self.fixed;
        // UDP and not a fragment (no More Fragments, offset 0) in one masked compare.
        let udp = u32::from_le_bytes(bytes_at(h, 20)) & 0xff00_ff3f == 17 << 24;
        let ours = udp
            && u32::from_ne_bytes(bytes_at(h, 30)) == fx.local_ip
            && u16::from_ne_bytes(bytes_at(h, 36)) == fx.dst_port
            && u64::from_le_bytes(bytes_at(h, 42)) & fx.vx_mask == fx.vx_want;
        Some(ours.then_some(OUTER))
    }

    /// Bytes of outer headers when the frame is our tunnel's (and holds an inner Ethernet header).
    fn outer_len(&self, f: &[u8]) -> Option<usize> {
        let eth = Eth::new(f)?;
        if eth.ethertype() != 0x0800 {
            return None;
        }
        let ip = Ipv4::new(eth.payload())?;
        if ip.dst() != self.local_ip || ip.protocol() != 17 || ip.is_fragment() {
            return None;
        }
        let udp_at = 14 + ip.header_len();
        let udp = Udp::new(f.get(udp_at..)?)?;
        if udp.dst_port() != self.dst_port {
            return None;
        }
        let vx = Vxlan::new(f.get(udp_at + 8..)?)?;
        if !vx.has_vni() || self.vni.is_some_and(|v| v != vx.vni()) {
            return None;
        }
        let n = udp_at + 16;
        (f.len() >= n + 14 || ip.total_len() as usize >= n - 14 + 14).then_some(n)
    }
}

wasmdp_sdk::export_policy!(VxlanDecap);

#[cfg(test)]
mod tests {
    use super::*;
    use wasmdp_sdk::mock;

    pub(crate) fn outer(inner: &[u8], dst: [u8; 4], vni: u32) -> std::vec::Vec<u8> {
        let mut f = std::vec![0u8; 50];
        f[12..14].copy_from_slice(&[8, 0]);
        let total = (36 + inner.len()) as u16;
        f[14..34].copy_from_slice(&[
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            0,
            0x40,
            0,
            64,
            17,
            0,
            0,
            192,
            0,
            2,
            2,
            0,
            0,
            0,
            0,
        ]);
        f[30..34].copy_from_slice(&dst);
        let ulen = (16 + inner.len()) as u16;
        f[34..42].copy_from_slice(&[0xc0, 0, 0x12, 0xb5, (ulen >> 8) as u8, ulen as u8, 0, 0]);
        f[42..50].copy_from_slice(&[8, 0, 0, 0, (vni >> 16) as u8, (vni >> 8) as u8, vni as u8, 0]);
        f.extend_from_slice(inner);
        f
    }

    /// The fixed-offset test answers as the views do on random frames of our tunnel's shape
    /// (VNI, port, address, flags and fragment bits varied), with and without a `vni` rule.
    #[test]
    fn fixed_is_general() {
        mock::reset();
        let policy = |vni| VxlanDecap {
            local_ip: [192, 0, 2, 1],
            vni,
            dst_port: 4789,
            pass_others: false,
            others: Counter::register("others").unwrap(),
            fixed: Fixed::new([192, 0, 2, 1], 4789, vni),
        };
        let policies = [policy(None), policy(Some(42))];
        let mut next = mock::xorshift(0x2545_F491_4F6C_DD1D);
        let (mut taken, mut ours) = (0, 0);
        for i in 0..30_000 {
            let r = next();
            let inner: std::vec::Vec<u8> = (0..(i % 40) as u8).collect();
            let dst = [[192, 0, 2, 1], [192, 0, 2, (r >> 8) as u8]][i % 2];
            let mut f = outer(&inner, dst, [42, (r >> 16) as u32 & 0xff_ffff][(r >> 40) as usize % 2]);
            // Now and then a byte the test reads set at random: the flags, the fragment bits, the
            // protocol, the port, the version and header length, the total length, the EtherType.
            for (bit, at) in [(1u64, 42), (2, 20), (4, 21), (8, 23), (16, 36), (32, 14), (64, 16), (128, 12)] {
                if (r >> 48) & bit != 0 && (r >> 56) & 1 == 0 {
                    f[at] = (r >> (at % 8)) as u8;
                }
            }
            for p in &policies {
                if let Some(fixed) = p.outer_len_fixed(&f) {
                    taken += 1;
                    ours += usize::from(fixed.is_some());
                    assert_eq!(fixed, p.outer_len(&f), "vni {:?}, frame {f:02x?}", p.vni);
                }
            }
        }
        assert!(taken > 20_000 && ours > 5_000, "taken {taken}, ours {ours}");
    }

    #[test]
    fn strips_our_tunnel_and_drops_the_rest() {
        mock::reset();
        mock::set_area(VxlanDecap::AREA);
        mock::set_param("local_ip", "192.0.2.1");
        mock::set_param("vni", "42");
        let mut p = VxlanDecap::init(0, &Params::host()).unwrap();
        let inner: std::vec::Vec<u8> = (0..60u8).collect();
        let frames =
            [outer(&inner, [192, 0, 2, 1], 42), outer(&inner, [192, 0, 2, 1], 43), outer(&inner, [192, 0, 2, 7], 42)];
        mock::begin_burst(&frames.iter().map(|f| f.as_slice()).collect::<std::vec::Vec<_>>());
        p.on_burst(&mut Burst::current().unwrap()).unwrap();
        let out = mock::end_burst();
        assert_eq!(out[0].data, inner);
        assert!(!out[0].dropped && out[1].dropped && out[2].dropped);
        assert_eq!(mock::counter("others"), Some(2));
    }
}
