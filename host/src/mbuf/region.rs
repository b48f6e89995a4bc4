//! The memory region a pool lives in: anonymous memory, 2 MiB huge pages when available.

use std::ptr::NonNull;

const HUGE_PAGE: usize = 2 << 20;

/// What backs a region, for the start-up log and the stats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backing {
    /// Explicit 2 MiB huge pages (MAP_HUGETLB).
    HugePages,
    /// Normal pages with a transparent-huge-page hint.
    TransparentHugePages,
    /// The global allocator (Miri and non-Linux systems).
    Heap,
    /// A memfd that plugins with direct packet access map (`super::shared`).
    Memfd,
}

impl Backing {
    /// Short name for logs and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Backing::HugePages => "hugepages-2M",
            Backing::TransparentHugePages => "thp",
            Backing::Heap => "heap",
            Backing::Memfd => "memfd",
        }
    }
}

/// A zeroed, page-aligned block of memory, freed on drop.
pub(crate) struct Region {
    base: NonNull<u8>,
    len: usize,
    backing: Backing,
}

// SAFETY: the region is plain memory; who may touch which part of it is governed by the pool.
unsafe impl Send for Region {}
// SAFETY: as above; the region itself has no interior state.
unsafe impl Sync for Region {}

impl Region {
    /// Allocates `len` bytes (rounded up to the huge page size), zeroed.
    pub(crate) fn new(len: usize) -> std::io::Result<Region> {
        let len = len.div_ceil(HUGE_PAGE).max(1) * HUGE_PAGE;
        Self::map(len)
    }

    /// The host's mapping of a memfd (`super::shared::Memfd::create`), unmapped on drop.
    #[cfg(all(target_os = "linux", not(miri)))]
    pub(crate) fn memfd(base: NonNull<u8>, len: usize) -> Region {
        Region { base, len, backing: Backing::Memfd }
    }

    pub(crate) fn base(&self) -> NonNull<u8> {
        self.base
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn backing(&self) -> Backing {
        self.backing
    }

    #[cfg(all(target_os = "linux", not(miri)))]
    fn map(len: usize) -> std::io::Result<Region> {
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE;
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        // SAFETY: anonymous mapping with no address hint; the result is checked before use.
        let huge = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags | libc::MAP_HUGETLB, -1, 0) };
        if huge != libc::MAP_FAILED {
            return Ok(Region {
                base: NonNull::new(huge.cast()).expect("mmap returned null"),
                len,
                backing: Backing::HugePages,
            });
        }
        // SAFETY: as above, without MAP_HUGETLB.
        let plain = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags & !libc::MAP_POPULATE, -1, 0) };
        if plain == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `plain` is a mapping of `len` bytes we own; the hint may fail harmlessly.
        unsafe { libc::madvise(plain, len, libc::MADV_HUGEPAGE) };
        // SAFETY: populate now so that the first packets do not take page faults on the hot path.
        unsafe { std::ptr::write_bytes(plain.cast::<u8>(), 0, len) };
        Ok(Region {
            base: NonNull::new(plain.cast()).expect("mmap returned null"),
            len,
            backing: Backing::TransparentHugePages,
        })
    }

    #[cfg(any(not(target_os = "linux"), miri))]
    fn map(len: usize) -> std::io::Result<Region> {
        let layout = std::alloc::Layout::from_size_align(len, 4096).map_err(std::io::Error::other)?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        let base = NonNull::new(ptr).ok_or_else(|| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
        Ok(Region { base, len, backing: Backing::Heap })
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        #[cfg(all(target_os = "linux", not(miri)))]
        // SAFETY: base/len are exactly what mmap returned; nothing points into the region any more
        // (the pool leaks the region instead of dropping it while buffers are outstanding).
        unsafe {
            libc::munmap(self.base.as_ptr().cast(), self.len);
        }
        #[cfg(any(not(target_os = "linux"), miri))]
        // SAFETY: allocated in `map` with this layout.
        unsafe {
            std::alloc::dealloc(self.base.as_ptr(), std::alloc::Layout::from_size_align_unchecked(self.len, 4096));
        }
    }
}
