//! `acl`: drops the packets that match a deny rule; the rest go through an engine.
//!
//! Params (all optional; a packet matching ANY configured rule is dropped):
//!
//! | key | meaning |
//! |---|---|
//! | `deny_udp_dst_port` | IPv4 UDP packets to this destination port (0..=65535; not on non-first fragments) |
//! | `deny_src_ip` | IPv4 packets from this source address (dotted quad, e.g. `10.0.0.1`) |
//! | `deny_proto` | IPv4 packets of this IP protocol (0..=255, e.g. 17 for UDP, 6 for TCP) |
//! | `engine` | engine for the packets that pass (default `io`) |
//!
//! Per packet, on heads with drops (ABI 1.1: each packet's first 64 bytes copied in, read only, and
//! a verdict byte a packet): Ethernet, up to two VLAN tags
//! (0x8100, 0x88a8, 0x9100), IPv4, UDP. Non-IPv4 packets and headers cut short never match.
//! Matching packets are dropped and counted in the counter `denied`; the engine runs after the call
//! on the packets that pass. No host call per packet or per run of passing packets. A single rule
//! is tested by a loop of its own, which reads only the fields that rule needs.
#![cfg_attr(not(test), no_std)]

use wasmdp_sdk::net::fast::bytes_at;
use wasmdp_sdk::{log, AreaSpec, Burst, Counter, Engine, Error, Params, Policy, Refusal};

/// Bytes of each packet the policy reads: Ethernet, two VLAN tags, an IPv4 header with up to 2
/// option words and the UDP ports.
const HEAD: u16 = 64;

/// The deny rules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rules {
    /// Deny UDP to this destination port.
    pub udp_dst_port: Option<u16>,
    /// Deny this IPv4 source address.
    pub src_ip: Option<[u8; 4]>,
    /// Deny this IP protocol.
    pub proto: Option<u8>,
}

impl Rules {
    /// Whether the frame starting with `head` matches a rule. This crate's [`fast`] path, then its
    /// [`parse`], of exactly the fields the rules read: in WebAssembly they measured cheaper than
    /// the SDK's `net::fast` path, which checks more than an ACL reads (BENCHMARKS.md).
    #[inline(always)]
    pub fn deny(&self, head: &[u8]) -> bool {
        fast(head).or_else(|| parse(head)).is_some_and(|ip| self.matches(ip))
    }

    #[inline(always)]
    fn matches(&self, ip: Ipv4Info) -> bool {
        self.proto == Some(ip.proto)
            || self.src_ip == Some(ip.src)
            || (self.udp_dst_port.is_some() && ip.proto == 17 && ip.udp_dst_port == self.udp_dst_port)
    }

    fn is_empty(&self) -> bool {
        *self == Rules::default()
    }

    /// The rules set, as bits of a rule set ([`Words::test_set`]).
    pub fn set(&self) -> u8 {
        let bit = |set: bool, bit: u8| if set { bit } else { 0 };
        bit(self.proto.is_some(), PROTO) | bit(self.src_ip.is_some(), SRC) | bit(self.udp_dst_port.is_some(), PORT)
    }
}

/// The rules as words for the per-packet test: each a value no packet's field takes when its rule
/// is not set. An untagged IPv4 packet without options is then tested with three compares of
/// words read at fixed offsets, without `Option` tags or the 4-byte address split into bytes (what
/// cranelift made of [`Rules::deny`]: more values than registers in the loop, spilled and reloaded
/// each packet); any other packet takes [`Rules::deny`]. The two agree (`words_deny_as_rules_do`).
#[derive(Debug, Clone, Copy)]
pub struct Words {
    proto: u32,
    src: u64,
    udp_dst_port: u32,
}

/// A UDP destination port no packet has: the packet is not UDP, or a non-first fragment.
const NO_PORT: u32 = u32::MAX - 1;

impl Words {
    /// `rules` as words (u32::MAX or u64::MAX for a rule not set; the port in wire order).
    pub fn new(rules: &Rules) -> Words {
        Words {
            proto: rules.proto.map_or(u32::MAX, u32::from),
            src: rules.src_ip.map_or(u64::MAX, |a| u64::from(u32::from_ne_bytes(a))),
            udp_dst_port: rules.udp_dst_port.map_or(u32::MAX, |p| u32::from(u16::from_ne_bytes(p.to_be_bytes()))),
        }
    }

    /// Whether `rules` (those these words were made from) deny the packet of `head`.
    pub fn deny(&self, head: &[u8], rules: &Rules) -> bool {
        self.test(head).unwrap_or_else(|| rules.deny(head))
    }

    /// Whether the rules deny the packet of `head` if it is an untagged IPv4 packet without
    /// options; None for any other packet, which [`Rules::deny`] tests.
    #[inline(always)]
    pub fn test(&self, head: &[u8]) -> Option<bool> {
        self.test_set::<{ ALL }>(head)
    }

    /// [`Words::test`] of the rules in `SET` alone (bits [`PROTO`], [`SRC`], [`PORT`]): the
    /// others, if set, are not tested.
    #[inline(always)]
    pub fn test_set<const SET: u8>(&self, head: &[u8]) -> Option<bool> {
        let h: &[u8; 38] = head.first_chunk()?;
        // Bytes 12..16 (EtherType, version and header length) and 20..24 (flags and fragment
        // offset, TTL, protocol) each one load, in memory order: a mask and a compare a test,
        // where a byte each cost cranelift an address computed per byte.
        let l2 = u32::from_le_bytes(bytes_at(h, 12));
        if l2 & 0xff_ffff != 0x45_0008 {
            return None;
        }
        let l3 = u32::from_le_bytes(bytes_at(h, 20));
        let proto = SET & PROTO != 0 && l3 >> 24 == self.proto;
        let src = SET & SRC != 0 && u64::from(u32::from_ne_bytes(bytes_at(h, 26))) == self.src;
        // UDP and a first fragment (offset 0: the low 5 bits of byte 20 and byte 21) in one
        // compare; the port as it lies (no byte swap in the loop).
        let port = SET & PORT != 0 && {
            let first_udp = l3 & 0xff00_ff1f == 17 << 24;
            let port = if first_udp { u32::from(u16::from_ne_bytes(bytes_at(h, 36))) } else { NO_PORT };
            port == self.udp_dst_port
        };
        Some(proto || src || port)
    }
}

/// The rule `deny_proto`, as a bit of a rule set ([`Words::test_set`]).
pub const PROTO: u8 = 1;
/// The rule `deny_src_ip`.
pub const SRC: u8 = 2;
/// The rule `deny_udp_dst_port`.
pub const PORT: u8 = 4;
/// Every rule.
pub const ALL: u8 = PROTO | SRC | PORT;

/// What the rules look at in an IPv4 packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Info {
    /// Protocol.
    pub proto: u8,
    /// Source address.
    pub src: [u8; 4],
    /// UDP destination port (UDP, first fragment, header present).
    pub udp_dst_port: Option<u16>,
}

/// What the rules look at in an untagged IPv4 packet without options (the frames that dominate
/// real traffic), read at fixed offsets of its first 38 bytes. None: any other frame, for
/// [`parse`] (which reads the same for these: `fast_is_parse`).
#[inline(always)]
pub fn fast(head: &[u8]) -> Option<Ipv4Info> {
    let h: &[u8; 38] = head.first_chunk()?;
    if h[12..15] != [0x08, 0x00, 0x45] {
        return None;
    }
    let proto = h[23];
    let first_fragment = u16::from_be_bytes([h[20], h[21]]) & 0x1fff == 0;
    let udp_dst_port = (proto == 17 && first_fragment).then(|| u16::from_be_bytes([h[36], h[37]]));
    Some(Ipv4Info { proto, src: *h[26..].first_chunk()?, udp_dst_port })
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// Parses Ethernet, up to two VLAN tags, IPv4 and the UDP ports from the start of a frame.
pub fn parse(head: &[u8]) -> Option<Ipv4Info> {
    let mut off = 12;
    let mut ethertype = be16(head, off)?;
    for _ in 0..2 {
        if !matches!(ethertype, 0x8100 | 0x88a8 | 0x9100) {
            break;
        }
        off += 4;
        ethertype = be16(head, off)?;
    }
    if ethertype != 0x0800 {
        return None;
    }
    let ip = head.get(off + 2..)?;
    let (version, ihl) = (ip.first()? >> 4, usize::from(ip.first()? & 0x0f) * 4);
    if version != 4 || ihl < 20 || ip.len() < 20 {
        return None;
    }
    let proto = ip[9];
    let src = [ip[12], ip[13], ip[14], ip[15]];
    let first_fragment = be16(ip, 6)? & 0x1fff == 0;
    let udp_dst_port = if proto == 17 && first_fragment { be16(ip, ihl + 2) } else { None };
    Some(Ipv4Info { proto, src, udp_dst_port })
}

/// Parses a dotted-quad IPv4 address.
pub fn parse_ipv4(s: &str) -> Option<[u8; 4]> {
    let mut out = [0u8; 4];
    let mut parts = s.split('.');
    for byte in &mut out {
        let part = parts.next()?;
        if part.is_empty() || part.len() > 3 || !part.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        *byte = part.parse().ok()?;
    }
    parts.next().is_none().then_some(out)
}

/// The policy.
pub struct Acl {
    rules: Rules,
    words: Words,
    /// The rules set, as bits ([`PROTO`], [`SRC`], [`PORT`]).
    set: u8,
    engine: Engine,
    denied: Counter,
}

impl Policy for Acl {
    const AREA: AreaSpec = AreaSpec::HeadsWithDrops(HEAD);

    fn init(_port: u32, params: &Params) -> Result<Self, Refusal> {
        let mut buf = [0u8; 32];
        let src_ip = match params.try_get("deny_src_ip", &mut buf) {
            Ok(None) => None,
            Ok(Some(s)) => {
                Some(parse_ipv4(s.trim()).ok_or_else(|| Refusal::param("deny_src_ip", s, "an IPv4 address"))?)
            }
            Err(_) => return Err(Refusal::param("deny_src_ip", "(too long)", "an IPv4 address")),
        };
        let rules =
            Rules { udp_dst_port: params.get_u16("deny_udp_dst_port")?, src_ip, proto: params.get_u8("deny_proto")? };
        if rules.is_empty() {
            log::warn("acl: no deny rule: every packet passes");
        }
        Ok(Acl {
            rules,
            words: Words::new(&rules),
            set: rules.set(),
            engine: params.get_engine("engine")?.unwrap_or(Engine::Io),
            denied: Counter::register("denied")?,
        })
    }

    fn on_burst(&mut self, burst: &mut Burst) -> Result<(), Error> {
        burst.pass_with(self.engine)?;
        // A loop for each single rule, testing only it (as an eBPF program compiled with its rule
        // would): the rules left out cost no load, compare and branch a packet. Two or three
        // rules take the loop of all three (an unset rule's word matches no packet), which
        // costs a pair a load and a compare a packet more than a loop of its own would, for 2 KiB
        // of code less a set.
        let denied = match self.set {
            0 => 0,
            PROTO => self.walk::<PROTO>(burst)?,
            SRC => self.walk::<SRC>(burst)?,
            PORT => self.walk::<PORT>(burst)?,
            _ => self.walk::<ALL>(burst)?,
        };
        self.denied.add(denied);
        Ok(())
    }
}

impl Acl {
    /// Drops the packets of `burst` that the rules of `SET` deny; how many.
    #[inline(always)]
    fn walk<const SET: u8>(&self, burst: &mut Burst) -> Result<u64, Error> {
        // The words as a copy: read through `&self` they were a load a packet (LLVM cannot move
        // them past the verdict stores), and with eight packets a loop turn cranelift keeps the
        // copy in registers (with four a turn it kept it in stack slots, a move a packet). The loop
        // makes no call (one, even never taken, made every value live across it a stack slot).
        // Packets the words cannot test are left to `others`, after it.
        let (mut others, mut denied) = (false, 0u64);
        let words = self.words;
        // Eight packets a loop turn (`for_each`; one epoch check per eight).
        burst.heads::<{ HEAD as usize }>()?.verdicts()?.for_each(|(bytes, v)| match words.test_set::<SET>(bytes) {
            Some(true) => {
                v.drop();
                denied += 1;
            }
            Some(false) => {}
            None => others = true,
        });
        if others {
            denied += self.others(burst)?;
        }
        Ok(denied)
    }

    /// Drops the packets of `burst` that the words left untested and the rules deny; how many.
    #[cold]
    #[inline(never)]
    fn others(&self, burst: &mut Burst) -> Result<u64, Error> {
        let mut denied = 0;
        for (bytes, v) in burst.heads::<{ HEAD as usize }>()?.verdicts()? {
            if self.words.test(bytes).is_none() && self.rules.deny(bytes) {
                v.drop();
                denied += 1;
            }
        }
        Ok(denied)
    }
}

wasmdp_sdk::export_policy!(Acl);

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;
    use wasmdp_sdk::abi::engine;
    use wasmdp_sdk::mock;

    /// An Ethernet frame with `tags` VLAN tags, IPv4 from `src`, protocol `proto`, L4 ports 1000 -> `dport`.
    fn frame(tags: usize, src: [u8; 4], proto: u8, dport: u16) -> Vec<u8> {
        let mut f = Vec::from([0x02u8, 0, 0, 0, 1, 0, 0x02, 0, 0, 0, 0, 0]);
        for t in 0..tags {
            f.extend_from_slice(if t == 0 { &[0x88, 0xa8] } else { &[0x81, 0x00] });
            f.extend_from_slice(&[0x00, 0x64]);
        }
        f.extend_from_slice(&[0x08, 0x00]);
        f.extend_from_slice(&[0x45, 0, 0, 46, 0, 0, 0, 0, 64, proto, 0, 0]);
        f.extend_from_slice(&src);
        f.extend_from_slice(&[10, 0, 0, 2]);
        f.extend_from_slice(&1000u16.to_be_bytes());
        f.extend_from_slice(&dport.to_be_bytes());
        f.resize(f.len().max(60), 0);
        f
    }

    /// A xorshift generator of bytes from `seed`: the same frames on every run.
    #[test]
    fn fast_is_parse() {
        // Frames with the fast path's prefix and every other byte at random (some with another
        // prefix): wherever the fast path reads a packet, it reads what the general parse does.
        let mut word = mock::xorshift(0x9E37_79B9_7F4A_7C15u64);
        let mut byte = || word() as u8;
        let mut fast_read = 0;
        for i in 0..20_000 {
            let mut f: Vec<u8> = (0..36 + i % 30).map(|_| byte()).collect();
            if i % 7 != 0 {
                f[12..15].copy_from_slice(&[0x08, 0x00, 0x45]);
            }
            f[23] = [17, 6, f[23]][i % 3];
            if i % 2 == 0 {
                f[20] &= 0xe0;
                f[21] = 0;
            }
            if let Some(info) = fast(&f) {
                assert_eq!(Some(info), parse(&f), "frame {f:02x?}");
                fast_read += 1;
            }
        }
        assert!(fast_read > 15_000, "{fast_read} read by the fast path");
    }

    #[test]
    fn words_deny_as_rules_do() {
        // Random frames, most with the fast prefix, UDP or TCP, first fragments or not, against
        // rule sets that match them by each field or by none: the same verdict both ways.
        let mut word = mock::xorshift(0x2545_F491_4F6C_DD1Du64);
        let mut byte = || word() as u8;
        let (mut denied, mut passed) = (0, 0);
        for i in 0..20_000 {
            let mut f: Vec<u8> = (0..30 + i % 40).map(|_| byte()).collect();
            if i % 5 != 0 && f.len() >= 15 {
                f[12..15].copy_from_slice(&[0x08, 0x00, 0x45]);
            }
            if f.len() > 23 {
                f[23] = [17, 6, f[23]][i % 3];
            }
            if i % 2 == 0 && f.len() > 21 {
                f[20] &= 0xe0;
                f[21] = 0;
            }
            let field = |at: usize, n: usize| f.get(at..at + n).map(|b| b.to_vec());
            let src = field(26, 4).filter(|_| i % 4 == 1).map(|b| [b[0], b[1], b[2], b[3]]);
            let port = field(36, 2).filter(|_| i % 4 == 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
            let proto = f.get(23).copied().filter(|_| i % 4 == 3);
            let mut rules = Rules { udp_dst_port: port, src_ip: src, proto };
            if i % 11 == 0 {
                rules = Rules { udp_dst_port: Some(9), src_ip: Some([10, 0, 0, 7]), proto: Some(47) };
            }
            let want = rules.deny(&f);
            assert_eq!(Words::new(&rules).deny(&f, &rules), want, "rules {rules:?}, frame {f:02x?}");
            if want {
                denied += 1;
            } else {
                passed += 1;
            }
        }
        assert!(denied > 5_000 && passed > 5_000, "denied {denied}, passed {passed}");
    }

    #[test]
    fn each_rule_set_drops_what_its_rules_deny() {
        // Bursts of random frames (most untagged IPv4, some tagged, cut short or not IPv4) through
        // `on_burst` under each set of rules, whose loops test only their rules: every packet
        // dropped exactly when the rules deny it, and `denied` counting them.
        let mut word = mock::xorshift(0x9E6C_63D0_676A_9A99u64);
        let mut frames: Vec<Vec<u8>> = Vec::new();
        for i in 0..256u32 {
            let r = word();
            let src = [10, 0, 0, (r % 3) as u8];
            let proto = [17, 6, 47][(r >> 8) as usize % 3];
            let mut f = frame((r >> 16) as usize % 4 / 3, src, proto, [9, 53][(r >> 24) as usize % 2]);
            match i % 16 {
                0 => f.truncate(20 + (r >> 32) as usize % 20),
                1 => f[12..14].copy_from_slice(&[0x86, 0xdd]),
                2 => f[20] = 0x20,
                _ => {}
            }
            frames.push(f);
        }
        let sets: [&[(&str, &str)]; 5] = [
            &[("deny_proto", "47")],
            &[("deny_src_ip", "10.0.0.1")],
            &[("deny_udp_dst_port", "9")],
            &[("deny_udp_dst_port", "53"), ("deny_proto", "6")],
            &[("deny_udp_dst_port", "9"), ("deny_src_ip", "10.0.0.2"), ("deny_proto", "47")],
        ];
        for set in sets {
            mock::reset();
            for (k, v) in set {
                mock::set_param(k, v);
            }
            mock::set_area(Acl::AREA);
            let mut acl = Acl::init(0, &Params::host()).unwrap();
            let mut denied = 0;
            for burst in frames.chunks(32) {
                let refs: Vec<&[u8]> = burst.iter().map(Vec::as_slice).collect();
                mock::begin_burst(&refs);
                acl.on_burst(&mut Burst::current().unwrap()).unwrap();
                for (p, f) in mock::end_burst().iter().zip(burst) {
                    assert_eq!(p.dropped, acl.rules.deny(f), "rules {set:?}, frame {f:02x?}");
                    denied += i64::from(p.dropped);
                }
            }
            assert!(denied > 20 && denied < 236, "rules {set:?}: {denied} of 256 denied");
            assert_eq!(mock::counter("denied"), Some(denied), "rules {set:?}");
        }
    }

    #[test]
    fn parses_headers() {
        let f = frame(2, [10, 0, 0, 1], 17, 53);
        assert_eq!(parse(&f), Some(Ipv4Info { proto: 17, src: [10, 0, 0, 1], udp_dst_port: Some(53) }));
        assert_eq!(parse(&frame(0, [1, 2, 3, 4], 6, 80)).unwrap().udp_dst_port, None);
        // Three tags: the third is not skipped, so no IPv4.
        let mut three = frame(2, [1, 2, 3, 4], 17, 53);
        three.splice(12..12, [0x81, 0x00, 0x00, 0x05]);
        assert_eq!(parse(&three), None);
        // Cut short, not IPv4, a non-first fragment.
        assert_eq!(parse(&f[..30]), None);
        let mut arp = frame(0, [1, 2, 3, 4], 17, 53);
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(parse(&arp), None);
        let mut frag = frame(0, [1, 2, 3, 4], 17, 53);
        frag[20] = 0x00;
        frag[21] = 0x10;
        assert_eq!(parse(&frag).unwrap().udp_dst_port, None);
        assert_eq!(parse_ipv4("10.0.0.255"), Some([10, 0, 0, 255]));
        for bad in ["10.0.0", "10.0.0.1.2", "256.0.0.1", "1..2.3", "+1.2.3.4", "a.b.c.d", ""] {
            assert_eq!(parse_ipv4(bad), None, "{bad}");
        }
    }

    #[test]
    fn drops_matches_and_runs_engine_on_the_rest() {
        mock::reset();
        mock::set_param("deny_udp_dst_port", "53");
        mock::set_param("deny_src_ip", "192.168.1.1");
        mock::set_param("deny_proto", "47");
        mock::set_param("engine", "macswap");
        mock::set_area(Acl::AREA);
        let mut acl = Acl::init(0, &Params::host()).unwrap();
        let frames = [
            frame(0, [10, 0, 0, 1], 17, 80),   // pass
            frame(1, [10, 0, 0, 1], 17, 53),   // UDP 53 behind a tag
            frame(0, [10, 0, 0, 1], 6, 53),    // TCP 53: pass
            frame(2, [192, 168, 1, 1], 6, 22), // source
            frame(0, [10, 0, 0, 1], 47, 0),    // GRE
            frame(0, [10, 0, 0, 9], 17, 54),   // pass
            Vec::from(&[0u8; 20][..]),         // runt: pass
        ];
        let refs: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
        mock::begin_burst(&refs);
        acl.on_burst(&mut Burst::current().unwrap()).unwrap();
        assert!(mock::with(|h| h.calls.is_empty()), "no host call: the verdicts are in the area");
        let out = mock::end_burst();
        let dropped: Vec<bool> = out.iter().map(|p| p.dropped).collect();
        assert_eq!(dropped, [false, true, false, true, true, false, false]);
        for (p, f) in out.iter().zip(&frames) {
            // The passing ones went through macswap after the call; the dropped ones through nothing.
            let want: &[u32] = if p.dropped { &[] } else { &[engine::MACSWAP] };
            assert_eq!(p.engines, want);
            if !p.dropped && f.len() >= 12 {
                assert_eq!((&p.data[..6], &p.data[6..12]), (&f[6..12], &f[..6]), "swapped");
            }
        }
        assert_eq!(mock::counter("denied"), Some(3));
    }

    #[test]
    fn no_rules_and_refusals() {
        mock::reset();
        mock::set_area(Acl::AREA);
        let mut acl = Acl::init(0, &Params::host()).unwrap();
        assert_eq!(mock::logs()[0].1, "acl: no deny rule: every packet passes");
        let f = frame(0, [10, 0, 0, 1], 17, 53);
        mock::begin_burst(&[&f, &f]);
        acl.on_burst(&mut Burst::current().unwrap()).unwrap();
        let out = mock::end_burst();
        assert!(out.iter().all(|p| !p.dropped && p.engines == [engine::IO] && p.data == f), "io, unchanged");
        assert_eq!(mock::counter("denied"), Some(0));
        mock::set_param("deny_src_ip", "10.0.0");
        assert_eq!(
            Acl::init(0, &Params::host()).err().unwrap().reason(),
            "param `deny_src_ip`: `10.0.0` is not an IPv4 address"
        );
        mock::set_param("deny_src_ip", "10.0.0.1");
        mock::set_param("deny_proto", "300");
        assert!(Acl::init(0, &Params::host()).is_err());
    }
}
