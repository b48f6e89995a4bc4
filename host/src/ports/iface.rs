//! Linux interfaces as the socket drivers (`af_packet`, `af_xdp`) need them: the name checked, the
//! index and MTU looked up, socket options set.

use anyhow::{anyhow, bail, Result};
use std::ffi::CString;
use std::io;

/// Checks an interface name from `DRIVER.iface` (the error starts with the key).
pub(crate) fn check_name(driver: &str, iface: &str) -> Result<(), String> {
    if iface.is_empty() || iface.len() > 15 || iface.contains(['/', ' ', '\0']) {
        return Err(format!(
            "{driver}.iface: invalid interface name {iface:?}; a Linux interface name is 1 to 15 characters, no '/' or spaces"
        ));
    }
    Ok(())
}

pub(crate) fn setopt<T>(fd: libc::c_int, level: libc::c_int, name: libc::c_int, v: &T) -> io::Result<()> {
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

/// Reads an `ifreq` (SIOCGIFFLAGS, SIOCGIFMTU) of `iface` through `fd`.
fn ifreq(fd: libc::c_int, iface: &str, req: libc::c_ulong) -> io::Result<libc::ifreq> {
    // SAFETY: ifreq is plain data; all zero is a valid value.
    let mut r: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in r.ifr_name.iter_mut().zip(iface.bytes().take(libc::IFNAMSIZ - 1)) {
        *d = s as libc::c_char;
    }
    // SAFETY: r is a properly sized struct ifreq for SIOCGIF* requests, which write inside it.
    let rc = unsafe { libc::ioctl(fd, req as _, &mut r as *mut libc::ifreq) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r)
}

/// The index of interface `iface`, or an error that says how to find the right name (`driver`
/// starts the message).
pub(crate) fn ifindex(driver: &str, iface: &str) -> Result<libc::c_uint> {
    let name = CString::new(iface).map_err(|_| anyhow!("{driver}.iface: contains a NUL byte"))?;
    // SAFETY: name is a valid NUL-terminated string.
    let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
    if ifindex == 0 {
        bail!(
            "{driver}: interface `{iface}` does not exist ({}); check `ip link` (and the network namespace) or fix {driver}.iface",
            io::Error::last_os_error()
        );
    }
    Ok(ifindex)
}

/// An `ifreq` request about `iface` (SIOCGIFFLAGS, SIOCGIFMTU) through a socket opened for it.
fn ask(iface: &str, req: libc::c_ulong) -> io::Result<libc::ifreq> {
    // SAFETY: plain socket(2) call.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let r = ifreq(fd, iface, req);
    // SAFETY: fd is ours and closed once.
    unsafe { libc::close(fd) };
    r
}

/// The MTU of interface `iface` now.
pub(crate) fn mtu(iface: &str) -> Result<usize> {
    let r = ask(iface, libc::SIOCGIFMTU).map_err(|e| anyhow!("reading the MTU of `{iface}` failed: {e}"))?;
    // SAFETY: SIOCGIFMTU filled the mtu member of the union.
    Ok(unsafe { r.ifr_ifru.ifru_mtu } as usize)
}

/// Interface `iface` exists and is up; returns its MTU. Needs no privileges (what `wasmdp validate`
/// checks).
pub(crate) fn interface_ready(driver: &str, iface: &str) -> Result<usize> {
    ifindex(driver, iface)?;
    let flags =
        ask(iface, libc::SIOCGIFFLAGS).map_err(|e| anyhow!("{driver}: reading the flags of `{iface}` failed: {e}"))?;
    // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
    if libc::c_int::from(unsafe { flags.ifr_ifru.ifru_flags }) & libc::IFF_UP == 0 {
        bail!("{driver}: interface `{iface}` is down; bring it up with `ip link set {iface} up`");
    }
    mtu(iface).map_err(|e| anyhow!("{driver}: {e}"))
}

/// How many RX queues interface `iface` has (`/sys/class/net/IFACE/queues/rx-N`); None when sysfs
/// does not say.
pub(crate) fn rx_queues(iface: &str) -> Option<u32> {
    let dir = std::fs::read_dir(format!("/sys/class/net/{iface}/queues")).ok()?;
    let n = dir.filter_map(Result::ok).filter(|e| e.file_name().to_string_lossy().starts_with("rx-")).count();
    u32::try_from(n).ok().filter(|&n| n > 0)
}

/// Whether interface `iface` has a device behind it (`/sys/class/net/IFACE/device`): physical NICs
/// do, virtual interfaces (veth, bridges, tun) do not.
pub(crate) fn has_device(iface: &str) -> bool {
    std::path::Path::new(&format!("/sys/class/net/{iface}/device")).exists()
}
