//! The registered area as a plain record: what `HostState` holds between `burst_area` and the
//! calls. A leaf, so that the state can hold it while the area's code works on the state.

/// A registered area: `max_pkts` descriptors and windows of `window` bytes at `ptr`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Area {
    pub ptr: usize,
    pub max_pkts: usize,
    pub window: usize,
    /// Whether each descriptor gets the host's flow hash (`area::FLOW_HASH`).
    pub flow_hash: bool,
    /// Windows without descriptors (`area::HEADS`).
    pub heads: bool,
    /// Descriptors pointing at the packets in the stream's region (`area::DIRECT`).
    pub direct: bool,
    /// A verdict byte per packet after the heads (`area::DROPS`).
    pub drops: bool,
}

impl Area {
    /// One past its last byte (None on overflow).
    pub fn end(&self) -> Option<usize> {
        self.ptr.checked_add(self.shape().size(self.max_pkts))
    }

    fn shape(&self) -> wasmdp_abi::area::Shape {
        wasmdp_abi::area::Shape {
            window: self.window,
            flow_hash: self.flow_hash,
            heads: self.heads,
            direct: self.direct,
            drops: self.drops,
        }
    }

    /// The verdict bytes of `area::DROPS` in `region` (its bytes: [`Area::region`]); empty
    /// without them.
    #[inline(always)]
    pub(super) fn verdicts<'m>(&self, region: &'m mut [u8]) -> &'m mut [u8] {
        let at = if self.drops { self.shape().verdicts_at(self.max_pkts) } else { region.len() };
        region.get_mut(at..).unwrap_or_default()
    }

    /// Its bytes in the plugin's memory, when they are all there.
    #[inline(always)]
    pub(super) fn region<'m>(&self, mem: &'m mut [u8]) -> Option<&'m mut [u8]> {
        mem.get_mut(self.ptr..self.end()?)
    }
}
