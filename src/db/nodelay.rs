//! `TCP_NODELAY` on the connections to PostgreSQL.
//!
//! sqlx 0.9.0 stopped setting it (transact-rs/sqlx#4335; the fix, #4336, is
//! merged but not yet released). Without it, a message that leaves in more than
//! one write waits for the server's delayed ACK under Nagle's algorithm, about
//! 40 ms: over TLS that is any message longer than rustls takes at once, and
//! in plain text the tail of any message longer than a segment. The batch
//! writer's multi-row inserts are such messages, so with `sslmode=prefer` (the
//! default) against a server with TLS on, the collect benchmark wrote ten times
//! fewer events. sqlx gives no access to its socket, so after each new
//! connection this sets the option on every TCP socket of the process whose
//! peer is the server's port. Remove it once sqlx sets the option again.

use std::os::fd::OwnedFd;

use rustix::io::Errno;
use rustix::net::{getpeername, sockopt};
use rustix::process::{PidfdFlags, PidfdGetfdFlags, getpid, pidfd_getfd, pidfd_open};

/// Sets `TCP_NODELAY` on this process's TCP sockets to `port`. A socket
/// whose option cannot be set keeps Nagle's algorithm, which is only slower.
pub(super) fn set_on_sockets_to(port: u16) {
    for socket in tcp_sockets_to(port) {
        sockopt::set_tcp_nodelay(&socket, true).ok();
    }
}

/// This process's TCP sockets whose peer is `port`, each as a descriptor of
/// its own that refers to the same socket.
pub fn tcp_sockets_to(port: u16) -> Vec<OwnedFd> {
    let this_process = match pidfd_open(getpid(), PidfdFlags::empty()) {
        Ok(this_process) => this_process,
        Err(err) => {
            warn_cannot(err);
            return Vec::new();
        }
    };
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else {
        return Vec::new();
    };
    let mut refused = None;
    let sockets = entries
        .flatten()
        .filter(|entry| {
            std::fs::read_link(entry.path()).is_ok_and(|target| target.to_string_lossy().starts_with("socket:"))
        })
        .filter_map(|entry| entry.file_name().to_str().and_then(|name| name.parse().ok()))
        // If the number was closed (EBADF) or reused since it was listed, the
        // copy is of whatever it is now, and the peer check below still applies.
        .filter_map(|fd| match pidfd_getfd(&this_process, fd, PidfdGetfdFlags::empty()) {
            Ok(socket) => Some(socket),
            Err(err) => {
                if err != Errno::BADF {
                    refused = Some(err);
                }
                None
            }
        })
        .filter(|socket| match getpeername(socket) {
            Ok(Some(peer)) => std::net::SocketAddr::try_from(peer).is_ok_and(|addr| addr.port() == port),
            _ => false,
        })
        .collect();
    if let Some(err) = refused {
        warn_cannot(err);
    }
    sockets
}

/// A kernel before 5.6 or a seccomp profile may refuse the pidfd calls. The
/// service still works, only slower over TLS, and the operator should know.
fn warn_cannot(err: Errno) {
    tracing::warn!(
        error = %err,
        "cannot set TCP_NODELAY on PostgreSQL connections; large writes over TLS may wait 40 ms each"
    );
}
