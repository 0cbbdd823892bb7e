//! What a login keeps between runs: the client's registration with an
//! authorization server and the tokens it issued, per MCP server, through
//! a [`TokenStore`]: in memory by default, in a file for a CLI.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::error::Error;

/// The client's identity at one authorization server: pre-registered,
/// dynamically registered (RFC 7591) or a Client ID Metadata Document URL.
///
/// Spec: basic/authorization "Client Registration"; "Authorization Server
/// Binding" (2026-07-28): a registration belongs to the server that issued
/// it, named by its `issuer`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    /// The `issuer` of the authorization server it belongs to.
    pub issuer: String,
    /// `client_id`.
    pub client_id: String,
    /// `client_secret`, for a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How the client authenticates at the token endpoint:
    /// `"client_secret_basic"`, `"client_secret_post"` or `"none"`
    /// (RFC 7591 §2).
    pub token_endpoint_auth_method: String,
    /// The redirect URIs registered (empty for a pre-registered client).
    #[serde(default)]
    pub redirect_uris: Vec<String>,
}

impl std::fmt::Debug for Registration {
    // Never prints the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .field("redirect_uris", &self.redirect_uris)
            .finish()
    }
}

/// Tokens from a token endpoint (RFC 6749 §5.1).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tokens {
    /// `access_token`: what every request to the MCP server carries.
    pub access_token: String,
    /// `refresh_token`, when the authorization server issued one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the Unix epoch
    /// (from `expires_in`); `None` when the server did not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes granted (`scope`), or those asked for when the server
    /// did not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl std::fmt::Debug for Tokens {
    // Never prints a token.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "…"))
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl Tokens {
    /// `true` when the access token expires within `margin_secs` seconds.
    pub fn expires_within(&self, margin_secs: u64) -> bool {
        self.expires_at
            .map_or(false, |at| now_secs().saturating_add(margin_secs) >= at)
    }
}

/// What the client keeps for one MCP server: its registration and its
/// tokens, both from the authorization server named by
/// [`Registration::issuer`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Login {
    /// The registration, unless the client is pre-registered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration: Option<Registration>,
    /// The tokens, once logged in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
    /// The `issuer` of the authorization server the tokens came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
}

/// Where logins are kept, by MCP server URL. Implement it to keep them in
/// the system's keyring or a database; the crate has
/// [`MemoryTokenStore`] (the default) and [`FileTokenStore`].
///
/// Calls come from the client's threads, one login at a time per
/// [`OAuth`](super::OAuth).
pub trait TokenStore: Send + Sync {
    /// The login kept for `server`, if any.
    fn load(&self, server: &str) -> Result<Option<Login>, Error>;
    /// Keeps `login` for `server`, replacing what was there.
    fn save(&self, server: &str, login: &Login) -> Result<(), Error>;
    /// Forgets `server`'s login.
    fn remove(&self, server: &str) -> Result<(), Error>;
}

/// Logins in memory, for the life of the process.
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    logins: Mutex<BTreeMap<String, Login>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> MemoryTokenStore {
        MemoryTokenStore::default()
    }
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, server: &str) -> Result<Option<Login>, Error> {
        Ok(self.logins.lock().get(server).cloned())
    }

    fn save(&self, server: &str, login: &Login) -> Result<(), Error> {
        self.logins.lock().insert(server.to_string(), login.clone());
        Ok(())
    }

    fn remove(&self, server: &str) -> Result<(), Error> {
        self.logins.lock().remove(server);
        Ok(())
    }
}

/// Logins in one JSON file, `{"<server URL>": {registration, tokens,
/// issuer}}`, for a CLI. The file is written whole to a temporary file
/// beside it and renamed over it, so that a crash never leaves half a
/// file. On Unix the file is readable and writable by its owner only
/// (mode `0600`), so that no other user reads the tokens. On Windows no
/// access list is set: the file inherits its directory's, which under
/// the user's profile (`%APPDATA%`, the `mcp` command's default) admits
/// the user, SYSTEM and the Administrators only; elsewhere pick such a
/// directory. A file another program changed between a load and a save
/// is overwritten with this program's view.
#[derive(Debug)]
pub struct FileTokenStore {
    path: PathBuf,
    lock: Mutex<()>,
}

impl FileTokenStore {
    /// A store in the file at `path` (made on the first save, with its
    /// directory).
    pub fn new(path: impl Into<PathBuf>) -> FileTokenStore {
        FileTokenStore {
            path: path.into(),
            lock: Mutex::new(()),
        }
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read_all(&self) -> Result<BTreeMap<String, Login>, Error> {
        match fs::read(&self.path) {
            Ok(bytes) if bytes.is_empty() => Ok(BTreeMap::new()),
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                Error::msg(format!("{}: not a token file: {}", self.path.display(), e))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(Error::msg(format!("{}: {}", self.path.display(), e))),
        }
    }

    fn write_all(&self, logins: &BTreeMap<String, Login>) -> Result<(), Error> {
        let bytes = crate::error::to_json_bytes("the token file", logins)?;
        let failed = |e: std::io::Error| Error::msg(format!("{}: {}", self.path.display(), e));
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(failed)?;
        }
        let mut name = self.path.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".{}.tmp", uuid::Uuid::new_v4().simple()));
        let temporary = self.path.with_file_name(name);
        let mut file = owner_only(&temporary).map_err(failed)?;
        file.write_all(&bytes).map_err(failed)?;
        file.sync_all().map_err(failed)?;
        drop(file);
        fs::rename(&temporary, &self.path).map_err(|e| {
            let _ = fs::remove_file(&temporary);
            failed(e)
        })
    }
}

/// A new file, empty: readable and writable by its owner only on Unix
/// (mode `0600`); on Windows with the access list its directory passes
/// down (see [`FileTokenStore`]).
fn owner_only(path: &Path) -> std::io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

impl TokenStore for FileTokenStore {
    fn load(&self, server: &str) -> Result<Option<Login>, Error> {
        let _guard = self.lock.lock();
        Ok(self.read_all()?.remove(server))
    }

    fn save(&self, server: &str, login: &Login) -> Result<(), Error> {
        let _guard = self.lock.lock();
        // A file that cannot be read is not replaced: it holds other
        // servers' logins.
        let mut logins = self.read_all()?;
        logins.insert(server.to_string(), login.clone());
        self.write_all(&logins)
    }

    fn remove(&self, server: &str) -> Result<(), Error> {
        let _guard = self.lock.lock();
        let mut logins = self.read_all()?;
        if logins.remove(server).is_some() {
            self.write_all(&logins)?;
        }
        Ok(())
    }
}

pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn login() -> Login {
        Login {
            registration: None,
            tokens: Some(Tokens {
                access_token: "at".into(),
                refresh_token: Some("rt".into()),
                expires_at: Some(now_secs() + 3600),
                scope: Some("read".into()),
            }),
            issuer: Some("https://as.example".into()),
        }
    }

    // The file store keeps logins across instances, forgets on remove,
    // and (Unix) makes its file 0600.
    #[test]
    fn file_store_round_trips_and_is_private() {
        let dir = std::env::temp_dir().join(format!("tiny-mcp-store-{}", uuid::Uuid::new_v4()));
        let path = dir.join("tokens.json");
        FileTokenStore::new(&path)
            .save("http://a/mcp", &login())
            .unwrap();
        let again = FileTokenStore::new(&path);
        assert_eq!(again.load("http://a/mcp").unwrap(), Some(login()));
        assert_eq!(again.load("http://b/mcp").unwrap(), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        again.remove("http://a/mcp").unwrap();
        assert_eq!(again.load("http://a/mcp").unwrap(), None);
        fs::remove_dir_all(dir).unwrap();
    }

    // Debug output never shows a token or a client secret.
    #[test]
    fn tokens_debug_hides_secrets() {
        let mut login = login();
        login.registration = Some(Registration {
            issuer: "https://as.example".into(),
            client_id: "id".into(),
            client_secret: Some("s3cret".into()),
            token_endpoint_auth_method: "client_secret_basic".into(),
            redirect_uris: Vec::new(),
        });
        let text = format!("{:?}", login);
        assert!(
            !text.contains("\"at\"") && !text.contains("rt") && !text.contains("s3cret"),
            "{}",
            text
        );
    }
}
