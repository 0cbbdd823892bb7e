//! Transports: stdio, Streamable HTTP, the in-memory test client, and the
//! worker pool they share. Each turns bytes into messages, hands them to
//! the session's named methods, and writes what comes back; none reaches
//! into the core's state (DESIGN.md §11, "Code map").

pub(crate) mod http;
pub(crate) mod memory;
mod output;
pub(crate) mod pool;
mod shares;
pub(crate) mod stdio;
