//! The burst area (1.1): a region of the plugin's memory, registered once with `burst_area`, that the
//! host fills before each `wasmdp_on_burst` and reads after it, so a plugin works on a whole burst
//! with plain loads and stores instead of one host call per packet.
//!
//! Layout at the registered address (all fields little-endian): the [header](self::hdr)
//! ([`HEADER`] bytes), then `max_pkts` [descriptors](self::desc) of
//! [`DESC`] bytes, then `max_pkts` windows of `window` bytes. Descriptor and window `i`
//! belong to packet `i` of the burst; packets past `max_pkts` get neither (they pass, with the
//! header's engine). Window `i` holds the first `min(len, window)` bytes of packet `i`. An area
//! registered with [`HEADS`] has no descriptors: the header, the packets' lengths,
//! then the windows.
//!
//! "in" fields are written by the host before the call; "out" fields are reset by the host before
//! the call and read after it. The host checks everything it reads: a bad value fails the call (the
//! port's failure policy applies), and nothing the plugin writes can make the host touch memory
//! outside the burst's buffers and the area.

/// Bytes of the header.
pub const HEADER: usize = 64;
/// Bytes of one descriptor.
pub const DESC: usize = 32;

const _: () = assert!(crate::layout::check(hdr::FIELDS, HEADER) && crate::layout::check(desc::FIELDS, DESC));
const _: () = assert!(crate::layout::check(direct_head::FIELDS, DIRECT_HEAD));
/// Largest window (bytes per packet).
pub const MAX_WINDOW: usize = 1024;
/// The bits of `burst_area`'s `window` argument that give the window's bytes; the bits above
/// are flags ([`FLOW_HASH`], [`HEADS`], [`DIRECT`], [`DROPS`]), any other is refused (`BAD_RANGE`).
pub const WINDOW_BYTES: u32 = 0xFFFF;
/// `burst_area` flag: the host fills each descriptor's [`desc::HASH`] with
/// [`hash::flow_hash`](crate::hash::flow_hash) of the whole packet, computed natively, so a
/// plugin keying on flows need not hash in WebAssembly (as a NIC's RSS hash spares a DPDK
/// application).
pub const FLOW_HASH: u32 = 1 << 16;

/// `burst_area` flag: **heads**, windows without descriptors. The area is the header, then
/// `max_pkts` packet lengths (`u32` in, [`LEN_BYTES`] each), then `max_pkts` windows of `window`
/// bytes back to back ([`heads_size`]); window `i` holds packet `i`'s first `min(len, window)`
/// bytes, zeros after them. After the call, when the header's `CHANGED` is nonzero, every
/// window's first `min(len, window)` bytes are copied into its packet; there are no per-packet
/// verdicts or length changes. For policies that rewrite headers in place (MAC, VLAN, DSCP): no
/// descriptor is written or read per packet. Needs a window of at least 1 byte; not with
/// [`FLOW_HASH`] (there is no descriptor to hold it).
pub const HEADS: u32 = 1 << 17;

/// `burst_area` flag: **direct packet access**, descriptors without windows whose
/// [`desc::DATA`] is where the packet's bytes are in the plugin's own memory: read and written
/// in place, nothing copied in or out. At registration (in init) the host grows the memory by
/// the stream's packet region (its buffers' data pages; counted in `memory_kib`) and maps it
/// there; the region can be touched only while `wasmdp_on_burst` or `wasmdp_tick` runs (it is
/// inaccessible, and traps, during init). A write anywhere in the region changes packet bytes
/// only: lengths, offsets and the packets' metadata are the host's, outside it; the length
/// changes of `HEAD` and `TAIL` are checked against the host's own view of the buffer. Needs a
/// window of 0 bytes. With [`HEADS`] (and a window of 0 bytes, not with [`FLOW_HASH`]):
/// **direct heads**, the header then `max_pkts` entries of [`DIRECT_HEAD`] bytes, each a
/// packet's length, the bytes from its start to its buffer's end, and where it is
/// ([`direct_head`]); no descriptors, no verdicts, nothing read back per packet
/// ([`direct_heads_size`]). See docs/ABI.md, "Direct packet access", for what else the region
/// shows.
pub const DIRECT: u32 = 1 << 18;

/// `burst_area` flag, with [`HEADS`] (copied or direct): **drops**, a verdict byte per packet after
/// the heads (or the direct-heads entries): `max_pkts` bytes ([`Shape::size`]; they start at
/// [`Shape::verdicts_at`]). The host sets each of the burst's to [`verdict::PASS`] before the call
/// and reads them after it: [`verdict::DROP`] drops the packet (counted as a `policy` drop), any
/// other value fails the call (`BAD_RANGE`). For a filter that reads headers in place and drops
/// some packets: one byte a packet in and out, where descriptors cost 32 and a check each.
pub const DROPS: u32 = 1 << 19;

/// Bytes of one entry of a direct-heads area ([`DIRECT`] with [`HEADS`]).
pub const DIRECT_HEAD: usize = 8;

/// Fields of a direct-heads entry (all in).
pub mod direct_head {
    crate::layout! { FIELDS;
        /// The packet's length.
        LEN: u16 in @ 0;
        /// Bytes from its first byte to its buffer's end (its length plus its tailroom): how many
        /// may be read or written from `DATA` (past the length, they are not the packet's).
        END: u16 in @ 2;
        /// Offset in the plugin's memory of its first byte.
        DATA: u32 in @ 4;
    }
}

/// Bytes of a direct-heads area for `max_pkts` packets.
pub const fn direct_heads_size(max_pkts: usize) -> usize {
    HEADER + max_pkts * DIRECT_HEAD
}

/// A registration's shape: `burst_area`'s `window` argument read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Bytes per window.
    pub window: usize,
    /// [`FLOW_HASH`] set.
    pub flow_hash: bool,
    /// [`HEADS`] set.
    pub heads: bool,
    /// [`DIRECT`] set.
    pub direct: bool,
    /// [`DROPS`] set.
    pub drops: bool,
}

impl Shape {
    /// Bytes of the area for `max_pkts` packets.
    pub const fn size(&self, max_pkts: usize) -> usize {
        self.verdicts_at(max_pkts) + if self.drops { max_pkts } else { 0 }
    }

    /// Where the verdict bytes of [`DROPS`] start, from the area's start: past everything else.
    pub const fn verdicts_at(&self, max_pkts: usize) -> usize {
        if self.heads && self.direct {
            direct_heads_size(max_pkts)
        } else if self.heads {
            heads_size(max_pkts, self.window)
        } else {
            size(max_pkts, self.window)
        }
    }
}

/// `burst_area`'s `window` argument read. None when the bytes pass [`MAX_WINDOW`], a flag
/// other than [`FLOW_HASH`], [`HEADS`], [`DIRECT`] and [`DROPS`] is set, `HEADS` is set with
/// `FLOW_HASH` or (without `DIRECT`) with a window of 0 bytes, `DIRECT` with a window, or `DROPS`
/// without `HEADS`.
pub const fn parse_window(arg: u32) -> Option<Shape> {
    let (window, flags) = ((arg & WINDOW_BYTES) as usize, arg & !WINDOW_BYTES);
    let (flow_hash, heads, direct) = (flags & FLOW_HASH != 0, flags & HEADS != 0, flags & DIRECT != 0);
    let drops = flags & DROPS != 0;
    if window > MAX_WINDOW
        || flags & !(FLOW_HASH | HEADS | DIRECT | DROPS) != 0
        || (heads && (flow_hash || (window == 0 && !direct)))
        || (direct && window != 0)
        || (drops && !heads)
    {
        return None;
    }
    Some(Shape { window, flow_hash, heads, direct, drops })
}

/// Header field offsets.
pub mod hdr {
    crate::layout! { FIELDS;
        /// Packets in the burst.
        LEN: u32 in @ 0;
        /// The RX port (index in `ports:`).
        PORT: u16 in @ 4;
        /// The RX queue.
        QUEUE: u16 in @ 6;
        /// The stream's TX port.
        TX_PORT: u16 in @ 8;
        /// Bytes per window.
        WINDOW: u16 in @ 10;
        /// Engine id run natively on every packet whose verdict is `PASS` (-1: none).
        ENGINE: i32 out @ 12;
        /// Nonzero when the plugin wrote any descriptor's out fields (heads: any window); 0 lets
        /// the host skip reading them (all `PASS`, nothing to write back).
        CHANGED: u32 out @ 16;
        /// TX offload flags (`flags::ALLOWED`) for every packet that is transmitted.
        OFFLOADS: u64 out @ 24;
        /// Inner VLAN TCI for `TX_VLAN`/`TX_QINQ`.
        VLAN_TCI: u16 out @ 32;
        /// Outer VLAN TCI for `TX_QINQ`.
        VLAN_OUTER: u16 out @ 34;
        /// The host's monotonic clock (nanoseconds, as `now_ns`) when the call began, to within the
        /// host's epoch tick (250 us): read once per burst, not per call.
        NOW_NS: u64 in @ 40;
    }
}

/// Descriptor field offsets.
pub mod desc {
    crate::layout! { FIELDS;
        /// Packet length.
        LEN: u32 in @ 0;
        /// Bytes of the window that hold packet bytes (`min(len, window)`).
        WIN: u16 in @ 4 windows;
        /// Input port.
        PORT: u16 in @ 6 windows;
        /// With `DIRECT` (in place of `WIN` and `PORT`): offset in the plugin's memory of the
        /// packet's first byte. Its `HEADROOM` bytes before it and `LEN + TAILROOM` bytes from it
        /// are the buffer's: bytes written in front of it become the packet's with a positive
        /// `HEAD`, bytes written after its end with a positive `TAIL`.
        DATA: u32 in @ 4 direct;
        /// With `FLOW_HASH` registered, the host's `hash::flow_hash` of the packet; else the RX
        /// port's hash (0: none).
        HASH: u32 in @ 8;
        /// RX flags (`rx::VLAN`, `rx::TUNNEL`).
        RX_FLAGS: u32 in @ 12;
        /// The verdict (`verdict::`).
        VERDICT: u8 out @ 16;
        /// The verdict's argument: the port for `SEND`, the engine id for `ENGINE`.
        ARG: u16 out @ 18;
        /// Length change at the front: `n > 0` prepends `n` bytes, `n < 0` strips `-n`.
        HEAD: i16 out @ 20;
        /// Length change at the tail: `n > 0` appends `n` bytes, `n < 0` trims `-n`.
        TAIL: i16 out @ 22;
        /// Window bytes `0..dirty` to copy into the packet, after the `HEAD` and `TAIL` changes:
        /// window byte 0 is then the new first byte. At most the window (0 with `DIRECT`).
        DIRTY: u16 out @ 24;
        /// Bytes that can be prepended (`HEAD` at most this).
        HEADROOM: u16 in @ 26;
        /// Bytes that can be appended (`TAIL` at most this).
        TAILROOM: u16 in @ 28;
        /// With `DIRECT`: input port.
        DIRECT_PORT: u16 in @ 30 direct;
    }
}

/// Verdicts.
pub mod verdict {
    /// Transmit on the stream's TX port (after the header's engine, if any).
    pub const PASS: u8 = 0;
    /// Drop (counted as a `policy` drop).
    pub const DROP: u8 = 1;
    /// Transmit on the port in `ARG`.
    pub const SEND: u8 = 2;
    /// Run the engine in `ARG` on it, then transmit on the stream's TX port.
    pub const ENGINE: u8 = 3;
}

/// RX flags in a descriptor.
pub mod rx {
    /// The packet carried a VLAN tag on the wire.
    pub const VLAN: u32 = 1 << 8;
    /// A tunnel engine decapsulated the packet.
    pub const TUNNEL: u32 = 1 << 9;
}

/// Bytes of an area for `max_pkts` packets and `window` bytes each.
pub const fn size(max_pkts: usize, window: usize) -> usize {
    HEADER + max_pkts * (DESC + window)
}

/// Bytes of one packet length in a [`HEADS`] area.
pub const LEN_BYTES: usize = 4;

/// Bytes of a [`HEADS`] area for `max_pkts` packets and `window` bytes each.
pub const fn heads_size(max_pkts: usize, window: usize) -> usize {
    HEADER + max_pkts * (LEN_BYTES + window)
}
