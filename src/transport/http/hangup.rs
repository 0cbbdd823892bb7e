//! Learning at once that a stream's client closed its connection, without
//! waking the stream to look (issue 28 item 8).
//!
//! A stream's writer waits for events; a client that closes or resets its
//! connection sends nothing the writer would read, so until a write fails
//! the stream would keep what it holds (a place under
//! `max_listen_streams`, its session's one GET stream, its connection).
//! On Linux one thread of the process waits in `epoll` for the hang-ups of
//! the sockets of the streams being written (`EPOLLRDHUP`: the client's
//! FIN; `EPOLLHUP`, `EPOLLERR`: a reset) and tells the stream whose client
//! left (a probe on its channel, `Stream::poke`); its writer then looks at
//! its socket (`answer::peer_closed`) and ends. An idle stream costs nothing: no
//! wake-up, no system call. The thread runs while some stream is watched,
//! and ends (closing its `epoll` descriptor) about a second after the last
//! one. Elsewhere, and when `epoll` fails, [`watch`] answers `None` and the
//! writer looks at its socket twice a second instead.

use std::sync::Arc;

/// What tells a stream that its client left: called once, on the
/// watcher's thread, when the client closed or reset the connection (or
/// only shut its sending side down).
pub(crate) type Tell = Arc<dyn Fn() + Send + Sync>;

/// A stream's watch on its socket; dropping it stops watching.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) struct Watch {
    #[cfg(target_os = "linux")]
    key: u64,
    #[cfg(target_os = "linux")]
    fd: std::os::unix::io::RawFd,
}

/// Watches `socket` for its peer's close; `None` when this platform, or
/// the moment, cannot.
#[cfg(not(target_os = "linux"))]
pub(crate) fn watch(_socket: &std::net::TcpStream, _tell: Tell) -> Option<Watch> {
    None
}

#[cfg(target_os = "linux")]
pub(crate) use linux::watch;

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashMap;
    use std::net::TcpStream;
    use std::os::unix::io::{AsRawFd, RawFd};
    use std::time::Duration;

    use nix::errno::Errno;
    use nix::sys::epoll::{
        epoll_create1, epoll_ctl, epoll_wait, EpollCreateFlags, EpollEvent, EpollFlags, EpollOp,
    };
    use parking_lot::{const_mutex, Mutex};

    use super::{Tell, Watch};

    /// How long the thread waits before it looks whether it still has
    /// streams to watch, in milliseconds.
    const IDLE_WAIT_MS: isize = 1000;

    /// The process's watcher: its `epoll` descriptor and the streams it
    /// watches, by key.
    struct Watcher {
        epoll: Option<RawFd>,
        streams: Option<HashMap<u64, Tell>>,
        next_key: u64,
        running: bool,
    }

    static WATCHER: Mutex<Watcher> = const_mutex(Watcher {
        epoll: None,
        streams: None,
        next_key: 0,
        running: false,
    });

    /// Watches `socket` for its peer's close; `None` when `epoll` or the
    /// thread cannot be had (the writer then looks itself).
    pub(crate) fn watch(socket: &TcpStream, tell: Tell) -> Option<Watch> {
        let fd = socket.as_raw_fd();
        let mut watcher = WATCHER.lock();
        let epoll = match watcher.epoll {
            Some(epoll) => epoll,
            None => {
                let epoll = epoll_create1(EpollCreateFlags::EPOLL_CLOEXEC).ok()?;
                watcher.epoll = Some(epoll);
                epoll
            }
        };
        let key = watcher.next_key;
        watcher.next_key += 1;
        // Reported once: a hang-up stays true, and would be reported again
        // and again. Bytes the client sends (EPOLLIN) are not asked for.
        let flags = EpollFlags::EPOLLRDHUP | EpollFlags::EPOLLONESHOT;
        epoll_ctl(
            epoll,
            EpollOp::EpollCtlAdd,
            fd,
            &mut EpollEvent::new(flags, key),
        )
        .ok()?;
        let streams = watcher.streams.get_or_insert_with(HashMap::new);
        streams.insert(key, tell);
        let watch = Watch { key, fd };
        if !watcher.running {
            let started = std::thread::Builder::new()
                .name("tiny-mcp-hangups".into())
                .stack_size(64 * 1024)
                .spawn(run);
            if let Err(e) = started {
                log::warn!("cannot start the thread that watches streams: {}", e);
                drop(watcher);
                return None; // `watch` is dropped: unregistered
            }
            watcher.running = true;
        }
        Some(watch)
    }

    impl Drop for Watch {
        fn drop(&mut self) {
            let mut watcher = WATCHER.lock();
            // The socket is still open: its connection closes it after the
            // stream.
            if let Some(epoll) = watcher.epoll {
                let _ = epoll_ctl(epoll, EpollOp::EpollCtlDel, self.fd, None);
            }
            if let Some(streams) = watcher.streams.as_mut() {
                streams.remove(&self.key);
            }
        }
    }

    /// The thread: tells each stream whose client left, until none is
    /// watched for a whole wait.
    fn run() {
        let mut events = [EpollEvent::empty(); 64];
        loop {
            let epoll = match WATCHER.lock().epoll {
                Some(epoll) => epoll,
                None => return,
            };
            let n = match epoll_wait(epoll, &mut events, IDLE_WAIT_MS) {
                Ok(n) => n,
                Err(Errno::EINTR) => 0,
                Err(e) => {
                    // The number, not nix's text: its table of every
                    // errno's text is 24 KB of the static binary.
                    log::error!("waiting for streams' hang-ups failed: errno {}", e as i32);
                    std::thread::sleep(Duration::from_millis(IDLE_WAIT_MS as u64));
                    0
                }
            };
            let mut watcher = WATCHER.lock();
            let tells: Vec<Tell> = match watcher.streams.as_ref() {
                Some(streams) => events[..n]
                    .iter()
                    .filter_map(|event| streams.get(&event.data()).cloned())
                    .collect(),
                None => Vec::new(),
            };
            if !tells.is_empty() {
                // Told outside the lock: a stream's own lock comes next.
                drop(watcher);
                tells.iter().for_each(|tell| tell());
                continue;
            }
            let idle = watcher.streams.as_ref().map_or(true, HashMap::is_empty);
            if n == 0 && idle {
                if let Some(epoll) = watcher.epoll.take() {
                    let _ = nix::unistd::close(epoll);
                }
                watcher.streams = None;
                watcher.running = false;
                return;
            }
        }
    }
}
