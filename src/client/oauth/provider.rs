//! One [`OAuth`] bound to one MCP server: the token each request carries,
//! and what a `401` or `403` from that server sets off (refresh, login,
//! step-up). One login at a time; a thread that waited for another's
//! login uses its token.

use std::sync::Arc;

use parking_lot::Mutex;

use super::discovery::{self, ServerMetadata};
use super::fetch::{failed, Fetcher};
use super::flow::{self, Authorization};
use super::register;
use super::store::{Login, Registration, Tokens};
use super::token::{self, TokenRequest};
use super::{enterprise, url, Grant, OAuth};
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
    /// What the last discovery found, for a refresh before expiry.
    found: Option<Arc<Found>>,
    /// The access token the last refresh gave: when the server refuses
    /// that one too, only a new login helps.
    refreshed: Option<String>,
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

    /// Refreshes the access token (RFC 6749 §6) at the authorization
    /// server `found` names, keeping the refresh token when the server
    /// sends no new one. Only with the server that issued it: after a
    /// change of authorization server nothing of the old one is sent to
    /// the new ("Authorization Server Binding").
    fn refresh(&self, found: &Found) -> Result<(), Error> {
        let mut login = self.login();
        if login.issuer.as_deref() != Some(found.metadata.issuer.as_str()) {
            return Err(failed("token refresh", "the authorization server changed"));
        }
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
        let request = TokenRequest {
            step: "token refresh",
            metadata: &found.metadata,
            registration: &registration,
            resource: &found.resource,
            params: vec![
                ("grant_type", "refresh_token"),
                ("refresh_token", &refresh_token),
            ],
            assertion: self.oauth.identity.assertion.as_deref(),
        };
        let mut fresh = request.send(&self.fetcher, tokens.scope.as_deref())?;
        if fresh.refresh_token.is_none() {
            fresh.refresh_token = Some(refresh_token);
        }
        self.state.lock().refreshed = Some(fresh.access_token.clone());
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
                (None, _) if identity.assertion.is_some() => "private_key_jwt".into(),
                (None, Some(_)) => "client_secret_basic".into(),
                (None, None) => "none".into(),
            },
            redirect_uris: Vec::new(),
        })
    }

    /// The authorization server and resource of this MCP server, found
    /// anew (a server may have moved to another authorization server).
    fn discover(&self, challenge: Option<&BearerChallenge>) -> Result<Arc<Found>, Error> {
        let found = Arc::new(self.find(challenge)?);
        self.state.lock().found = Some(Arc::clone(&found));
        Ok(found)
    }

    /// The last discovery's findings, or a new discovery.
    fn found(&self) -> Result<Arc<Found>, Error> {
        let cached = self.state.lock().found.clone();
        match cached {
            Some(found) => Ok(found),
            None => self.discover(None),
        }
    }

    fn find(&self, challenge: Option<&BearerChallenge>) -> Result<Found, Error> {
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

    /// The scopes asked for before: this process's last request, else
    /// (a login loaded from the store) those the stored token was granted,
    /// so that a step-up after a restart keeps them.
    fn asked_before(&self) -> Vec<String> {
        let requested = self.state.lock().requested.clone();
        if !requested.is_empty() {
            return requested;
        }
        let granted = self.login().tokens.and_then(|t| t.scope);
        granted
            .map(|s| s.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default()
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
            let before = self.asked_before();
            let added: Vec<String> = scopes.drain(..).filter(|s| !before.contains(s)).collect();
            scopes = before;
            scopes.extend(added);
        }
        let user = matches!(self.oauth.grant, Grant::Code(_));
        let offline = found.metadata.supports_scope("offline_access");
        if user && offline && !scopes.iter().any(|s| s == "offline_access") {
            scopes.push("offline_access".into());
        }
        scopes
    }

    /// A whole login: discovery, registration, the grant; the tokens kept.
    fn log_in(&self, challenge: Option<&BearerChallenge>, step_up: bool) -> Result<(), Error> {
        let found = self.discover(challenge)?;
        self.log_in_at(&found, challenge, step_up)
    }

    fn log_in_at(
        &self,
        found: &Found,
        challenge: Option<&BearerChallenge>,
        step_up: bool,
    ) -> Result<(), Error> {
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
        let scopes = self.scopes(challenge, found, step_up);
        let scope = Some(scopes.join(" ")).filter(|s| !s.is_empty());
        let tokens = match &self.oauth.grant {
            Grant::Code(agent) => {
                let (registration, tokens) =
                    self.code_grant(agent.as_ref(), found, &login, scope.as_deref())?;
                let identity = &self.oauth.identity;
                if identity.client_id.is_none()
                    && identity.metadata_url.as_ref() != Some(&registration.client_id)
                {
                    login.registration = Some(registration);
                }
                tokens
            }
            Grant::ClientCredentials => self.client_credentials(found, scope.as_deref())?,
            Grant::Enterprise(idp) => {
                let registration = self.fixed(found)?;
                enterprise::grant(
                    &self.fetcher,
                    idp,
                    &found.metadata,
                    &registration,
                    &found.resource,
                    scope.as_deref(),
                )?
            }
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
        let before = self.asked_before();
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

    /// The authorization code grant: a registration for the redirect URI,
    /// the user's authorization, the code exchanged.
    fn code_grant(
        &self,
        agent: &dyn super::UserAgent,
        found: &Found,
        login: &Login,
        scope: Option<&str>,
    ) -> Result<(Registration, Tokens), Error> {
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
            agent,
            &Authorization {
                metadata: &found.metadata,
                registration: &registration,
                redirect_uri: &redirect_uri,
                resource: &found.resource,
                scope,
                assertion: self.oauth.identity.assertion.as_deref(),
            },
        )?;
        Ok((registration, tokens))
    }

    /// The pre-registered client's registration with the server found.
    fn fixed(&self, found: &Found) -> Result<Registration, Error> {
        let client = register::Client {
            identity: &self.oauth.identity,
            redirect_uri: None,
            grant_types: &["client_credentials"],
            kept: None,
        };
        register::choose(&self.fetcher, &found.metadata, &client)
    }

    /// The client credentials grant (OAuth 2.1 §4.2).
    fn client_credentials(&self, found: &Found, scope: Option<&str>) -> Result<Tokens, Error> {
        let registration = self.fixed(found)?;
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
            assertion: self.oauth.identity.assertion.as_deref(),
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
            let same = now.access_token == tokens.access_token;
            let renewed = match self.found() {
                Ok(found) if same && now.refresh_token.is_some() => self.refresh(&found),
                // No user to ask: a machine just asks for a new token.
                Ok(found) if same && !matches!(self.oauth.grant, Grant::Code(_)) => {
                    self.log_in_at(&found, None, false)
                }
                Ok(_) => Ok(()),
                Err(e) => Err(e),
            };
            if let Err(e) = renewed {
                log::info!("the token could not be renewed before it expires: {}", e);
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
                // Discovered again: the server may name another
                // authorization server now (a migration), which must not
                // see the old one's refresh token.
                let found = self.discover(challenge)?;
                let refreshable = self
                    .login()
                    .tokens
                    .map_or(false, |t| t.refresh_token.is_some());
                let fresh = sent.is_some() && self.state.lock().refreshed.as_deref() == sent;
                if sent.is_some() && refreshable && !fresh {
                    match self.refresh(&found) {
                        Ok(()) => return Ok(true),
                        Err(e) if token::is_invalid_grant(&e) => {
                            log::info!("the refresh token was refused; logging in again")
                        }
                        Err(e) => log::info!("refresh failed ({}); logging in again", e),
                    }
                }
                self.log_in_at(&found, challenge, false)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::oauth::{Headless, MemoryTokenStore, TokenStore};

    const SERVER: &str = "http://127.0.0.1:1/mcp";

    // basic/authorization "Step-Up Authorization Flow" (the union with the
    // scopes granted before): after a restart, the login loaded from the
    // store still counts, though this process asked for nothing yet.
    #[test]
    fn step_up_after_a_restart_keeps_the_granted_scopes() {
        let store = MemoryTokenStore::new();
        let tokens = Tokens {
            access_token: "a".into(),
            refresh_token: None,
            expires_at: None,
            scope: Some("mcp:tools".into()),
        };
        let login = Login {
            tokens: Some(tokens),
            ..Login::default()
        };
        store.save(&url::canonical(SERVER), &login).unwrap();
        let oauth = OAuth::new(Headless::new("http://127.0.0.1:1/cb")).store(store);
        let provider = Provider::new(oauth, SERVER, Fetcher::standalone());
        let found = Found {
            metadata: ServerMetadata::defaults("http://127.0.0.1:2"),
            resource: SERVER.into(),
            scopes_supported: None,
        };
        let challenge = BearerChallenge {
            scope: Some("mcp:admin".into()),
            error: Some("insufficient_scope".into()),
            ..BearerChallenge::default()
        };
        let scopes = provider.scopes(Some(&challenge), &found, true);
        assert_eq!(scopes, ["mcp:tools", "mcp:admin"]);
        // Asked and granted already: a futile step-up is refused.
        let again = BearerChallenge {
            scope: Some("mcp:tools".into()),
            ..challenge
        };
        assert!(provider.check_step_up(Some(&again), Some("a")).is_err());
    }
}
