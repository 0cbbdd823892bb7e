//! Logging in to an MCP server that needs OAuth: the client side of the
//! MCP authorization spec, for [`Client`](crate::Client) over HTTP.
//!
//! Give the client an [`OAuth`] with
//! [`ClientBuilder::oauth`](crate::ClientBuilder::oauth). When the server
//! answers `401`, the client finds the authorization server (protected
//! resource metadata, RFC 9728; its metadata, RFC 8414 or OpenID Connect
//! Discovery), gets a client id (yours, a Client ID Metadata Document URL,
//! or dynamic registration, RFC 7591), sends the user to log in through a
//! [`UserAgent`] (authorization code with PKCE `S256`, `state`, the
//! `resource` of RFC 8707, `iss` checked per RFC 9207), and sends the
//! request again with the token. Tokens are refreshed before they expire
//! and on `401`; a `403 insufficient_scope` asks for the union of the
//! scopes (step-up), a few times at most. Logins are kept in a
//! [`TokenStore`].
//!
//! ```no_run
//! use tiny_mcp::oauth::{FileTokenStore, LoopbackBrowser, OAuth};
//! use tiny_mcp::Client;
//!
//! let oauth = OAuth::new(LoopbackBrowser::new())
//!     .client_name("my-tool")
//!     .store(FileTokenStore::new("/home/me/.config/my-tool/tokens.json"));
//! let client = Client::builder("my-tool", "1.0.0")
//!     .oauth(oauth)
//!     .connect_http("https://mcp.example.com/mcp")?;
//! println!("{} tools", client.list_tools()?.len());
//! # Ok::<(), tiny_mcp::Error>(())
//! ```
//!
//! Spec: basic/authorization (2025-11-25; 2026-07-28 with its pages
//! "Authorization Server Discovery" and "Client Registration").

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::error::Error;

mod agent;
mod discovery;
mod enterprise;
pub(crate) mod fetch;
mod flow;
#[cfg(feature = "jwt")]
mod key;
mod provider;
mod register;
mod store;
mod token;
pub(crate) mod url;

pub use agent::{Headless, LoopbackBrowser, UserAgent};
pub use enterprise::IdentityProvider;
#[cfg(feature = "jwt")]
pub use key::ClientKey;
pub use store::{FileTokenStore, Login, MemoryTokenStore, Registration, TokenStore, Tokens};

pub(crate) use fetch::Fetcher;
pub(crate) use provider::Provider;

/// How the client logs in: who it is, how the user is reached, where
/// logins are kept. Cheap to clone; the clones share the store.
#[derive(Clone)]
pub struct OAuth {
    identity: Identity,
    grant: Grant,
    store: Arc<dyn TokenStore>,
    pub(crate) request_timeout: Duration,
    pub(crate) max_response_bytes: usize,
}

/// How tokens are obtained.
#[derive(Clone)]
pub(crate) enum Grant {
    /// The authorization code grant: a user, reached by the agent.
    Code(Arc<dyn UserAgent>),
    /// The client credentials grant: no user.
    ClientCredentials,
    /// An ID-JAG from the company's identity provider (SEP-990).
    Enterprise(IdentityProvider),
}

/// Signs a client assertion for (client id, audience): `private_key_jwt`.
pub(crate) type AssertionFn = dyn Fn(&str, &str) -> Result<String, Error> + Send + Sync;

/// Who the client is at an authorization server.
#[derive(Clone, Default)]
pub(crate) struct Identity {
    pub(crate) client_name: String,
    pub(crate) client_uri: Option<String>,
    pub(crate) client_id: Option<String>,
    pub(crate) client_secret: Option<String>,
    pub(crate) auth_method: Option<String>,
    /// The issuer a pre-registered client id belongs to.
    pub(crate) issuer: Option<String>,
    /// A Client ID Metadata Document URL.
    pub(crate) metadata_url: Option<String>,
    /// The signer of `private_key_jwt` assertions.
    pub(crate) assertion: Option<Arc<AssertionFn>>,
}

impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("client_name", &self.identity.client_name)
            .field("client_id", &self.identity.client_id)
            .field("metadata_url", &self.identity.metadata_url)
            .field("private_key_jwt", &self.identity.assertion.is_some())
            .finish_non_exhaustive()
    }
}

impl OAuth {
    /// A client acting for a user: the authorization code grant, the user
    /// reached through `agent` ([`LoopbackBrowser`] in a program a person
    /// runs). Logins are kept in memory until [`store`](Self::store).
    pub fn new(agent: impl UserAgent + 'static) -> OAuth {
        OAuth {
            identity: Identity {
                client_name: "tiny-mcp client".into(),
                ..Identity::default()
            },
            grant: Grant::Code(Arc::new(agent)),
            store: Arc::new(MemoryTokenStore::new()),
            request_timeout: Duration::from_secs(30),
            max_response_bytes: 1024 * 1024,
        }
    }

    /// A client acting on its own behalf (machine to machine): the client
    /// credentials grant (OAuth 2.1 §4.2) with this pre-registered id and
    /// secret, authenticated with `client_secret_basic` unless the server
    /// lists only `client_secret_post`. No user, no refresh token: a new
    /// token is asked for when one expires.
    pub fn client_credentials(client_id: &str, client_secret: &str) -> OAuth {
        OAuth {
            identity: Identity {
                client_name: "tiny-mcp client".into(),
                client_id: Some(client_id.into()),
                client_secret: Some(client_secret.into()),
                ..Identity::default()
            },
            grant: Grant::ClientCredentials,
            store: Arc::new(MemoryTokenStore::new()),
            request_timeout: Duration::from_secs(30),
            max_response_bytes: 1024 * 1024,
        }
    }

    /// A client of the company's identity provider (enterprise-managed
    /// authorization, SEP-990): the user's ID token from `idp` is
    /// exchanged there for an ID-JAG (RFC 8693), which the MCP server's
    /// authorization server takes as a JWT bearer grant (RFC 7523), the
    /// client authenticating there with this pre-registered id and secret.
    /// No browser.
    pub fn enterprise(idp: IdentityProvider, client_id: &str, client_secret: &str) -> OAuth {
        let mut oauth = OAuth::client_credentials(client_id, client_secret);
        oauth.grant = Grant::Enterprise(idp);
        oauth
    }

    /// The client credentials grant with a pre-registered id that proves
    /// itself with a signed JWT (`private_key_jwt`, RFC 7523 §2.2) rather
    /// than a secret. Feature `jwt`.
    #[cfg(feature = "jwt")]
    pub fn client_credentials_jwt(client_id: &str, key: ClientKey) -> OAuth {
        let mut oauth = OAuth::client_credentials(client_id, "");
        oauth.identity.client_secret = None;
        oauth.private_key_jwt(key)
    }

    /// Authenticates at the token endpoint with assertions signed by
    /// `key` (`private_key_jwt`, RFC 7523 §2.2: `iss` and `sub` the client
    /// id, `aud` the authorization server's issuer, valid five minutes),
    /// for a pre-registered client whose public key the authorization
    /// server knows. Feature `jwt`.
    #[cfg(feature = "jwt")]
    pub fn private_key_jwt(mut self, key: ClientKey) -> OAuth {
        let key = Arc::new(key);
        self.identity.assertion = Some(Arc::new(move |client_id: &str, audience: &str| {
            key.assertion(client_id, audience)
        }));
        self
    }

    /// The `client_name` sent when registering (RFC 7591 §2), which the
    /// authorization server shows the user. Default: "tiny-mcp client".
    pub fn client_name(mut self, name: &str) -> OAuth {
        self.identity.client_name = name.into();
        self
    }

    /// The `client_uri` sent when registering: the client's home page.
    pub fn client_uri(mut self, uri: &str) -> OAuth {
        self.identity.client_uri = Some(uri.into());
        self
    }

    /// A client id registered beforehand with the authorization server:
    /// used before anything else (basic/authorization "Client
    /// Registration", pre-registration).
    pub fn client_id(mut self, client_id: &str) -> OAuth {
        self.identity.client_id = Some(client_id.into());
        self
    }

    /// The pre-registered client's secret (a confidential client).
    pub fn client_secret(mut self, secret: &str) -> OAuth {
        self.identity.client_secret = Some(secret.into());
        self
    }

    /// How the pre-registered client authenticates at the token endpoint:
    /// `"client_secret_basic"`, `"client_secret_post"` or `"none"`.
    /// Default: `none` without a secret; with one, `client_secret_basic`
    /// unless the server lists only `client_secret_post`.
    pub fn token_endpoint_auth_method(mut self, method: &str) -> OAuth {
        self.identity.auth_method = Some(method.into());
        self
    }

    /// The `issuer` of the authorization server the pre-registered id
    /// belongs to: with another server the login stops with an error
    /// rather than send the id and secret there ("Authorization Server
    /// Binding"). Default: any server.
    pub fn registered_with(mut self, issuer: &str) -> OAuth {
        self.identity.issuer = Some(issuer.into());
        self
    }

    /// The `https://` URL of this client's Client ID Metadata Document,
    /// used as its `client_id` with servers that advertise
    /// `client_id_metadata_document_supported` (preferred over dynamic
    /// registration). The document must list the redirect URIs the
    /// [`UserAgent`] uses.
    pub fn client_metadata_url(mut self, url: &str) -> OAuth {
        self.identity.metadata_url = Some(url.into());
        self
    }

    /// Where logins (registrations and tokens) are kept. Default: a
    /// [`MemoryTokenStore`] of this `OAuth` and its clones.
    pub fn store(mut self, store: impl TokenStore + 'static) -> OAuth {
        self.store = Arc::new(store);
        self
    }

    /// How long one request of the login may take (a metadata document,
    /// a registration, a token request), from connecting to its last
    /// byte; a redirected metadata request gets this time for each hop.
    /// The user's part is the [`UserAgent`]'s. Default: 30 s.
    pub fn request_timeout(mut self, timeout: Duration) -> OAuth {
        self.request_timeout = timeout;
        self
    }

    /// The largest answer the login reads from a server (metadata,
    /// registration, tokens); a larger one is an
    /// [`ErrorKind::Authorization`](crate::ErrorKind::Authorization)
    /// error. Default: 1 MiB.
    pub fn max_response_bytes(mut self, bytes: usize) -> OAuth {
        self.max_response_bytes = bytes;
        self
    }

    /// The login kept for the MCP server at `server_url`, if any.
    pub fn login_for(&self, server_url: &str) -> Result<Option<Login>, Error> {
        self.store.load(&url::canonical(server_url))
    }

    /// Forgets the login for the MCP server at `server_url`: its tokens
    /// and its registration. The next connection logs in again.
    pub fn logout(&self, server_url: &str) -> Result<(), Error> {
        self.store.remove(&url::canonical(server_url))
    }
}
