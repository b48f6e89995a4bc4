//! The context (1.1), as `context` copies it: a [header](self::HEADER) then one
//! [entry](self::PORT) per port. Little-endian.

/// Bytes before the port entries.
pub const HEADER: usize = 16;
/// Bytes of one port entry.
pub const PORT: usize = 16;
/// `u16`: the RX port.
pub const RX_PORT: usize = 0;
/// `u16`: the RX queue (the instance).
pub const QUEUE: usize = 2;
/// `u16`: the stream's TX port.
pub const TX_PORT: usize = 4;
/// `u16`: number of ports.
pub const PORTS: usize = 6;
/// `u16`: the worker core (0xFFFF: not pinned).
pub const LCORE: usize = 8;
/// In a port entry: its MAC, 6 bytes.
pub const MAC: usize = 0;
/// In a port entry: its peer MAC, 6 bytes.
pub const PEER_MAC: usize = 6;
/// In a port entry: `u16` flags ([`SENDABLE`]).
pub const FLAGS: usize = 12;
/// Port flag: this stream may `send_to` the port.
pub const SENDABLE: u16 = 1;
/// Most ports a host runs (its config refuses more), so the most port entries a context has.
pub const MAX_PORTS: usize = 256;
