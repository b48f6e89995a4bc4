//! One-pass parse of a frame's L2, L3 and L4 header offsets.

use super::{ethertype, l2, proto, rd16, Ipv4, Ipv6, L2};

/// SCTP (IANA protocol 132): ports in its first 4 bytes, like TCP and UDP.
const SCTP: u8 = 132;
/// UDP-Lite (IANA protocol 136): ports in its first 4 bytes.
const UDPLITE: u8 = 136;

/// Which IP version the L3 header is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum L3Kind {
    /// IPv4 ([`Ipv4`]).
    V4,
    /// IPv6 ([`Ipv6`]).
    V6,
}

/// The L3 header found by [`Headers::parse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L3 {
    /// IPv4 or IPv6.
    pub kind: L3Kind,
    /// Offset of the IP header in the frame.
    pub offset: usize,
    /// The upper-layer protocol ([`proto`]): the IPv4 protocol field, or for IPv6 the next header
    /// after the extension headers.
    pub proto: u8,
}

/// The header offsets of a frame: [`Headers::parse`]'s result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headers {
    /// The Ethernet header and VLAN tags.
    pub l2: L2,
    /// The IP header, `None` when the EtherType is neither IPv4 nor IPv6.
    pub l3: Option<L3>,
    /// Offset in the frame of the upper-layer header (whatever [`L3::proto`] is), `None` without an
    /// IP header or in a fragment other than the first, where the upper-layer header is not. The
    /// header there may be cut by the end of the window: its view's `new` checks that.
    pub l4_offset: Option<usize>,
    /// Whether the IP packet is a fragment, first or not.
    pub fragment: bool,
}

impl Headers {
    /// Finds the headers of `frame` (a window: it may end before the packet does). `None` if the
    /// Ethernet header or a VLAN tag is cut or there are too many tags (see [`l2`]), or if the
    /// EtherType announces IPv4 or IPv6 and that header is cut or malformed (for IPv6, its extension
    /// headers included: see [`Ipv6::upper`]).
    pub fn parse(frame: &[u8]) -> Option<Headers> {
        let l2 = l2(frame)?;
        let mut h = Headers { l2, l3: None, l4_offset: None, fragment: false };
        let offset = l2.l3_offset;
        let (kind, proto, l4) = match l2.ethertype {
            ethertype::IPV4 => {
                let ip = Ipv4::new(frame.get(offset..)?)?;
                h.fragment = ip.is_fragment();
                (L3Kind::V4, ip.protocol(), (ip.frag_offset() == 0).then_some(ip.header_len()))
            }
            ethertype::IPV6 => {
                let up = Ipv6::new(frame.get(offset..)?)?.upper()?;
                h.fragment = up.is_fragment();
                (L3Kind::V6, up.proto, (up.frag_offset == 0).then_some(up.offset))
            }
            _ => return Some(h),
        };
        h.l3 = Some(L3 { kind, offset, proto });
        h.l4_offset = l4.map(|l4| offset + l4);
        Some(h)
    }

    /// The IPv4 header [`parse`](Headers::parse) found, writable, and the bytes after it:
    /// `(header, rest)`, split at the header's length (options included), in `frame`, the bytes that
    /// were parsed (in a plugin, typically the SDK's `Window::bytes_mut` after a parse of
    /// `Window::bytes`). The header is not checked again: the parse did
    /// that, and `Ipv4::new` on the same bytes was a measurable part of dnat's cost per packet
    /// (BENCHMARKS.md). The view holds the header only (its `payload` is empty; the payload is `rest`).
    /// `None` without an IPv4 header, or when `frame` is shorter than the header. On bytes other
    /// than the ones parsed the view reads what is there, as any view's getters do: zeros past its
    /// end, never a panic.
    #[inline(always)]
    pub fn ipv4_mut<'a>(&self, frame: &'a mut [u8]) -> Option<(Ipv4<&'a mut [u8]>, &'a mut [u8])> {
        let l3 = self.l3.filter(|l3| l3.kind == L3Kind::V4)?;
        let ip = frame.get_mut(l3.offset..)?;
        let hlen = usize::from(*ip.first()? & 0x0F) * 4;
        let (header, rest) = ip.split_at_mut_checked(hlen)?;
        Some((Ipv4::parsed(header), rest))
    }

    /// The flow's addresses, protocol and ports: `(src, dst, proto, src_port, dst_port)`, IPv4
    /// addresses as IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`), for `frame` the one that was
    /// parsed. The ports are 0 for protocols without ports (ICMP, ...) and in every fragment, the
    /// first included, so that all the fragments of a packet give the same tuple. `None` without an IP
    /// header, or when the first 4 bytes of a TCP, UDP, SCTP or UDP-Lite header are not in the window.
    #[allow(clippy::type_complexity, reason = "a plain tuple: the net module exports no named type for it")]
    pub fn five_tuple(&self, frame: &[u8]) -> Option<([u8; 16], [u8; 16], u8, u16, u16)> {
        let l3 = self.l3?;
        let ip = frame.get(l3.offset..)?;
        let (src, dst) = match l3.kind {
            L3Kind::V4 => {
                let ip = Ipv4::new(ip)?;
                (mapped(ip.src()), mapped(ip.dst()))
            }
            L3Kind::V6 => {
                let ip = Ipv6::new(ip)?;
                (ip.src(), ip.dst())
            }
        };
        let has_ports = matches!(l3.proto, proto::TCP | proto::UDP | SCTP | UDPLITE) && !self.fragment;
        let (sport, dport) = match self.l4_offset {
            Some(at) if has_ports => {
                let ports = frame.get(at..at.checked_add(4)?)?;
                (rd16(ports, 0), rd16(ports, 2))
            }
            _ => (0, 0),
        };
        Some((src, dst, l3.proto, sport, dport))
    }
}

/// The IPv4-mapped IPv6 address of `a` (RFC 4291, 2.5.5.2).
fn mapped(a: [u8; 4]) -> [u8; 16] {
    let mut m = [0u8; 16];
    m[10] = 0xFF;
    m[11] = 0xFF;
    m[12..].copy_from_slice(&a);
    m
}

#[cfg(test)]
mod tests {
    use super::super::{tcp_flags, tunnel, Eth, Geneve, Icmp, Tcp, Udp, Vlan, Vxlan};
    use super::*;

    /// The frame of the module's doc example: 10.0.0.1:12345 -> 10.0.0.2:53, UDP, no data.
    fn doc_frame() -> [u8; 42] {
        let mut frame = [0u8; 42];
        frame[12..14].copy_from_slice(&[0x08, 0x00]);
        frame[14..34].copy_from_slice(&[0x45, 0, 0, 28, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        frame[34..38].copy_from_slice(&[0x30, 0x39, 0x00, 0x35]);
        frame
    }

    /// A QinQ-tagged IPv6 TCP frame behind a Hop-by-Hop header: S-tag 10, C-tag 20, 2001::1 port 50000
    /// -> 2001::2 port 443, a 20-byte SYN.
    fn v6_frame() -> [u8; 110] {
        let mut f = [0u8; 110];
        f[12..22].copy_from_slice(&[0x88, 0xA8, 0, 10, 0x81, 0x00, 0, 20, 0x86, 0xDD]);
        f[22..30].copy_from_slice(&[0x60, 0, 0, 0, 0, 28, proto::HOPOPT, 64]);
        f[30..32].copy_from_slice(&[0x20, 0x01]);
        f[45] = 1;
        f[46..48].copy_from_slice(&[0x20, 0x01]);
        f[61] = 2;
        f[62..70].copy_from_slice(&[proto::TCP, 0, 5, 2, 0, 0, 1, 0]); // router alert
        f[70..90]
            .copy_from_slice(&[0xc3, 0x50, 0x01, 0xbb, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0]);
        f
    }

    /// A VXLAN frame (outer IPv4/UDP to port 4789, VNI 42) carrying Ethernet/IPv4/ICMP echo.
    fn vxlan_frame() -> [u8; 92] {
        let mut f = [0u8; 92];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[14..34].copy_from_slice(&[0x45, 0, 0, 78, 0, 1, 0, 0, 64, 17, 0, 0, 192, 0, 2, 1, 192, 0, 2, 2]);
        f[34..42].copy_from_slice(&[0xd4, 0x31, 0x12, 0xb5, 0, 58, 0, 0]);
        f[42..50].copy_from_slice(&[0x08, 0, 0, 0, 0, 0, 42, 0]);
        f[62..64].copy_from_slice(&[0x08, 0x00]);
        f[64..84].copy_from_slice(&[0x45, 0, 0, 28, 0, 2, 0, 0, 64, 1, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        f[84..92].copy_from_slice(&[8, 0, 0xf7, 0xfe, 0, 1, 0, 0]);
        f
    }

    #[test]
    fn doc_example() {
        let frame = doc_frame();
        let h = Headers::parse(&frame).unwrap();
        let l3 = h.l3.unwrap();
        assert_eq!((l3.kind, l3.proto), (L3Kind::V4, proto::UDP));
        let ip = Ipv4::new(&frame[l3.offset..]).unwrap();
        assert_eq!(ip.dst(), [10, 0, 0, 2]);
        let udp = Udp::new(&frame[h.l4_offset.unwrap()..]).unwrap();
        assert_eq!(udp.dst_port(), 53);
        assert_eq!((l3.offset, h.l4_offset, h.fragment), (14, Some(34), false));
        let (src, dst, p, sp, dp) = h.five_tuple(&frame).unwrap();
        assert_eq!((src, dst), (mapped([10, 0, 0, 1]), mapped([10, 0, 0, 2])));
        assert_eq!(src[10..], [0xff, 0xff, 10, 0, 0, 1]);
        assert_eq!((p, sp, dp), (17, 12345, 53));
    }

    #[test]
    fn ipv4_mut_splits_at_the_parsed_header_and_writes_in_place() {
        for ihl in [5u8, 6] {
            let mut f = [0u8; 46];
            f[12..14].copy_from_slice(&[0x08, 0x00]);
            let hlen = usize::from(ihl) * 4;
            f[14..34].copy_from_slice(&[0x40 | ihl, 0, 0, 32, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
            f[14 + hlen..16 + hlen].copy_from_slice(&[0x30, 0x39]);
            Ipv4::new(&mut f[14..]).unwrap().fill_checksum();
            let h = Headers::parse(&f).unwrap();
            let (mut ip, rest) = h.ipv4_mut(&mut f).unwrap();
            assert_eq!((ip.header_len(), ip.dst(), ip.payload().len()), (hlen, [10, 0, 0, 2], 0), "IHL {ihl}");
            assert_eq!((rest.len(), rest[..2].to_vec()), (32 - hlen, std::vec![0x30, 0x39]), "IHL {ihl}: the rest");
            ip.set_dst_incremental([192, 0, 2, 7]);
            assert!(Ipv4::new(&f[14..]).unwrap().checksum_ok(), "IHL {ihl}: the checksum follows");
            assert_eq!(f[30..34], [192, 0, 2, 7], "IHL {ihl}: written in the frame");
        }
        let mut v6 = v6_frame();
        assert!(Headers::parse(&v6).unwrap().ipv4_mut(&mut v6).is_none(), "IPv6");
        let mut f = doc_frame();
        let h = Headers::parse(&f).unwrap();
        assert!(h.ipv4_mut(&mut f[..33]).is_none(), "bytes shorter than the parsed header");
        f[14] = 0x4f;
        assert!(h.ipv4_mut(&mut f).is_none(), "other bytes, with a header longer than they are");
        f[14] = 0x47;
        let (ip, rest) = h.ipv4_mut(&mut f).unwrap();
        assert_eq!((ip.header_len(), rest.len()), (28, 0), "other bytes: split where they say, never a panic");
        f[14] = 0x41;
        let (ip, _) = h.ipv4_mut(&mut f).unwrap();
        assert_eq!((ip.header_len(), ip.dst(), ip.options().len()), (4, [0; 4], 0), "a 4-byte view reads zeros");
    }

    #[test]
    fn tagged_ipv6_with_extension_header() {
        let f = v6_frame();
        let h = Headers::parse(&f).unwrap();
        assert_eq!(h.l2.tag_count(), 2);
        assert_eq!(h.l3, Some(L3 { kind: L3Kind::V6, offset: 22, proto: proto::TCP }));
        assert_eq!((h.l4_offset, h.fragment), (Some(70), false));
        let t = Tcp::new(&f[70..]).unwrap();
        assert_eq!((t.dst_port(), t.flags()), (443, tcp_flags::SYN));
        let (src, dst, p, sp, dp) = h.five_tuple(&f).unwrap();
        assert_eq!((src[15], dst[15], p, sp, dp), (1, 2, proto::TCP, 50000, 443));
    }

    #[test]
    fn fragments_non_ip_and_malformed() {
        // A non-first IPv4 fragment: no L4 header, no ports.
        let mut f = doc_frame();
        f[20..22].copy_from_slice(&[0x00, 0x10]);
        let h = Headers::parse(&f).unwrap();
        assert_eq!((h.l3.unwrap().proto, h.l4_offset, h.fragment), (proto::UDP, None, true));
        assert_eq!(h.five_tuple(&f).unwrap().3, 0);
        // The first fragment has its L4 header, but gives the ports of its later fragments: 0.
        f[20..22].copy_from_slice(&[0x20, 0x00]);
        let h = Headers::parse(&f).unwrap();
        assert_eq!((h.l4_offset, h.fragment), (Some(34), true));
        assert_eq!(h.five_tuple(&f).unwrap().3, 0);
        // ARP: L2 only.
        let mut f = doc_frame();
        f[12..14].copy_from_slice(&[0x08, 0x06]);
        let h = Headers::parse(&f).unwrap();
        assert_eq!((h.l3, h.l4_offset, h.five_tuple(&f)), (None, None, None));
        // A malformed IPv4 header (IHL 4) behind the IPv4 EtherType.
        let mut f = doc_frame();
        f[14] = 0x44;
        assert_eq!(Headers::parse(&f), None);
        // The ports cut by the window.
        let f = doc_frame();
        let h = Headers::parse(&f[..36]).unwrap();
        assert_eq!((h.l4_offset, h.five_tuple(&f[..36])), (Some(34), None));
        // Every prefix that cuts the IP headers gives None, every longer one the same offsets.
        for (f, l3_end) in [(&doc_frame()[..], 34), (&v6_frame()[..], 70)] {
            let full = Headers::parse(f).unwrap();
            for len in 0..f.len() {
                let h = Headers::parse(&f[..len]);
                if len < l3_end {
                    assert_eq!(h, None, "prefix {len}");
                } else {
                    assert_eq!(h, Some(full), "prefix {len}");
                }
            }
        }
    }

    /// Adds each value to `n`, wrapping: the sums only keep the reads from being optimized out.
    macro_rules! acc {
        ($n:ident; $($e:expr),* $(,)?) => { $( $n = $n.wrapping_add(usize::from($e)); )* };
    }

    /// Reads every field of every view that accepts `b`, and of the views over the IPv4 payload.
    fn read_all(b: &[u8]) -> usize {
        let mut n = 0usize;
        if let Some(e) = Eth::new(b) {
            acc!(n; e.ethertype(), e.dst()[5], e.src()[0]);
            acc!(n; e.payload().len());
        }
        if let Some(v) = Vlan::new(b) {
            acc!(n; v.tci(), v.pcp(), v.vid(), v.ethertype(), v.dei());
        }
        if let Some(ip) = Ipv4::new(b) {
            acc!(n; ip.version(), ip.ihl(), ip.dscp(), ip.ecn(), ip.flags(), ip.ttl(), ip.protocol());
            acc!(n; ip.total_len(), ip.id(), ip.frag_offset(), ip.checksum(), ip.src()[0], ip.dst()[3]);
            acc!(n; ip.is_fragment(), ip.checksum_ok());
            acc!(n; ip.header_len(), ip.options().len(), ip.payload().len(), ip.header().len());
            n = n.wrapping_add(read_all(ip.payload()));
        }
        if let Some(ip) = Ipv6::new(b) {
            acc!(n; ip.version(), ip.traffic_class(), ip.dscp(), ip.ecn(), ip.next_header(), ip.hop_limit());
            acc!(n; ip.payload_len(), ip.src()[0], ip.dst()[15]);
            acc!(n; ip.flow_label() as usize, ip.payload().len());
            if let Some(up) = ip.upper() {
                acc!(n; up.proto, up.frag_offset, up.more_fragments, up.is_fragment());
                acc!(n; up.offset);
            }
        }
        if let Some(u) = Udp::new(b) {
            acc!(n; u.src_port(), u.dst_port(), u.len(), u.checksum(), u.is_empty());
            acc!(n; u.payload().len());
        }
        if let Some(t) = Tcp::new(b) {
            acc!(n; t.src_port(), t.dst_port(), t.data_offset(), t.flags(), t.window(), t.checksum());
            acc!(n; t.urgent_ptr(), t.has_flags(3));
            acc!(n; t.seq() as usize ^ t.ack() as usize);
            acc!(n; t.header_len(), t.options().len(), t.payload().len());
        }
        if let Some(i) = Icmp::new(b) {
            acc!(n; i.icmp_type(), i.code(), i.checksum(), i.echo_id(), i.echo_seq(), i.rest()[3]);
            acc!(n; i.checksum_ok());
            acc!(n; i.payload().len());
        }
        if let Some(v) = Vxlan::new(b) {
            acc!(n; v.flags(), v.has_vni());
            acc!(n; v.vni() as usize, v.payload().len());
        }
        if let Some(g) = Geneve::new(b) {
            acc!(n; g.version(), g.opt_len(), g.oam(), g.critical(), g.protocol_type());
            acc!(n; g.vni() as usize, g.header_len(), g.options().len(), g.payload().len());
        }
        n
    }

    /// Every view's `new`, and `Headers::parse`, on every prefix of valid frames, at every start
    /// offset: never a panic, whatever is cut where.
    #[test]
    fn every_view_on_every_prefix_never_panics() {
        let frames: [&[u8]; 3] = [&doc_frame(), &v6_frame(), &vxlan_frame()];
        let mut total = 0usize;
        for f in frames {
            for len in 0..=f.len() {
                let p = &f[..len];
                if let Some(h) = Headers::parse(p) {
                    total += h.five_tuple(p).map_or(0, |t| usize::from(t.3));
                    total += h.l4_offset.map_or(0, |o| read_all(&p[o.min(len)..]));
                }
                for start in 0..=len {
                    total = total.wrapping_add(read_all(&p[start..]));
                }
            }
        }
        assert!(total > 0);
        // The VXLAN frame's views, in order.
        let f = vxlan_frame();
        let h = Headers::parse(&f).unwrap();
        let udp = Udp::new(&f[h.l4_offset.unwrap()..]).unwrap();
        assert_eq!(udp.dst_port(), tunnel::VXLAN_PORT);
        let vx = Vxlan::new(udp.payload()).unwrap();
        assert_eq!((vx.has_vni(), vx.vni()), (true, 42));
        let inner = Headers::parse(vx.payload()).unwrap();
        assert_eq!(inner.l3.map(|l3| l3.proto), Some(proto::ICMP));
        assert!(Icmp::new(&vx.payload()[inner.l4_offset.unwrap()..]).unwrap().checksum_ok());
    }

    /// Pseudo-random frames (an LCG, so the test is repeatable): parse and all views on all of them.
    #[test]
    fn random_bytes_never_panic() {
        let mut x: u32 = 0x1234_5678;
        let mut buf = [0u8; 128];
        for round in 0..2000 {
            for b in buf.iter_mut() {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                *b = (x >> 24) as u8;
            }
            // Steer some rounds into the IP and tunnel paths.
            match round % 4 {
                0 => buf[12..15].copy_from_slice(&[0x08, 0x00, 0x45]),
                1 => buf[12..15].copy_from_slice(&[0x86, 0xDD, 0x60]),
                2 => buf[12..16].copy_from_slice(&[0x81, 0x00, 0x00, 0x01]),
                _ => {}
            }
            let len = (x as usize) % buf.len();
            if let Some(h) = Headers::parse(&buf[..len]) {
                let _ = h.five_tuple(&buf[..len]);
            }
            let _ = read_all(&buf[..len]);
            let _ = read_all(&buf[14..len.max(14)]);
        }
    }
}
