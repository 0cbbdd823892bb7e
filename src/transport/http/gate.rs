//! The steps of the decision taken on a request's head, before its body is
//! read (DESIGN.md §13, §15): the path, DNS-rebinding protection, the
//! protected resource metadata, authorization, then the pre-request hooks
//! in the order they were added. A request refused here never reaches the
//! MCP layer.

use std::fmt;
use std::sync::Arc;

use super::answer::Answer;
use super::auth::{authorize, ProtectedResource};
use super::head::{HttpRefusal, HttpRequestHead};
use super::media::check_host_and_origin;
use super::wire::{HttpRequest, HttpResponse};
use super::{HttpServer, HttpServerBuilder, Shared};
use crate::jsonrpc::{ErrorCode, ErrorObject};
use crate::server::Principal;

/// A pre-request hook: the head and the principal (when the endpoint is
/// protected) in, `Err` to refuse.
pub(crate) type PreRequestHook =
    dyn Fn(&HttpRequestHead<'_>, Option<&Principal>) -> Result<(), HttpRefusal> + Send + Sync;

/// What runs before a request's body is read, beside the crate's own
/// checks: authorization and the pre-request hooks, in the order added.
#[derive(Clone, Default)]
pub(crate) struct Guards {
    pub(crate) protected: Option<Arc<ProtectedResource>>,
    pub(crate) hooks: Vec<Arc<PreRequestHook>>,
}

impl fmt::Debug for Guards {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guards")
            .field("protected", &self.protected)
            .field("hooks", &self.hooks.len())
            .finish()
    }
}

/// What the head decided.
pub(crate) enum Admission {
    /// The whole answer; the body is skipped.
    Answer(Answer),
    /// Read the body and route the request, with the principal that
    /// authorization established (`None` when the endpoint is not
    /// protected).
    Pass(Option<Arc<Principal>>),
}

/// Decides what the head alone can. Steps, in order:
///
/// | step | refused with |
/// | --- | --- |
/// | path: the endpoint, or (when protected) a metadata path | 404 |
/// | Host and Origin (SEC-1), when DNS-rebinding protection is on | 403 |
/// | a metadata path: `GET` and `HEAD` answer the document, `OPTIONS` its methods | 405 for other methods |
/// | authorization ([`authorize`]'s table) | 400, 401, 403, 503 |
/// | each pre-request hook, in the order added | the hook's refusal |
pub(crate) fn admit(shared: &Shared, request: &HttpRequest) -> Admission {
    let config = &shared.config;
    let protected = config.guards.protected.as_deref();
    let metadata = protected.filter(|p| p.serves_metadata_at(&request.path, &config.endpoint));
    if request.path != config.endpoint && metadata.is_none() {
        return Admission::Answer(Answer::status(404));
    }
    if config.dns_rebinding_protection {
        if let Err(why) = check_host_and_origin(
            request.header("host"),
            request.header("origin"),
            shared.loopback,
            &config.allowed_hosts,
            &config.allowed_origins,
        ) {
            log::warn!("refused a request: {}", why);
            let error = ErrorObject::new(ErrorCode(-32000), why);
            return Admission::Answer(Answer::error(403, None, error));
        }
    }
    if let Some(protected) = metadata {
        return Admission::Answer(metadata_document(shared, protected, request));
    }
    let principal = match protected {
        None => None,
        Some(protected) => match authorize(protected, shared.server.server_scopes(), request) {
            Ok(principal) => Some(Arc::new(principal)),
            Err(refused) => return Admission::Answer(Answer::Whole(refused)),
        },
    };
    let head = HttpRequestHead::new(request);
    for hook in &config.guards.hooks {
        // A hook that panics refuses the request (500); the connection
        // and the server go on.
        let asked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            hook(&head, principal.as_deref())
        }));
        let refusal = match asked {
            Ok(Ok(())) => continue,
            Ok(Err(refusal)) => refusal,
            Err(_) => {
                log::error!("a before_request hook panicked on {}", request.path);
                HttpRefusal::new(500)
            }
        };
        return Admission::Answer(Answer::Whole(refusal.into_response()));
    }
    Admission::Pass(principal)
}

/// RFC 9728 §3.2: the metadata document, public, as JSON, for `GET` and
/// `HEAD` (RFC 9110 §9.3.2); `OPTIONS` says which methods there are.
fn metadata_document(
    shared: &Shared,
    protected: &ProtectedResource,
    request: &HttpRequest,
) -> Answer {
    let allow = "GET, HEAD, OPTIONS";
    match request.method.as_str() {
        "GET" | "HEAD" => {
            let document = protected.document(shared.server.scopes_named());
            let mut response = HttpResponse::json(200, document.to_string().into_bytes());
            response.head_only = request.method == "HEAD";
            Answer::Whole(response)
        }
        "OPTIONS" => Answer::Whole(HttpResponse::new(204).header("Allow", allow)),
        _ => Answer::Whole(HttpResponse::new(405).header("Allow", allow)),
    }
}

impl HttpServerBuilder {
    /// Protects the endpoint as an OAuth 2.1 resource server (see
    /// [`ProtectedResource`]): every request needs a bearer token its
    /// verifier accepts, issued for its resource, with the scopes the
    /// server requires ([`ServerBuilder::require_scopes`](crate::ServerBuilder::require_scopes)
    /// and the per-item scopes); the metadata document is served; a
    /// 2025-11-25 session belongs to the principal that opened it.
    /// Handlers read the principal with
    /// [`RequestContext::principal`](crate::RequestContext::principal).
    /// The same rules apply to both eras on the endpoint.
    ///
    /// [`serve`](Self::serve) fails with a message if `resource` is not an
    /// absolute `http(s)` URL or no authorization server is named.
    ///
    /// Spec: basic/authorization (2025-11-25).
    pub fn protect(mut self, protected: ProtectedResource) -> Self {
        self.config.guards.protected = Some(Arc::new(protected));
        self
    }

    /// Most 2025-11-25 sessions one principal may hold on a protected
    /// endpoint (same subject and client id). At the limit, its
    /// `initialize` ends the principal's oldest session (whose id then
    /// gets 404), so that one caller cannot fill the session table for
    /// everyone. Defaults to 100; at least 1.
    pub fn max_sessions_per_principal(mut self, n: usize) -> Self {
        self.config.max_sessions_per_principal = n.max(1);
        self
    }

    /// Most 2025-11-25 sessions one peer address (the client's IP, without
    /// its port) may hold when no principal is known (an endpoint that is
    /// not protected). At the limit, its `initialize` ends the peer's
    /// oldest session (whose id then gets 404). Defaults to none: behind a
    /// proxy every client has the proxy's address, so set it only where
    /// clients connect directly. At least 1.
    pub fn max_sessions_per_peer(mut self, n: usize) -> Self {
        self.config.max_sessions_per_peer = Some(n.max(1));
        self
    }

    /// Adds a hook that sees each request's head (and its principal, when
    /// the endpoint is protected) before the body is read, and may refuse
    /// it with any status, headers and body: a rate limiter answering 429
    /// with `Retry-After`, an IP allowlist answering 403.
    ///
    /// Order: the path, Host/Origin and authorization checks come first
    /// (an unauthorized request is refused before any hook sees it), then
    /// the hooks in the order they were added; the first refusal wins.
    /// Hooks run on the connection's thread: keep them fast. The metadata
    /// document is answered before the hooks. A request refused here (or
    /// by authorization) never reaches the MCP layer, so
    /// [`ServerBuilder::on_request_finished`](crate::ServerBuilder::on_request_finished)
    /// does not report it: log refusals from the hook itself.
    ///
    /// ```no_run
    /// use tiny_mcp::{HttpRefusal, HttpRequestHead, Principal, Server};
    ///
    /// let server = Server::builder("demo", "1.0.0").build();
    /// let http = server
    ///     .http()
    ///     .before_request(|head: &HttpRequestHead<'_>, _: Option<&Principal>| {
    ///         match head.remote_addr() {
    ///             Some(addr) if addr.ip().is_loopback() => Ok(()),
    ///             _ => Err(HttpRefusal::new(403).text("loopback only")),
    ///         }
    ///     })
    ///     .serve("127.0.0.1:3000")?;
    /// # Ok::<(), tiny_mcp::Error>(())
    /// ```
    pub fn before_request(
        mut self,
        hook: impl Fn(&HttpRequestHead<'_>, Option<&Principal>) -> Result<(), HttpRefusal>
            + Send
            + Sync
            + 'static,
    ) -> Self {
        self.config.guards.hooks.push(Arc::new(hook));
        self
    }
}

impl HttpServer {
    /// The endpoint's URL: `http://` + [`local_addr`](Self::local_addr) +
    /// the endpoint path, e.g. `http://127.0.0.1:41234/mcp` (an IPv6
    /// address in brackets). What a client on this machine connects to.
    pub fn url(&self) -> String {
        format!(
            "http://{}{}",
            self.shared.local_addr, self.shared.config.endpoint
        )
    }
}
