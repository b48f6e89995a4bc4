//! The crate's parsers agree on every frame: the host's one-pass [`parse()`], the plugins' general
//! views ([`view::Headers::parse`]) and their fast path ([`view::fast::parse`]) are tuned for
//! different machines (offsets for the host; views checked once, for WebAssembly) but must find the
//! same headers, or host and plugin would disagree about a frame. Where the rules differ on purpose
//! (the views refuse a cut tag or a third tag that the host's walk stops at), neither finds IP.

use crate::testutil::{frame, with_ext, Ip, L4};
use crate::view::{self, fast, L3Kind};
use crate::{parse, L3};
use proptest::prelude::*;

/// Asserts that what the views find, the host's parse found at the same offsets. `whole`: the frame
/// is well formed, so every parser must find its IP header.
fn agree(f: &[u8], whole: bool) {
    let h = parse(f);
    let (l2_len, l3_len) = (usize::from(h.l2_len), usize::from(h.l3_len));
    let v = view::Headers::parse(f);
    if whole {
        assert_ne!(h.l3, L3::Other, "the host finds IP in {f:02x?}");
        assert!(v.is_some_and(|v| v.l3.is_some()), "the views find IP in {f:02x?}");
    }
    if let Some(l3) = v.and_then(|v| v.l3) {
        let v = v.unwrap();
        let kind = if l3.kind == L3Kind::V4 { L3::Ipv4 } else { L3::Ipv6 };
        assert_eq!((kind, l3.offset, l3.proto), (h.l3, l2_len, h.l4_proto), "IP header of {f:02x?}");
        if h.l4_len != 0 {
            assert_eq!(v.l4_offset, Some(l2_len + l3_len), "transport header of {f:02x?}");
        }
        if h.l3 == L3::Ipv4 {
            assert_eq!(v.fragment, !h.l4_whole, "fragment of {f:02x?}");
        }
    }
    match fast::parse(f) {
        fast::Frame::V4(x) => {
            assert_eq!((h.l3, x.l3_offset, l3_len, x.ip.protocol()), (L3::Ipv4, l2_len, 20, h.l4_proto), "{f:02x?}");
        }
        fast::Frame::V6(x) => {
            assert_eq!((h.l3, x.l3_offset, l3_len, x.ip.next_header()), (L3::Ipv6, l2_len, 40, h.l4_proto), "{f:02x?}");
        }
        fast::Frame::NotIp => assert_eq!(h.l3, L3::Other, "{f:02x?}"),
        fast::Frame::Other => {}
    }
}

/// Every fixture shape: tags, IPv4 with and without options, IPv6 with and without extension
/// headers, UDP and TCP, several payload lengths.
fn fixtures() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for vlans in 0..=2 {
        for ip in [Ip::V4, Ip::V4Opts(12), Ip::V6] {
            for l4 in [L4::Udp, L4::Tcp, L4::TcpOpts(8)] {
                for len in [0, 1, 18] {
                    out.push(frame(vlans, ip, l4, len));
                }
            }
        }
    }
    for exts in [&[(0u8, 8usize)][..], &[(60, 16), (43, 24)], &[(44, 8)]] {
        out.push(with_ext(&frame(0, Ip::V6, L4::Udp, 10), exts));
    }
    out
}

#[test]
fn well_formed_frames_and_every_truncation() {
    for f in fixtures() {
        agree(&f, true);
        for n in 0..f.len() {
            agree(&f[..n], false);
        }
    }
}

proptest! {
    #[test]
    fn frames_with_any_bytes_changed(
        pick in any::<prop::sample::Index>(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let all = fixtures();
        let mut f = pick.get(&all).clone();
        // Changes within the headers, where the parsers look.
        let span = f.len().min(80);
        for (at, b) in edits {
            f[at.index(span)] = b;
        }
        agree(&f, false);
    }
}
