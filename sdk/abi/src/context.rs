//! The context (1.1), as `context` copies it: a [header](self::HEADER) then one
//! [entry](self::PORT) per port. Little-endian.

/// Bytes before the port entries.
pub const HEADER: usize = 16;
/// Bytes of one port entry.
pub const PORT: usize = 16;

crate::layout! { FIELDS;
    /// The RX port.
    RX_PORT: u16 in @ 0;
    /// The RX queue (the instance).
    QUEUE: u16 in @ 2;
    /// The stream's TX port.
    TX_PORT: u16 in @ 4;
    /// Number of ports.
    PORTS: u16 in @ 6;
    /// The worker core (0xFFFF: not pinned).
    LCORE: u16 in @ 8;
}

/// A port entry's fields.
pub mod port {
    crate::layout! { FIELDS;
        /// Its MAC.
        MAC: mac in @ 0;
        /// Its peer MAC.
        PEER_MAC: mac in @ 6;
        /// Flags (`SENDABLE`).
        FLAGS: u16 in @ 12;
    }
}

pub use port::{FLAGS, MAC, PEER_MAC};

const _: () = assert!(crate::layout::check(FIELDS, HEADER) && crate::layout::check(port::FIELDS, PORT));

/// Port flag: this stream may `send_to` the port.
pub const SENDABLE: u16 = 1;
/// Most ports a host runs (its config refuses more), so the most port entries a context has.
pub const MAX_PORTS: usize = 256;
