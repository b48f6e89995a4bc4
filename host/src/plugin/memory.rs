//! Plugins' linear memories, made by the host (wasmtime's `MemoryCreator`) so that the host owns
//! each memory's reservation and may map a stream's packet region into it (direct packet access,
//! `super::direct`).
//!
//! A memory is one reservation of what wasmtime asks for (its reservation plus the guard it elides
//! bounds checks against), inaccessible, of which the first `size` bytes are read-write; growing
//! opens more of it. The base never moves, so the JIT code is what wasmtime's own memories get.

use std::sync::Arc;
use wasmtime::{LinearMemory, MemoryCreator, MemoryType};

/// Makes every linear memory of the engine.
pub(crate) struct Creator;

/// Used when wasmtime asks for no reservation of its own (it does on 64-bit hosts).
const DEFAULT_RESERVATION: usize = 4 << 30;

impl Creator {
    pub(crate) fn new() -> Arc<Creator> {
        Arc::new(Creator)
    }
}

// SAFETY: every memory made is page aligned, zero filled, reserved for `reserved` bytes plus the
// guard (inaccessible), and never moves (`Mapped`).
unsafe impl MemoryCreator for Creator {
    fn new_memory(
        &self,
        _ty: MemoryType,
        minimum: usize,
        maximum: Option<usize>,
        reserved: Option<usize>,
        guard: usize,
    ) -> Result<Box<dyn LinearMemory>, String> {
        let capacity = reserved.unwrap_or_else(|| maximum.unwrap_or(DEFAULT_RESERVATION).max(minimum));
        if minimum > capacity {
            return Err(format!("a memory of {minimum} bytes does not fit its reservation of {capacity}"));
        }
        Mapped::new(minimum, capacity, guard).map(|m| Box::new(m) as Box<dyn LinearMemory>).map_err(|e| e.to_string())
    }
}

/// One linear memory.
struct Mapped {
    base: *mut u8,
    size: usize,
    capacity: usize,
    total: usize,
}

// SAFETY: the mapping is plain memory owned by this value; wasmtime serialises access to it.
unsafe impl Send for Mapped {}
// SAFETY: as above.
unsafe impl Sync for Mapped {}

impl Mapped {
    fn new(size: usize, capacity: usize, guard: usize) -> std::io::Result<Mapped> {
        let total = capacity.checked_add(guard).ok_or_else(|| std::io::Error::other("reservation overflows"))?;
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
        // SAFETY: an anonymous reservation with no address hint; the result is checked.
        let base = unsafe { libc::mmap(std::ptr::null_mut(), total, libc::PROT_NONE, flags, -1, 0) };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let mut m = Mapped { base: base.cast(), size: 0, capacity, total };
        m.open_to(size)?;
        Ok(m)
    }

    /// Makes `[size, new)` read-write.
    fn open_to(&mut self, new: usize) -> std::io::Result<()> {
        if new > self.capacity {
            return Err(std::io::Error::other(format!("{new} bytes is past the reservation")));
        }
        if new > self.size {
            // SAFETY: inside our reservation; fresh anonymous pages, zero.
            let rc = unsafe {
                libc::mprotect(self.base.add(self.size).cast(), new - self.size, libc::PROT_READ | libc::PROT_WRITE)
            };
            if rc != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        self.size = new;
        Ok(())
    }
}

// SAFETY: as for `Creator`.
unsafe impl LinearMemory for Mapped {
    fn byte_size(&self) -> usize {
        self.size
    }

    fn byte_capacity(&self) -> usize {
        self.capacity
    }

    fn grow_to(&mut self, new_size: usize) -> wasmtime::Result<()> {
        self.open_to(new_size).map_err(wasmtime::Error::from)
    }

    fn as_ptr(&self) -> *mut u8 {
        self.base
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: exactly our reservation (with whatever aliases were mapped into it).
        unsafe { libc::munmap(self.base.cast(), self.total) };
    }
}
