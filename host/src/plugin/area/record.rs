//! The registered area as a plain record: what `HostState` holds between `burst_area` and the
//! calls. A leaf, so that the state can hold it while the area's code works on the state.

use wasmdp_abi::area::Shape;

/// A registered area: `max_pkts` descriptors and windows of `window` bytes at `ptr`. Its size and
/// where its verdict bytes start are computed once, when it is made ([`Area::new`]), so that each
/// burst's look at its bytes is a bounds check, not the layout's rules again. Its fields are read
/// through methods, so that none can change apart from the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Area {
    ptr: usize,
    max_pkts: usize,
    shape: Shape,
    /// Its bytes ([`Shape::size`]).
    size: usize,
    /// Where its verdict bytes start, from its start: its size without `DROPS`.
    verdicts_at: usize,
}

impl Area {
    /// The area of `shape` for `max_pkts` packets at `ptr`; None when its end would pass the
    /// address space.
    pub fn new(ptr: usize, max_pkts: usize, shape: Shape) -> Option<Area> {
        let size = shape.size(max_pkts);
        ptr.checked_add(size)?;
        let verdicts_at = if shape.drops { shape.verdicts_at(max_pkts) } else { size };
        Some(Area { ptr, max_pkts, shape, size, verdicts_at })
    }

    /// Where it starts in the plugin's memory.
    #[inline(always)]
    pub fn ptr(&self) -> usize {
        self.ptr
    }

    /// Packets it has room for.
    #[inline(always)]
    pub fn max_pkts(&self) -> usize {
        self.max_pkts
    }

    /// Bytes of each window (or head).
    #[inline(always)]
    pub fn window(&self) -> usize {
        self.shape.window
    }

    /// Whether each descriptor gets the host's flow hash (`area::FLOW_HASH`).
    #[inline(always)]
    pub fn flow_hash(&self) -> bool {
        self.shape.flow_hash
    }

    /// Windows without descriptors (`area::HEADS`).
    #[inline(always)]
    pub fn heads(&self) -> bool {
        self.shape.heads
    }

    /// Descriptors pointing at the packets in the stream's region (`area::DIRECT`).
    #[inline(always)]
    pub fn direct(&self) -> bool {
        self.shape.direct
    }

    /// A verdict byte per packet after the heads (`area::DROPS`).
    #[inline(always)]
    pub fn drops(&self) -> bool {
        self.shape.drops
    }

    /// The same area at `ptr` (a native build's, whose memory is the address space: at 0).
    pub fn at(self, ptr: usize) -> Option<Area> {
        ptr.checked_add(self.size)?;
        Some(Area { ptr, ..self })
    }

    /// One past its last byte.
    pub fn end(&self) -> usize {
        // No overflow: checked when it was made.
        self.ptr + self.size
    }

    /// The verdict bytes of `area::DROPS` in `region` (its bytes: [`Area::region`]); empty
    /// without them.
    #[inline(always)]
    pub(super) fn verdicts<'m>(&self, region: &'m mut [u8]) -> &'m mut [u8] {
        region.get_mut(self.verdicts_at..).unwrap_or_default()
    }

    /// Its bytes in the plugin's memory, when they are all there.
    #[inline(always)]
    pub(super) fn region<'m>(&self, mem: &'m mut [u8]) -> Option<&'m mut [u8]> {
        mem.get_mut(self.ptr..self.end())
    }
}
