//! `dnat`: destination NAT for IPv4, per packet on direct heads with drops (ABI 1.1: each
//! packet's first 128 bytes read and written in place, a verdict byte a packet), with RFC 1624
//! incremental checksums: no host call per packet.
//!
//! | param | meaning |
//! |---|---|
//! | `match` | destination prefix to rewrite (`10.0.0.2`, `10.0.0.0/24`) |
//! | `to` | new destination IPv4 address |
//! | `port` | optional: only this TCP/UDP destination port |
//! | `to_port` | optional: new TCP/UDP destination port |
//!
//! Per packet: the headers are found in the first 128 bytes (VLAN tags, IPv4 options included); a
//! match gets the new address (and port), the IPv4 header checksum and the TCP/UDP checksum updated
//! incrementally (a UDP checksum of 0 stays 0). Fragments: the first gets its TCP/UDP checksum
//! updated too (it covers the whole datagram and lives there), later ones the address only; with
//! `port` or `to_port` set, TCP/UDP fragments are left alone, as only the first has ports. A
//! matching packet whose TCP/UDP header is not inside those bytes is dropped and counted
//! (`too_deep`) rather than sent with a wrong checksum.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::net::fast::{self, bytes_at, Frame, L4};
use wasmdp_sdk::net::{proto, Headers, L3Kind, Tcp, Udp};
#[cfg(test)]
use wasmdp_sdk::Cidr;
use wasmdp_sdk::{AreaSpec, Burst, Counter, Error, Params, Policy, Prefix4, Refusal, Verdict};

/// Bytes of each packet the policy reads and writes in place: Ethernet, two VLAN tags, IPv4 with
/// options, and a TCP header with options.
const HEAD: u16 = 128;

/// The policy.
pub struct Dnat {
    rule: Rule,
    rewritten: Counter,
    too_deep: Counter,
}

/// What to rewrite, copied into the burst's loop: read through `&self` the fields were loaded from
/// memory again for every packet, the packet stores being, for all the compiler knew, stores to them.
#[derive(Clone, Copy)]
struct Rule {
    matches: Prefix4,
    to: [u8; 4],
    port: Option<u16>,
    to_port: Option<u16>,
    /// `port` as [`Rule::rewrite_fixed`] tests it: the destination port's two bytes as they lie,
    /// and all ones (0 and 0 without a `port`), so the test is one compare with no branch on it.
    port_want: u16,
    port_mask: u16,
}

impl Policy for Dnat {
    const AREA: AreaSpec = AreaSpec::DirectHeadsWithDrops(HEAD);

    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        let matches = params.get_cidr("match")?.ok_or_else(|| Refusal::missing("match"))?;
        let Some(matches) = matches.v4() else {
            return Err(Refusal::new("param `match`: dnat rewrites IPv4 only; give an IPv4 prefix"));
        };
        let rule = Rule::new(
            matches,
            params.get_ipv4("to")?.ok_or_else(|| Refusal::missing("to"))?,
            params.get_u16("port")?,
            params.get_u16("to_port")?,
        );
        Ok(Dnat { rule, rewritten: Counter::register("rewritten")?, too_deep: Counter::register("too_deep")? })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        // A rule without `port` and `to_port` (a plain address NAT) takes a loop that tests
        // neither per packet.
        let (rewritten, too_deep) = if self.rule.port.is_none() && self.rule.to_port.is_none() {
            self.rule.run::<false>(burst)?
        } else {
            self.rule.run::<true>(burst)?
        };
        self.rewritten.add(rewritten);
        self.too_deep.add(too_deep);
        Ok(())
    }
}

/// A burst's packets not rewritten: left as they were (not matching, or not IPv4), and matching
/// but with the TCP/UDP header past the head (dropped).
#[derive(Default)]
struct Counts {
    left: u64,
    too_deep: u64,
}

/// Where the fields [`Rule::rewrite_fixed`] reads and writes lie in an untagged IPv4 frame without
/// options.
mod at {
    pub const IP_CKSUM: usize = 24;
    pub const DST: usize = 30;
    pub const DST_PORT: usize = 36;
    pub const UDP_CKSUM: usize = 40;
    pub const TCP_CKSUM: usize = 50;
    /// The headers through a TCP header without options (UDP's end at 42).
    pub const TCP_END: usize = 54;
}

impl Rule {
    fn new(matches: Prefix4, to: [u8; 4], port: Option<u16>, to_port: Option<u16>) -> Rule {
        let (port_want, port_mask) = port.map_or((0, 0), |p| (u16::from_ne_bytes(p.to_be_bytes()), u16::MAX));
        Rule { matches, to, port, to_port, port_want, port_mask }
    }

    /// Rewrites the burst's matching packets: how many were rewritten, and how many matched but
    /// were too deep for the head (dropped). `PORTS`: whether the rule has `port` or `to_port`.
    #[inline(always)]
    fn run<const PORTS: bool>(self, burst: &mut Burst) -> Result<(u64, u64), Error> {
        // Each packet's first `HEAD` bytes in place (or fewer: the packet's own), the common
        // frames first, at fixed offsets, in line; any other frame out of line ([`Rule::slow`]),
        // so that the walk's body stays short and it goes eight packets a turn (`for_each`).
        // Counted: the packets left as they were and those too deep, each in a branch taken for it
        // alone; the rewritten are the rest (no count on the path of a rewrite).
        let mut heads = burst.heads::<{ HEAD as usize }>()?;
        let walk = heads.verdicts_mut()?;
        let n = walk.len() as u64;
        let mut counts = Counts::default();
        walk.for_each(|(frame, v)| match self.rewrite_fixed::<PORTS>(frame) {
            Some(Some(_)) => {}
            Some(None) => counts.left += 1,
            None => self.slow(frame, v, &mut counts),
        });
        Ok((n - counts.left - counts.too_deep, counts.too_deep))
    }

    /// A frame [`Rule::rewrite_fixed`] does not take: the SDK's fast path, then the general parse;
    /// counted in `counts` unless rewritten, dropped when too deep. The counts through a reference
    /// (in memory): returned instead, as a pair or as one integer, they cost more in the loop
    /// (BENCHMARKS.md).
    #[cold]
    #[inline(never)]
    fn slow(self, frame: &mut [u8], v: Verdict<'_>, counts: &mut Counts) {
        if let Some(fast) = self.rewrite_fast(frame) {
            counts.left += u64::from(fast.is_none());
            return;
        }
        match self.rewrite(frame) {
            Some(true) => {}
            Some(false) => {
                counts.too_deep += 1;
                v.drop();
            }
            None => counts.left += 1,
        }
    }

    /// [`Rule::rewrite_fast`] for the frames that dominate traffic, at fixed offsets: untagged
    /// IPv4 without options, UDP or TCP, not a fragment, with 54 bytes in the head. The same
    /// answers and bytes (`fixed_is_fast`) in a straight line of loads, compares and RFC 1624
    /// updates, where the general fast path's views dispatch on the EtherType, the header length
    /// and the protocol (jump tables in cranelift's code, and more live values than registers).
    /// None: another frame, for the general path. Without `PORTS` the rule's `port` and `to_port`
    /// are taken as absent.
    #[inline(always)]
    fn rewrite_fixed<const PORTS: bool>(self, frame: &mut [u8]) -> Option<Option<usize>> {
        let f: &mut [u8; at::TCP_END] = frame.first_chunk_mut()?;
        // Bytes 12..20 (EtherType, version and header length, DS, total length, identification)
        // and 20..24 (flags and fragment offset, TTL, protocol) as two loads in memory order: one
        // load and a mask a test, where a byte each cost cranelift an address and a reload.
        let l2 = u64::from_le_bytes(bytes_at(f, 12));
        let l3 = u32::from_le_bytes(bytes_at(f, 20));
        // The protocol (UDP or TCP) and the fragment bits in one masked word: two compares, where
        // a test of the protocol byte alone became a jump table.
        let proto_frag = l3 & 0xff00_ff3f;
        let udp = proto_frag == u32::from(proto::UDP) << 24;
        // EtherType IPv4, version 4 with 5 words, a total length that holds the header, no More
        // Fragments and offset 0; a TCP data offset of 5 words or more (the SDK's fast path leaves
        // a malformed one to the general views, which drop it as `too_deep` if it matches).
        // (The total length's two bytes rotated into their big-endian order: a byte swap in four
        // operations, where WebAssembly has no instruction for one.)
        let total_ok = ((l2 >> 32) as u32 & 0xffff).rotate_right(8) >= 20;
        if l2 & 0xff_ffff != 0x45_0008 || !total_ok {
            return None;
        }
        // One test of the protocol, each protocol's rewrite in line after it: with one rewrite
        // testing `udp` where the two differ, LLVM tested it again at each place.
        if udp {
            self.rewrite_l4::<PORTS, true>(f)
        } else if proto_frag == u32::from(proto::TCP) << 24 {
            self.rewrite_l4::<PORTS, false>(f)
        } else {
            None
        }
    }

    /// [`Rule::rewrite_fixed`] past its tests of the frame, for UDP or (`UDP` false) TCP.
    #[inline(always)]
    fn rewrite_l4<const PORTS: bool, const UDP: bool>(self, f: &mut [u8; at::TCP_END]) -> Option<Option<usize>> {
        use wasmdp_sdk::net::cksum::{adjust, udp_nonzero, update16};
        if !UDP && f[46] < 0x50 {
            return None;
        }
        let old = u32::from_ne_bytes(bytes_at(f, at::DST));
        let port = u16::from_ne_bytes(bytes_at(f, at::DST_PORT));
        if !self.matches.contains(old.to_ne_bytes()) || (PORTS && (port ^ self.port_want) & self.port_mask != 0) {
            return Some(None);
        }
        // Checksums read and updated as they lie (no byte swap: WebAssembly has no instruction for
        // it; the ones' complement sum of swapped words is the swapped sum). The address's change
        // is summed once for both (RFC 1624: `!old + new` over its two 16-bit words).
        let to = u32::from_ne_bytes(self.to);
        let delta = u32::from(!(old >> 16) as u16) + u32::from(!old as u16) + (to >> 16) + (to & 0xffff);
        let ip_sum = adjust(u16::from_ne_bytes(bytes_at(f, at::IP_CKSUM)), delta);
        f[at::IP_CKSUM..at::IP_CKSUM + 2].copy_from_slice(&ip_sum.to_ne_bytes());
        f[at::DST..at::DST + 4].copy_from_slice(&self.to);
        // The TCP/UDP checksum as the views update it, in the same order (the port, then the
        // address).
        let to_port = self.to_port.filter(|_| PORTS).map(|p| u16::from_ne_bytes(p.to_be_bytes()));
        let end = if UDP {
            let c = u16::from_ne_bytes(bytes_at(f, at::UDP_CKSUM));
            // A UDP checksum of 0 (none) stays 0, one computed as 0 is sent as all ones.
            if c != 0 {
                let c = to_port.map_or(c, |p| udp_nonzero(update16(c, port, p)));
                let c = udp_nonzero(adjust(c, delta));
                f[at::UDP_CKSUM..at::UDP_CKSUM + 2].copy_from_slice(&c.to_ne_bytes());
            }
            at::UDP_CKSUM + 2
        } else {
            let c = u16::from_ne_bytes(bytes_at(f, at::TCP_CKSUM));
            let c = to_port.map_or(c, |p| update16(c, port, p));
            let c = adjust(c, delta);
            f[at::TCP_CKSUM..at::TCP_CKSUM + 2].copy_from_slice(&c.to_ne_bytes());
            at::TCP_END
        };
        if let Some(p) = to_port {
            f[at::DST_PORT..at::DST_PORT + 2].copy_from_slice(&p.to_ne_bytes());
        }
        Some(Some(end))
    }

    /// The fast path: `None` when the frame is not for it (the general [`Rule::rewrite`] decides),
    /// else `Some(None)` not matching, `Some(Some(n))` rewritten, its first `n` bytes changed.
    #[inline(always)]
    fn rewrite_fast(self, frame: &mut [u8]) -> Option<Option<usize>> {
        let mut v4 = match fast::parse_mut(frame) {
            Frame::V4(v4) => v4,
            Frame::V6(_) | Frame::NotIp => return Some(None),
            Frame::Other => return None,
        };
        if !self.matches.contains(v4.ip.dst()) {
            return Some(None);
        }
        // The same rule as `rewrite`: with a port option the fragments of a TCP/UDP packet are all
        // left alone, and without ports `port` matches nothing.
        let ports = matches!(v4.ip.protocol(), proto::TCP | proto::UDP);
        let port_option = self.port.is_some() || self.to_port.is_some();
        if (ports && v4.ip.is_fragment() && port_option) || (!ports && self.port.is_some()) {
            return Some(None);
        }
        match &mut v4.l4 {
            L4::Udp(u) => {
                if self.port.is_some_and(|p| p != u.dst_port()) {
                    return Some(None);
                }
                if let Some(p) = self.to_port {
                    u.set_dst_port_incremental(p);
                }
            }
            L4::Tcp(t) => {
                if self.port.is_some_and(|p| p != t.dst_port()) {
                    return Some(None);
                }
                if let Some(p) = self.to_port {
                    t.set_dst_port_incremental(p);
                }
            }
            L4::Icmp(_) | L4::None => {}
        }
        v4.set_dst_nat(self.to);
        Some(Some(v4.headers_len()))
    }

    /// Rewrites a matching packet: Some(true) done, Some(false) matching but its L4 header is past
    /// the head, None not matching.
    #[inline(always)]
    fn rewrite(self, frame: &mut [u8]) -> Option<bool> {
        let h = Headers::parse(frame)?;
        let l3 = h.l3.filter(|l3| l3.kind == L3Kind::V4)?;
        let ports = matches!(l3.proto, proto::TCP | proto::UDP);
        // A port option needs the ports, which only the first fragment has: the fragments of a
        // TCP/UDP packet are all left alone rather than treated apart. Without ports, `port`
        // matches nothing.
        let port_option = self.port.is_some() || self.to_port.is_some();
        if (ports && h.fragment && port_option) || (!ports && self.port.is_some()) {
            return None;
        }
        // The IPv4 header and what follows it, split so that each is checked once and both change.
        let (mut ip, seg) = h.ipv4_mut(frame)?;
        let old = ip.dst();
        if !self.matches.contains(old) {
            return None;
        }
        // The L4 checksum covers the address: a whole packet's or a first fragment's is fixed (a
        // later fragment has none: it lives in the first).
        if ports && h.l4_offset.is_some() {
            let Some(&[_, _, hi, lo]) = seg.first_chunk::<4>() else { return Some(false) };
            if self.port.is_some_and(|p| p != u16::from_be_bytes([hi, lo])) {
                return None;
            }
            if !self.fix_l4(seg, l3.proto, old) {
                return Some(false);
            }
        }
        ip.set_dst_incremental(self.to);
        Some(true)
    }

    /// Updates the TCP or UDP header at the start of `seg` for the new address (and port); false
    /// when it is not all in the head. Inlined: as a call, its prologue and spills cost a third of
    /// its work in WebAssembly.
    #[inline(always)]
    fn fix_l4(self, seg: &mut [u8], proto_: u8, old: [u8; 4]) -> bool {
        if proto_ == proto::UDP {
            let Some(mut u) = Udp::new(seg) else { return false };
            u.update_checksum_addr_v4(old, self.to);
            if let Some(p) = self.to_port {
                u.set_dst_port_incremental(p);
            }
        } else {
            let Some(mut t) = Tcp::new(seg) else { return false };
            t.update_checksum_addr_v4(old, self.to);
            if let Some(p) = self.to_port {
                t.set_dst_port_incremental(p);
            }
        }
        true
    }
}

wasmdp_sdk::export_policy!(Dnat);

#[cfg(test)]
mod tests {
    use super::*;
    use wasmdp_sdk::mock;
    use wasmdp_sdk::net::Ipv4;

    /// An IPv4 frame 10.0.0.1:1000 -> dst:dport, UDP or TCP (`proto_`), with the flags and fragment
    /// offset word `frag` and 18 bytes of data; both checksums computed in full over the bytes there.
    fn frame(proto_: u8, dst: [u8; 4], dport: u16, frag: u16) -> std::vec::Vec<u8> {
        let l4 = if proto_ == proto::TCP { Tcp::<&[u8]>::MIN_LEN } else { Udp::<&[u8]>::LEN };
        let total = (20 + l4 + 18) as u16;
        let mut f = std::vec![0u8; 14 + usize::from(total)];
        f[12..14].copy_from_slice(&[8, 0]);
        f[14..18].copy_from_slice(&[0x45, 0, (total >> 8) as u8, total as u8]);
        f[18..26].copy_from_slice(&[0, 1, (frag >> 8) as u8, frag as u8, 64, proto_, 0, 0]);
        f[26..34].copy_from_slice(&[10, 0, 0, 1, dst[0], dst[1], dst[2], dst[3]]);
        f[34..38].copy_from_slice(&[0x03, 0xe8, (dport >> 8) as u8, dport as u8]);
        if proto_ == proto::TCP {
            f[46..48].copy_from_slice(&[0x50, 0x18]);
        } else {
            f[38..40].copy_from_slice(&(l4 as u16 + 18).to_be_bytes());
        }
        f[34 + l4..].iter_mut().enumerate().for_each(|(i, b)| *b = i as u8);
        Ipv4::new(&mut f[14..]).unwrap().fill_checksum();
        let ip = Ipv4::new(&f[14..]).unwrap();
        let c = if proto_ == proto::TCP {
            Tcp::new(&f[34..]).unwrap().compute_checksum_v4(&ip).unwrap()
        } else {
            Udp::new(&f[34..]).unwrap().compute_checksum_v4(&ip).unwrap()
        };
        let at = if proto_ == proto::TCP { 50 } else { 40 };
        f[at..at + 2].copy_from_slice(&c.to_be_bytes());
        f
    }

    /// A whole IPv4/UDP packet.
    fn udp(dst: [u8; 4], dport: u16) -> std::vec::Vec<u8> {
        frame(proto::UDP, dst, dport, 0)
    }

    /// Runs `frames` through a dnat configured with `params`; the frames out.
    fn run(params: &[(&str, &str)], frames: &[std::vec::Vec<u8>]) -> std::vec::Vec<std::vec::Vec<u8>> {
        mock::reset();
        mock::set_area(Dnat::AREA);
        for (k, v) in params {
            mock::set_param(k, v);
        }
        let mut p = Dnat::init(0, &Params::host()).unwrap();
        mock::begin_burst(&frames.iter().map(|f| f.as_slice()).collect::<std::vec::Vec<_>>());
        p.on_burst(&mut Burst::current().unwrap()).unwrap();
        mock::end_burst().into_iter().map(|o| o.data).collect()
    }

    const NEW: [u8; 4] = [192, 0, 2, 9];

    #[test]
    fn rewrites_matching_packets_with_checksums_equal_to_full_ones() {
        let params = [("match", "10.0.0.0/24"), ("to", "192.0.2.9"), ("port", "53"), ("to_port", "5353")];
        let frames = [udp([10, 0, 0, 2], 53), udp([10, 0, 1, 2], 53), udp([10, 0, 0, 2], 80)];
        let out = run(&params, &frames);
        assert_eq!(out[0], udp(NEW, 5353), "rewritten as if built so");
        assert_eq!(out[1..], frames[1..], "other address, other port: untouched");
        assert_eq!(mock::counter("rewritten"), Some(1));
        let tcp = [frame(proto::TCP, [10, 0, 0, 3], 53, 0)];
        assert_eq!(run(&params, &tcp), [frame(proto::TCP, NEW, 5353, 0)], "TCP alike");
    }

    /// `f` with `tags` VLAN tags inserted after the MACs.
    fn tagged(f: &[u8], tags: usize) -> std::vec::Vec<u8> {
        let mut t = f[..12].to_vec();
        for _ in 0..tags {
            t.extend([0x81, 0x00, 0x00, 0x07]);
        }
        t.extend(&f[12..]);
        t
    }

    #[test]
    fn the_fast_path_and_the_general_views_rewrite_alike() {
        // Untagged and single-tagged frames take the SDK's fast path, double-tagged ones the
        // general views: the same rewrite either way.
        const MF: u16 = 0x2000;
        let frames = [
            udp([10, 0, 0, 2], 53),
            udp([10, 0, 0, 2], 80),
            udp([10, 0, 1, 2], 53),
            frame(proto::TCP, [10, 0, 0, 3], 53, 0),
            frame(proto::UDP, [10, 0, 0, 2], 53, MF),
            frame(proto::UDP, [10, 0, 0, 2], 53, MF | 0x10),
        ];
        let sets: [&[(&str, &str)]; 3] = [
            &[("match", "10.0.0.0/24"), ("to", "192.0.2.9")],
            &[("match", "10.0.0.0/24"), ("to", "192.0.2.9"), ("port", "53"), ("to_port", "5353")],
            &[("match", "10.0.0.2"), ("to", "192.0.2.9"), ("to_port", "99")],
        ];
        for params in sets {
            let plain = run(params, &frames);
            assert_ne!(plain[0], frames[0], "{params:?}: the first frame is rewritten");
            for tags in [1, 2] {
                let t: std::vec::Vec<_> = frames.iter().map(|f| tagged(f, tags)).collect();
                let want: std::vec::Vec<_> = plain.iter().map(|f| tagged(f, tags)).collect();
                assert_eq!(run(params, &t), want, "{params:?}, {tags} tags");
            }
        }
    }

    /// The counters whichever path a packet takes: rewritten at fixed offsets or by the general
    /// views, left alone by either, not IP, or matching with its TCP header past the head (dropped).
    #[test]
    fn counts_every_path() {
        let mut deep = tagged(&frame(proto::TCP, [10, 0, 0, 4], 53, 0), 2);
        // IPv4 options to 60 bytes, a TCP header of 60: the TCP header ends at 142, past the head.
        deep[22] = 0x4f;
        deep.splice(42..42, [1; 40]);
        deep[82 + 12] = 0xf0;
        deep.splice(102..102, [1; 40]);
        deep[24..26].copy_from_slice(&(60u16 + 60 + 18).to_be_bytes());
        let mut arp = udp([10, 0, 0, 2], 53);
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        let frames = [
            udp([10, 0, 0, 2], 53),
            udp([10, 0, 1, 2], 53),
            tagged(&udp([10, 0, 0, 2], 53), 2),
            tagged(&udp([10, 0, 1, 2], 53), 2),
            arp.clone(),
            deep,
        ];
        mock::reset();
        mock::set_area(Dnat::AREA);
        mock::set_param("match", "10.0.0.0/24");
        mock::set_param("to", "192.0.2.9");
        let mut p = Dnat::init(0, &Params::host()).unwrap();
        mock::begin_burst(&frames.iter().map(|f| f.as_slice()).collect::<std::vec::Vec<_>>());
        p.on_burst(&mut Burst::current().unwrap()).unwrap();
        let out = mock::end_burst();
        assert_eq!(
            out.iter().map(|o| o.dropped).collect::<std::vec::Vec<_>>(),
            [false, false, false, false, false, true]
        );
        assert_eq!((&out[1].data, &out[3].data, &out[4].data), (&frames[1], &frames[3], &arp), "left alone");
        assert_eq!((mock::counter("rewritten"), mock::counter("too_deep")), (Some(2), Some(1)));
    }

    /// The fixed-offset path answers and rewrites as the SDK's fast path does, byte for byte, on
    /// random frames (UDP and TCP, checksums of 0 and not, fragments, IP options, other
    /// EtherTypes) and every kind of rule: with and without `port` and `to_port`, matching or not.
    #[test]
    fn fixed_is_fast() {
        let mut next = mock::xorshift(0x9E37_79B9_7F4A_7C15u64);
        let (mut taken, mut rewritten) = (0, 0);
        for i in 0..30_000 {
            let mut f: std::vec::Vec<u8> = (0..40 + i % 40).map(|_| next() as u8).collect();
            if i % 9 != 0 && f.len() > 24 {
                f[12..15].copy_from_slice(&[0x08, 0x00, 0x45]);
                f[23] = [proto::UDP, proto::TCP, proto::ICMP][i % 3];
                if i % 4 != 0 {
                    (f[20], f[21]) = (f[20] & 0x40, 0);
                }
                if i % 5 == 0 && f.len() > 41 {
                    (f[40], f[41]) = (0, 0);
                }
            }
            let r = next();
            let dst = [10, 0, 0, f.get(33).copied().unwrap_or(0)];
            if f.len() > 37 && r & 3 != 0 {
                f[30..34].copy_from_slice(&dst);
            }
            let len = [24, 32, 16][(r >> 2) as usize % 3];
            let port = f.get(36..38).map(|p| u16::from_be_bytes([p[0], p[1]]));
            let rule = Rule::new(
                Cidr::V4([10, 0, 0, if len == 32 { dst[3] } else { 0 }], len).v4().unwrap(),
                [192, 0, 2, (r >> 8) as u8],
                [None, port, Some(53)][(r >> 16) as usize % 3],
                [None, Some((r >> 24) as u16)][(r >> 40) as usize % 2],
            );
            let (mut a, mut b) = (f.clone(), f.clone());
            let fixed = rule.rewrite_fixed::<true>(&mut a);
            if rule.port.is_none() && rule.to_port.is_none() {
                let mut c = f.clone();
                assert_eq!(rule.rewrite_fixed::<false>(&mut c), fixed, "frame {f:02x?}");
                assert_eq!(c, a, "frame {f:02x?}");
            }
            if let Some(fixed) = fixed {
                taken += 1;
                rewritten += usize::from(fixed.is_some());
                assert_eq!(Some(fixed), rule.rewrite_fast(&mut b), "frame {f:02x?}");
                assert_eq!(a, b, "frame {f:02x?}");
            }
        }
        assert!(taken > 5_000 && rewritten > 2_000, "taken {taken}, rewritten {rewritten}");
    }

    #[test]
    fn fragments_keep_the_datagram_checksum_right() {
        const MF: u16 = 0x2000;
        let params = [("match", "10.0.0.2"), ("to", "192.0.2.9")];
        // The first fragment carries the L4 checksum of the whole datagram, which covers the address.
        for p in [proto::UDP, proto::TCP] {
            let first = frame(p, [10, 0, 0, 2], 53, MF);
            assert_eq!(run(&params, &[first]), [frame(p, NEW, 53, MF)], "first fragment, protocol {p}");
        }
        // A later fragment has data where the L4 header would be: the IPv4 header alone changes.
        let later = frame(proto::UDP, [10, 0, 0, 2], 53, MF | 0x10);
        let mut want = later.clone();
        want[30..34].copy_from_slice(&NEW);
        Ipv4::new(&mut want[14..]).unwrap().fill_checksum();
        assert_eq!(run(&params, core::slice::from_ref(&later)), [want]);
        // With a port option, every fragment of a packet is left alone, the first included.
        let with_port = [("match", "10.0.0.2"), ("to", "192.0.2.9"), ("to_port", "5353")];
        let both = [frame(proto::UDP, [10, 0, 0, 2], 53, MF), later];
        assert_eq!(run(&with_port, &both), both);
    }
}
