//! wasmdp: a programmable software packet dataplane.
//!
//! The host runs the poll loop ([`lcore`]): worker threads pinned to cores poll their streams in
//! bursts, receive from a port ([`ports`]), run a forwarding engine ([`engines`]) whose inner loops
//! are native kernels ([`simd`]), apply TX offloads in software ([`offload`]) and transmit. Packets
//! live in buffers from a pool ([`mbuf`]); headers are read through [`wire`]. [`config`] parses the
//! YAML, [`stats`] counts and displays, [`dataplane`] puts it all together.

pub mod bench;
pub mod cli;
pub mod config;
pub mod dataplane;
pub mod engines;
pub mod fuzzing;
pub mod input;
pub mod lcore;
pub mod mbuf;
pub mod offload;
pub mod plugin;
pub mod ports;
pub mod reload;
pub mod simd;
pub mod stats;
pub mod wire;
