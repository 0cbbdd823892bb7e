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
use super::{HttpServer, Shared};
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
/// | path: the endpoint, the metrics path, or (when protected) a metadata path | 404 |
/// | Host and Origin (SEC-1), when DNS-rebinding protection is on | 403 |
/// | a metadata path: `GET` and `HEAD` answer the document, `OPTIONS` its methods | 405 for other methods |
/// | the metrics path (`metrics_path`): `GET` and `HEAD` answer the metrics | 405 for other methods |
/// | authorization ([`authorize`]'s table) | 400, 401, 403, 503 |
/// | each pre-request hook, in the order added | the hook's refusal |
pub(crate) fn admit(shared: &Shared, request: &HttpRequest) -> Admission {
    let config = &shared.config;
    let protected = config.guards.protected.as_deref();
    let metadata = protected.filter(|p| p.serves_metadata_at(&request.path, &config.endpoint));
    let scrape = request.path != config.endpoint
        && config.metrics_path.as_deref() == Some(request.path.as_str());
    if request.path != config.endpoint && metadata.is_none() && !scrape {
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
            // The reason quotes the peer's header: shown cut and escaped,
            // and at most one line per interval (DESIGN.md §26, "Logs").
            shared.refusals.refused(&super::logged::shown(&why));
            let error = ErrorObject::new(ErrorCode(-32000), why);
            return Admission::Answer(Answer::error(403, None, error));
        }
    }
    if let Some(protected) = metadata {
        return Admission::Answer(metadata_document(shared, protected, request));
    }
    if scrape {
        return Admission::Answer(metrics_document(shared, request));
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

/// The metrics in the Prometheus text format 0.0.4, for `GET` and `HEAD`
/// (DESIGN.md §29); public like the metadata document.
fn metrics_document(shared: &Shared, request: &HttpRequest) -> Answer {
    match request.method.as_str() {
        "GET" | "HEAD" => {
            let mut response = HttpResponse::new(200)
                .header("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            response.body = render_metrics(shared).into_bytes();
            response.head_only = request.method == "HEAD";
            Answer::Whole(response)
        }
        _ => Answer::Whole(HttpResponse::new(405).header("Allow", "GET, HEAD")),
    }
}

#[cfg(feature = "metrics")]
fn render_metrics(shared: &Shared) -> String {
    let metrics = crate::server::Metrics {
        server: Arc::clone(&shared.server),
    };
    metrics.render_prometheus()
}

/// Without the feature no path is set: never reached.
#[cfg(not(feature = "metrics"))]
fn render_metrics(_shared: &Shared) -> String {
    String::new()
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
