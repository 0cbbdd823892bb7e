//! The bearer token of each request (basic/authorization "Access Token
//! Usage": on every HTTP request), and what a `401` or `403` sets off: a
//! refresh, a login or a step-up by the [`Credentials`], then the request
//! again, a few times at most.

use super::HttpLink;
use crate::challenge::BearerChallenge;
use crate::error::{Error, ErrorKind};

/// Supplies the bearer token for each request, or `None` for none.
pub(crate) type TokenFn = dyn Fn() -> Option<String> + Send + Sync;

/// The bearer token of each request, and what a `401` or `403` sets off
/// (basic/authorization "Access Token Usage"): a fixed token, or a login
/// ([`oauth::Provider`](super::oauth::Provider)).
pub(crate) trait Credentials: Send + Sync {
    /// The token to send now, if any.
    fn token(&self) -> Option<String>;

    /// The server refused the request that carried `sent` with `status`
    /// (`401` or `403`) and `challenge`: `Ok(true)` when a new token is
    /// ready and the request should be sent again; an error ends the
    /// request with it.
    fn refused(
        &self,
        status: u16,
        challenge: Option<&BearerChallenge>,
        sent: Option<&str>,
    ) -> Result<bool, Error>;
}

/// A token the program supplies ([`ClientBuilder::bearer_token`](super::ClientBuilder::bearer_token)):
/// a refusal is the request's error.
pub(crate) struct FixedToken(pub(crate) Box<TokenFn>);

impl Credentials for FixedToken {
    fn token(&self) -> Option<String> {
        (self.0)()
    }

    fn refused(&self, _: u16, _: Option<&BearerChallenge>, _: Option<&str>) -> Result<bool, Error> {
        Ok(false)
    }
}

/// Logins (or refreshes) one request may set off: the first `401`, then a
/// step-up or two on `403 insufficient_scope` (basic/authorization
/// "Step-Up Authorization Flow": a few retries, then a permanent failure).
const MAX_AUTH_ROUNDS: usize = 3;

impl HttpLink {
    /// Runs `attempt` with the current token; when the server refuses it
    /// with `401` or `403` and the credentials get a new token (a refresh,
    /// a login, a step-up), runs it again, [`MAX_AUTH_ROUNDS`] times at
    /// most. `attempt` is told the round (0 first).
    pub(super) fn authorized<T>(
        &self,
        mut attempt: impl FnMut(Option<&str>, usize) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let mut round = 0;
        loop {
            let token = self.token();
            let error = match attempt(token.as_deref(), round) {
                Err(error) => error,
                done => return done,
            };
            let credentials = match &self.settings.credentials {
                Some(credentials) if round < MAX_AUTH_ROUNDS => credentials,
                _ => return Err(error),
            };
            match error.kind() {
                ErrorKind::Http {
                    status: status @ (401 | 403),
                    challenge,
                    ..
                } => {
                    if !credentials.refused(*status, challenge.as_ref(), token.as_deref())? {
                        return Err(error);
                    }
                }
                _ => return Err(error),
            }
            round += 1;
        }
    }
}
