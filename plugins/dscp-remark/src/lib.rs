//! `dscp-remark`: QoS remarking in place, on 64-byte heads (ABI 1.1 `AreaSpec::Heads`): sets the
//! DSCP of IPv4 and IPv6 packets (ECN bits kept; the IPv4 header checksum updated incrementally, RFC
//! 1624) and the PCP of the outermost VLAN tag, on every packet or only on those that carry a given
//! DSCP. No host call and no descriptor per packet: each packet's first 64 bytes are copied in and
//! back. (On direct heads, in place, it took fewer instructions but forwarded 0.63x the packets a
//! second: BENCHMARKS.md, "Heads with drops".)
//!
//! | param | meaning |
//! |---|---|
//! | `dscp` | new DSCP, 0..=63 |
//! | `pcp` | new priority (PCP, 0..=7) of the outermost 802.1Q/802.1ad tag; untagged frames stay untagged |
//! | `from_dscp` | optional: only IP packets whose DSCP is this one (0..=63) are remarked, tag included |
//!
//! At least one of `dscp` and `pcp`. Without `from_dscp`, `pcp` applies to every tagged frame, IP or
//! not. Counters: `remarked` (packets whose DSCP or PCP was written), `too_deep` (an IPv4 header
//! whose options run past the 64-byte head, so its checksum cannot be updated: the packet is left
//! as it came). Malformed or cut IP headers are left as they came too, unless only `pcp` is given
//! (then the IP header is not read).
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::net::{ethertype, l2, Ipv4, Ipv6, Vlan};
use wasmdp_sdk::{refuse, AreaSpec, Burst, Counter, Error, Params, Policy, Refusal};

/// Bytes of each packet the host places in the heads: Ethernet, two VLAN tags, and an IPv6 header
/// or an IPv4 header with up to 28 bytes of options.
const HEAD: usize = 64;

/// The policy.
pub struct DscpRemark {
    rule: Rule,
    remarked: Counter,
    too_deep: Counter,
}

/// What to write, and on which packets.
#[derive(Clone, Copy)]
struct Rule {
    dscp: Option<u8>,
    pcp: Option<u8>,
    from_dscp: Option<u8>,
}

/// What a packet's remarking did.
#[derive(Debug, PartialEq)]
enum Outcome {
    Remarked,
    Untouched,
    TooDeep,
}

impl Policy for DscpRemark {
    const AREA: AreaSpec = AreaSpec::Heads(HEAD as u16);

    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        let rule = Rule {
            dscp: bounded(params, "dscp", 63)?,
            pcp: bounded(params, "pcp", 7)?,
            from_dscp: bounded(params, "from_dscp", 63)?,
        };
        if rule.dscp.is_none() && rule.pcp.is_none() {
            return Err(Refusal::new("params: give `dscp` (0..=63), `pcp` (0..=7) or both; nothing to remark"));
        }
        Ok(DscpRemark { rule, remarked: Counter::register("remarked")?, too_deep: Counter::register("too_deep")? })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        let (rule, mut remarked, mut too_deep) = (self.rule, 0, 0);
        for (len, head) in burst.heads::<HEAD>()?.iter_mut() {
            let frame = &mut head[..(len as usize).min(HEAD)];
            match rule.remark_fixed(frame).unwrap_or_else(|| rule.remark(frame, len as usize > HEAD)) {
                Outcome::Remarked => remarked += 1,
                Outcome::TooDeep => too_deep += 1,
                Outcome::Untouched => {}
            }
        }
        self.remarked.add(remarked);
        self.too_deep.add(too_deep);
        Ok(())
    }
}

wasmdp_sdk::export_policy!(DscpRemark);

/// The param `key` as a number at most `max`.
fn bounded(params: &Params, key: &str, max: u8) -> Result<Option<u8>, Refusal> {
    match params.get_u8(key)? {
        Some(v) if v > max => Err(refuse!("param `{key}`: {v} is out of range: 0..={max}")),
        v => Ok(v),
    }
}

impl Rule {
    /// [`Rule::remark`] for the frames that dominate traffic, at fixed offsets: an untagged IPv4
    /// frame with a 20-byte header, when a `dscp` is to be set. The same outcome and bytes
    /// (`fixed_is_remark`) in a few loads and stores and one RFC 1624 update of the header
    /// checksum on its bytes, where the general views' code (the Ethernet and IPv4 views, their
    /// checks, the `Option` rules) cost cranelift's output several times that. None: any other
    /// frame or rule, for [`Rule::remark`].
    #[inline(always)]
    fn remark_fixed(self, frame: &mut [u8]) -> Option<Outcome> {
        use wasmdp_sdk::net::cksum::update16_bytes;
        let dscp = self.dscp?;
        let f: &mut [u8; 34] = frame.first_chunk_mut()?;
        // EtherType IPv4, version 4 with 5 words, a total length that holds the header.
        if f[12..15] != [0x08, 0x00, 0x45] || u16::from_be_bytes([f[16], f[17]]) < 20 {
            return None;
        }
        let tos = f[15];
        if self.from_dscp.is_some_and(|d| d != tos >> 2) {
            return Some(Outcome::Untouched);
        }
        let new = (dscp << 2) | (tos & 0x03);
        let sum = update16_bytes([f[24], f[25]], [0x45, tos], [0x45, new]);
        f[15] = new;
        f[24..26].copy_from_slice(&sum);
        Some(Outcome::Remarked)
    }

    /// Remarks one frame (its head: `cut` when the packet goes on past it).
    #[inline(always)]
    fn remark(self, frame: &mut [u8], cut: bool) -> Outcome {
        let Some(l2) = l2(frame) else { return Outcome::Untouched };
        let (tagged, at) = (l2.tags[0].is_some(), l2.l3_offset);
        let ip = frame.get_mut(at..).unwrap_or_default();
        // An IPv4 header announced longer than what the head holds of it, in a packet that goes on.
        let deep = cut && ip.first().is_some_and(|&b| b >> 4 == 4 && usize::from(b & 0x0F) * 4 > ip.len());
        let wrote_ip = match l2.ethertype {
            // Only the tag to write: the IP header is not read (nor need it be well formed).
            _ if self.dscp.is_none() && self.from_dscp.is_none() => false,
            ethertype::IPV4 => match Ipv4::new(&mut *ip) {
                Some(mut v4) if self.from_dscp.is_none_or(|d| d == v4.dscp()) => {
                    self.dscp.inspect(|&d| v4.set_dscp_incremental(d)).is_some()
                }
                Some(_) => return Outcome::Untouched,
                None if deep => return Outcome::TooDeep,
                None => return Outcome::Untouched,
            },
            ethertype::IPV6 => match Ipv6::new(&mut *ip) {
                Some(mut v6) if self.from_dscp.is_none_or(|d| d == v6.dscp()) => {
                    self.dscp.inspect(|&d| v6.set_dscp(d)).is_some()
                }
                _ => return Outcome::Untouched,
            },
            _ if self.from_dscp.is_some() => return Outcome::Untouched,
            _ => false,
        };
        let wrote_tag = match (self.pcp, tagged) {
            (Some(p), true) => Vlan::new(frame.get_mut(14..).unwrap_or_default()).map(|mut t| t.set_pcp(p)).is_some(),
            _ => false,
        };
        if wrote_ip || wrote_tag {
            Outcome::Remarked
        } else {
            Outcome::Untouched
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmdp_sdk::mock;

    /// Untagged IPv4/UDP, 60 bytes, TOS `tos`, its header checksum filled.
    fn v4(tos: u8) -> std::vec::Vec<u8> {
        let mut f = std::vec![0u8; 14 + 46];
        f[12..14].copy_from_slice(&[8, 0]);
        f[14..26].copy_from_slice(&[0x45, tos, 0, 46, 0, 1, 0, 0, 64, 17, 0, 0]);
        f[26..34].copy_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
        Ipv4::new(&mut f[14..]).unwrap().fill_checksum();
        f
    }

    fn run(params: &[(&str, &str)], frames: &[std::vec::Vec<u8>]) -> (std::vec::Vec<std::vec::Vec<u8>>, i64, i64) {
        mock::reset();
        mock::set_area(DscpRemark::AREA);
        params.iter().for_each(|(k, v)| mock::set_param(k, v));
        let mut p = DscpRemark::init(0, &Params::host()).unwrap();
        let refs: std::vec::Vec<_> = frames.iter().map(|f| f.as_slice()).collect();
        mock::begin_burst(&refs);
        p.on_burst(&mut Burst::current().unwrap()).unwrap();
        let out = mock::end_burst().into_iter().map(|o| o.data).collect();
        let named = |n: &str| mock::counter(n).unwrap_or(0);
        (out, named("remarked"), named("too_deep"))
    }

    /// The fixed-offset path gives the outcome and the bytes the general one gives, on random
    /// frames (most untagged IPv4, some tagged, IPv6, short, with options or a short total length)
    /// and rules (`dscp`, `from_dscp` matching or not, `pcp`).
    #[test]
    fn fixed_is_remark() {
        let mut next = mock::xorshift(0x2545_F491_4F6C_DD1Du64);
        let (mut taken, mut remarked) = (0, 0);
        for i in 0..30_000 {
            let mut f: std::vec::Vec<u8> = (0..20 + i % 50).map(|_| next() as u8).collect();
            if i % 7 != 0 && f.len() > 17 {
                f[12..15].copy_from_slice(&[0x08, 0x00, [0x45, 0x45, 0x46][i % 3]]);
                f[16] = [0, f[16]][i % 2];
            }
            let r = next();
            let tos = f.get(15).copied().unwrap_or(0);
            let rule = Rule {
                dscp: [None, Some((r >> 8) as u8 & 63)][(r & 3 != 0) as usize],
                pcp: [None, Some((r >> 16) as u8 & 7)][(r >> 2) as usize % 2],
                from_dscp: [None, Some(tos >> 2), Some(5)][(r >> 24) as usize % 3],
            };
            let (mut a, mut b) = (f.clone(), f.clone());
            if let Some(fixed) = rule.remark_fixed(&mut a) {
                taken += 1;
                remarked += usize::from(fixed == Outcome::Remarked);
                assert_eq!(fixed, rule.remark(&mut b, false), "frame {f:02x?}");
                assert_eq!(a, b, "frame {f:02x?}");
            }
        }
        assert!(taken > 5_000 && remarked > 3_000, "taken {taken}, remarked {remarked}");
    }

    #[test]
    fn remarks_ipv4_with_a_valid_checksum_and_keeps_ecn() {
        let (out, remarked, _) = run(&[("dscp", "46")], &[v4(0x03), v4(0x28)]);
        for (o, tos) in out.iter().zip([0x03, 0x28]) {
            let ip = Ipv4::new(&o[14..]).unwrap();
            assert_eq!((ip.dscp(), ip.ecn()), (46, tos & 3));
            assert!(ip.checksum_ok());
            let mut want = v4((46 << 2) | (tos & 3));
            Ipv4::new(&mut want[14..]).unwrap().fill_checksum();
            assert_eq!(o, &want, "the same bytes as a full checksum");
        }
        assert_eq!(remarked, 2);
    }

    #[test]
    fn pcp_alone_remarks_every_tagged_frame_without_reading_ip() {
        let mut tagged_junk = std::vec![0u8; 60];
        tagged_junk[12..18].copy_from_slice(&[0x81, 0x00, 0x00, 100, 0x08, 0x00]); // VID 100, "IPv4", version 0
        let (out, remarked, too_deep) = run(&[("pcp", "6")], &[tagged_junk.clone(), v4(0)]);
        let mut want = tagged_junk;
        want[14] = 6 << 5;
        assert_eq!(out, [want, v4(0)], "the tag's PCP written, the IP header not read; untagged untouched");
        assert_eq!((remarked, too_deep), (1, 0));
    }

    /// `f` with `tags` tags (0x88a8 outermost, then 0x8100; PCP 0) after the MACs.
    fn tagged(f: &[u8], tags: usize) -> std::vec::Vec<u8> {
        let mut t = f[..12].to_vec();
        for i in 0..tags {
            t.extend(if i == 0 { [0x88, 0xa8, 0x00, 0x07] } else { [0x81, 0x00, 0x00, 0x08] });
        }
        t.extend(&f[12..]);
        t
    }

    #[test]
    fn no_tag_one_tag_and_two_tags_remark_alike() {
        // However many tags: the same IP bytes, and the outermost tag's PCP.
        let mut v6 = std::vec![0u8; 14 + 40 + 8];
        v6[12..16].copy_from_slice(&[0x86, 0xdd, 0x6b, 0x80]); // traffic class 0xb8: DSCP 46
        v6[18..22].copy_from_slice(&[0, 8, 17, 64]);
        let frames = [v4(0), v4(46 << 2), v4(0x03), v6];
        let sets: [&[(&str, &str)]; 4] = [
            &[("dscp", "10")],
            &[("dscp", "10"), ("pcp", "5")],
            &[("dscp", "12"), ("from_dscp", "46")],
            &[("pcp", "3"), ("from_dscp", "0")],
        ];
        for params in sets {
            let one: std::vec::Vec<_> = frames.iter().map(|f| tagged(f, 1)).collect();
            let two: std::vec::Vec<_> = frames.iter().map(|f| tagged(f, 2)).collect();
            let (out1, ..) = run(params, &one);
            let (out2, ..) = run(params, &two);
            let (out0, ..) = run(params, &frames);
            for i in 0..frames.len() {
                // The double-tagged output without its inner tag is the single-tagged output.
                let mut inner_gone = out2[i].clone();
                inner_gone.drain(16..20);
                assert_eq!(inner_gone, out1[i], "{params:?}, frame {i}: one tag vs two");
                let mut untagged = out1[i].clone();
                untagged.drain(12..16);
                assert_eq!(untagged, out0[i], "{params:?}, frame {i}: one tag vs none");
            }
        }
    }

    #[test]
    fn from_dscp_selects_and_refusals_name_the_param() {
        let (out, remarked, _) = run(&[("dscp", "10"), ("from_dscp", "0")], &[v4(0), v4(46 << 2)]);
        assert_eq!(Ipv4::new(&out[0][14..]).unwrap().dscp(), 10);
        assert_eq!(out[1], v4(46 << 2), "another DSCP: untouched");
        assert_eq!(remarked, 1);
        mock::reset();
        mock::set_param("dscp", "64");
        let r = DscpRemark::init(0, &Params::host()).err().unwrap();
        assert_eq!(r.reason(), "param `dscp`: 64 is out of range: 0..=63");
        mock::reset();
        let r = DscpRemark::init(0, &Params::host()).err().unwrap();
        assert!(r.reason().contains("nothing to remark"), "{}", r.reason());
    }
}
