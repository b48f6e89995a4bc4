//! Direct packet access (`area::DIRECT`): a stream's packets are allocated from a pool of its own
//! (a memfd, `crate::mbuf::shared`), whose data pages every instance of the stream's plugin maps
//! into its linear memory, so that the plugin reads and writes packets in place.
//!
//! Who may touch the bytes, and when (docs/ABI.md, "Direct packet access"):
//! - the pool is the stream's (one RX queue of one port): its buffers hold only packets received
//!   on that queue, or made for it (a copy is made whenever a packet enters the stream from
//!   elsewhere, or leaves it for another thread: `crate::lcore::stream`);
//! - an instance's mapping is open (read-write) only on the stream's worker, from the first burst it
//!   handles there until it is replaced or dropped, and inaccessible otherwise (during init on the
//!   control or service thread it traps): no other thread ever runs code that can touch the bytes
//!   while the worker's host code reads or writes them;
//! - host functions refuse pointers into the region (`BAD_MEMORY`): the host never makes a Rust
//!   reference into it but through the packets' own buffers on the worker.

use crate::mbuf::{Pool, PoolConfig};
use std::sync::{Arc, OnceLock};

/// Buffers in a stream's pool: what its cache, the largest burst and a driver's batch hold at once,
/// with room to spare. The region is this many buffers' strides.
pub const BUFFERS: usize = 1024;

/// A stream's pool for direct access, made when its first instance asks for it and kept for the
/// stream's life (every later instance, after a trap or a reload, maps the same pool).
#[derive(Debug, Default)]
pub struct DirectSlot {
    cfg: PoolConfig,
    pool: OnceLock<Arc<Pool>>,
}

impl DirectSlot {
    /// A slot for a pool with the buffer sizes of `cfg` (the dataplane's `pool:`).
    pub fn new(cfg: PoolConfig) -> DirectSlot {
        DirectSlot { cfg, pool: OnceLock::new() }
    }

    /// The pool, once an instance asked for it.
    pub fn pool(&self) -> Option<&Arc<Pool>> {
        self.pool.get()
    }

    /// The pool, made now if need be.
    fn get_or_make(&self) -> std::io::Result<&Arc<Pool>> {
        if let Some(p) = self.pool.get() {
            return Ok(p);
        }
        let cache_size = self.cfg.cache_size.min(BUFFERS / 4);
        let pool = Pool::new_shared(PoolConfig { size: BUFFERS, cache_size, ..self.cfg })?;
        Ok(self.pool.get_or_init(|| pool))
    }
}

/// An instance's mapping of its stream's region.
pub(crate) struct Mapping {
    /// The pool mapped.
    pub pool: Arc<Pool>,
    /// Offset of the region in the instance's memory.
    pub at: usize,
    /// The region's first byte in the host's address space (inside the instance's memory).
    base: *mut u8,
    /// Whether it is open (read-write); only ever on the stream's worker.
    open: bool,
}

// SAFETY: `base` is an address inside the instance's own memory, which moves with the store; the
// mapping is opened and closed only by the thread that runs the instance.
unsafe impl Send for Mapping {}

impl Mapping {
    /// The region's offsets in the instance's memory.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.at..self.at + self.pool.region_len()
    }

    /// Opens the region (on the stream's worker, before the instance's first call there). False
    /// when the system refused: the call then fails (`BAD_MEMORY`) rather than trap.
    #[inline]
    pub fn open(&mut self) -> bool {
        if !self.open {
            // SAFETY: `base` is the alias `map` made, of the pool's region length.
            self.open = unsafe { crate::mbuf::shared::protect(self.base, self.pool.region_len(), true) }.is_ok();
        }
        self.open
    }

    /// Closes the region (the instance is leaving the worker: replaced, or to be dropped).
    pub fn close(&mut self) {
        if self.open {
            // SAFETY: as in `open`. Failing to close would leave an instance that no thread runs
            // able to reach the bytes only if it ran again, which it never does: the result is
            // logged, not acted on.
            if let Err(e) = unsafe { crate::mbuf::shared::protect(self.base, self.pool.region_len(), false) } {
                tracing::warn!("closing a plugin's packet region failed: {e}");
            }
            self.open = false;
        }
    }
}

/// Maps the region of the stream's pool (`slot`) into the memory `mem` of the store `c` (at
/// registration, in init):
/// the memory grows by the region (through the store's limits: it counts in `memory_kib`), and
/// the new pages become the alias, inaccessible until [`Mapping::open`]. The error code for the
/// plugin on failure.
pub(crate) fn map(
    slot: &DirectSlot,
    mut c: impl wasmtime::AsContextMut,
    mem: wasmtime::Memory,
) -> Result<Mapping, i32> {
    use wasmdp_abi::err;
    let pool = match slot.get_or_make() {
        Ok(p) => p.clone(),
        Err(e) => {
            tracing::warn!("making a stream's packet pool for direct access: {e}");
            return Err(err::BAD_MEMORY);
        }
    };
    let page = 1usize << mem.ty(&c).page_size_log2();
    let pages = pool.region_len().div_ceil(page) as u64;
    let old = mem.grow(&mut c, pages).map_err(|_| err::BAD_MEMORY)?;
    let at = usize::try_from(old).map_err(|_| err::BAD_MEMORY)? * page;
    if at + pool.region_len() > u32::MAX as usize {
        return Err(err::BAD_MEMORY);
    }
    // SAFETY: `at..at + region_len` was just added to the memory, which the host made
    // (`super::memory`): the pages are ours to replace, and nothing holds a reference into them.
    let base = unsafe { mem.data_ptr(&c).add(at) };
    // SAFETY: as above.
    if let Err(e) = unsafe { pool.alias(base) } {
        tracing::warn!("mapping a stream's packet region into a plugin: {e}");
        return Err(err::BAD_MEMORY);
    }
    Ok(Mapping { pool, at, base, open: false })
}
