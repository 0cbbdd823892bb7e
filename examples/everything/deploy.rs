//! Settings for running several instances of the example behind a load
//! balancer: `--instance NAME`, `--session-prefix PREFIX`, `--redis URL`
//! and, with the `sealed-state` feature, `--state-key-file PATH`.

use std::sync::Mutex;

use tiny_mcp::{Error, HttpServerBuilder, Server, ServerBuilder};

use super::redis;

/// The name `--instance` gave this process (`session_info` reports it).
static INSTANCE: Mutex<String> = Mutex::new(String::new());

/// What the command line asked for.
#[derive(Default)]
pub struct Deploy {
    pub instance: Option<String>,
    pub session_prefix: Option<String>,
    pub state_key_file: Option<String>,
    pub redis: Option<String>,
}

/// This instance's name, if it has one.
pub fn instance() -> Option<String> {
    let name = INSTANCE.lock().map(|n| n.clone()).unwrap_or_default();
    if name.is_empty() {
        None
    } else {
        Some(name)
    }
}

impl Deploy {
    /// The server side: the sealed `requestState` codec and the Redis
    /// publisher.
    pub fn server(&self, mut builder: ServerBuilder) -> Result<ServerBuilder, Error> {
        if let Some(path) = &self.state_key_file {
            builder = sealed(builder, path)?;
        }
        #[cfg(feature = "tasks")]
        if let Some(prefix) = &self.session_prefix {
            builder = builder.task_id_prefix(prefix.as_str())?;
        }
        if let Some(url) = &self.redis {
            let address = redis::address(url).map_err(Error::msg)?;
            builder = builder.change_bus(redis::Publisher::new(address));
        }
        Ok(builder)
    }

    /// Once built: the Redis subscriber feeds the other instances'
    /// changes into `server`.
    pub fn started(&self, server: &Server) {
        if let Some(address) = self.redis.as_deref().and_then(|u| redis::address(u).ok()) {
            redis::subscribe(address, server.handle());
        }
    }

    /// The HTTP side: the name in `Mcp-Instance` and the session prefix.
    pub fn http(&self, mut http: HttpServerBuilder) -> Result<HttpServerBuilder, Error> {
        if let Some(name) = &self.instance {
            if let Ok(mut slot) = INSTANCE.lock() {
                *slot = name.clone();
            }
            http = http.response_header("Mcp-Instance", name.as_str())?;
        }
        if let Some(prefix) = &self.session_prefix {
            http = http.session_id_prefix(prefix.as_str())?;
        }
        Ok(http)
    }
}

/// Keys from `path`: one hex key per line, newest first (`#` comments and
/// blank lines skipped), named by their digest so that every instance
/// given the same file agrees.
#[cfg(feature = "sealed-state")]
fn sealed(builder: ServerBuilder, path: &str) -> Result<ServerBuilder, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::msg(format!("cannot read the key file {}: {}", path, e)))?;
    warn_if_readable_by_others(path);
    let mut keys = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let key = from_hex(line)
            .ok_or_else(|| Error::invalid_params(format!("{}: a line is not hex", path)))?;
        keys.push(key);
    }
    let codec = tiny_mcp::SealedStateCodec::from_keys(keys)?;
    Ok(builder.request_state_codec(codec))
}

/// The keys are secrets: say so when others may read them.
#[cfg(all(unix, feature = "sealed-state"))]
fn warn_if_readable_by_others(path: &str) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path) {
        if meta.permissions().mode() & 0o077 != 0 {
            eprintln!(
                "everything: warning: the key file {} is readable by others (chmod 600 it)",
                path
            );
        }
    }
}

#[cfg(all(not(unix), feature = "sealed-state"))]
fn warn_if_readable_by_others(_: &str) {}

#[cfg(not(feature = "sealed-state"))]
fn sealed(_: ServerBuilder, _: &str) -> Result<ServerBuilder, Error> {
    Err(Error::msg(
        "--state-key-file needs the sealed-state feature: \
         cargo run --features sealed-state --example everything -- …",
    ))
}

#[cfg(feature = "sealed-state")]
fn from_hex(text: &str) -> Option<Vec<u8>> {
    // `from_str_radix` alone would take a leading `+`.
    if text.len() % 2 != 0 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}
