//! Packet buffers.
//!
//! A [`Pool`] carves fixed-size buffers out of one memory region allocated at start (2 MiB huge pages
//! when the system has them). Each buffer starts with two metadata cache lines ([`Meta`] for what the
//! forwarding path touches, [`FlowMeta`] for tunnel/flow metadata), then a headroom and a data room.
//! Workers never touch the shared free list per packet: they go through a [`PoolCache`], which moves
//! buffers to and from the pool in bulk, as DPDK's mempool cache does.
//!
//! A [`Pkt`] is the unique owner of one buffer. All accessors are safe: the invariant
//! `data_off + data_len <= buf_len` is established by the pool and kept by every mutator.

mod burst;
mod cache;
pub mod flags;
mod meta;
mod pkt;
mod pool;
mod region;
pub(crate) mod shared;

pub use burst::{Burst, Marks, MAX_BURST};
pub use cache::PoolCache;
pub use meta::{FlowMeta, Meta, META_FIELDS, META_SIZE};
pub(crate) use pkt::Header;
pub use pkt::{MetaMut, Pkt, RoomError, MIN_FRAME};
pub(crate) use pool::Locator;
pub use pool::{stride_for, Pool, PoolConfig, PoolInfo};
pub use region::Backing;
