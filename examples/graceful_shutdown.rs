//! A server that shuts down cleanly on Ctrl-C or SIGTERM (on Windows:
//! Ctrl-C or Ctrl-Break), over stdio or HTTP, and a worker thread that
//! ends with it.
//!
//! ```text
//! cargo run --example graceful_shutdown             # stdio
//! cargo run --example graceful_shutdown -- 127.0.0.1:8080   # HTTP, /mcp
//! ```
//!
//! The `enqueue` tool hands jobs to a worker thread over a channel. On a
//! signal the server is closed: serving returns, the tool (and the
//! channel's sender it owns) is dropped, the worker's `for job in jobs`
//! ends, and `main` joins it and exits 0.

use std::thread;

use serde_json::json;
use tiny_mcp::{CallToolResult, JsonObject, RequestContext, Server, Tool};

fn main() -> Result<(), tiny_mcp::Error> {
    // crossbeam's Sender is Sync, as a handler's captures must be (std's
    // mpsc::Sender is Sync only from Rust 1.72).
    let (jobs, queue) = crossbeam_channel::unbounded::<String>();
    let worker = thread::spawn(move || {
        for job in queue {
            eprintln!("worker: {}", job);
        }
        eprintln!("worker: no more jobs");
    });
    let schema = json!({"type": "object", "properties": {"job": {"type": "string"}}});
    let server = Server::builder("graceful", "1.0.0")
        .tool(
            Tool::new("enqueue", schema).with_description("Queue a job"),
            move |_: &RequestContext, args: JsonObject| {
                let job = args
                    .get("job")
                    .and_then(|j| j.as_str())
                    .unwrap_or("nothing");
                let sent = jobs.send(job.to_string()).is_ok();
                Ok(CallToolResult::text(if sent { "queued" } else { "closed" }))
            },
        )
        .build();
    signals::close_on_signal(&server)?;
    match std::env::args().nth(1) {
        Some(addr) => {
            let http = server.http().endpoint("/mcp").serve(addr.as_str())?;
            eprintln!("serving on {}", http.url());
            http.join()?; // returns once the server is closed
        }
        None => server.serve_stdio()?, // returns at end of input or on close
    }
    drop(server); // the last owner of the tool, and so of `jobs`
    let _ = worker.join();
    eprintln!("shut down cleanly");
    Ok(())
}

/// SIGINT and SIGTERM close the server, with no dependency: the signal
/// handler writes a byte to a pipe (all it may safely do) and a thread
/// that reads the pipe closes the server through a weak handle.
#[cfg(unix)]
mod signals {
    use std::fs::File;
    use std::io::Read;
    use std::os::unix::io::FromRawFd;
    use std::sync::atomic::{AtomicI32, Ordering};

    use tiny_mcp::Server;

    const SIGINT: i32 = 2;
    const SIGTERM: i32 = 15;

    extern "C" {
        fn pipe(fds: *mut i32) -> i32;
        fn write(fd: i32, buf: *const u8, count: usize) -> isize;
        fn signal(signum: i32, handler: extern "C" fn(i32)) -> usize;
    }

    static WAKE_FD: AtomicI32 = AtomicI32::new(-1);

    extern "C" fn on_signal(_: i32) {
        let fd = WAKE_FD.load(Ordering::Relaxed);
        // SAFETY: write(2) is async-signal-safe; the buffer is static.
        unsafe { write(fd, b"x".as_ptr(), 1) };
    }

    pub fn close_on_signal(server: &Server) -> std::io::Result<()> {
        let mut fds = [0i32; 2];
        // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
        if unsafe { pipe(fds.as_mut_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        WAKE_FD.store(fds[1], Ordering::Relaxed);
        // SAFETY: `on_signal` only calls write(2).
        unsafe {
            signal(SIGINT, on_signal);
            signal(SIGTERM, on_signal);
        }
        // SAFETY: fds[0] is the pipe's read end, owned by this File only.
        let mut wake = unsafe { File::from_raw_fd(fds[0]) };
        let handle = server.handle().downgrade();
        std::thread::spawn(move || {
            let mut byte = [0u8; 1];
            if wake.read(&mut byte).is_ok() {
                eprintln!("signal: closing the server");
                if let Some(handle) = handle.upgrade() {
                    handle.close();
                }
            }
        });
        Ok(())
    }
}

/// Windows: Ctrl-C and Ctrl-Break close the server. The system calls the
/// console handler on a thread it starts for the event (not in a signal
/// context), so the handler may lock and close the server itself. When
/// the console window is closed the handler closes the server too, but
/// the system ends the process as soon as the handler returns.
#[cfg(windows)]
mod signals {
    use std::sync::Mutex;

    use tiny_mcp::{Server, WeakServerHandle};

    static SERVER: Mutex<Option<WeakServerHandle>> = Mutex::new(None);

    #[link(name = "kernel32")]
    extern "system" {
        fn SetConsoleCtrlHandler(handler: Option<extern "system" fn(u32) -> i32>, add: i32) -> i32;
    }

    extern "system" fn on_event(_event: u32) -> i32 {
        let handle = SERVER.lock().ok().and_then(|server| server.clone());
        match handle.and_then(|handle| handle.upgrade()) {
            Some(handle) => {
                eprintln!("console event: closing the server");
                handle.close();
                1 // Handled: `main` returns on its own.
            }
            None => 0, // The default handler ends the process.
        }
    }

    pub fn close_on_signal(server: &Server) -> std::io::Result<()> {
        if let Ok(mut slot) = SERVER.lock() {
            *slot = Some(server.handle().downgrade());
        }
        // SAFETY: `on_event` matches PHANDLER_ROUTINE and lives as long
        // as the program.
        if unsafe { SetConsoleCtrlHandler(Some(on_event), 1) } == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Neither Unix nor Windows (wasm32-wasip1 has no signals): nothing to
/// install, and the caller is told so; the server stops at end of input
/// (stdio) or when the process is ended (HTTP).
#[cfg(not(any(unix, windows)))]
mod signals {
    pub fn close_on_signal(_: &tiny_mcp::Server) -> std::io::Result<()> {
        eprintln!("no signals on this platform: the server stops at end of input");
        Ok(())
    }
}
