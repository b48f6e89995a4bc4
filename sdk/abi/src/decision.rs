//! What the host reads back from a burst area after a call, and the rules it checks it by: the
//! header's burst-wide fields and each descriptor's out fields, decoded as written (data, not
//! trusted) and checked before anything is carried out. The host (`wasmdp`) and the SDK's mock
//! both read areas through these, so the two accept and refuse the same bytes with the same codes.

use crate::area::{desc, hdr, verdict, DESC};
use crate::{err, flags};

/// `N` little-endian bytes of `b` at `at` (zeros where `b` ends before them all).
#[inline(always)]
fn le<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    b.get(at..).and_then(<[u8]>::first_chunk::<N>).copied().unwrap_or([0; N])
}

/// A verdict byte of heads with drops (`area::DROPS`), checked: whether it drops the packet
/// (`verdict::DROP`) or not (`verdict::PASS`); any other value is `BAD_RANGE`, a failure of the
/// call. (The host reads eight at a time, tested equal to this.)
#[inline(always)]
pub fn drop_verdict(byte: u8) -> Result<bool, i32> {
    match byte {
        verdict::PASS => Ok(false),
        verdict::DROP => Ok(true),
        _ => Err(err::BAD_RANGE),
    }
}

/// The header's out fields as the plugin wrote them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeaderOut {
    /// `hdr::ENGINE`: the engine for the `PASS` packets, -1 for none.
    pub engine: i32,
    /// `hdr::CHANGED` nonzero: the descriptors are to be read.
    pub changed: bool,
    /// `hdr::OFFLOADS`: TX offload flags for every transmitted packet.
    pub offloads: u64,
    /// `hdr::VLAN_TCI`.
    pub vlan_tci: u16,
    /// `hdr::VLAN_OUTER`.
    pub vlan_outer: u16,
}

impl HeaderOut {
    /// Reads the header at the start of `area` (all zeros unless `area` holds every out field, as a
    /// registered area always does): the fields' bytes in one read, one length check, then each
    /// field at its fixed place.
    #[inline(always)]
    pub fn decode(area: &[u8]) -> HeaderOut {
        const END: usize = hdr::VLAN_OUTER + 2;
        // Every field inside the bytes read (else it would read as zeros).
        const _: () = assert!(
            hdr::ENGINE + 4 <= END && hdr::CHANGED + 4 <= END && hdr::OFFLOADS + 8 <= END && hdr::VLAN_TCI + 2 <= END
        );
        let h: [u8; END] = le(area, 0);
        HeaderOut {
            engine: i32::from_le_bytes(le(&h, hdr::ENGINE)),
            changed: u32::from_le_bytes(le(&h, hdr::CHANGED)) != 0,
            offloads: u64::from_le_bytes(le(&h, hdr::OFFLOADS)),
            vlan_tci: u16::from_le_bytes(le(&h, hdr::VLAN_TCI)),
            vlan_outer: u16::from_le_bytes(le(&h, hdr::VLAN_OUTER)),
        }
    }

    /// The engine to run on the `PASS` packets (`None` for -1), or the code the call fails with:
    /// `BAD_ENGINE` for an engine `engine_ok` refuses, then `BAD_FLAGS` for an offload flag outside
    /// `flags::ALLOWED`.
    #[inline(always)]
    pub fn check(&self, engine_ok: impl Fn(u32) -> bool) -> Result<Option<u32>, i32> {
        let engine = match self.engine {
            -1 => None,
            e => Some(u32::try_from(e).ok().filter(|&e| engine_ok(e)).ok_or(err::BAD_ENGINE)?),
        };
        if self.offloads & !flags::ALLOWED != 0 {
            return Err(err::BAD_FLAGS);
        }
        Ok(engine)
    }
}

/// One descriptor's out fields as the plugin wrote them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Decision {
    /// `desc::VERDICT`.
    pub verdict: u8,
    /// `desc::ARG`: the port of a `SEND`, the engine of an `ENGINE`.
    pub arg: u16,
    /// `desc::HEAD`: the length change at the front.
    pub head: i16,
    /// `desc::TAIL`: the length change at the tail.
    pub tail: i16,
    /// `desc::DIRTY`: window bytes to copy into the packet.
    pub dirty: u16,
}

impl Decision {
    /// Reads descriptor `d` (all zeros, a `PASS` changing nothing, unless it holds [`DESC`] bytes).
    #[inline(always)]
    pub fn decode(d: &[u8]) -> Decision {
        let d: [u8; DESC] = le(d, 0);
        Decision {
            verdict: d[desc::VERDICT],
            arg: u16::from_le_bytes([d[desc::ARG], d[desc::ARG + 1]]),
            head: i16::from_le_bytes([d[desc::HEAD], d[desc::HEAD + 1]]),
            tail: i16::from_le_bytes([d[desc::TAIL], d[desc::TAIL + 1]]),
            dirty: u16::from_le_bytes([d[desc::DIRTY], d[desc::DIRTY + 1]]),
        }
    }

    /// `Ok` when the host can carry the decision out with windows of `window` bytes, else the code
    /// the call fails with, in this order: `BAD_PORT` for a `SEND` to a port `port_ok` refuses,
    /// `BAD_ENGINE` for an `ENGINE` `engine_ok` refuses, `BAD_RANGE` for any other verdict, then
    /// `BAD_RANGE` for more dirty bytes than the window holds. Length changes are not errors: one
    /// that does not fit the buffer drops the packet (counted as `headroom`).
    #[inline(always)]
    pub fn check(
        &self,
        window: usize,
        port_ok: impl Fn(u16) -> bool,
        engine_ok: impl Fn(u16) -> bool,
    ) -> Result<(), i32> {
        match self.verdict {
            verdict::PASS | verdict::DROP => {}
            verdict::SEND if port_ok(self.arg) => {}
            verdict::SEND => return Err(err::BAD_PORT),
            verdict::ENGINE if engine_ok(self.arg) => {}
            verdict::ENGINE => return Err(err::BAD_ENGINE),
            _ => return Err(err::BAD_RANGE),
        }
        if usize::from(self.dirty) > window {
            return Err(err::BAD_RANGE);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn descriptor(verdict: u8, arg: u16, dirty: u16) -> [u8; DESC] {
        let mut d = [0u8; DESC];
        d[desc::VERDICT] = verdict;
        d[desc::ARG..desc::ARG + 2].copy_from_slice(&arg.to_le_bytes());
        d[desc::HEAD..desc::HEAD + 2].copy_from_slice(&(-14i16).to_le_bytes());
        d[desc::DIRTY..desc::DIRTY + 2].copy_from_slice(&dirty.to_le_bytes());
        d
    }

    #[test]
    fn descriptors_decode_as_written_and_check_in_the_documented_order() {
        let two_ports = |p: u16| p < 2;
        let one_engine = |e: u16| e == 0;
        let d = Decision::decode(&descriptor(verdict::SEND, 1, 64));
        assert_eq!(d, Decision { verdict: verdict::SEND, arg: 1, head: -14, tail: 0, dirty: 64 });
        assert_eq!(d.check(64, two_ports, one_engine), Ok(()));
        assert_eq!(d.check(63, two_ports, one_engine), Err(err::BAD_RANGE), "dirty past the window");
        // A bad port is named before a bad dirty length.
        let d = Decision::decode(&descriptor(verdict::SEND, 2, 999));
        assert_eq!(d.check(64, two_ports, one_engine), Err(err::BAD_PORT));
        let d = Decision::decode(&descriptor(verdict::ENGINE, 5, 0));
        assert_eq!(d.check(64, two_ports, one_engine), Err(err::BAD_ENGINE));
        let d = Decision::decode(&descriptor(9, 0, 0));
        assert_eq!(d.check(64, two_ports, one_engine), Err(err::BAD_RANGE), "unknown verdict");
        assert_eq!(Decision::decode(&[7; DESC - 1]), Decision::default(), "a short descriptor is a PASS");
    }

    #[test]
    fn the_header_names_a_bad_engine_before_bad_flags() {
        let mut h = [0u8; 64];
        h[hdr::ENGINE..hdr::ENGINE + 4].copy_from_slice(&(-1i32).to_le_bytes());
        assert_eq!(HeaderOut::decode(&h).check(|_| false), Ok(None));
        h[hdr::ENGINE..hdr::ENGINE + 4].copy_from_slice(&3i32.to_le_bytes());
        h[hdr::OFFLOADS..hdr::OFFLOADS + 8].copy_from_slice(&1u64.to_le_bytes());
        assert_eq!(HeaderOut::decode(&h).check(|e| e == 3), Err(err::BAD_FLAGS));
        assert_eq!(HeaderOut::decode(&h).check(|_| false), Err(err::BAD_ENGINE));
        h[hdr::OFFLOADS..hdr::OFFLOADS + 8].copy_from_slice(&flags::TX_VLAN.to_le_bytes());
        assert_eq!(HeaderOut::decode(&h).check(|e| e == 3), Ok(Some(3)));
        h[hdr::ENGINE..hdr::ENGINE + 4].copy_from_slice(&(-2i32).to_le_bytes());
        assert_eq!(HeaderOut::decode(&h).check(|_| true), Err(err::BAD_ENGINE), "negative ids other than -1");
    }
}
