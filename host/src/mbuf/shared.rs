//! A pool whose packet bytes a plugin may map into its linear memory (direct packet access,
//! docs/ABI.md "Direct packet access"): the region is a memfd, and each buffer's metadata lies on
//! a page of its own, so that an alias of the region can show the plugin the data pages and
//! nothing else.
//!
//! Layout of one buffer (a whole number of pages): the first page ends with the two metadata lines
//! ([`META_SIZE`] bytes), the data pages (headroom, then data room) follow at once, so that a
//! buffer's data starts `META_SIZE` bytes after its header exactly as in an ordinary pool (the
//! packet accessors are the same code). An alias maps, at the same offsets, the data pages of the
//! memfd and anonymous pages in place of the metadata pages: what a plugin writes there changes
//! nothing of the host's.

use super::meta::META_SIZE;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Page size the layout assumes (Linux on the architectures we build for).
pub(crate) const PAGE: usize = 4096;

/// Bytes from a buffer's start to its header: the header ends the first page.
pub(crate) const HEADER_AT: usize = PAGE - META_SIZE;

/// Distance between two buffers: a metadata page, then enough data pages for the headroom and the
/// data room.
pub fn stride(headroom: u16, data_room: u16) -> usize {
    PAGE * (1 + (usize::from(headroom) + usize::from(data_room)).div_ceil(PAGE))
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
        let flags = libc::MAP_SHARED | libc::MAP_POPULATE;
        // SAFETY: a shared mapping of the whole file, no address hint; the result is checked.
        let at = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, fd.as_raw_fd(), 0) };
        if at == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
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
        let off = pool.locator().offset_of(&burst[0]).unwrap();
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
        assert_eq!((burst[0].len(), burst[0].headroom(), burst[1].len()), (4, 128, 0));
        // SAFETY: as above.
        unsafe { protect(alias.0, alias.1, false).unwrap() };
        cache.free_burst(&mut burst);
    }

    #[test]
    fn a_packet_of_another_pool_has_no_offset() {
        let shared = Pool::new_shared(PoolConfig { size: 2, cache_size: 1, ..Default::default() }).unwrap();
        let other = Pool::new(PoolConfig { size: 2, cache_size: 1, ..Default::default() }).unwrap();
        let mut cache = other.cache();
        let p = cache.alloc().unwrap();
        assert_eq!(shared.locator().offset_of(&p), None);
        cache.free(p);
    }
}
