//! The bpf(2) calls of an af_xdp port, without clang or libbpf: the XSKMAP (RX queue index ->
//! socket), the program of [`program`](super::program) loaded into the kernel (the verifier's log
//! in the error when it refuses it), and the program attached with a BPF link (BPF_LINK_CREATE), not through netlink: a link lives as long as its file
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

/// `BPF_F_XDP_HAS_FRAGS`: the program handles frames in several buffers (it reads only the first).
const BPF_F_XDP_HAS_FRAGS: u32 = 1 << 5;

/// Loads the program for `map`, passing what `pass` names to the kernel (`mac`: the port's), marked
/// as handling multi-buffer frames when `frags`; on refusal, loads it again with the verifier's log
/// to say why.
pub(super) fn load(map: &OwnedFd, pass: &[crate::config::XdpPass], mac: [u8; 6], frags: bool) -> Result<OwnedFd> {
    let insns = super::program::build(map.as_raw_fd(), pass, mac, super::program::XDP_PASS);
    load_insns(&insns, if frags { BPF_F_XDP_HAS_FRAGS } else { 0 })
}

/// Loads `insns` as an XDP program with `prog_flags`.
fn load_insns(insns: &[u64], prog_flags: u32) -> Result<OwnedFd> {
    let license = b"Dual MIT/GPL\0";
    let mut log = vec![0u8; 0];
    let attempt = |log: &mut Vec<u8>| {
        let mut a = ProgLoad {
            prog_type: BPF_PROG_TYPE_XDP,
            insn_cnt: insns.len() as u32,
            insns: insns.as_ptr() as u64,
            license: license.as_ptr() as u64,
            prog_name: name16("wasmdp_xsk"),
            prog_flags,
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
#[repr(C)]
#[derive(Default)]
struct TestRun {
    prog_fd: u32,
    retval: u32,
    data_size_in: u32,
    data_size_out: u32,
    data_in: u64,
    data_out: u64,
    repeat: u32,
    duration: u32,
}

/// The verdict the kernel's program `prog` gives `frame` (BPF_PROG_TEST_RUN, no interface).
#[cfg(test)]
fn test_run(prog: &OwnedFd, frame: &[u8]) -> io::Result<u32> {
    const BPF_PROG_TEST_RUN: libc::c_int = 10;
    let mut out = vec![0u8; frame.len() + 256];
    let mut a = TestRun {
        prog_fd: prog.as_raw_fd() as u32,
        data_size_in: frame.len() as u32,
        data_size_out: out.len() as u32,
        data_in: frame.as_ptr() as u64,
        data_out: out.as_mut_ptr() as u64,
        repeat: 1,
        ..Default::default()
    };
    bpf(BPF_PROG_TEST_RUN, &mut a)?;
    Ok(a.retval)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{EtherType, XdpPass};

    #[test]
    fn names_are_nul_terminated() {
        assert_eq!(name16("wasmdp_xsk_much_too_long")[15], 0);
    }

    /// The pass list's verdicts, run by the kernel's own BPF interpreter or JIT on crafted frames:
    /// 2 (XDP_PASS) for what goes to the kernel, 1 (the test's miss value, XDP_DROP) for what goes to
    /// the redirect, whose map has no socket here. Needs root (CAP_BPF); skipped without.
    #[test]
    fn the_kernel_runs_the_pass_list_as_written() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: loading XDP programs needs root");
            return;
        }
        let mac = [2, 0, 0, 0, 0, 9];
        let pass = [
            XdpPass::Arp,
            XdpPass::Ndp,
            XdpPass::Ethertype(EtherType(0x88cc)),
            XdpPass::Ipv4Dst(std::net::Ipv4Addr::new(10, 1, 2, 3)),
        ];
        let map = xskmap(4).unwrap();
        let prog = |pass: &[XdpPass]| {
            load_insns(&super::super::program::build(map.as_raw_fd(), pass, mac, 1), 0)
                .unwrap_or_else(|e| panic!("{e:#}"))
        };
        let frame = |dst: [u8; 6], ethertype: u16, rest: &[u8]| {
            let mut f = dst.to_vec();
            f.extend_from_slice(&[2, 0, 0, 0, 0, 1]);
            f.extend_from_slice(&ethertype.to_be_bytes());
            f.extend_from_slice(rest);
            f.resize(f.len().max(60), 0);
            f
        };
        let ipv4 = |dst: [u8; 4]| {
            let mut h = vec![0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1];
            h.extend_from_slice(&dst);
            h
        };
        let icmp6 = |ty: u8, next: u8| {
            let mut h = vec![0x60, 0, 0, 0, 0, 8, next, 255];
            h.extend_from_slice(&[0; 32]);
            h.extend_from_slice(&[ty, 0, 0, 0]);
            h
        };
        let p = prog(&pass);
        let cases: &[(&str, Vec<u8>, u32)] = &[
            ("ARP", frame(mac, 0x0806, &[0; 28]), 2),
            ("LLDP", frame(mac, 0x88cc, &[0; 20]), 2),
            ("IPv4 to the host", frame(mac, 0x0800, &ipv4([10, 1, 2, 3])), 2),
            ("IPv4 elsewhere", frame(mac, 0x0800, &ipv4([10, 1, 2, 4])), 1),
            ("neighbour solicitation", frame(mac, 0x86dd, &icmp6(135, 58)), 2),
            ("router advertisement", frame(mac, 0x86dd, &icmp6(134, 58)), 2),
            ("ICMPv6 echo", frame(mac, 0x86dd, &icmp6(128, 58)), 1),
            ("type 135 but not ICMPv6", frame(mac, 0x86dd, &icmp6(135, 17)), 1),
            ("IPv6 cut short", frame(mac, 0x86dd, &icmp6(135, 58)[..30]).into_iter().take(44).collect(), 1),
            ("VLAN-tagged ARP", frame(mac, 0x8100, &[0, 5, 0x08, 0x06]), 1),
        ];
        for (what, f, want) in cases {
            assert_eq!(test_run(&p, f).unwrap(), *want, "{what}");
        }
        // not_our_mac: frames to another MAC (broadcast too) go to the kernel, ours are redirected.
        let p = prog(&[XdpPass::NotOurMac]);
        assert_eq!(test_run(&p, &frame(mac, 0x0800, &ipv4([1, 1, 1, 1]))).unwrap(), 1);
        assert_eq!(test_run(&p, &frame([0xff; 6], 0x0806, &[0; 28])).unwrap(), 2);
        assert_eq!(test_run(&p, &frame([2, 0, 0, 0, 0, 8], 0x0800, &[0; 20])).unwrap(), 2);
        assert_eq!(test_run(&p, &frame([2, 0, 0, 0, 1, 9], 0x0800, &[0; 20])).unwrap(), 2);
        // No list: every frame to the redirect.
        let p = prog(&[]);
        assert_eq!(test_run(&p, &frame(mac, 0x0806, &[0; 28])).unwrap(), 1);
    }
}
