//! One [`OAuth`] bound to one MCP server: the token each request carries,
//! and what a `401` or `403` from that server sets off (refresh, login,
//! step-up). One login at a time; a thread that waited for another's
//! login uses its token.

use parking_lot::Mutex;

use super::discovery::{self, ServerMetadata};
use super::fetch::{failed, Fetcher};
use super::flow::{self, Authorization};
use super::register;
use super::store::{Login, Registration, Tokens};
use super::token::{self, TokenRequest};
use super::{url, OAuth};
use crate::challenge::BearerChallenge;
use crate::client::http::Credentials;
use crate::error::Error;

/// Seconds before expiry at which a token is refreshed.
const REFRESH_MARGIN_SECS: u64 = 30;

/// See the module docs.
pub(crate) struct Provider {
    oauth: OAuth,
    /// The server's URL as given, and its canonical form (the store key).
    server: String,
    key: String,
    fetcher: Fetcher,
    state: Mutex<State>,
    /// Held through a refresh or a login.
    flow: Mutex<()>,
}

#[derive(Default)]
struct State {
    login: Option<Login>,
    /// The scopes last asked for: a step-up asks for these too.
    requested: Vec<String>,
}

/// What discovery found: the server to ask, and for which resource.
struct Found {
    metadata: ServerMetadata,
    /// The `resource` of the requests (RFC 8707): the metadata's.
    resource: String,
    scopes_supported: Option<Vec<String>>,
}

impl Provider {
    pub(crate) fn new(oauth: OAuth, server: &str, fetcher: Fetcher) -> Provider {
        Provider {
            oauth,
            server: server.to_string(),
            key: url::canonical(server),
            fetcher,
            state: Mutex::new(State::default()),
            flow: Mutex::new(()),
        }
    }

    /// The login as known: loaded from the store the first time.
    fn login(&self) -> Login {
        let mut state = self.state.lock();
        if state.login.is_none() {
            let loaded = self.oauth.store.load(&self.key).unwrap_or_else(|e| {
                log::warn!("the token store: {}", e);
                None
            });
            state.login = Some(loaded.unwrap_or_default());
        }
        state.login.clone().unwrap_or_default()
    }

    /// Takes the stored login when it has tokens: another client (or
    /// process) sharing the store may have renewed them since, and with
    /// refresh token rotation (OAuth 2.1 §4.3.1) the refresh token this
    /// one holds is then dead.
    fn reload(&self) {
        match self.oauth.store.load(&self.key) {
            Ok(Some(stored)) if stored.tokens.is_some() => self.state.lock().login = Some(stored),
            Ok(_) => {}
            Err(e) => log::warn!("the token store: {}", e),
        }
    }

    fn keep(&self, login: Login) {
        if let Err(e) = self.oauth.store.save(&self.key, &login) {
            log::warn!("the token store: {}", e);
        }
        self.state.lock().login = Some(login);
    }

    fn access_token(&self) -> Option<String> {
        self.login().tokens.map(|t| t.access_token)
    }

    /// Refreshes the access token (RFC 6749 §6), keeping the refresh token
    /// when the server sends no new one; `challenge` is the `401`'s, whose
    /// `resource_metadata` may name where discovery starts.
    fn refresh(&self, challenge: Option<&BearerChallenge>) -> Result<(), Error> {
        let mut login = self.login();
        let tokens = login
            .tokens
            .clone()
            .ok_or_else(|| failed("token refresh", "no tokens"))?;
        let refresh_token = tokens
            .refresh_token
            .clone()
            .ok_or_else(|| failed("token refresh", "no refresh token"))?;
        let registration = login
            .registration
            .clone()
            .or_else(|| self.fixed_registration(&login))
            .ok_or_else(|| failed("token refresh", "no client registration"))?;
        let found = self.discover(challenge)?;
        if login.issuer.as_deref() != Some(found.metadata.issuer.as_str()) {
            // "Authorization Server Binding": the refresh token and the
            // client's credentials go only to the server that issued them.
            return Err(failed(
                "token refresh",
                "the server now names another authorization server: not sent there",
            ));
        }
        let request = TokenRequest {
            step: "token refresh",
            metadata: &found.metadata,
            registration: &registration,
            resource: &found.resource,
            params: vec![
                ("grant_type", "refresh_token"),
                ("refresh_token", &refresh_token),
            ],
        };
        let mut fresh = request.send(&self.fetcher, tokens.scope.as_deref())?;
        if fresh.refresh_token.is_none() {
            fresh.refresh_token = Some(refresh_token);
        }
        login.tokens = Some(fresh);
        self.keep(login);
        Ok(())
    }

    /// A pre-registered client's registration, for a refresh after a
    /// restart (only dynamic registrations are stored).
    fn fixed_registration(&self, login: &Login) -> Option<Registration> {
        let identity = &self.oauth.identity;
        let client_id = identity
            .client_id
            .clone()
            .or_else(|| identity.metadata_url.clone())?;
        Some(Registration {
            issuer: login.issuer.clone().unwrap_or_default(),
            client_id,
            client_secret: identity.client_secret.clone(),
            token_endpoint_auth_method: match (&identity.auth_method, &identity.client_secret) {
                (Some(method), _) => method.clone(),
                (None, Some(_)) => "client_secret_basic".into(),
                (None, None) => "none".into(),
            },
            redirect_uris: Vec::new(),
        })
    }

    /// The authorization server and resource of this MCP server, found
    /// anew (a server may have moved to another authorization server).
    fn discover(&self, challenge: Option<&BearerChallenge>) -> Result<Found, Error> {
        match discovery::resource_metadata(&self.fetcher, &self.server, challenge)? {
            Some(prm) => {
                let issuer = &prm.authorization_servers[0];
                Ok(Found {
                    metadata: discovery::server_metadata(&self.fetcher, issuer)?,
                    resource: prm.resource,
                    scopes_supported: prm.scopes_supported,
                })
            }
            None => {
                let (origin, _) = url::split(&self.server)
                    .ok_or_else(|| failed("protected resource metadata", "not an http(s) URL"))?;
                Ok(Found {
                    metadata: discovery::legacy_server_metadata(&self.fetcher, &origin)?,
                    resource: self.key.clone(),
                    scopes_supported: None,
                })
            }
        }
    }

    /// The scopes to ask for (basic/authorization "Scope Selection
    /// Strategy"): the challenge's, else the resource's
    /// `scopes_supported`, else none; on a step-up, with those asked for
    /// before; `offline_access` where the authorization server lists it
    /// ("Refresh Tokens").
    fn scopes(
        &self,
        challenge: Option<&BearerChallenge>,
        found: &Found,
        step_up: bool,
    ) -> Vec<String> {
        let mut scopes: Vec<String> = match challenge.and_then(|c| c.scope.as_deref()) {
            Some(scope) => scope.split_whitespace().map(str::to_string).collect(),
            None => found.scopes_supported.clone().unwrap_or_default(),
        };
        if step_up {
            let before = self.state.lock().requested.clone();
            let added: Vec<String> = scopes.drain(..).filter(|s| !before.contains(s)).collect();
            scopes = before;
            scopes.extend(added);
        }
        let user = self.oauth.agent.is_some();
        let offline = found.metadata.supports_scope("offline_access");
        if user && offline && !scopes.iter().any(|s| s == "offline_access") {
            scopes.push("offline_access".into());
        }
        scopes
    }

    /// A whole login: discovery, registration, the grant; the tokens kept.
    fn log_in(&self, challenge: Option<&BearerChallenge>, step_up: bool) -> Result<(), Error> {
        let found = self.discover(challenge)?;
        let mut login = self.login();
        if login.issuer.as_deref() != Some(found.metadata.issuer.as_str()) {
            // Another authorization server (or the first): nothing of the
            // old one is sent to it ("Authorization Server Binding").
            login.tokens = None;
            login.issuer = None;
            login.registration = login
                .registration
                .filter(|r| r.issuer == found.metadata.issuer);
        }
        let scopes = self.scopes(challenge, &found, step_up);
        let scope = Some(scopes.join(" ")).filter(|s| !s.is_empty());
        let tokens = match &self.oauth.agent {
            Some(agent) => {
                let redirect_uri = agent.redirect_uri()?;
                let client = register::Client {
                    identity: &self.oauth.identity,
                    redirect_uri: Some(&redirect_uri),
                    grant_types: &["authorization_code", "refresh_token"],
                    kept: login.registration.as_ref(),
                };
                let registration = register::choose(&self.fetcher, &found.metadata, &client)?;
                let tokens = flow::authorize(
                    &self.fetcher,
                    agent.as_ref(),
                    &Authorization {
                        metadata: &found.metadata,
                        registration: &registration,
                        redirect_uri: &redirect_uri,
                        resource: &found.resource,
                        scope: scope.as_deref(),
                    },
                )?;
                if self.oauth.identity.client_id.is_none()
                    && self.oauth.identity.metadata_url.as_ref() != Some(&registration.client_id)
                {
                    login.registration = Some(registration);
                }
                tokens
            }
            None => self.client_credentials(&found, scope.as_deref())?,
        };
        login.tokens = Some(tokens);
        login.issuer = Some(found.metadata.issuer.clone());
        self.keep(login);
        self.state.lock().requested = scopes;
        Ok(())
    }

    /// A step-up that would ask for nothing new cannot help: the token was
    /// asked for every scope the server names and is still refused
    /// (basic/authorization "Step-Up Authorization Flow": treat it as a
    /// permanent failure rather than loop).
    fn check_step_up(
        &self,
        challenge: Option<&BearerChallenge>,
        sent: Option<&str>,
    ) -> Result<(), Error> {
        let wanted: Vec<&str> = challenge
            .and_then(|c| c.scope.as_deref())
            .map(|s| s.split_whitespace().collect())
            .unwrap_or_default();
        let before = &self.state.lock().requested;
        let nothing_new = wanted.iter().all(|w| before.iter().any(|b| b == w));
        if sent.is_some() && !before.is_empty() && nothing_new {
            return Err(failed(
                "step-up authorization",
                format!(
                    "the server refuses with insufficient_scope although the token was asked \
                     for every scope it names ({}): not asking again",
                    wanted.join(" ")
                ),
            ));
        }
        Ok(())
    }

    /// The client credentials grant (OAuth 2.1 §4.2).
    fn client_credentials(&self, found: &Found, scope: Option<&str>) -> Result<Tokens, Error> {
        let client = register::Client {
            identity: &self.oauth.identity,
            redirect_uri: None,
            grant_types: &["client_credentials"],
            kept: None,
        };
        let registration = register::choose(&self.fetcher, &found.metadata, &client)?;
        let mut params = vec![("grant_type", "client_credentials")];
        if let Some(scope) = scope {
            params.push(("scope", scope));
        }
        TokenRequest {
            step: "token request",
            metadata: &found.metadata,
            registration: &registration,
            resource: &found.resource,
            params,
        }
        .send(&self.fetcher, scope)
    }
}

impl Credentials for Provider {
    fn token(&self) -> Option<String> {
        let tokens = self.login().tokens?;
        if tokens.expires_within(REFRESH_MARGIN_SECS) {
            let _flow = self.flow.lock();
            self.reload();
            let now = self.login().tokens?;
            if now.access_token == tokens.access_token && now.refresh_token.is_some() {
                if let Err(e) = self.refresh(None) {
                    log::info!("the token could not be refreshed before it expires: {}", e);
                }
            } else if now.access_token == tokens.access_token && self.oauth.agent.is_none() {
                if let Err(e) = self.log_in(None, false) {
                    log::info!("no new client credentials token: {}", e);
                }
            }
        }
        self.access_token()
    }

    fn refused(
        &self,
        status: u16,
        challenge: Option<&BearerChallenge>,
        sent: Option<&str>,
    ) -> Result<bool, Error> {
        let _flow = self.flow.lock();
        self.reload();
        let current = self.access_token();
        if current.is_some() && current.as_deref() != sent {
            // Another request (or a client sharing the store) renewed the
            // token meanwhile.
            return Ok(true);
        }
        let error = challenge.and_then(|c| c.error.as_deref());
        match status {
            401 => {
                let refreshable = self
                    .login()
                    .tokens
                    .map_or(false, |t| t.refresh_token.is_some());
                if sent.is_some() && refreshable {
                    match self.refresh(challenge) {
                        Ok(()) => return Ok(true),
                        Err(e) if token::is_invalid_grant(&e) => {
                            log::info!("the refresh token was refused; logging in again")
                        }
                        Err(e) => log::info!("refresh failed ({}); logging in again", e),
                    }
                }
                self.log_in(challenge, false)?;
                Ok(true)
            }
            403 if error == Some("insufficient_scope") => {
                self.check_step_up(challenge, sent)?;
                self.log_in(challenge, true)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}
