//! [`Context`]: where the instance runs (ABI 1.1): its stream's ports and queue, its core, and each
//! port's MAC and peer MAC.

use crate::{sys, Error};
use wasmdp_abi::context as cx;

/// Most ports a [`Context`] holds: as many as a host runs (`wasmdp_abi::context::MAX_PORTS`; its
/// config refuses more). 4 KiB of context, read once in `init`. A host claiming more ports makes
/// [`Context::get`] fail with [`Error::TooSmall`].
pub const MAX_PORTS: usize = cx::MAX_PORTS;

/// The instance's context, read once (`context`), typically in [`Policy::init`](crate::Policy::init).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    buf: [u8; cx::HEADER + cx::PORT * MAX_PORTS],
}

impl Context {
    /// Reads it from the host.
    pub fn get() -> Result<Context, Error> {
        let mut c = Context { buf: [0; cx::HEADER + cx::PORT * MAX_PORTS] };
        sys::context(&mut c.buf)?;
        Ok(c)
    }

    fn u16_at(&self, at: usize) -> u16 {
        self.buf.get(at..).and_then(<[u8]>::first_chunk::<2>).map_or(0, |b| u16::from_le_bytes(*b))
    }

    /// The RX port (index in the config's `ports:`).
    pub fn port(&self) -> u16 {
        self.u16_at(cx::RX_PORT)
    }

    /// The RX queue (the instance).
    pub fn queue(&self) -> u16 {
        self.u16_at(cx::QUEUE)
    }

    /// The stream's TX port.
    pub fn tx_port(&self) -> u16 {
        self.u16_at(cx::TX_PORT)
    }

    /// Number of ports.
    pub fn ports(&self) -> u16 {
        self.u16_at(cx::PORTS)
    }

    /// The worker core, when pinned.
    pub fn lcore(&self) -> Option<u16> {
        Some(self.u16_at(cx::LCORE)).filter(|&l| l != u16::MAX)
    }

    fn entry(&self, port: u16) -> Option<&[u8]> {
        if port >= self.ports() {
            return None;
        }
        self.buf.get(cx::HEADER + cx::PORT * usize::from(port)..)?.get(..cx::PORT)
    }

    /// Port `port`'s MAC.
    pub fn mac(&self, port: u16) -> Option<[u8; 6]> {
        self.entry(port)?.get(cx::MAC..cx::MAC + 6)?.try_into().ok()
    }

    /// Port `port`'s peer MAC.
    pub fn peer_mac(&self, port: u16) -> Option<[u8; 6]> {
        self.entry(port)?.get(cx::PEER_MAC..cx::PEER_MAC + 6)?.try_into().ok()
    }

    /// Whether this stream may send to port `port` (`send_to`, the `SEND` verdict).
    pub fn can_send(&self, port: u16) -> bool {
        self.entry(port).and_then(|e| e.get(cx::FLAGS..cx::FLAGS + 2)).is_some_and(|f| f[0] as u16 & cx::SENDABLE != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock;

    #[test]
    fn context_reports_the_stream_and_ports() {
        mock::reset();
        mock::with(|h| {
            h.context.tx_port = 1;
            h.context.lcore = Some(3);
        });
        let c = Context::get().unwrap();
        assert_eq!((c.port(), c.queue(), c.tx_port(), c.ports(), c.lcore()), (0, 0, 1, 2, Some(3)));
        assert_eq!(c.mac(1), Some([2, 0, 0, 0, 0, 1]));
        assert_eq!(c.peer_mac(0), Some([2, 0, 0, 0, 0, 0x10]));
        assert_eq!(c.mac(2), None);
        assert!(c.can_send(1) && !c.can_send(2));
    }

    #[test]
    fn a_config_of_many_ports_fits_up_to_max_ports() {
        for n in [33u16, MAX_PORTS as u16] {
            mock::reset();
            mock::with(|h| {
                h.ports = n.into();
                h.context.ports = (0..n).map(|i| ([2, 0, 0, 0, (i >> 8) as u8, i as u8], [0; 6])).collect();
            });
            let c = Context::get().unwrap_or_else(|e| panic!("{n} ports: {e:?}"));
            assert_eq!((c.ports(), c.mac(n - 1)), (n, Some([2, 0, 0, 0, ((n - 1) >> 8) as u8, (n - 1) as u8])));
        }
        mock::with(|h| {
            h.ports = MAX_PORTS as u32 + 1;
            h.context.ports.push(([0; 6], [0; 6]));
        });
        assert!(Context::get().is_err(), "one port more than it holds");
    }
}
