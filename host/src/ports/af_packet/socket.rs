//! AF_PACKET sockets: the interface lookups, one socket per queue with its options, its TPACKET_V3
//! RX ring mapped, bound to the interface. Kernel structures and constants are libc's.

use crate::config::AfPacketCfg;
use crate::ports::iface::setopt;
use anyhow::{anyhow, bail, Result};
use std::io;

/// Frame slots of the RX ring (TPACKET_V3 packs frames by their length; this only sets the count).
pub(super) const FRAME_SIZE: u32 = 2048;
/// A block is handed to us when full or after this many milliseconds.
const RETIRE_TOV_MS: u32 = 1;

/// One AF_PACKET socket and its RX ring mapping; Drop unmaps and closes.
pub(super) struct Sock {
    pub fd: libc::c_int,
    pub ring: *mut u8,
    pub ring_len: usize,
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

pub(super) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

/// A socket bound to `ifindex` with the options of `a` and its RX ring mapped.
pub(super) fn open(a: &AfPacketCfg, ifindex: libc::c_uint) -> Result<Sock> {
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
    options(&sock, a)?;
    map_rx_ring(&mut sock, a)?;
    bind(&sock, ifindex, proto as u16, iface)?;
    if a.promisc {
        let m = libc::packet_mreq {
            mr_ifindex: ifindex as libc::c_int,
            mr_type: libc::PACKET_MR_PROMISC as u16,
            mr_alen: 0,
            mr_address: [0; 8],
        };
        setopt(fd, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &m)
            .map_err(|e| anyhow!("af_packet: promiscuous mode on `{iface}` refused: {e}; set promisc: false"))?;
    }
    Ok(sock)
}

fn options(sock: &Sock, a: &AfPacketCfg) -> Result<()> {
    let (fd, iface) = (sock.fd, &a.iface);
    let v = libc::tpacket_versions::TPACKET_V3 as libc::c_int;
    setopt(fd, libc::SOL_PACKET, libc::PACKET_VERSION, &v).map_err(|e| {
        anyhow!("af_packet: PACKET_VERSION TPACKET_V3 refused on `{iface}`: {e} (kernel >= 3.2 needed)")
    })?;
    let one: libc::c_int = 1;
    if setopt(fd, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, &one).is_err() {
        tracing::warn!(iface = %iface, "af_packet: PACKET_IGNORE_OUTGOING unsupported (kernel < 4.20): TX is also seen on RX");
    }
    if a.qdisc_bypass {
        setopt(fd, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, &one).map_err(|e| {
            anyhow!("af_packet: PACKET_QDISC_BYPASS refused on `{iface}`: {e}; set qdisc_bypass: false")
        })?;
    }
    // Each frame comes with a virtio-net header (checksum start/offset, GSO type and size), and each
    // frame sent starts with one: how frames whose checksum or segmentation the sender's kernel left
    // to the device are completed (see rx.rs). Must come before the ring.
    setopt(fd, libc::SOL_PACKET, libc::PACKET_VNET_HDR, &one)
        .map_err(|e| anyhow!("af_packet: PACKET_VNET_HDR refused on `{iface}`: {e}"))?;
    Ok(())
}

/// The socket's drop counters since the last read (reading resets them): frames the kernel could
/// not put in the ring because it was full, and how many times the ring froze.
pub(super) fn read_stats(fd: libc::c_int) -> io::Result<libc::tpacket_stats_v3> {
    let mut st = libc::tpacket_stats_v3 { tp_packets: 0, tp_drops: 0, tp_freeze_q_cnt: 0 };
    let mut len = std::mem::size_of::<libc::tpacket_stats_v3>() as libc::socklen_t;
    // SAFETY: st is a writable tpacket_stats_v3 of `len` bytes, which is what the kernel writes for
    // a TPACKET_V3 socket.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
            (&mut st as *mut libc::tpacket_stats_v3).cast(),
            &mut len,
        )
    };
    if r == 0 {
        Ok(st)
    } else {
        Err(io::Error::last_os_error())
    }
}

fn map_rx_ring(sock: &mut Sock, a: &AfPacketCfg) -> Result<()> {
    let (fd, iface) = (sock.fd, &a.iface);
    let block_size = a.block_size.get() as u32;
    let block_nr = a.block_count.get() as u32;
    let req = libc::tpacket_req3 {
        tp_block_size: block_size,
        tp_block_nr: block_nr,
        tp_frame_size: FRAME_SIZE,
        tp_frame_nr: (block_size / FRAME_SIZE) * block_nr,
        tp_retire_blk_tov: RETIRE_TOV_MS,
        tp_sizeof_priv: 0,
        tp_feature_req_word: 0,
    };
    if let Err(e) = setopt(fd, libc::SOL_PACKET, libc::PACKET_RX_RING, &req) {
        let why = if e.raw_os_error() == Some(libc::ENOMEM) {
            format!("the kernel could not allocate {block_nr} blocks of {block_size} B; lower af_packet.block_count / block_size or free memory")
        } else {
            "check af_packet.block_size (power of two, multiple of the page size) and block_count".to_string()
        };
        bail!("af_packet: RX ring of `{iface}` refused: {e}; {why}");
    }
    let len = block_size as usize * block_nr as usize;
    let map = |flags: libc::c_int| {
        // SAFETY: mapping the ring just configured on fd; the kernel checks the length.
        unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, flags, fd, 0) }
    };
    // MAP_LOCKED can fail on RLIMIT_MEMLOCK: then without it.
    let mut p = map(libc::MAP_SHARED | libc::MAP_LOCKED | libc::MAP_POPULATE);
    if p == libc::MAP_FAILED {
        p = map(libc::MAP_SHARED);
    }
    if p == libc::MAP_FAILED {
        bail!(
            "af_packet: mapping the RX ring of `{iface}` ({len} B) failed: {}; lower af_packet.block_count / block_size, or raise the memory limits (ulimit -l, cgroup memory)",
            io::Error::last_os_error()
        );
    }
    sock.ring = p.cast();
    sock.ring_len = len;
    Ok(())
}

fn bind(sock: &Sock, ifindex: libc::c_uint, proto_be: u16, iface: &str) -> Result<()> {
    // SAFETY: sockaddr_ll is plain data; all zero is a valid value.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = proto_be;
    sll.sll_ifindex = ifindex as libc::c_int;
    // SAFETY: sll is a valid sockaddr_ll of the given size.
    let r = unsafe {
        libc::bind(
            sock.fd,
            (&sll as *const libc::sockaddr_ll).cast(),
            std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    };
    if r < 0 {
        bail!("af_packet: bind to `{iface}` failed: {}", io::Error::last_os_error());
    }
    Ok(())
}

/// Joins `fd` to fanout group `group` (PACKET_FANOUT_HASH: one flow stays on one queue).
pub(super) fn join_fanout(fd: libc::c_int, group: u32) -> io::Result<()> {
    let arg: u32 = group | (libc::PACKET_FANOUT_HASH << 16);
    setopt(fd, libc::SOL_PACKET, libc::PACKET_FANOUT, &arg)
}
