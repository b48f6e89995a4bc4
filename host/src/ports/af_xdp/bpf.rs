//! The XDP program that hands an interface's frames to our sockets, loaded through the bpf(2)
//! system call without clang or libbpf: an XSKMAP (RX queue index -> socket) and six instructions,
//!
//! ```text
//! r2 = *(u32 *)(r1 + 16)       ; ctx->rx_queue_index
//! r1 = map XSKMAP              ; ld_imm64, two slots
//! r3 = XDP_PASS                ; what happens when the queue has no socket of ours
//! call bpf_redirect_map        ; helper 51
//! exit
//! ```
//!
//! attached with a BPF link (BPF_LINK_CREATE), not through netlink: a link lives as long as its file
//! descriptor, so the program is detached when the port is dropped, on every error path, and when
//! the process dies, even by SIGKILL. A killed run therefore leaves no program behind; whatever is
//! found attached belongs to someone else and is reported, never replaced.

use anyhow::{anyhow, bail, Result};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const BPF_MAP_CREATE: libc::c_int = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_int = 2;
const BPF_PROG_LOAD: libc::c_int = 5;
const BPF_LINK_CREATE: libc::c_int = 28;
const BPF_MAP_TYPE_XSKMAP: u32 = 17;
const BPF_PROG_TYPE_XDP: u32 = 6;
/// `enum bpf_attach_type`: BPF_XDP.
const BPF_XDP: u32 = 37;
const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;
const XDP_PASS: i32 = 2;
const HELPER_REDIRECT_MAP: i32 = 51;
/// `ld_imm64`'s source register when the immediate is a map's file descriptor.
const BPF_PSEUDO_MAP_FD: u8 = 1;

/// Where the program runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Attach {
    /// In the driver.
    Native,
    /// In the generic path (an skb already built).
    Generic,
}

impl Attach {
    pub(super) fn name(self) -> &'static str {
        match self {
            Attach::Native => "native",
            Attach::Generic => "generic",
        }
    }
    fn flags(self) -> u32 {
        match self {
            Attach::Native => XDP_FLAGS_DRV_MODE,
            Attach::Generic => XDP_FLAGS_SKB_MODE,
        }
    }
}

#[repr(C)]
#[derive(Default)]
struct MapCreate {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
    inner_map_fd: u32,
    numa_node: u32,
    map_name: [u8; 16],
}

#[repr(C)]
#[derive(Default)]
struct MapElem {
    map_fd: u32,
    pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

#[repr(C)]
#[derive(Default)]
struct ProgLoad {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
}

#[repr(C)]
#[derive(Default)]
struct LinkCreate {
    prog_fd: u32,
    target_ifindex: u32,
    attach_type: u32,
    flags: u32,
}

/// bpf(cmd, attr): the new file descriptor (or 0).
fn bpf<A>(cmd: libc::c_int, attr: &mut A) -> io::Result<libc::c_int> {
    // SAFETY: attr is a live, fully initialised bpf_attr prefix of size_of::<A>() bytes; the kernel
    // zero-extends it and reads only the members of `cmd`. Pointers inside it are to live buffers.
    let r = unsafe {
        libc::syscall(libc::SYS_bpf, cmd, (attr as *mut A).cast::<libc::c_void>(), std::mem::size_of::<A>() as u32)
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as libc::c_int)
    }
}

fn owned(fd: libc::c_int) -> OwnedFd {
    // SAFETY: fd was just returned by the kernel for us and is owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

fn name16(s: &str) -> [u8; 16] {
    let mut n = [0u8; 16];
    for (d, b) in n.iter_mut().zip(s.bytes().take(15)) {
        *d = b;
    }
    n
}

fn denied(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES))
}

const NO_PERMISSION: &str = "run as root, or give the binary CAP_BPF, CAP_NET_ADMIN and CAP_NET_RAW \
                             (setcap cap_bpf,cap_net_admin,cap_net_raw+ep)";

/// The XSKMAP: `entries` slots, one per RX queue index.
pub(super) fn xskmap(entries: u32) -> Result<OwnedFd> {
    let mut a = MapCreate {
        map_type: BPF_MAP_TYPE_XSKMAP,
        key_size: 4,
        value_size: 4,
        max_entries: entries,
        map_name: name16("wasmdp_xsks"),
        ..Default::default()
    };
    match bpf(BPF_MAP_CREATE, &mut a) {
        Ok(fd) => Ok(owned(fd)),
        Err(e) if denied(&e) => bail!("af_xdp: creating the XSKMAP was refused ({e}); {NO_PERMISSION}"),
        Err(e) => bail!("af_xdp: creating the XSKMAP failed: {e} (kernel >= 4.18 with CONFIG_XDP_SOCKETS needed)"),
    }
}

/// Puts socket `sock` at queue index `queue` of the XSKMAP.
pub(super) fn set_socket(map: &OwnedFd, queue: u32, sock: libc::c_int) -> io::Result<()> {
    let (key, value) = (queue, sock as u32);
    let mut a = MapElem {
        map_fd: map.as_raw_fd() as u32,
        key: &key as *const u32 as u64,
        value: &value as *const u32 as u64,
        ..Default::default()
    };
    bpf(BPF_MAP_UPDATE_ELEM, &mut a).map(|_| ())
}

/// One eBPF instruction.
fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> u64 {
    let mut b = [0u8; 8];
    b[0] = code;
    b[1] = (src << 4) | dst;
    b[2..4].copy_from_slice(&off.to_le_bytes());
    b[4..8].copy_from_slice(&imm.to_le_bytes());
    u64::from_le_bytes(b)
}

/// The redirect program for `map` (see the module docs).
fn program(map: &OwnedFd) -> [u64; 6] {
    const LDX_W: u8 = 0x61; // BPF_LDX | BPF_MEM | BPF_W
    const LD_IMM64: u8 = 0x18; // BPF_LD | BPF_IMM | BPF_DW
    const MOV64_K: u8 = 0xb7; // BPF_ALU64 | BPF_MOV | BPF_K
    const CALL: u8 = 0x85; // BPF_JMP | BPF_CALL
    const EXIT: u8 = 0x95; // BPF_JMP | BPF_EXIT
    /// offsetof(struct xdp_md, rx_queue_index)
    const RX_QUEUE_INDEX: i16 = 16;
    [
        insn(LDX_W, 2, 1, RX_QUEUE_INDEX, 0),
        insn(LD_IMM64, 1, BPF_PSEUDO_MAP_FD, 0, map.as_raw_fd()),
        insn(0, 0, 0, 0, 0),
        insn(MOV64_K, 3, 0, 0, XDP_PASS),
        insn(CALL, 0, 0, 0, HELPER_REDIRECT_MAP),
        insn(EXIT, 0, 0, 0, 0),
    ]
}

/// Loads the redirect program for `map`; on refusal, loads it again with the verifier's log to
/// say why.
pub(super) fn load(map: &OwnedFd) -> Result<OwnedFd> {
    let insns = program(map);
    let license = b"Dual MIT/GPL\0";
    let mut log = vec![0u8; 0];
    let attempt = |log: &mut Vec<u8>| {
        let mut a = ProgLoad {
            prog_type: BPF_PROG_TYPE_XDP,
            insn_cnt: insns.len() as u32,
            insns: insns.as_ptr() as u64,
            license: license.as_ptr() as u64,
            prog_name: name16("wasmdp_xsk"),
            expected_attach_type: BPF_XDP,
            ..Default::default()
        };
        if !log.is_empty() {
            a.log_level = 1;
            a.log_size = log.len() as u32;
            a.log_buf = log.as_mut_ptr() as u64;
        }
        bpf(BPF_PROG_LOAD, &mut a)
    };
    match attempt(&mut log) {
        Ok(fd) => Ok(owned(fd)),
        Err(e) if denied(&e) => bail!("af_xdp: loading the XDP program was refused ({e}); {NO_PERMISSION}"),
        Err(e) => {
            log.resize(16 << 10, 0);
            let _ = attempt(&mut log);
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let why = String::from_utf8_lossy(&log[..end]);
            bail!("af_xdp: the kernel refused the XDP program: {e}; verifier: {}", why.trim())
        }
    }
}

/// Why an attach failed: the mode is not supported by the driver (auto mode then tries generic),
/// or anything else.
pub(super) enum AttachError {
    Unsupported(anyhow::Error),
    Other(anyhow::Error),
}

impl From<AttachError> for anyhow::Error {
    fn from(e: AttachError) -> Self {
        match e {
            AttachError::Unsupported(e) | AttachError::Other(e) => e,
        }
    }
}

/// Attaches `prog` to interface `ifindex` (`iface`) in mode `mode`; the program stays attached as
/// long as the returned link.
pub(super) fn attach(prog: &OwnedFd, ifindex: u32, iface: &str, mode: Attach) -> Result<OwnedFd, AttachError> {
    let mut a = LinkCreate {
        prog_fd: prog.as_raw_fd() as u32,
        target_ifindex: ifindex,
        attach_type: BPF_XDP,
        flags: mode.flags(),
    };
    let e = match bpf(BPF_LINK_CREATE, &mut a) {
        Ok(fd) => return Ok(owned(fd)),
        Err(e) => e,
    };
    let m = mode.name();
    let off = if mode == Attach::Native { "xdpdrv" } else { "xdpgeneric" };
    Err(match e.raw_os_error() {
        Some(libc::EOPNOTSUPP) | Some(libc::EINVAL) => AttachError::Unsupported(anyhow!(
            "af_xdp: `{iface}` cannot run XDP in {m} mode ({e}); set af_xdp.mode: {} (or auto)",
            if mode == Attach::Native { "generic" } else { "native" }
        )),
        Some(libc::EPERM) | Some(libc::EACCES) => {
            AttachError::Other(anyhow!("af_xdp: attaching XDP to `{iface}` was refused ({e}); {NO_PERMISSION}"))
        }
        Some(libc::EBUSY) | Some(libc::EEXIST) => AttachError::Other(anyhow!(
            "af_xdp: `{iface}` already has an XDP program ({e}); it is not one of ours (wasmdp's program is detached \
             when its process ends, even killed): see `ip link show {iface}` and remove it with \
             `ip link set dev {iface} {off} off`, or run on another interface"
        )),
        _ => AttachError::Other(anyhow!(
            "af_xdp: attaching XDP to `{iface}` in {m} mode failed: {e} (kernel >= 5.9 needed for XDP links)"
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_are_encoded_as_the_kernel_reads_them() {
        // r2 = *(u32 *)(r1 + 16): opcode 0x61, dst 2 in the low nibble, src 1 in the high one.
        assert_eq!(insn(0x61, 2, 1, 16, 0).to_le_bytes(), [0x61, 0x12, 16, 0, 0, 0, 0, 0]);
        // call 51
        assert_eq!(insn(0x85, 0, 0, 0, 51).to_le_bytes(), [0x85, 0, 0, 0, 51, 0, 0, 0]);
        assert_eq!(name16("wasmdp_xsk_much_too_long")[15], 0, "names are NUL-terminated");
    }
}
