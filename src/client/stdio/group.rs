//! The processes one stdio server is made of, so that closing ends them
//! all (basic/lifecycle "Shutdown", stdio, 2025-11-25): a server started
//! through `npx`, `uvx` or a shell is several processes.
//!
//! Built with Rust 1.64 or later (`cfg(tiny_mcp_process_group)`, set by
//! `build.rs`), the child leads a process group of its own and each
//! signal goes to the whole group, which also reaches a process whose
//! parent has already exited. With Rust 1.63 the child stays in this
//! process's group; each signal then goes to the child and to every
//! descendant of it seen in `/proc` (Linux only), looked up before each
//! step: a process re-parented before it was first seen is missed.
//!
//! On Windows there is no `SIGTERM` a console program can catch, so both
//! steps end the tree at once: `taskkill /PID <child> /T /F` (System32)
//! ends the child and every process below it (a server started through
//! `npx.cmd` is `cmd.exe` with `node.exe` under it); when `taskkill`
//! cannot run or fails, the child alone is killed (`Child::kill`). Once
//! the child is reaped nobody else is looked for. Elsewhere (neither
//! Unix nor Windows) the child alone is killed.
//!
//! Zombies count as gone: an exited process whose parent does not reap it
//! (an init that reaps nothing, in some containers) holds nothing.

use std::process::{Child, Command};

/// What a shutdown step sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Signal {
    /// `SIGTERM`: a request to exit.
    Terminate,
    /// `SIGKILL`.
    Kill,
}

/// Puts the child that `command` starts in a process group of its own,
/// where the compiler allows it (see the module docs).
pub(super) fn isolate(command: &mut Command) {
    // Only compiled where the compiler has it (build.rs).
    #[cfg(all(unix, tiny_mcp_process_group))]
    #[allow(clippy::incompatible_msrv)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    #[cfg(not(all(unix, tiny_mcp_process_group)))]
    let _ = command;
}

/// The processes a shutdown ends: the child, and what it started.
#[derive(Debug)]
pub(super) struct Members {
    /// The child's process id (and, with a process group, its group id).
    #[cfg_attr(not(any(unix, windows)), allow(dead_code))]
    leader: u32,
    /// Without a process group: every descendant of the leader seen so
    /// far (Linux).
    #[cfg_attr(any(not(unix), tiny_mcp_process_group), allow(dead_code))]
    seen: Vec<u32>,
}

impl Members {
    /// The members of the server whose child is `child`, as they are now.
    pub(super) fn of(child: &Child) -> Members {
        let mut members = Members {
            leader: child.id(),
            seen: Vec::new(),
        };
        members.look_again();
        members
    }

    /// Sends `signal` to every member still running; `child` is the
    /// leader, not yet reaped (so its id is still its own).
    pub(super) fn signal(&mut self, child: &mut Child, signal: Signal) {
        self.look_again();
        send(self, child, signal);
    }

    /// Whether a member other than the leader still runs; call it once
    /// the leader has been reaped.
    pub(super) fn others_alive(&mut self) -> bool {
        others_alive(self)
    }

    #[cfg(all(target_os = "linux", not(tiny_mcp_process_group)))]
    fn look_again(&mut self) {
        let table = procfs::scan();
        let mut roots = vec![self.leader];
        roots.extend(self.seen.iter().copied());
        for pid in procfs::descendants(&table, &roots) {
            if !self.seen.contains(&pid) {
                self.seen.push(pid);
            }
        }
    }

    #[cfg(not(all(target_os = "linux", not(tiny_mcp_process_group))))]
    fn look_again(&mut self) {}
}

#[cfg(all(unix, tiny_mcp_process_group))]
fn send(members: &Members, _child: &mut Child, signal: Signal) {
    use nix::sys::signal::killpg;
    use nix::unistd::Pid;
    // ESRCH: nobody is left in the group.
    let _ = killpg(Pid::from_raw(members.leader as i32), unix_signal(signal));
}

#[cfg(all(unix, not(tiny_mcp_process_group)))]
fn send(members: &Members, child: &mut Child, signal: Signal) {
    use nix::sys::signal::kill;
    use nix::unistd::Pid;
    if let Ok(None) = child.try_wait() {
        let _ = kill(Pid::from_raw(members.leader as i32), unix_signal(signal));
    }
    for pid in &members.seen {
        if procfs::running(*pid) {
            let _ = kill(Pid::from_raw(*pid as i32), unix_signal(signal));
        }
    }
}

/// Windows: `taskkill /T /F` on the child's tree while the child is not
/// yet reaped (so its process id cannot belong to another process), else
/// `Child::kill`. Both steps are the same (see the module docs).
#[cfg(windows)]
fn send(members: &Members, child: &mut Child, _signal: Signal) {
    use std::process::Stdio;
    if !matches!(child.try_wait(), Ok(None)) {
        return;
    }
    let ended = Command::new("taskkill")
        .arg("/PID")
        .arg(members.leader.to_string())
        .args(["/T", "/F"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_or(false, |status| status.success());
    if !ended {
        log::debug!(
            "taskkill failed for pid {}; killing it alone",
            members.leader
        );
        let _ = child.kill();
    }
}

#[cfg(not(any(unix, windows)))]
fn send(_members: &Members, child: &mut Child, _signal: Signal) {
    let _ = child.kill();
}

#[cfg(unix)]
fn unix_signal(signal: Signal) -> nix::sys::signal::Signal {
    match signal {
        Signal::Terminate => nix::sys::signal::Signal::SIGTERM,
        Signal::Kill => nix::sys::signal::Signal::SIGKILL,
    }
}

#[cfg(all(target_os = "linux", tiny_mcp_process_group))]
fn others_alive(members: &Members) -> bool {
    procfs::scan()
        .iter()
        .any(|process| process.pgrp == members.leader && !process.zombie)
}

#[cfg(all(unix, not(target_os = "linux"), tiny_mcp_process_group))]
fn others_alive(members: &Members) -> bool {
    use nix::sys::signal::killpg;
    use nix::unistd::Pid;
    killpg(Pid::from_raw(members.leader as i32), None).is_ok()
}

#[cfg(all(target_os = "linux", not(tiny_mcp_process_group)))]
fn others_alive(members: &Members) -> bool {
    members.seen.iter().any(|pid| procfs::running(*pid))
}

#[cfg(any(not(unix), all(not(target_os = "linux"), not(tiny_mcp_process_group))))]
fn others_alive(_members: &Members) -> bool {
    false
}

/// Processes as `/proc/<pid>/stat` describes them.
#[cfg(target_os = "linux")]
mod procfs {
    use std::fs;

    /// One process.
    #[derive(Debug, Clone, Copy)]
    pub(super) struct Process {
        pub(super) pid: u32,
        pub(super) ppid: u32,
        #[cfg_attr(not(tiny_mcp_process_group), allow(dead_code))]
        pub(super) pgrp: u32,
        pub(super) zombie: bool,
    }

    /// Every process now; an unreadable `/proc` gives none.
    pub(super) fn scan() -> Vec<Process> {
        let entries = match fs::read_dir("/proc") {
            Ok(entries) => entries,
            Err(_) => return Vec::new(),
        };
        entries
            .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
            .filter_map(read)
            .collect()
    }

    /// Whether `pid` runs (exists and is not a zombie).
    #[cfg_attr(tiny_mcp_process_group, allow(dead_code))]
    pub(super) fn running(pid: u32) -> bool {
        read(pid).map_or(false, |process| !process.zombie)
    }

    /// Every process below one of `roots` in `table`.
    #[cfg_attr(tiny_mcp_process_group, allow(dead_code))]
    pub(super) fn descendants(table: &[Process], roots: &[u32]) -> Vec<u32> {
        let mut found: Vec<u32> = Vec::new();
        let mut parents: Vec<u32> = roots.to_vec();
        while let Some(parent) = parents.pop() {
            for process in table.iter().filter(|p| p.ppid == parent) {
                if !found.contains(&process.pid) && !roots.contains(&process.pid) {
                    found.push(process.pid);
                    parents.push(process.pid);
                }
            }
        }
        found
    }

    /// `pid (comm) state ppid pgrp …`; the command may hold spaces and
    /// parentheses, so the fields are read after the last `)`.
    fn read(pid: u32) -> Option<Process> {
        let text = fs::read_to_string(format!("/proc/{}/stat", pid)).ok()?;
        let rest = &text[text.rfind(')')? + 1..];
        let mut fields = rest.split_whitespace();
        let state = fields.next()?;
        Some(Process {
            pid,
            ppid: fields.next()?.parse().ok()?,
            pgrp: fields.next()?.parse().ok()?,
            zombie: state == "Z" || state == "X",
        })
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        // basic/lifecycle "Shutdown" (stdio): the descendants of a process
        // are found through its children's children.
        #[test]
        fn descendants_are_found_below_the_roots() {
            let process = |pid, ppid| Process {
                pid,
                ppid,
                pgrp: 1,
                zombie: false,
            };
            let table = [
                process(10, 1),
                process(11, 10),
                process(12, 11),
                process(13, 1),
            ];
            let mut found = descendants(&table, &[10]);
            found.sort_unstable();
            assert_eq!(found, vec![11, 12]);
            let me = read(std::process::id()).expect("this process's stat");
            assert!(!me.zombie);
            assert!(scan().iter().any(|p| p.pid == me.pid));
        }
    }
}
