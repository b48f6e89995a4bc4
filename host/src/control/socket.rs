//! Where the control socket lives and how it is created: mode 0600, never over someone else's file,
//! a stale socket (nobody listening) replaced, a live one (another wasmdp) refused.

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// The default: `$XDG_RUNTIME_DIR/wasmdp.sock` (a per-user folder), else `/tmp/wasmdp-UID.sock`.
pub fn default_path() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("wasmdp.sock"),
        // SAFETY: getuid has no preconditions and cannot fail.
        None => PathBuf::from(format!("/tmp/wasmdp-{}.sock", unsafe { libc::getuid() })),
    }
}

/// Binds `path` for the owner only.
pub(super) fn bind(path: &Path) -> anyhow::Result<UnixListener> {
    let shown = path.display();
    if let Ok(m) = std::fs::symlink_metadata(path) {
        // SAFETY: as above.
        let me = unsafe { libc::getuid() };
        if m.uid() != me {
            anyhow::bail!(
                "control socket {shown}: the file exists and belongs to uid {}, not to us ({me}); refusing to touch it",
                m.uid()
            );
        }
        if !m.file_type().is_socket() {
            anyhow::bail!("control socket {shown}: the path exists and is not a socket; remove it or choose another `control.socket`");
        }
        if UnixStream::connect(path).is_ok() {
            anyhow::bail!(
                "control socket {shown}: another wasmdp is listening there; give this one another `control.socket`"
            );
        }
        std::fs::remove_file(path)
            .map_err(|e| anyhow::anyhow!("control socket {shown}: removing the stale socket: {e}"))?;
    }
    // Connecting needs write permission on the socket, which the usual umask (022) already denies
    // to group and others between the bind and the chmod; the process-wide umask is left alone.
    let listener = UnixListener::bind(path).map_err(|e| anyhow::anyhow!("control socket {shown}: {e}"))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}
