//! [`StreamEnv`]: where a plugin instance runs. What the `context` import reports, which ports
//! `send_to` reaches, and where the port's maps live (kept across reloads by the dataplane).

use super::maps::{Registry, SharedMaps};
use crate::ports::Inject;
use std::sync::Arc;

/// One port as a plugin sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PortInfo {
    /// The port's MAC.
    pub mac: [u8; 6],
    /// Its peer MAC.
    pub peer_mac: [u8; 6],
}

/// The stream an instance serves and what it may reach.
#[derive(Clone)]
pub struct StreamEnv {
    /// RX port (index in `ports:`).
    pub port: u16,
    /// RX queue (the instance number).
    pub queue: u16,
    /// The stream's TX port.
    pub tx_port: u16,
    /// The worker core, when pinned.
    pub lcore: Option<usize>,
    /// Every port.
    pub ports: Arc<[PortInfo]>,
    /// Inject queue per port (None: no stream transmits there, so `send_to` it is `BAD_PORT`).
    pub injects: Arc<[Option<Arc<Inject>>]>,
    /// The RX port's name (in errors).
    pub port_name: Arc<str>,
    /// The RX port's maps.
    pub maps: Arc<Registry>,
    /// The dataplane's maps shared across ports, and the names of them the port's policy shares
    /// (`policy: shared_maps:`).
    pub shared: Arc<SharedMaps>,
    pub shares: Arc<[String]>,
    /// The stream's pool for direct packet access (made when an instance asks for it).
    pub direct: Arc<super::direct::DirectSlot>,
    /// The RX port's event ring.
    pub events: Arc<super::events::Events>,
}

impl StreamEnv {
    /// Whether the stream may send packets to port `port` (`send_to`, a `SEND` verdict): some stream
    /// transmits there.
    #[inline(always)]
    pub fn can_send(&self, port: usize) -> bool {
        self.injects.get(port).is_some_and(Option::is_some)
    }

    /// A stream of port 0, queue 0, transmitting on port 0, that may `send_to` the ports of `injects`
    /// (tests and measurements).
    pub fn alone(injects: Arc<[Option<Arc<Inject>>]>) -> StreamEnv {
        let ports = vec![PortInfo::default(); injects.len().max(1)].into();
        StreamEnv {
            port: 0,
            queue: 0,
            tx_port: 0,
            lcore: None,
            ports,
            injects,
            port_name: "p0".into(),
            maps: Arc::default(),
            shared: Arc::default(),
            shares: Arc::default(),
            direct: Arc::default(),
            events: Arc::default(),
        }
    }
}
