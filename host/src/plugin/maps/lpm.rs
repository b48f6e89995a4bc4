//! Longest-prefix match (`lpm_trie`, BPF's `LPM_TRIE`): keys are a little-endian `u32` prefix
//! length followed by the address bytes (network order), e.g. 8 bytes for IPv4, 20 for IPv6.
//!
//! The prefixes live in the map's ordinary hash table, each under its exact key (the length and the
//! address with the bits past the length cleared), and a bit set per prefix length present. A
//! lookup tries the lengths present, longest first (at most the lookup key's length), one hash
//! probe each: at most `8 x data bytes + 1` probes (129 for IPv6), fewer the fewer distinct lengths
//! the table holds (a route table has a handful). Readers take no lock and see each prefix as the
//! hash table does; writers (route changes, not packets) serialise on a lock of their own, which
//! keeps the count per length exact.

use super::sync::{AtomicU64, Mutex};
use super::{MapError, Table};
use std::sync::atomic::Ordering::Relaxed;
use wasmdp_abi::map;

/// Longest address (IPv6).
const MAX_DATA: usize = map::MAX_LPM_DATA as usize;
/// Longest key: the length word and the address.
const MAX_KEY: usize = 4 + MAX_DATA;
/// Prefix lengths 0..=128.
const LENGTHS: usize = MAX_DATA * 8 + 1;

/// The lengths present.
#[derive(Debug)]
pub(super) struct Prefixes {
    /// Bit `l` set: a prefix of length `l` is present (or being inserted).
    present: [AtomicU64; LENGTHS.div_ceil(64)],
    /// Prefixes per length, changed only with the lock held.
    counts: Mutex<[u32; LENGTHS]>,
}

/// A key with its address cleared past `len` bits (`len` within the address).
fn masked(key: &[u8], len: u32) -> [u8; MAX_KEY] {
    let mut out = [0u8; MAX_KEY];
    out[..4].copy_from_slice(&len.to_le_bytes());
    let (whole, part) = ((len / 8) as usize, len % 8);
    out[4..4 + whole].copy_from_slice(&key[4..4 + whole]);
    if part > 0 {
        out[4 + whole] = key[4 + whole] & (0xFF << (8 - part));
    }
    out
}

impl Prefixes {
    pub(super) fn new() -> Prefixes {
        Prefixes { present: Default::default(), counts: Mutex::new([0; LENGTHS]) }
    }

    /// Bits in the address of `key`.
    fn bits(key: &[u8]) -> u32 {
        (key.len() as u32 - 4) * 8
    }

    /// The prefix length of `key`.
    fn len_of(key: &[u8]) -> u32 {
        u32::from_le_bytes(key[..4].try_into().expect("an lpm key has a length word"))
    }

    /// `key` as stored: its address cleared past its length; a length past the address is refused.
    pub(super) fn exact(key: &[u8]) -> Result<[u8; MAX_KEY], MapError> {
        let len = Self::len_of(key);
        if len > Self::bits(key) {
            return Err(MapError::BadPrefix);
        }
        Ok(masked(key, len))
    }

    /// The value of the longest prefix that holds `key`'s address in its first `key`'s length
    /// bits, into `out`; false when none does (or the length is past the address).
    pub(super) fn lookup(&self, t: &Table, key: &[u8], out: &mut [u8]) -> bool {
        let most = Self::len_of(key);
        if most > Self::bits(key) {
            return false;
        }
        if key.len() == 8 && t.one_word() {
            return self.lookup_v4(t, key, most, out);
        }
        let ks = key.len();
        let mut w = most as usize / 64;
        // Lengths above `most` in its word are not wanted.
        let mut below = u64::MAX >> (63 - most % 64);
        loop {
            let mut bits = self.present[w].load(Relaxed) & below;
            while bits != 0 {
                let len = (w * 64 + 63 - bits.leading_zeros() as usize) as u32;
                if t.lookup_exact(&masked(key, len)[..ks], out) {
                    return true;
                }
                bits &= !(1 << (len % 64));
            }
            if w == 0 {
                return false;
            }
            w -= 1;
            below = u64::MAX;
        }
    }

    /// [`lookup`](Prefixes::lookup) of an IPv4 key (8 bytes) in a table whose keys and values are
    /// one word: each length's key is the word itself, masked, with no bytes copied (copies of a
    /// length known only at run time are calls of memcpy).
    fn lookup_v4(&self, t: &Table, key: &[u8], most: u32, out: &mut [u8]) -> bool {
        let addr = u64::from(u32::from_le_bytes(key[4..8].try_into().expect("an IPv4 key")));
        let mut bits = self.present[0].load(Relaxed) & (u64::MAX >> (63 - most));
        while bits != 0 {
            let len = 63 - bits.leading_zeros();
            // The first `len` bits in network order are the low bytes' high bits in the word.
            let keep = u64::from((u32::MAX.checked_shl(32 - len).unwrap_or(0)).swap_bytes());
            if let Some(v) = t.lookup_word(u64::from(len) | (addr & keep) << 32) {
                super::put_word(v, out);
                return true;
            }
            bits &= !(1 << len);
        }
        false
    }

    /// Runs `write` (an insert or rewrite of the exact key `key`) and counts the prefix if it was
    /// absent before and present after.
    pub(super) fn insert<R>(
        &self,
        t: &Table,
        key: &[u8],
        write: impl FnOnce() -> Result<R, MapError>,
    ) -> Result<R, MapError> {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let len = Self::len_of(key) as usize;
        let new = !t.contains_exact(key);
        // The bit before the entry: a reader that finds the entry may also use its length.
        self.present[len / 64].fetch_or(1 << (len % 64), Relaxed);
        let done = write();
        if new && t.contains_exact(key) {
            counts[len] += 1;
        } else if counts[len] == 0 {
            self.present[len / 64].fetch_and(!(1 << (len % 64)), Relaxed);
        }
        done
    }

    /// Runs `delete` (of the exact key `key`) and forgets the length when its last prefix went.
    pub(super) fn delete(&self, key: &[u8], delete: impl FnOnce() -> bool) -> bool {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let len = Self::len_of(key) as usize;
        let gone = delete();
        if gone {
            counts[len] -= 1;
            if counts[len] == 0 {
                self.present[len / 64].fetch_and(!(1 << (len % 64)), Relaxed);
            }
        }
        gone
    }
}

#[cfg(test)]
mod tests {
    use crate::plugin::maps::{MapKind, MapSpec, Table};

    fn routes(data: u32) -> Table {
        Table::new(&MapSpec {
            name: "routes".into(),
            kind: MapKind::LpmTrie,
            key_size: 4 + data,
            value_size: 4,
            capacity: 64,
            ttl_ms: 0,
        })
    }

    fn v4(len: u32, addr: [u8; 4]) -> Vec<u8> {
        [&len.to_le_bytes()[..], &addr].concat()
    }

    fn hop(t: &Table, addr: [u8; 4]) -> Option<u32> {
        let mut out = [0u8; 4];
        t.lookup(&v4(32, addr), &mut out).then(|| u32::from_le_bytes(out))
    }

    #[test]
    fn the_longest_prefix_holding_the_address_wins() {
        let t = routes(4);
        t.update(&v4(0, [0; 4]), &1u32.to_le_bytes()).unwrap();
        t.update(&v4(8, [10, 0, 0, 0]), &2u32.to_le_bytes()).unwrap();
        t.update(&v4(24, [10, 1, 2, 0]), &3u32.to_le_bytes()).unwrap();
        t.update(&v4(32, [10, 1, 2, 3]), &4u32.to_le_bytes()).unwrap();
        // Bits past the length are ignored on update, as BPF does: 10.1.2.99/25 is 10.1.2.0/25.
        t.update(&v4(25, [10, 1, 2, 99]), &5u32.to_le_bytes()).unwrap();
        assert_eq!(hop(&t, [10, 1, 2, 3]), Some(4));
        assert_eq!(hop(&t, [10, 1, 2, 4]), Some(5));
        assert_eq!(hop(&t, [10, 1, 2, 200]), Some(3));
        assert_eq!(hop(&t, [10, 9, 9, 9]), Some(2));
        assert_eq!(hop(&t, [192, 0, 2, 1]), Some(1));
        // The lookup key's length bounds the match.
        let mut out = [0u8; 4];
        assert!(t.lookup(&v4(16, [10, 1, 2, 3]), &mut out));
        assert_eq!(u32::from_le_bytes(out), 2);
        assert!(!t.lookup(&v4(33, [10, 1, 2, 3]), &mut out), "a length past the address matches nothing");
        assert_eq!(t.update(&v4(33, [10, 1, 2, 3]), &[0; 4]), Err(crate::plugin::maps::MapError::BadPrefix));
        // Deleting the /24 leaves the /8 for its addresses; the /0 last.
        assert!(t.delete(&v4(24, [10, 1, 2, 77])), "the exact prefix, bits past it ignored");
        assert_eq!(hop(&t, [10, 1, 2, 200]), Some(2));
        assert!(t.delete(&v4(8, [10, 0, 0, 0])));
        assert!(!t.delete(&v4(8, [10, 0, 0, 0])));
        assert_eq!(hop(&t, [10, 1, 2, 200]), Some(1));
        assert!(t.delete(&v4(0, [0; 4])));
        assert_eq!(hop(&t, [10, 1, 2, 200]), None);
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn ipv6_prefixes_of_every_length_match_like_a_linear_scan() {
        // Random prefixes of random lengths against the reference: the longest stored prefix whose
        // first bits equal the address's.
        let t = routes(16);
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let base = [0x20u8, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let addr_near = |r: u64| {
            let mut a = base;
            a[6..14].copy_from_slice(&r.to_be_bytes());
            a
        };
        let mut stored: Vec<(u32, [u8; 16], u32)> = Vec::new();
        for v in 0..60u32 {
            let (len, a) = ((next() % 129) as u32, addr_near(next() & 0xFFFF_0000_0000_0000));
            let key = [&len.to_le_bytes()[..], &a].concat();
            t.update(&key, &v.to_le_bytes()).unwrap();
            let m = super::masked(&key, len);
            stored.retain(|(l, p, _)| !(*l == len && p[..] == m[4..]));
            stored.push((len, m[4..].try_into().unwrap(), v));
        }
        let holds = |len: u32, p: &[u8; 16], a: &[u8; 16]| {
            super::masked(&[&len.to_le_bytes()[..], a].concat(), len)[4..] == p[..]
        };
        for _ in 0..2000 {
            let a = addr_near(next() & 0xFFFF_0000_0000_0000 | next() >> 48);
            let want = stored.iter().filter(|(l, p, _)| holds(*l, p, &a)).max_by_key(|(l, ..)| *l).map(|s| s.2);
            let mut out = [0u8; 4];
            let got = t.lookup(&[&128u32.to_le_bytes()[..], &a].concat(), &mut out).then(|| u32::from_le_bytes(out));
            assert_eq!(got, want, "{a:x?}");
        }
    }

    /// Not a check: 1,000,000 lookups in a route table of 1000 prefixes over 4 lengths (/8, /16,
    /// /24, /32), for callgrind's count per lookup (BENCHMARKS.md: run under valgrind with
    /// `--toggle-collect='*Prefixes::lookup*'`).
    #[test]
    #[ignore]
    fn lookup_cost() {
        let t = Table::new(&MapSpec {
            name: "routes".into(),
            kind: MapKind::LpmTrie,
            key_size: 8,
            value_size: 4,
            capacity: 1024,
            ttl_ms: 0,
        });
        for i in 0..1000u32 {
            let len = [8, 16, 24, 32][i as usize % 4];
            t.update(&v4(len, [10, (i >> 8) as u8, i as u8, 1]), &i.to_le_bytes()).unwrap();
        }
        let (mut hits, mut out) = (0, [0u8; 4]);
        for i in 0..1_000_000u32 {
            let key = [32, 0, 0, 0, 10, (i >> 8) as u8 & 3, i as u8, (i >> 4) as u8];
            hits += usize::from(t.lookup(std::hint::black_box(&key), &mut out));
        }
        assert!(hits > 0);
    }
}
