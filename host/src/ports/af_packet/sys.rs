//! The Linux side of `af_packet`: sockets, the TPACKET_V3 RX ring and sendmmsg TX.

use crate::config::AfPacketCfg;
use crate::mbuf::{Burst, PoolCache};
use crate::ports::{PortSetup, Queues, Rx, RxQueue, TxQueue};
use anyhow::{anyhow, bail, Result};
use std::ffi::CString;
use std::io;
use std::sync::atomic::{fence, AtomicU32, Ordering};
use std::sync::Arc;

// Kernel ABI (linux/if_packet.h), defined here so the layout is the one read below.
const PACKET_ADD_MEMBERSHIP: libc::c_int = 1;
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_VERSION: libc::c_int = 10;
const PACKET_FANOUT: libc::c_int = 18;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const PACKET_FANOUT_HASH: u32 = 0;
const PACKET_MR_PROMISC: u16 = 1;
const TPACKET_V3: libc::c_int = 2;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;
const FRAME_SIZE: u32 = 2048;
const RETIRE_TOV_MS: u32 = 1;

/// struct tpacket_req3.
#[repr(C)]
struct TpacketReq3 {
    block_size: u32,
    block_nr: u32,
    frame_size: u32,
    frame_nr: u32,
    retire_blk_tov: u32,
    sizeof_priv: u32,
    feature_req_word: u32,
}

/// struct packet_mreq.
#[repr(C)]
struct PacketMreq {
    ifindex: libc::c_int,
    kind: u16,
    alen: u16,
    address: [u8; 8],
}

/// struct ifreq, with the union as bytes (flags and mtu sit at its start).
#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    data: [u8; 24],
}

// Offsets in struct tpacket_block_desc (version, offset_to_priv, then tpacket_hdr_v1).
const BD_STATUS: usize = 8;
const BD_NUM_PKTS: usize = 12;
const BD_FIRST: usize = 16;
// Offsets in struct tpacket3_hdr.
const H_NEXT: usize = 0;
const H_SNAPLEN: usize = 12;
const H_STATUS: usize = 20;
const H_MAC: usize = 24;
const H_VLAN_TCI: usize = 32;
const H_VLAN_TPID: usize = 36;

pub(super) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// One AF_PACKET socket and its RX ring mapping; Drop unmaps and closes.
struct Sock {
    fd: libc::c_int,
    ring: *mut u8,
    ring_len: usize,
}

// SAFETY: the fd and the mapping are plain resources usable from any thread; the ring is only read
// through the one RxQueue that owns the position in it.
unsafe impl Send for Sock {}
// SAFETY: shared only between one RX and one TX queue; TX uses the fd alone (sendmmsg is thread-safe),
// and only RX touches the ring memory.
unsafe impl Sync for Sock {}

impl Drop for Sock {
    fn drop(&mut self) {
        if !self.ring.is_null() {
            // SAFETY: ring/ring_len come from a successful mmap and nothing uses them any more.
            unsafe { libc::munmap(self.ring.cast(), self.ring_len) };
        }
        // SAFETY: fd is ours and closed once.
        unsafe { libc::close(self.fd) };
    }
}

fn setopt<T>(fd: libc::c_int, level: libc::c_int, name: libc::c_int, v: &T) -> io::Result<()> {
    // SAFETY: v points to a live value of size_of::<T>() bytes, as the kernel reads it.
    let r = unsafe {
        libc::setsockopt(fd, level, name, (v as *const T).cast(), std::mem::size_of::<T>() as libc::socklen_t)
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn ifreq(fd: libc::c_int, iface: &str, req: libc::c_ulong) -> io::Result<[u8; 24]> {
    let mut r = IfReq { name: [0; libc::IFNAMSIZ], data: [0; 24] };
    for (d, s) in r.name.iter_mut().zip(iface.bytes().take(libc::IFNAMSIZ - 1)) {
        *d = s as libc::c_char;
    }
    // SAFETY: r is a properly sized struct ifreq for SIOCGIF* requests, which write inside it.
    let rc = unsafe { libc::ioctl(fd, req as _, &mut r as *mut IfReq) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r.data)
}

/// The index of interface `iface`, or an error that says how to find the right name.
fn ifindex(iface: &str) -> Result<libc::c_uint> {
    let name = CString::new(iface).map_err(|_| anyhow!("af_packet.iface: contains a NUL byte"))?;
    // SAFETY: name is a valid NUL-terminated string.
    let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if ifindex == 0 {
        bail!(
            "af_packet: interface `{iface}` does not exist ({}); check `ip link` (and the network namespace) or fix af_packet.iface",
            io::Error::last_os_error()
        );
    }
    Ok(ifindex)
}

/// Interface `iface` exists and is up (needs no privileges: what `wasmdp validate` checks).
pub(super) fn interface_ready(iface: &str) -> Result<()> {
    ifindex(iface)?;
    // SAFETY: plain socket(2) call.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        bail!("af_packet: cannot open a socket to ask about `{iface}`: {}", io::Error::last_os_error());
    }
    let flags = ifreq(fd, iface, libc::SIOCGIFFLAGS);
    // SAFETY: fd is ours and closed once.
    unsafe { libc::close(fd) };
    let flags = flags.map_err(|e| anyhow!("af_packet: reading the flags of `{iface}` failed: {e}"))?;
    if u16::from_ne_bytes([flags[0], flags[1]]) as libc::c_int & libc::IFF_UP == 0 {
        bail!("af_packet: interface `{iface}` is down; bring it up with `ip link set {iface} up`");
    }
    Ok(())
}

pub(super) fn open(s: &PortSetup<'_>) -> Result<Queues> {
    let a = s.cfg.af_packet.as_ref().ok_or_else(|| anyhow!("af_packet: missing"))?;
    let ifindex = ifindex(&a.iface)?;
    let n = s.cfg.queues.get();
    let mut socks = Vec::with_capacity(n);
    let group = ((ifindex as u32) ^ std::process::id() ^ ((s.id as u32) << 8)) & 0xffff;
    for q in 0..n {
        let sock = open_one(a, ifindex, s, q == 0)?;
        if n > 1 {
            let arg: u32 = group | (PACKET_FANOUT_HASH << 16);
            setopt(sock.fd, libc::SOL_PACKET, PACKET_FANOUT, &arg).map_err(|e| {
                anyhow!("af_packet: joining fanout group {group} for queue {q} of `{}` failed: {e}", a.iface)
            })?;
        }
        socks.push(Arc::new(sock));
    }
    let block_size = a.block_size.get();
    let block_count = a.block_count.get();
    let rx = socks
        .iter()
        .enumerate()
        .map(|(q, sk)| {
            Box::new(AfRx {
                _sock: sk.clone(),
                ring: sk.ring,
                block_size,
                block_count,
                block: 0,
                left: 0,
                off: 0,
                port: s.id,
                queue: q as u16,
            }) as Box<dyn RxQueue>
        })
        .collect();
    // TX: sendmmsg by default; WASMDP_AF_PACKET_TX=ring selects the TPACKET_V2 TX ring (for measuring).
    let tx = if std::env::var("WASMDP_AF_PACKET_TX").is_ok_and(|v| v == "ring") {
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            let (sock, frames) = open_tx_ring(a, ifindex)?;
            v.push(Box::new(AfTxRing { sock, frames, cur: 0 }) as Box<dyn TxQueue>);
        }
        v
    } else {
        socks.into_iter().map(|sock| Box::new(AfTx::new(sock)) as Box<dyn TxQueue>).collect()
    };
    Ok(Queues { rx, tx })
}

fn open_one(a: &AfPacketCfg, ifindex: libc::c_uint, s: &PortSetup<'_>, first: bool) -> Result<Sock> {
    let iface = &a.iface;
    let proto = (libc::ETH_P_ALL as u16).to_be() as libc::c_int;
    // SAFETY: plain socket(2) call.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, proto) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        if matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES)) {
            bail!("af_packet: cannot open an AF_PACKET socket ({e}); run as root or give the binary CAP_NET_RAW (setcap cap_net_raw,cap_net_admin+ep)");
        }
        bail!("af_packet: socket(AF_PACKET) failed: {e}");
    }
    let mut sock = Sock { fd, ring: std::ptr::null_mut(), ring_len: 0 };
    if first {
        let flags = ifreq(fd, iface, libc::SIOCGIFFLAGS)
            .map_err(|e| anyhow!("af_packet: reading the flags of `{iface}` failed: {e}"))?;
        let flags = u16::from_ne_bytes([flags[0], flags[1]]) as libc::c_int;
        if flags & libc::IFF_UP == 0 {
            bail!("af_packet: interface `{iface}` is down; bring it up with `ip link set {iface} up`");
        }
        let mtu = ifreq(fd, iface, libc::SIOCGIFMTU)
            .map_err(|e| anyhow!("af_packet: reading the MTU of `{iface}` failed: {e}"))?;
        let mtu = i32::from_ne_bytes([mtu[0], mtu[1], mtu[2], mtu[3]]) as usize;
        let frame = s.template.len();
        if mtu + 14 < frame {
            tracing::warn!(
                iface = %iface,
                "port `{}`: af_packet: MTU {mtu} of `{iface}` is smaller than the port's frames ({frame} B = MTU {} + 14); \
                 the kernel will refuse them; raise it with `ip link set {iface} mtu {}`",
                s.cfg.name,
                frame - 14,
                frame - 14
            );
        }
    }
    let v: libc::c_int = TPACKET_V3;
    setopt(fd, libc::SOL_PACKET, PACKET_VERSION, &v).map_err(|e| {
        anyhow!("af_packet: PACKET_VERSION TPACKET_V3 refused on `{iface}`: {e} (kernel >= 3.2 needed)")
    })?;
    let one: libc::c_int = 1;
    if setopt(fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, &one).is_err() {
        tracing::warn!(iface = %iface, "af_packet: PACKET_IGNORE_OUTGOING unsupported (kernel < 4.20): TX is also seen on RX");
    }
    if a.qdisc_bypass {
        setopt(fd, libc::SOL_PACKET, PACKET_QDISC_BYPASS, &one).map_err(|e| {
            anyhow!("af_packet: PACKET_QDISC_BYPASS refused on `{iface}`: {e}; set qdisc_bypass: false")
        })?;
    }
    let block_size = a.block_size.get() as u32;
    let block_nr = a.block_count.get() as u32;
    let req = TpacketReq3 {
        block_size,
        block_nr,
        frame_size: FRAME_SIZE,
        frame_nr: (block_size / FRAME_SIZE) * block_nr,
        retire_blk_tov: RETIRE_TOV_MS,
        sizeof_priv: 0,
        feature_req_word: 0,
    };
    if let Err(e) = setopt(fd, libc::SOL_PACKET, PACKET_RX_RING, &req) {
        let page = page_size();
        let why = if !(block_size as usize).is_power_of_two() || !(block_size as usize).is_multiple_of(page) {
            format!("af_packet.block_size {block_size} must be a power of two and a multiple of the page size ({page})")
        } else if e.raw_os_error() == Some(libc::ENOMEM) {
            format!(
                "the kernel could not allocate {} blocks of {block_size} B; lower af_packet.block_count / block_size or free memory",
                block_nr
            )
        } else {
            "check af_packet.block_size (power of two, multiple of the page size) and block_count".to_string()
        };
        bail!("af_packet: RX ring of `{iface}` refused: {e}; {why}");
    }
    let len = block_size as usize * block_nr as usize;
    // SAFETY: mapping the ring just configured on fd; the kernel checks the length.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_LOCKED | libc::MAP_POPULATE,
            fd,
            0,
        )
    };
    let p = if p == libc::MAP_FAILED {
        // MAP_LOCKED can fail on RLIMIT_MEMLOCK: try without it.
        // SAFETY: as above.
        let p2 = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0)
        };
        if p2 == libc::MAP_FAILED {
            let e = io::Error::last_os_error();
            bail!(
                "af_packet: mapping the RX ring of `{iface}` ({len} B) failed: {e}; lower af_packet.block_count / block_size, or raise the memory limits (ulimit -l, cgroup memory)"
            );
        }
        p2
    } else {
        p
    };
    sock.ring = p.cast();
    sock.ring_len = len;
    // SAFETY: sockaddr_ll is plain data; all zero is a valid value.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
    sll.sll_ifindex = ifindex as libc::c_int;
    // SAFETY: sll is a valid sockaddr_ll of the given size.
    let r = unsafe {
        libc::bind(
            fd,
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if r < 0 {
        bail!("af_packet: bind to `{iface}` failed: {}", io::Error::last_os_error());
    }
    if a.promisc {
        let m = PacketMreq { ifindex: ifindex as libc::c_int, kind: PACKET_MR_PROMISC, alen: 0, address: [0; 8] };
        setopt(fd, libc::SOL_PACKET, PACKET_ADD_MEMBERSHIP, &m)
            .map_err(|e| anyhow!("af_packet: promiscuous mode on `{iface}` refused: {e}; set promisc: false"))?;
    }
    Ok(sock)
}

/// RX queue: the position in the ring is kept across calls, so a burst may end mid-block.
struct AfRx {
    /// Keeps the mapping `ring` points into alive.
    _sock: Arc<Sock>,
    ring: *mut u8,
    block_size: usize,
    block_count: usize,
    /// Current block.
    block: usize,
    /// Frames left in the current block (0: not holding it).
    left: u32,
    /// Offset of the next frame in the current block.
    off: usize,
    port: u16,
    queue: u16,
}

// SAFETY: the raw ring pointer is into the mapping owned by `sock`, which lives as long as this queue;
// the queue is used by one thread at a time.
unsafe impl Send for AfRx {}

impl AfRx {
    #[inline(always)]
    fn block_ptr(&self) -> *mut u8 {
        // SAFETY: block < block_count, so the offset stays inside the mapping.
        unsafe { self.ring.add(self.block * self.block_size) }
    }

    #[inline(always)]
    fn status(&self) -> &AtomicU32 {
        // SAFETY: the block status word is a 4-byte aligned u32 inside the mapping, shared with the
        // kernel, so it is accessed atomically.
        unsafe { &*(self.block_ptr().add(BD_STATUS) as *const AtomicU32) }
    }

    #[inline(always)]
    fn read_u32(&self, off: usize) -> u32 {
        // SAFETY: off is inside the current block, which the kernel handed to us (TP_STATUS_USER).
        unsafe { std::ptr::read_volatile(self.block_ptr().add(off) as *const u32) }
    }

    #[inline(always)]
    fn read_u16(&self, off: usize) -> u16 {
        // SAFETY: as read_u32.
        unsafe { std::ptr::read_volatile(self.block_ptr().add(off) as *const u16) }
    }

    /// Gives the current block back to the kernel and moves to the next one.
    #[inline]
    fn release(&mut self) {
        self.status().store(TP_STATUS_KERNEL, Ordering::Release);
        self.left = 0;
        self.block = (self.block + 1) % self.block_count;
    }
}

impl RxQueue for AfRx {
    fn rx_burst(&mut self, cache: &mut PoolCache, out: &mut Burst, max: usize) -> Rx {
        let mut rx = Rx::default();
        while rx.packets < max {
            if self.left == 0 {
                if self.status().load(Ordering::Acquire) & TP_STATUS_USER == 0 {
                    break;
                }
                fence(Ordering::Acquire);
                let n = self.read_u32(BD_NUM_PKTS);
                if n == 0 {
                    self.release();
                    continue;
                }
                self.left = n;
                self.off = self.read_u32(BD_FIRST) as usize;
            }
            let h = self.off;
            let snap = self.read_u32(h + H_SNAPLEN) as usize;
            let mac = self.read_u16(h + H_MAC) as usize;
            let st = self.read_u32(h + H_STATUS);
            if h + mac + snap > self.block_size {
                // Corrupt descriptor: drop the rest of the block.
                self.release();
                continue;
            }
            let Some(mut p) = cache.alloc() else {
                rx.nombuf += 1;
                break;
            };
            // SAFETY: the frame lies inside the current block (checked above), which we hold.
            let frame = unsafe { std::slice::from_raw_parts(self.block_ptr().add(h + mac), snap) };
            let ok = if st & TP_STATUS_VLAN_VALID != 0 && snap >= 12 {
                // The kernel took the tag out of the data: put it back.
                let tci = self.read_u16(h + H_VLAN_TCI);
                let tpid = if st & TP_STATUS_VLAN_TPID_VALID != 0 { self.read_u16(h + H_VLAN_TPID) } else { 0x8100 };
                match p.room_mut(snap + 4) {
                    Some(d) => {
                        d[..12].copy_from_slice(&frame[..12]);
                        d[12..14].copy_from_slice(&tpid.to_be_bytes());
                        d[14..16].copy_from_slice(&tci.to_be_bytes());
                        d[16..].copy_from_slice(&frame[12..]);
                        p.set_data_len(snap + 4).is_ok()
                    }
                    None => false,
                }
            } else {
                p.copy_from(frame).is_ok()
            };
            let next = self.read_u32(h + H_NEXT) as usize;
            self.left -= 1;
            self.off = h + next;
            if self.left == 0 {
                self.release();
            }
            if !ok {
                // Larger than a buffer: not receivable.
                cache.free(p);
                continue;
            }
            rx.bytes += p.len() as u64;
            p.meta_mut().set_input(self.port, self.queue);
            out.push(p);
            rx.packets += 1;
        }
        rx
    }
}

/// TX queue: one sendmmsg(MSG_DONTWAIT) per burst from the buffers themselves.
struct AfTx {
    sock: Arc<Sock>,
    iov: Vec<libc::iovec>,
    msgs: Vec<libc::mmsghdr>,
}

// SAFETY: iov/msgs only hold pointers during a tx_burst call; the queue is used by one thread at a time.
unsafe impl Send for AfTx {}

impl AfTx {
    fn new(sock: Arc<Sock>) -> AfTx {
        AfTx { sock, iov: Vec::new(), msgs: Vec::new() }
    }
}

impl TxQueue for AfTx {
    fn tx_burst(&mut self, cache: &mut PoolCache, burst: &mut Burst) -> usize {
        let n = burst.len();
        if n == 0 {
            return 0;
        }
        self.iov.clear();
        self.msgs.clear();
        for p in burst.iter() {
            self.iov.push(libc::iovec { iov_base: p.data_ptr().cast(), iov_len: p.len() });
        }
        for iov in self.iov.iter_mut() {
            // SAFETY: mmsghdr is plain data; all zero is valid (no name, no control).
            let mut m: libc::mmsghdr = unsafe { std::mem::zeroed() };
            m.msg_hdr.msg_iov = iov as *mut libc::iovec;
            m.msg_hdr.msg_iovlen = 1;
            self.msgs.push(m);
        }
        // SAFETY: msgs/iov point to the live packet data of `burst` for the duration of the call.
        let r = unsafe { libc::sendmmsg(self.sock.fd, self.msgs.as_mut_ptr(), n as libc::c_uint, libc::MSG_DONTWAIT) };
        let sent = if r < 0 { 0 } else { r as usize };
        if sent == n {
            cache.free_burst(burst);
        } else {
            for p in burst.drain_front(sent) {
                cache.free(p);
            }
        }
        sent
    }
}

// TX ring (TPACKET_V2 frames), the alternative measured against sendmmsg.
const PACKET_TX_RING: libc::c_int = 13;
const TPACKET_V2: libc::c_int = 1;
const TP_STATUS_SEND_REQUEST: u32 = 1;
const TP_STATUS_SENDING: u32 = 2;
/// Data offset in a TX frame: TPACKET_ALIGN(sizeof(struct tpacket2_hdr)).
const TX_DATA: usize = 32;
const TX_FRAMES_PER_BLOCK: u32 = 32;

/// struct tpacket_req.
#[repr(C)]
struct TpacketReq {
    block_size: u32,
    block_nr: u32,
    frame_size: u32,
    frame_nr: u32,
}

/// A TX-only socket (protocol 0: receives nothing) with a TPACKET_V2 TX ring.
fn open_tx_ring(a: &AfPacketCfg, ifindex: libc::c_uint) -> Result<(Sock, usize)> {
    let iface = &a.iface;
    // SAFETY: plain socket(2) call.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        bail!("af_packet: socket(AF_PACKET) for the TX ring failed: {}", io::Error::last_os_error());
    }
    let mut sock = Sock { fd, ring: std::ptr::null_mut(), ring_len: 0 };
    let v: libc::c_int = TPACKET_V2;
    setopt(fd, libc::SOL_PACKET, PACKET_VERSION, &v).map_err(|e| anyhow!("af_packet: TPACKET_V2 refused: {e}"))?;
    let one: libc::c_int = 1;
    if a.qdisc_bypass {
        setopt(fd, libc::SOL_PACKET, PACKET_QDISC_BYPASS, &one).map_err(|e| {
            anyhow!("af_packet: PACKET_QDISC_BYPASS refused on `{iface}`: {e}; set qdisc_bypass: false")
        })?;
    }
    let block_nr = (a.tx_frames.get() as u32).div_ceil(TX_FRAMES_PER_BLOCK);
    let req = TpacketReq {
        block_size: FRAME_SIZE * TX_FRAMES_PER_BLOCK,
        block_nr,
        frame_size: FRAME_SIZE,
        frame_nr: block_nr * TX_FRAMES_PER_BLOCK,
    };
    setopt(fd, libc::SOL_PACKET, PACKET_TX_RING, &req).map_err(|e| {
        anyhow!("af_packet: TX ring of `{iface}` ({} frames) refused: {e}; lower af_packet.tx_frames", req.frame_nr)
    })?;
    let len = (req.frame_nr * FRAME_SIZE) as usize;
    // SAFETY: mapping the TX ring just configured on fd.
    let p =
        unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0) };
    if p == libc::MAP_FAILED {
        bail!(
            "af_packet: mapping the TX ring of `{iface}` failed: {}; lower af_packet.tx_frames",
            io::Error::last_os_error()
        );
    }
    sock.ring = p.cast();
    sock.ring_len = len;
    // SAFETY: sockaddr_ll is plain data; all zero is valid.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_ifindex = ifindex as libc::c_int;
    // SAFETY: sll is a valid sockaddr_ll of the given size.
    let r = unsafe {
        libc::bind(
            fd,
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if r < 0 {
        bail!("af_packet: bind of the TX socket to `{iface}` failed: {}", io::Error::last_os_error());
    }
    Ok((sock, req.frame_nr as usize))
}

/// TX queue on a TPACKET_V2 TX ring: copy into free frames, one send(MSG_DONTWAIT) kick per burst.
struct AfTxRing {
    sock: Sock,
    frames: usize,
    cur: usize,
}

// SAFETY: the ring mapping is owned by `sock` and used by the one thread running this queue.
unsafe impl Send for AfTxRing {}

impl TxQueue for AfTxRing {
    fn tx_burst(&mut self, cache: &mut PoolCache, burst: &mut Burst) -> usize {
        let mut taken = 0;
        for p in burst.iter() {
            // SAFETY: cur < frames, so the frame lies inside the mapping.
            let f = unsafe { self.sock.ring.add(self.cur * FRAME_SIZE as usize) };
            // SAFETY: tp_status is an aligned u32 at the frame start, shared with the kernel.
            let status = unsafe { &*(f as *const AtomicU32) };
            let len = p.len();
            if status.load(Ordering::Acquire) & (TP_STATUS_SEND_REQUEST | TP_STATUS_SENDING) != 0
                || len > FRAME_SIZE as usize - TX_DATA
            {
                break;
            }
            // SAFETY: the frame is free (status checked), len fits after the header; tp_len at offset 4.
            unsafe {
                std::ptr::copy_nonoverlapping(p.data_ptr(), f.add(TX_DATA), len);
                std::ptr::write_volatile(f.add(4) as *mut u32, len as u32);
            }
            status.store(TP_STATUS_SEND_REQUEST, Ordering::Release);
            self.cur = (self.cur + 1) % self.frames;
            taken += 1;
        }
        if taken > 0 {
            // SAFETY: a zero-length send on our socket: the kick that transmits the ring's requests.
            unsafe { libc::send(self.sock.fd, std::ptr::null(), 0, libc::MSG_DONTWAIT) };
            for p in burst.drain_front(taken) {
                cache.free(p);
            }
        }
        taken
    }
}
