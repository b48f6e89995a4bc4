//! [`Event`]: records a policy reports as they happen (a source over its rate, a flow denied), as
//! a BPF program does through a ring buffer: appended to the port's event ring, never waited for
//! (a full ring loses the event and counts it), read by operators with `wasmdp ctl events PORT`
//! as JSON with the fields named by the layout given at registration.

use crate::{sys, Error};

/// A kind of event whose records are `N` bytes. Register it in [`Policy::init`](crate::Policy::init)
/// with its fields (`NAME:TYPE ...`, the types of [`map_layout!`](crate::map_layout): `u8 u16 u32
/// u64` little-endian, `be16 be32 be64`, `ipv4`, `ipv6`, `mac`, `hexN`), which must add up to `N`
/// bytes, at most 256.
///
/// ```no_run
/// use wasmdp_sdk::Event;
/// let over: Event<8> = Event::register("over_rate", "src:ipv4 dropped:u32").unwrap();
/// let mut rec = [0u8; 8];
/// rec[..4].copy_from_slice(&[10, 0, 0, 1]);
/// rec[4..].copy_from_slice(&3u32.to_le_bytes());
/// over.emit(&rec);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Event<const N: usize>(u32);

impl<const N: usize> Event<N> {
    /// Registers the kind `name` with fields `layout` (`event_register`); the host refuses fields
    /// that do not add up to `N` bytes (and logs why).
    pub fn register(name: &str, layout: &str) -> Result<Event<N>, Error> {
        sys::event_register(name, layout, N).map(Event)
    }

    /// Appends a record (`event_emit`): true when it is in the ring, false when the ring was full
    /// and the host counted it lost.
    #[inline]
    pub fn emit(self, record: &[u8; N]) -> bool {
        sys::event_emit(self.0, record).unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock;

    #[test]
    fn events_are_recorded_with_their_kind() {
        mock::reset();
        let e: Event<5> = Event::register("seen", "src:ipv4 n:u8").unwrap();
        assert!(e.emit(&[10, 0, 0, 1, 7]));
        assert_eq!(mock::events(), [(std::string::String::from("seen"), std::vec![10, 0, 0, 1, 7])]);
        // Fields that do not add up to the record's size are refused at registration.
        assert!(Event::<4>::register("bad", "src:ipv4 n:u8").is_err());
    }
}
