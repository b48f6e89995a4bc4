//! One AF_XDP socket: its UMEM (the frame memory it shares with the kernel), its four rings mapped,
//! its options, bound to one queue of the interface. Kernel structures and constants are libc's.

use super::pooled::PoolUmem;
use super::ring::Ring;
use crate::config::{AfXdpCfg, ZeroCopy};
use crate::ports::iface::setopt;
use anyhow::{anyhow, bail, Result};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Not in libc for every target yet (asm-generic/socket.h).
const SO_PREFER_BUSY_POLL: libc::c_int = 69;
const SO_BUSY_POLL_BUDGET: libc::c_int = 70;
/// Microseconds a busy-polling receive call spins in the driver.
const BUSY_POLL_US: libc::c_int = 20;
/// A queue just left by a closed socket stays busy until the kernel has torn it down (it does that
/// asynchronously): how often and how long a bind is tried again.
const BIND_RETRY: Duration = Duration::from_millis(50);
const BIND_TRIES: u32 = 40;

/// The UMEM of a queue of its own (`af_xdp.umem: queue`): anonymous memory of `2 x ring_size`
/// frames; frames below `rx_frames` serve RX (they circulate between the fill and RX rings), the
/// others TX (TX and completion rings). With the pool as the UMEM ([`PoolUmem`]) it has no frames:
/// `bytes` and `write` refuse every address.
pub(super) struct Umem {
    ptr: *mut u8,
    len: usize,
    pub frame: usize,
    /// Bytes of the RX half (the first `rx_frames` frames); the TX half follows.
    rx_len: usize,
    /// Whether `ptr` is ours to unmap.
    owned: bool,
}

// SAFETY: plain memory; the kernel writes only frames we gave it on the fill ring, and each frame
// is owned by one side (RX or TX queue) at a time, so no two threads touch the same bytes.
unsafe impl Send for Umem {}
// SAFETY: as above: the RX half is only read by the RX queue (`bytes` refuses any address outside
// it, whatever a descriptor says), the TX half only written by the TX queue (`write` refuses any
// address outside it).
unsafe impl Sync for Umem {}

impl Drop for Umem {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: ptr/len come from a successful mmap, unused once the socket and queues are gone.
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
        }
    }
}

impl Umem {
    fn new(frames: usize, frame: usize, rx_frames: usize) -> io::Result<Umem> {
        let len = frames * frame;
        // SAFETY: a fresh anonymous private mapping.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Umem { ptr: p.cast(), len, frame, rx_len: rx_frames * frame, owned: true })
    }

    /// No frames of its own: the socket's UMEM is the pool.
    fn none() -> Umem {
        Umem { ptr: std::ptr::null_mut(), len: 0, frame: 1, rx_len: 0, owned: false }
    }

    /// `len` bytes at UMEM address `addr`, if they lie inside one frame of the RX half.
    #[inline(always)]
    pub(super) fn bytes(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let (start, frame) = (addr as usize, self.frame);
        if start >= self.rx_len || start % frame + len > frame {
            return None;
        }
        // SAFETY: start + len stays inside one frame of the mapping (checked); the frame is one the
        // kernel handed us on the RX ring, not written by it until we give it back.
        Some(unsafe { std::slice::from_raw_parts(self.ptr.add(start), len) })
    }

    /// Copies `data` to the start of the frame at `addr`; false when it does not fit a frame or
    /// `addr` is not a frame of the TX half.
    ///
    /// # Safety
    /// The frame must be the caller's alone: taken from its own free list, not on any ring.
    #[inline(always)]
    pub(super) unsafe fn write(&self, addr: u64, data: &[u8]) -> bool {
        let start = addr as usize;
        if !self.is_tx_frame(addr) || data.len() > self.frame {
            return false;
        }
        // SAFETY: the frame lies in the mapping (checked) and nobody else reads or writes it (the
        // caller's contract); `data` is a different buffer.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.add(start), data.len()) };
        true
    }
}

impl Umem {
    /// Whether `addr` is the start of a frame of the TX half (what the completion ring may give
    /// back).
    #[inline(always)]
    pub(super) fn is_tx_frame(&self, addr: u64) -> bool {
        let start = addr as usize;
        start.is_multiple_of(self.frame) && (self.rx_len..self.len).contains(&start)
    }
}

/// A bound socket and the memory it shares with the kernel. Fields drop in order: the socket is
/// closed before the buffers it still had are returned to the pool.
pub(super) struct Xsk {
    pub fd: OwnedFd,
    pub umem: Umem,
    /// The pool, when it is the UMEM.
    pub pooled: Option<Arc<PoolUmem>>,
    parked: Parked,
}

impl Xsk {
    /// Hands over buffers (header offsets in the pool) the kernel may still hold through this
    /// socket: they go back to the pool once the socket is closed. Called by a queue as it is
    /// dropped, after its rings are unmapped.
    pub(super) fn park(&self, headers: Vec<u32>) {
        if let Ok(mut p) = self.parked.headers.lock() {
            p.extend(headers);
        }
    }
}

/// Buffers lent to the kernel through a socket being closed.
struct Parked {
    pooled: Option<Arc<PoolUmem>>,
    headers: Mutex<Vec<u32>>,
}

impl Drop for Parked {
    fn drop(&mut self) {
        let Some(u) = &self.pooled else { return };
        let headers = std::mem::take(self.headers.get_mut().unwrap_or_else(|e| e.into_inner()));
        let pool = u.pool().clone();
        for h in headers {
            // SAFETY: the socket is closed (`Xsk::fd` dropped before this field) and its rings were
            // unmapped by the queues that parked these buffers, so the kernel holds none of them any
            // more; each was lent by exactly one ring and parked once.
            pool.put(unsafe { u.geo().at_header(h) });
        }
    }
}

/// A socket opened on one queue, with its rings, before RX and TX take them.
pub(super) struct Opened {
    pub sock: Arc<Xsk>,
    pub fill: Ring<u64>,
    pub comp: Ring<u64>,
    pub rx: Ring<libc::xdp_desc>,
    pub tx: Ring<libc::xdp_desc>,
    pub zero_copy: bool,
}

fn getopt<T: Default>(fd: libc::c_int, name: libc::c_int) -> io::Result<T> {
    let mut v = T::default();
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: v is a writable T of `len` bytes; the kernel writes at most that.
    let r = unsafe { libc::getsockopt(fd, libc::SOL_XDP, name, (&mut v as *mut T).cast(), &mut len) };
    if r == 0 {
        Ok(v)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The socket's drop counters (cumulative).
pub(super) fn statistics(fd: libc::c_int) -> io::Result<libc::xdp_statistics> {
    getopt::<XdpStatistics>(fd, libc::XDP_STATISTICS).map(|s| s.0)
}

/// `xdp_statistics` with a Default (all zero).
struct XdpStatistics(libc::xdp_statistics);
impl Default for XdpStatistics {
    fn default() -> Self {
        // SAFETY: plain data; all zero is valid.
        XdpStatistics(unsafe { std::mem::zeroed() })
    }
}

/// `xdp_mmap_offsets` with a Default (all zero).
struct Offsets(libc::xdp_mmap_offsets);
impl Default for Offsets {
    fn default() -> Self {
        // SAFETY: plain data; all zero is valid.
        Offsets(unsafe { std::mem::zeroed() })
    }
}

/// A socket on queue `queue` of `ifindex` with the options of `a`; `copy`: the program runs in
/// generic mode, where only copy mode works; `pooled`: the pool is the UMEM.
pub(super) fn open(
    a: &AfXdpCfg,
    ifindex: u32,
    queue: u32,
    copy: bool,
    sg: bool,
    pooled: Option<&Arc<PoolUmem>>,
) -> Result<Opened> {
    let iface = &a.iface;
    // SAFETY: plain socket(2) call.
    let raw = unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        let e = io::Error::last_os_error();
        bail!(match e.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) =>
                format!("af_xdp: cannot open an AF_XDP socket ({e}); run as root or give the binary CAP_NET_RAW"),
            Some(libc::EAFNOSUPPORT) =>
                format!("af_xdp: this kernel has no AF_XDP sockets ({e}; CONFIG_XDP_SOCKETS); use driver af_packet"),
            _ => format!("af_xdp: socket(AF_XDP) failed: {e}"),
        });
    }
    // SAFETY: raw is a new descriptor owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let ring = a.ring_size.0 as u32;
    let umem = match pooled {
        Some(_) => Umem::none(),
        None => Umem::new(2 * ring as usize, a.frame_size.get(), ring as usize).map_err(|e| {
            anyhow!(
                "af_xdp: {} B of UMEM for queue {queue} of `{iface}`: {e}; lower af_xdp.ring_size",
                2 * ring as u64 * a.frame_size.0
            )
        })?,
    };
    let reg = match pooled {
        Some(u) => {
            let (addr, len) = u.geo().region();
            Reg { addr, len, chunk: u.geo().chunk(), flags: libc::XDP_UMEM_UNALIGNED_CHUNK_FLAG }
        }
        None => Reg { addr: umem.ptr, len: umem.len, chunk: umem.frame, flags: 0 },
    };
    register(&fd, &reg, ring, iface)?;
    let off = getopt::<Offsets>(fd.as_raw_fd(), libc::XDP_MMAP_OFFSETS)
        .map_err(|e| anyhow!("af_xdp: XDP_MMAP_OFFSETS of `{iface}`: {e}"))?
        .0;
    let raw = fd.as_raw_fd();
    let mapped = || -> io::Result<_> {
        Ok((
            Ring::map(raw, libc::XDP_UMEM_PGOFF_FILL_RING, &off.fr, ring)?,
            Ring::map(raw, libc::XDP_UMEM_PGOFF_COMPLETION_RING, &off.cr, ring)?,
            Ring::map(raw, libc::XDP_PGOFF_RX_RING as u64, &off.rx, ring)?,
            Ring::map(raw, libc::XDP_PGOFF_TX_RING as u64, &off.tx, ring)?,
        ))
    };
    let (fill, comp, rx, tx) = mapped().map_err(|e| anyhow!("af_xdp: mapping the rings of `{iface}`: {e}"))?;
    if a.busy_poll {
        busy_poll(raw, iface)?;
    }
    bind(raw, a, ifindex, queue, copy, sg)?;
    let zero_copy = getopt::<u32>(raw, libc::XDP_OPTIONS).is_ok_and(|o| o & libc::XDP_OPTIONS_ZEROCOPY != 0);
    let parked = Parked { pooled: pooled.cloned(), headers: Mutex::default() };
    let sock = Arc::new(Xsk { fd, umem, pooled: pooled.cloned(), parked });
    Ok(Opened { sock, fill, comp, rx, tx, zero_copy })
}

/// The memory a socket registers as its UMEM.
struct Reg {
    addr: *mut u8,
    len: usize,
    chunk: usize,
    flags: u32,
}

fn register(fd: &OwnedFd, r: &Reg, ring: u32, iface: &str) -> Result<()> {
    let reg = libc::xdp_umem_reg {
        addr: r.addr as u64,
        len: r.len as u64,
        chunk_size: r.chunk as u32,
        headroom: 0,
        flags: r.flags,
        tx_metadata_len: 0,
    };
    let raw = fd.as_raw_fd();
    setopt(raw, libc::SOL_XDP, libc::XDP_UMEM_REG, &reg).map_err(|e| {
        anyhow!(
            "af_xdp: registering {} B of UMEM for `{iface}` failed: {e}; the kernel pins it: raise `ulimit -l` \
             or lower af_xdp.ring_size (or pool.size, when the pool is the UMEM)",
            r.len
        )
    })?;
    for (opt, name) in [
        (libc::XDP_UMEM_FILL_RING, "fill"),
        (libc::XDP_UMEM_COMPLETION_RING, "completion"),
        (libc::XDP_RX_RING, "RX"),
        (libc::XDP_TX_RING, "TX"),
    ] {
        setopt(raw, libc::SOL_XDP, opt, &ring)
            .map_err(|e| anyhow!("af_xdp: the {name} ring of {ring} descriptors for `{iface}` was refused: {e}"))?;
    }
    Ok(())
}

fn busy_poll(fd: libc::c_int, iface: &str) -> Result<()> {
    let budget = crate::mbuf::MAX_BURST as libc::c_int;
    for (opt, v, name) in [
        (SO_PREFER_BUSY_POLL, 1, "SO_PREFER_BUSY_POLL"),
        (libc::SO_BUSY_POLL, BUSY_POLL_US, "SO_BUSY_POLL"),
        (SO_BUSY_POLL_BUDGET, budget, "SO_BUSY_POLL_BUDGET"),
    ] {
        setopt(fd, libc::SOL_SOCKET, opt, &v).map_err(|e| {
            anyhow!("af_xdp.busy_poll: {name} refused on `{iface}`: {e} (kernel >= 5.11 and CAP_NET_ADMIN needed); set busy_poll: false")
        })?;
    }
    Ok(())
}

/// Binds the socket; `sg`: multi-buffer (`XDP_USE_SG`: a frame longer than a UMEM frame comes, and
/// goes, as several descriptors).
fn bind(fd: libc::c_int, a: &AfXdpCfg, ifindex: u32, queue: u32, copy: bool, sg: bool) -> Result<()> {
    let iface = &a.iface;
    let mode = match (a.zero_copy, copy) {
        (ZeroCopy::Off, _) | (ZeroCopy::Auto, true) => libc::XDP_COPY,
        (ZeroCopy::On, _) => libc::XDP_ZEROCOPY,
        (ZeroCopy::Auto, false) => 0,
    };
    let sxdp = libc::sockaddr_xdp {
        sxdp_family: libc::AF_XDP as u16,
        sxdp_flags: libc::XDP_USE_NEED_WAKEUP | mode | if sg { libc::XDP_USE_SG } else { 0 },
        sxdp_ifindex: ifindex,
        sxdp_queue_id: queue,
        sxdp_shared_umem_fd: 0,
    };
    let mut tries = 0;
    loop {
        // SAFETY: sxdp is a valid sockaddr_xdp of the given size.
        let r = unsafe {
            libc::bind(
                fd,
                (&sxdp as *const libc::sockaddr_xdp).cast(),
                std::mem::size_of::<libc::sockaddr_xdp>() as libc::socklen_t,
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        tries += 1;
        if e.raw_os_error() == Some(libc::EBUSY) && tries < BIND_TRIES {
            std::thread::sleep(BIND_RETRY);
            continue;
        }
        bail!(match e.raw_os_error() {
            Some(libc::EBUSY) => format!(
                "af_xdp: queue {queue} of `{iface}` is busy ({e}, still after {} ms): another AF_XDP socket is bound to it \
                 (another wasmdp or XDP program user on the same queue)",
                BIND_TRIES * BIND_RETRY.as_millis() as u32
            ),
            Some(libc::EOPNOTSUPP) | Some(libc::EPROTONOSUPPORT) if mode == libc::XDP_ZEROCOPY => format!(
                "af_xdp: the driver of `{iface}` has no zero-copy AF_XDP ({e}); set af_xdp.zero_copy: auto or off \
                 (veth and most virtual devices only copy; i40e, ice, mlx5 and others can do zero copy)"
            ),
            Some(libc::EINVAL) => format!(
                "af_xdp: binding to queue {queue} of `{iface}` failed ({e}); check that the queue exists \
                 (`ethtool -l {iface}`; af_xdp.queue_start + queues) and that af_xdp.frame_size suits the MTU"
            ),
            _ => format!("af_xdp: binding to queue {queue} of `{iface}` failed: {e}"),
        });
    }
}
