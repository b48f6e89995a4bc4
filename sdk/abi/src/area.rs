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
/// Largest window (bytes per packet).
pub const MAX_WINDOW: usize = 1024;
/// The bits of `burst_area`'s `window` argument that give the window's bytes; the bits above
/// are flags ([`FLOW_HASH`], [`HEADS`]), any other is refused (`BAD_RANGE`).
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

/// Bytes of one entry of a direct-heads area ([`DIRECT`] with [`HEADS`]).
pub const DIRECT_HEAD: usize = 8;

/// Fields of a direct-heads entry (all in).
pub mod direct_head {
    /// `u16`: the packet's length.
    pub const LEN: usize = 0;
    /// `u16`: bytes from its first byte to its buffer's end (its length plus its tailroom): how
    /// many may be read or written from `DATA` (past the length, they are not the packet's).
    pub const END: usize = 2;
    /// `u32`: offset in the plugin's memory of its first byte.
    pub const DATA: usize = 4;
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
}

impl Shape {
    /// Bytes of the area for `max_pkts` packets.
    pub const fn size(&self, max_pkts: usize) -> usize {
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
/// other than [`FLOW_HASH`], [`HEADS`] and [`DIRECT`] is set, `HEADS` is set with `FLOW_HASH`
/// or (without `DIRECT`) with a window of 0 bytes, or `DIRECT` with a window.
pub const fn parse_window(arg: u32) -> Option<Shape> {
    let (window, flags) = ((arg & WINDOW_BYTES) as usize, arg & !WINDOW_BYTES);
    let (flow_hash, heads, direct) = (flags & FLOW_HASH != 0, flags & HEADS != 0, flags & DIRECT != 0);
    if window > MAX_WINDOW
        || flags & !(FLOW_HASH | HEADS | DIRECT) != 0
        || (heads && (flow_hash || (window == 0 && !direct)))
        || (direct && window != 0)
    {
        return None;
    }
    Some(Shape { window, flow_hash, heads, direct })
}

/// Header field offsets.
pub mod hdr {
    /// `u32` in: packets in the burst.
    pub const LEN: usize = 0;
    /// `u16` in: the RX port (index in `ports:`).
    pub const PORT: usize = 4;
    /// `u16` in: the RX queue.
    pub const QUEUE: usize = 6;
    /// `u16` in: the stream's TX port.
    pub const TX_PORT: usize = 8;
    /// `u16` in: bytes per window.
    pub const WINDOW: usize = 10;
    /// `i32` out: engine id run natively on every packet whose verdict is `PASS` (-1: none).
    pub const ENGINE: usize = 12;
    /// `u32` out: nonzero when the plugin wrote any descriptor's out fields; 0 lets the host skip
    /// reading them (all `PASS`, nothing to write back).
    pub const CHANGED: usize = 16;
    /// `u64` out: TX offload flags (`flags::ALLOWED`) for every packet that is transmitted.
    pub const OFFLOADS: usize = 24;
    /// `u16` out: inner VLAN TCI for `TX_VLAN`/`TX_QINQ`.
    pub const VLAN_TCI: usize = 32;
    /// `u16` out: outer VLAN TCI for `TX_QINQ`.
    pub const VLAN_OUTER: usize = 34;
    /// `u64` in: the host's monotonic clock (nanoseconds, as `now_ns`) when the call began, to
    /// within the host's epoch tick (250 us): read once per burst, not per call.
    pub const NOW_NS: usize = 40;
}

/// Descriptor field offsets.
pub mod desc {
    /// `u32` in: packet length.
    pub const LEN: usize = 0;
    /// `u16` in: bytes of the window that hold packet bytes (`min(len, window)`).
    pub const WIN: usize = 4;
    /// `u16` in: input port.
    pub const PORT: usize = 6;
    /// `u32` in: with [`FLOW_HASH`](super::FLOW_HASH) registered, the host's
    /// `hash::flow_hash` of the packet; else the RX port's hash (0: none).
    pub const HASH: usize = 8;
    /// `u32` in: RX flags (`rx::VLAN`, `rx::TUNNEL`).
    pub const RX_FLAGS: usize = 12;
    /// `u8` out: the [verdict](super::verdict).
    pub const VERDICT: usize = 16;
    /// `u16` out: the verdict's argument: the port for `SEND`, the engine id for `ENGINE`.
    pub const ARG: usize = 18;
    /// `i16` out: length change at the front: `n > 0` prepends `n` bytes, `n < 0` strips `-n`.
    pub const HEAD: usize = 20;
    /// `i16` out: length change at the tail: `n > 0` appends `n` bytes, `n < 0` trims `-n`.
    pub const TAIL: usize = 22;
    /// `u16` out: window bytes `0..dirty` to copy into the packet, after the `HEAD` and `TAIL`
    /// changes: window byte 0 is then the new first byte.
    pub const DIRTY: usize = 24;
    /// `u16` in: bytes that can be prepended (`HEAD` at most this).
    pub const HEADROOM: usize = 26;
    /// `u16` in: bytes that can be appended (`TAIL` at most this).
    pub const TAILROOM: usize = 28;
    /// `u32` in, with [`DIRECT`](super::DIRECT) (in place of `WIN` and `PORT`): offset in the
    /// plugin's memory of the packet's first byte. Its `HEADROOM` bytes before it and
    /// `LEN + TAILROOM` bytes from it are the buffer's: bytes written in front of it become the
    /// packet's with a positive `HEAD`, bytes written after its end with a positive `TAIL`.
    pub const DATA: usize = 4;
    /// `u16` in, with [`DIRECT`](super::DIRECT): input port.
    pub const DIRECT_PORT: usize = 30;
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
