//! A pool whose packet bytes a plugin may map into its linear memory (direct packet access,
//! docs/ABI.md "Direct packet access"): the region is a memfd, and each buffer's metadata lies on
//! a page of its own, so that an alias of the region can show the plugin the data pages and
//! nothing else.
//!
//! Layout of one buffer (a whole number of pages): the first page holds the two metadata lines
//! ([`META_SIZE`] bytes) near its end, the data pages (headroom, then data room) follow, and the
//! buffer's bytes start `META_SIZE` bytes after its header exactly as in an ordinary pool (the
//! packet accessors are the same code). An alias maps, at the same offsets, the data pages of the
//! memfd and anonymous pages in place of the metadata pages: what a plugin writes there changes
//! nothing of the host's.
//!
//! Colours. Were every header to end its page and every packet to start at the same offset of the
//! next, a burst's metadata lines and first bytes would all fall on two or three L1 cache sets (the
//! set is the address's bits 6-11, its offset in a 4 KiB page) and overflow their ways (BENCHMARKS.md,
//! "Colours in the direct pool"). So buffer `i` has colour `c = i % COLOURS`: its header
//! sits `c` lines before the page's end, and every buffer's `data_off` starts [`GAP_MAX`] bytes
//! further than the configured headroom, which puts the packet `COLOURS - 1 - c` lines after the
//! configured headroom on the data page. Both the metadata and the first bytes of a burst spread
//! over `COLOURS` sets. The price: the `c` lines between a header and its page's end (the buffer's
//! *gap*) are headroom the host may use but the plugin cannot see, so what a plugin is shown and
//! may prepend is the headroom from the data page's start ([`visible`]).
use super::meta::META_SIZE;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Page size the layout assumes (Linux on the architectures we build for).
pub(crate) const PAGE: usize = 4096;

/// Cache-line offsets the buffers' headers (and packets) take in turn.
pub(crate) const COLOURS: usize = 16;

const LINE: usize = 64;

/// The largest gap (colour `COLOURS - 1`), and what every buffer's headroom has on top of the
/// configured one.
pub(crate) const GAP_MAX: u16 = ((COLOURS - 1) * LINE) as u16;

/// Bytes from the start of buffer `i` to its header: `i`'s colour in lines before the end of the
/// first page.
pub(crate) fn header_at(i: usize) -> usize {
    PAGE - META_SIZE - (i % COLOURS) * LINE
}

/// Distance between two buffers: a metadata page, then enough data pages for the headroom (with
/// [`GAP_MAX`]) and the data room.
pub fn stride(headroom: u16, data_room: u16) -> usize {
    PAGE * (1 + (usize::from(headroom) + usize::from(GAP_MAX) + usize::from(data_room)).div_ceil(PAGE))
}

/// The buffer's gap: bytes between the end of the header at `header` (its address, or its offset in
/// the page-aligned region) and the end of its page. Headroom the plugin's alias does not show.
#[inline(always)]
pub(crate) fn gap(header: usize) -> usize {
    PAGE - META_SIZE - header % PAGE
}

/// The headroom a plugin sees in front of a packet whose header is at `header` and whose data is
/// `data_off` bytes into its buffer (from the data page's start): `None` when the packet starts in
/// the gap, where the plugin's alias shows none of its bytes.
#[inline(always)]
pub(crate) fn visible(header: usize, data_off: u16) -> Option<u16> {
    usize::from(data_off).checked_sub(gap(header)).map(|h| h as u16)
}

/// Whether a packet's first byte, at `data` (its offset in the page-aligned region; `META_SIZE +
/// data_off` past its header at `header`), is in the plugin's alias: [`visible`]'s test (the
/// data is not in the gap) as page numbers, for callers that need no headroom. The header ends its
/// page, so the data is past the gap exactly when it is on a later page.
#[inline(always)]
pub(crate) fn on_data_page(header: usize, data: usize) -> bool {
    data / PAGE != header / PAGE
}

/// The memfd behind a shared pool.
pub(crate) struct Memfd {
    fd: OwnedFd,
    len: usize,
}

impl Memfd {
    /// A zeroed memfd of `len` bytes and the host's mapping of it (read-write, populated).
    pub(crate) fn create(len: usize) -> io::Result<(Memfd, std::ptr::NonNull<u8>)> {
        // SAFETY: a NUL-terminated name and valid flags; the result is checked.
        let fd = unsafe { libc::memfd_create(c"wasmdp-pool".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned to us and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let size = libc::off_t::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: a valid fd and size.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), size) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        // SAFETY: a shared mapping of the whole file, no address hint; the result is checked.
        let at = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd.as_raw_fd(), 0) };
        if at == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // The host's mapping on huge pages where the system lets shared memory have them
        // (`/sys/kernel/mm/transparent_hugepage/shmem_enabled` at `advise`): a burst's packets
        // then take a few TLB entries on the host's side instead of two each. A hint, before the
        // pages exist; the aliases map the same pages 4 KiB at a time either way.
        // SAFETY: our mapping; the advice may be refused harmlessly.
        unsafe { libc::madvise(at, len, libc::MADV_HUGEPAGE) };
        // Populated now, so that the first packets take no page faults; memory the system cannot
        // give is an error here rather than a SIGBUS on the hot path (kernels before 5.14 lack the
        // advice: touched instead).
        // SAFETY: our mapping.
        if unsafe { libc::madvise(at, len, libc::MADV_POPULATE_WRITE) } != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINVAL) {
                // SAFETY: the mapping made above, unused.
                unsafe { libc::munmap(at, len) };
                return Err(e);
            }
            // SAFETY: our mapping, of `len` bytes.
            unsafe { std::ptr::write_bytes(at.cast::<u8>(), 0, len) };
        }
        let at = std::ptr::NonNull::new(at.cast()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        Ok((Memfd { fd, len }, at))
    }

    /// Bytes of the region.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Maps an alias of the region at `at`, inaccessible ([`protect`] opens it): for each buffer of
    /// `stride` bytes, an anonymous page where the metadata page is, the memfd's data pages after it.
    /// One mapping per buffer (the metadata pages cut the file's range); made off the hot path, when
    /// an instance registers its area.
    ///
    /// # Safety
    /// `[at, at + len)` must be page aligned and reserved by the caller, holding nothing anyone
    /// uses: it is replaced.
    pub(crate) unsafe fn alias(&self, at: *mut u8, stride: usize) -> io::Result<()> {
        let fixed = libc::MAP_FIXED;
        // SAFETY: the caller owns the range; anonymous pages replace whatever was there.
        let anon = unsafe {
            libc::mmap(at.cast(), self.len, libc::PROT_NONE, fixed | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        if anon == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        for start in (0..self.len).step_by(stride) {
            let data = start + PAGE;
            // SAFETY: inside the range the caller owns; the file offset is inside the file (the
            // region is a whole number of strides).
            let m = unsafe {
                libc::mmap(
                    at.add(data).cast(),
                    stride - PAGE,
                    libc::PROT_NONE,
                    fixed | libc::MAP_SHARED,
                    self.fd.as_raw_fd(),
                    data as libc::off_t,
                )
            };
            if m == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Opens (`true`: read-write) or closes (inaccessible) an alias made by [`Memfd::alias`]: one
/// system call, on the thread that owns the stream, at the edges of the time its plugin may touch
/// packets.
///
/// # Safety
/// `[at, at + len)` must be an alias made by [`Memfd::alias`].
pub(crate) unsafe fn protect(at: *mut u8, len: usize, open: bool) -> io::Result<()> {
    let prot = if open { libc::PROT_READ | libc::PROT_WRITE } else { libc::PROT_NONE };
    // SAFETY: the caller's range is our alias.
    if unsafe { libc::mprotect(at.cast(), len, prot) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mbuf::{Burst, Pool, PoolConfig};

    /// A reserved, inaccessible range of `len` bytes, unmapped on drop.
    struct Reserved(*mut u8, usize);

    impl Reserved {
        fn new(len: usize) -> Reserved {
            // SAFETY: an anonymous reservation, checked.
            let at = unsafe {
                libc::mmap(std::ptr::null_mut(), len, libc::PROT_NONE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
            };
            assert_ne!(at, libc::MAP_FAILED);
            Reserved(at.cast(), len)
        }
    }

    impl Drop for Reserved {
        fn drop(&mut self) {
            // SAFETY: our mapping.
            unsafe { libc::munmap(self.0.cast(), self.1) };
        }
    }

    /// The two forms of the gap's rule agree for every colour, in any page, at every offset a
    /// buffer's data can have.
    #[test]
    fn the_page_test_and_the_headroom_test_say_the_same() {
        for page in [0, 1, 7] {
            for colour in 0..COLOURS {
                let header = page * PAGE + header_at(colour);
                for data_off in 0..=u16::MAX {
                    let data = header + META_SIZE + usize::from(data_off);
                    assert_eq!(
                        on_data_page(header, data),
                        visible(header, data_off).is_some(),
                        "header {header}, data_off {data_off}"
                    );
                }
            }
        }
    }

    #[test]
    fn an_alias_shows_packet_bytes_both_ways_and_never_the_metadata() {
        let pool = Pool::new_shared(PoolConfig { size: 4, cache_size: 1, ..Default::default() }).unwrap();
        assert_eq!(pool.region_len(), 4 * stride(128, 2048));
        let alias = Reserved::new(pool.region_len());
        // SAFETY: the reservation is ours and unused.
        unsafe { pool.alias(alias.0).unwrap() };
        // SAFETY: the alias was just made.
        unsafe { protect(alias.0, alias.1, true).unwrap() };
        let mut cache = pool.cache();
        let mut burst = Burst::new();
        assert!(cache.alloc_bulk(&mut burst, 2));
        burst[0].copy_from(&[1, 2, 3, 4]).unwrap();
        let off = pool.locator().in_alias(&burst[0]).unwrap().0;
        // SAFETY: inside the open alias.
        let seen = unsafe { std::slice::from_raw_parts_mut(alias.0.add(off), 4) };
        assert_eq!(seen, &[1, 2, 3, 4], "the alias shows the host's write");
        seen[0] = 9;
        assert_eq!(burst[0].data(), &[9, 2, 3, 4], "the host sees the alias's write");
        // Every byte of the alias outside the data pages (the metadata pages) written: the
        // packets' lengths and offsets stay as they were.
        let st = stride(128, 2048);
        for b in 0..4 {
            // SAFETY: the metadata page of buffer b, inside the open alias.
            unsafe { std::ptr::write_bytes(alias.0.add(b * st), 0xEE, PAGE) };
        }
        assert_eq!((burst[0].len(), burst[0].headroom(), burst[1].len()), (4, 128 + usize::from(GAP_MAX), 0));
        // SAFETY: as above.
        unsafe { protect(alias.0, alias.1, false).unwrap() };
        cache.free_burst(&mut burst);
    }

    /// A burst of consecutive buffers puts its headers, and its packets' first bytes, on `COLOURS`
    /// different L1 sets each (not one or two), and every packet starts on its data page with at
    /// least the configured headroom in front of it there.
    #[test]
    fn a_burst_spreads_its_headers_and_first_bytes_over_the_cache_sets() {
        let pool = Pool::new_shared(PoolConfig { size: 64, cache_size: 1, ..Default::default() }).unwrap();
        let mut cache = pool.cache();
        let mut burst = Burst::new();
        assert!(cache.alloc_bulk(&mut burst, 32));
        let set = |a: usize| (a / 64) % 64;
        let sets = |f: &dyn Fn(&crate::mbuf::Pkt) -> usize| {
            let mut v: Vec<usize> = burst.as_slice().iter().map(|p| set(f(p))).collect();
            v.sort_unstable();
            v.dedup();
            v.len()
        };
        assert_eq!(sets(&|p| p.meta_ptr() as usize), COLOURS, "headers");
        assert_eq!(sets(&|p| p.data_ptr() as usize), COLOURS, "first bytes");
        let st = stride(128, 2048);
        for p in burst.as_slice() {
            let (off, headroom) = pool.locator().in_alias(p).unwrap();
            assert!(headroom >= 128, "{headroom}");
            assert_eq!(off % st - usize::from(headroom), PAGE, "the headroom seen starts the data page");
            assert_eq!(p.headroom(), 128 + usize::from(GAP_MAX), "the host's headroom counts the gap");
        }
        cache.free_burst(&mut burst);
    }

    #[test]
    fn a_packet_of_another_pool_has_no_offset() {
        let shared = Pool::new_shared(PoolConfig { size: 2, cache_size: 1, ..Default::default() }).unwrap();
        let other = Pool::new(PoolConfig { size: 2, cache_size: 1, ..Default::default() }).unwrap();
        let mut cache = other.cache();
        let p = cache.alloc().unwrap();
        assert_eq!(shared.locator().in_alias(&p), None);
        cache.free(p);
    }
}
