//! The four rings of an AF_XDP socket, shared with the kernel through mmap: single-producer
//! single-consumer arrays of descriptors with a producer and a consumer index (free-running u32s,
//! masked by the power-of-two size). We produce on the fill and TX rings and consume the RX and
//! completion rings. Each side keeps a cached copy of the other side's index and reads the shared
//! one (acquire) only when the cache says the ring looks full or empty; it publishes its own
//! index (release) after writing or reading the descriptors, so a burst costs two atomic accesses.

use std::io;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, Ordering};

/// A mapped ring of descriptors `T` (`u64` frame addresses or `xdp_desc`).
pub(super) struct Ring<T: Copy> {
    map: *mut u8,
    map_len: usize,
    producer: *const AtomicU32,
    consumer: *const AtomicU32,
    flags: *const AtomicU32,
    descs: *mut T,
    mask: u32,
    /// Our index: the producer's on a ring we produce, the consumer's on one we consume.
    ours: u32,
    /// The other side's index, as last read.
    theirs: u32,
    _t: PhantomData<T>,
}

// SAFETY: the mapping is owned by the ring and used by one thread at a time (the queue that holds
// the ring); the kernel is the only other party.
unsafe impl<T: Copy> Send for Ring<T> {}

impl<T: Copy> Drop for Ring<T> {
    fn drop(&mut self) {
        // SAFETY: map/map_len come from a successful mmap that nothing uses any more.
        unsafe { libc::munmap(self.map.cast(), self.map_len) };
    }
}

impl<T: Copy> Ring<T> {
    /// Maps the ring of `size` descriptors at page offset `pgoff` of socket `fd`, laid out as `off`
    /// says (XDP_MMAP_OFFSETS).
    pub(super) fn map(fd: libc::c_int, pgoff: u64, off: &libc::xdp_ring_offset, size: u32) -> io::Result<Ring<T>> {
        let len = off.desc as usize + size as usize * std::mem::size_of::<T>();
        // SAFETY: mapping a ring the kernel set up on fd; it checks the offset and length.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                pgoff as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = p.cast::<u8>();
        // SAFETY: the kernel's offsets lie inside the mapping of `len` bytes, which begins with the
        // header words and ends with the `size` descriptors (that is what XDP_MMAP_OFFSETS says);
        // the index words are 4-byte aligned u32s shared with the kernel, hence atomics.
        let at = |o: u64| unsafe { base.add(o as usize) };
        let r = Ring {
            map: base,
            map_len: len,
            producer: at(off.producer).cast(),
            consumer: at(off.consumer).cast(),
            flags: at(off.flags).cast(),
            descs: at(off.desc).cast(),
            mask: size - 1,
            ours: 0,
            theirs: 0,
            _t: PhantomData,
        };
        Ok(r)
    }

    #[inline(always)]
    fn word(&self, w: *const AtomicU32) -> &AtomicU32 {
        // SAFETY: `w` points into the mapping this ring owns (see `map`).
        unsafe { &*w }
    }

    /// The descriptor in slot `i` (masked).
    #[inline(always)]
    fn slot(&self, i: u32) -> *mut T {
        // SAFETY: i & mask < size: inside the descriptor array of the mapping.
        unsafe { self.descs.add((i & self.mask) as usize) }
    }

    /// How many descriptors it holds.
    pub(super) fn size(&self) -> u32 {
        self.mask + 1
    }

    /// The kernel asks to be woken (XDP_RING_NEED_WAKEUP) before it looks at this ring again.
    #[inline(always)]
    pub(super) fn needs_wakeup(&self) -> bool {
        self.word(self.flags).load(Ordering::Relaxed) & libc::XDP_RING_NEED_WAKEUP != 0
    }

    // Producer side (fill, TX).

    /// How many descriptors can be written now, up to `want`.
    #[inline(always)]
    pub(super) fn free(&mut self, want: u32) -> u32 {
        let size = self.mask + 1;
        let mut free = size.saturating_sub(self.ours.wrapping_sub(self.theirs));
        if free < want {
            self.theirs = self.word(self.consumer).load(Ordering::Acquire);
            // A consumer index ahead of what we produced, or more than a ring behind, can only be
            // a broken kernel: nothing is free (as `ready` reads nothing then).
            free = size.saturating_sub(self.ours.wrapping_sub(self.theirs));
        }
        free.min(want)
    }

    /// Writes descriptor `i` after the last published one (`i` < what `free` allowed).
    #[inline(always)]
    pub(super) fn put(&mut self, i: u32, d: T) {
        // SAFETY: the slot is ours until published: the kernel consumed it (free() said so).
        unsafe { self.slot(self.ours.wrapping_add(i)).write_volatile(d) };
    }

    /// The descriptor we wrote at ring index `i` (as long as we have not written that slot again).
    #[inline(always)]
    pub(super) fn written(&self, i: u32) -> T {
        // SAFETY: a slot of the mapping; reading what we wrote there races with nothing the kernel
        // writes (it only reads a ring we produce).
        unsafe { self.slot(i).read_volatile() }
    }

    /// Our producer index: the ring index of the next descriptor we write.
    #[inline(always)]
    pub(super) fn produced(&self) -> u32 {
        self.ours
    }

    /// The kernel's consumer index, read now.
    #[inline(always)]
    pub(super) fn consumed(&mut self) -> u32 {
        self.theirs = self.word(self.consumer).load(Ordering::Acquire);
        self.theirs
    }

    /// Descriptors we published that the kernel has not consumed yet.
    #[inline(always)]
    pub(super) fn unconsumed(&mut self) -> u32 {
        self.ours.wrapping_sub(self.consumed())
    }

    /// Publishes the `n` descriptors written.
    #[inline(always)]
    pub(super) fn submit(&mut self, n: u32) {
        self.ours = self.ours.wrapping_add(n);
        self.word(self.producer).store(self.ours, Ordering::Release);
    }

    // Consumer side (RX, completion).

    /// How many descriptors are ready to be read, up to `max`.
    #[inline(always)]
    pub(super) fn ready(&mut self, max: u32) -> u32 {
        let mut n = self.theirs.wrapping_sub(self.ours);
        if n == 0 {
            self.theirs = self.word(self.producer).load(Ordering::Acquire);
            n = self.theirs.wrapping_sub(self.ours);
        }
        // A producer index more than a ring ahead can only be a broken kernel: read nothing.
        if n > self.mask + 1 {
            return 0;
        }
        n.min(max)
    }

    /// Descriptor `i` of those `ready` said are there.
    #[inline(always)]
    pub(super) fn get(&self, i: u32) -> T {
        // SAFETY: the kernel published the slot (ready() said so) and does not touch it until we
        // release it.
        unsafe { self.slot(self.ours.wrapping_add(i)).read_volatile() }
    }

    /// Where the `n` slots from our index lie: the slot of the first, and how many of them come
    /// before the ring's end (the rest start at slot 0).
    #[inline(always)]
    fn runs(&self, n: u32) -> (usize, usize) {
        let at = (self.ours & self.mask) as usize;
        (at, (n as usize).min(self.mask as usize + 1 - at))
    }

    /// The first `n` of the free slots `free` said there are, as the run up to the ring's end and
    /// the run from its start (empty when they do not wrap), for loops over slices; what is
    /// written there goes to the kernel with [`Self::submit`], in ring order.
    #[inline(always)]
    pub(super) fn free_runs(&mut self, n: u32) -> (&mut [T], &mut [T]) {
        let (at, first) = self.runs(n);
        // SAFETY: slots `at..at + first` and `0..n - first` lie in the descriptor array, disjoint
        // (at most `n` <= size of them, in ring order); the kernel consumed them (`free` said so)
        // and reads them only after the release store of `submit`, which takes `&mut self`: no
        // access of theirs while these borrows live.
        unsafe {
            (
                std::slice::from_raw_parts_mut(self.descs.add(at), first),
                std::slice::from_raw_parts_mut(self.descs, n as usize - first),
            )
        }
    }

    /// The first `n` of the descriptors `ready` said are there, as the run up to the ring's end
    /// and the run from its start (empty when they do not wrap), for loops over slices.
    #[inline(always)]
    pub(super) fn ready_runs(&self, n: u32) -> (&[T], &[T]) {
        let (at, first) = self.runs(n);
        // SAFETY: slots `at..at + first` and `0..n - first` lie in the descriptor array (at most
        // `n` <= size of them, in ring order); the kernel published them (acquire load in `ready`)
        // and writes none of them until we release them, which takes `&mut self`: no write while
        // these borrows live.
        unsafe {
            (
                std::slice::from_raw_parts(self.descs.add(at), first),
                std::slice::from_raw_parts(self.descs, n as usize - first),
            )
        }
    }

    /// Gives the `n` descriptors read back to the kernel.
    #[inline(always)]
    pub(super) fn release(&mut self, n: u32) {
        self.ours = self.ours.wrapping_add(n);
        self.word(self.consumer).store(self.ours, Ordering::Release);
    }
}
