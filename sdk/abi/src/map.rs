//! Maps (1.1): fixed-size keys and values, declared at init with `map_declare`.

/// A hash map shared by every instance of the port's policy (all its queues), kept across a
/// reload that declares it again identically.
pub const HASH: u32 = 0;
/// An array (keys: `u32` index, little-endian, 4 bytes), shared likewise.
pub const ARRAY: u32 = 1;
/// A hash map of the instance's own (per queue, like BPF's per-CPU maps; the stats and dumps
/// show the values summed over instances).
pub const PERCPU_HASH: u32 = 2;
/// An array of the instance's own.
pub const PERCPU_ARRAY: u32 = 3;
/// A hash map shared like [`HASH`] that, when full, evicts its least recently used entry (of a
/// bounded sample) to make room for a new key (BPF's `LRU_HASH`).
pub const LRU_HASH: u32 = 4;
/// Longest-prefix match (BPF's `LPM_TRIE`), shared like [`HASH`]: keys are a little-endian
/// `u32` prefix length then the address bytes in network order (IPv4: 8 bytes, IPv6: 20). An
/// update stores the prefix (address bits past its length ignored; a length past the address
/// is refused); a lookup finds the longest stored prefix holding the key's address within the
/// key's length; a delete removes the exact prefix.
pub const LPM_TRIE: u32 = 5;
/// Most slots one `map_next_key` call reads (its bound: the call answers 0, "none in this
/// window", after that many empty slots).
pub const NEXT_KEY_SLOTS: u32 = 256;
/// Most address bytes of an `LPM_TRIE` key (IPv6).
pub const MAX_LPM_DATA: u32 = 16;
/// Longest expiry (`map_declare_ttl`): a year, in milliseconds.
pub const MAX_TTL_MS: u64 = 365 * 86_400_000;
/// Longest key.
pub const MAX_KEY: u32 = 64;
/// Longest value.
pub const MAX_VALUE: u32 = 1024;
/// Most entries.
pub const MAX_CAPACITY: u32 = 1 << 24;
/// Longest name.
pub const MAX_NAME: u32 = 64;

/// The size in bytes of a field type of a typed layout (map layouts, events): `u8 u16 u32 u64`,
/// `be16 be32 be64`, `ipv4`, `ipv6`, `mac`, `hexN` (1..=1024); None for any other name.
pub fn field_size(ty: &str) -> Option<usize> {
    Some(match ty {
        "u8" => 1,
        "u16" | "be16" => 2,
        "u32" | "be32" | "ipv4" => 4,
        "u64" | "be64" => 8,
        "ipv6" => 16,
        "mac" => 6,
        hex => match hex.strip_prefix("hex")?.parse::<usize>().ok()? {
            n @ 1..=1024 => n,
            _ => return None,
        },
    })
}
