//! Resource lists computed per request ([`ResourceProvider`]), and the
//! pages of `resources/list` that follow the fixed resources with each
//! provider's pages.
//!
//! The cursor says where the next page starts: `o:N` in the fixed
//! resources, `p:K:` + the provider's own cursor in provider `K` (the
//! crate's cursors are opaque to clients, PAG-1).

use std::sync::Arc;

use serde_json::Value;

use super::context::RequestContext;
use super::inline::{fixed_resources, invalid_cursor, offset, parse_params};
use super::reply::failure;
use super::reply::to_value;
use super::reply::{Failure, Reply};
use crate::error::Error;
use crate::protocol::{ListResourcesResult, PaginatedRequestParams, ReadResourceResult, Resource};

/// A list of resources computed when a client asks: a directory, a
/// database table, anything too large or too changeable to register one
/// resource at a time.
///
/// `resources/list` shows the fixed resources first, then each provider's
/// pages in the order the providers were added; `resources/read` of a URI
/// asks the fixed resources, then each provider's [`read`](Self::read),
/// then the templates: a listed URI takes priority over a template that
/// also matches it.
///
/// Both methods run on a worker, so they may block (read a disk, query a
/// database) and should poll [`RequestContext::is_cancelled`] when slow.
///
/// ```
/// use tiny_mcp::{Error, ReadResourceResult, RequestContext, Resource, ResourcePage,
///     ResourceProvider, Server};
///
/// /// The numbers 1 to 1000 as resources `num://N`.
/// struct Numbers;
///
/// impl ResourceProvider for Numbers {
///     fn list(&self, _: &RequestContext, cursor: Option<&str>) -> Result<ResourcePage, Error> {
///         let all = (1..=1000).map(|n| Resource::new(format!("num://{}", n), n.to_string()));
///         ResourcePage::paginate(all.collect(), cursor, 100)
///     }
///
///     fn read(&self, _: &RequestContext, uri: &str) -> Option<Result<ReadResourceResult, Error>> {
///         let n: u32 = uri.strip_prefix("num://")?.parse().ok()?;
///         Some(Ok(ReadResourceResult::text(uri, format!("{} squared is {}", n, n * n))))
///     }
/// }
///
/// let server = Server::builder("numbers", "1").resource_provider(Numbers).build();
/// # drop(server);
/// ```
///
/// Spec: server/resources "Listing Resources", "Reading Resources"
/// (2025-11-25); server/utilities/pagination.
pub trait ResourceProvider: Send + Sync + 'static {
    /// One page of the list, from `cursor` (`None`: the first page; else a
    /// `next_cursor` this provider returned). An `Err` is the JSON-RPC
    /// error of [`Error::to_wire`] (an unknown cursor: return
    /// [`Error::invalid_params`], `-32602`, PAG-2).
    fn list(&self, ctx: &RequestContext, cursor: Option<&str>) -> Result<ResourcePage, Error>;

    /// Reads `uri` if it is one of this provider's; `None` passes it on to
    /// the next provider and then the templates. Defaults to `None`, for a
    /// provider whose URIs a template reads.
    fn read(&self, ctx: &RequestContext, uri: &str) -> Option<Result<ReadResourceResult, Error>> {
        let _ = (ctx, uri);
        None
    }
}

/// One page of a [`ResourceProvider`]'s list: the resources and where the
/// next page starts (`None`: this was the last).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ResourcePage {
    /// The resources of this page.
    pub resources: Vec<Resource>,
    /// The cursor of the next page, opaque to the client.
    pub next_cursor: Option<String>,
}

impl ResourcePage {
    /// The last page: `resources`, no next cursor.
    pub fn new(resources: Vec<Resource>) -> ResourcePage {
        ResourcePage {
            resources,
            next_cursor: None,
        }
    }

    /// Sets the cursor of the next page.
    pub fn with_next_cursor(mut self, cursor: impl Into<String>) -> ResourcePage {
        self.next_cursor = Some(cursor.into());
        self
    }

    /// The page of `all` that `cursor` starts, `size` resources long (at
    /// least 1), for a provider that computes its whole list per request:
    /// the cursors are offsets into `all`.
    ///
    /// # Errors
    ///
    /// [`Error::invalid_params`] (`-32602`) for a cursor that is not an
    /// offset within `all` (PAG-2).
    pub fn paginate(
        mut all: Vec<Resource>,
        cursor: Option<&str>,
        size: usize,
    ) -> Result<ResourcePage, Error> {
        let start = match cursor {
            None => 0,
            Some(c) => match c.parse::<usize>() {
                Ok(n) if n <= all.len() => n,
                _ => return Err(Error::invalid_params(format!("invalid cursor: {}", c))),
            },
        };
        let end = start.saturating_add(size.max(1)).min(all.len());
        let more = end < all.len();
        all.truncate(end);
        let page = ResourcePage::new(all.split_off(start));
        Ok(if more {
            page.with_next_cursor(end.to_string())
        } else {
            page
        })
    }
}

/// Where a `resources/list` page starts.
#[derive(Debug, PartialEq)]
pub(crate) enum Start<'a> {
    /// In the fixed resources, at this offset (`o:N`, or no cursor).
    Fixed(usize),
    /// In provider `K`, at its cursor (`None`: its first page).
    Provider(usize, Option<&'a str>),
}

impl<'a> Start<'a> {
    /// Reads a cursor of the crate's; `None` for one it did not make.
    pub(crate) fn parse(cursor: Option<&'a str>) -> Option<Start<'a>> {
        let cursor = match cursor {
            None => return Some(Start::Fixed(0)),
            Some(cursor) => cursor,
        };
        if let Some(n) = cursor.strip_prefix("o:") {
            return offset(n).map(Start::Fixed);
        }
        // `p:K` is provider K's first page, `p:K:C` its page at cursor C
        // (which may be empty: a provider's cursors are its own).
        let rest = cursor.strip_prefix("p:")?;
        let (index, inner) = match rest.find(':') {
            Some(colon) => (&rest[..colon], Some(&rest[colon + 1..])),
            None => (rest, None),
        };
        offset(index).map(|k| Start::Provider(k, inner))
    }

    /// The cursor of provider `k` at its own `cursor`.
    pub(crate) fn provider_cursor(k: usize, cursor: Option<&str>) -> String {
        match cursor {
            Some(cursor) => format!("p:{}:{}", k, cursor),
            None => format!("p:{}", k),
        }
    }
}

/// `resources/list` (RES-1, PAG-1): the fixed resources' pages, then each
/// provider's; with filtered lists, a provider's resources whose scopes
/// the caller lacks are left out of its page.
pub(crate) fn list_resources(
    ctx: &RequestContext,
    params: Option<Value>,
) -> Result<Reply, Failure> {
    let params: PaginatedRequestParams = parse_params(params)?;
    let invalid = || invalid_cursor(params.cursor.as_deref().unwrap_or(""));
    let start = Start::parse(params.cursor.as_deref()).ok_or_else(invalid)?;
    let providers = ctx.session.server.registry.read().providers.clone();
    let from = match start {
        Start::Fixed(offset) => {
            let cursor = params.cursor.as_ref().map(|_| format!("o:{}", offset));
            let (resources, next) = fixed_resources(&ctx.session, &ctx.caller, cursor)?;
            let at_end = next.is_none() && !providers.is_empty();
            if !at_end || !resources.is_empty() {
                let next = next.or_else(|| at_end.then(|| Start::provider_cursor(0, None)));
                return Ok(Reply::Value(to_value(ListResourcesResult {
                    resources,
                    next_cursor: next,
                })?));
            }
            (0, None)
        }
        Start::Provider(k, cursor) if k < providers.len() => (k, cursor.map(String::from)),
        Start::Provider(..) => return Err(invalid().into()),
    };
    let (mut resources, next_cursor) =
        provider_page(ctx, &providers, from).map_err(|e| failure(ctx, e))?;
    let server = &ctx.session.server;
    let principal = ctx.caller.principal.as_deref();
    resources.retain(|r| {
        !server
            .scopes
            .hides(principal, &server.scopes.resources, &r.uri)
    });
    Ok(Reply::Value(to_value(ListResourcesResult {
        resources,
        next_cursor,
    })?))
}

/// Empty provider pages skipped in one `resources/list` before an empty
/// page goes out with its next cursor (a provider that keeps returning
/// empty pages cannot hold a worker).
const MAX_EMPTY_PAGES: usize = 16;

/// The providers' part of a `resources/list` page from provider `k` at
/// `cursor`: the first page with resources (or the last), and the next
/// cursor in the crate's form. Empty pages that are not the last are
/// skipped, up to [`MAX_EMPTY_PAGES`].
pub(crate) fn provider_page(
    ctx: &RequestContext,
    providers: &[Arc<dyn ResourceProvider>],
    (mut k, mut cursor): (usize, Option<String>),
) -> Result<(Vec<Resource>, Option<String>), Error> {
    for _ in 0..MAX_EMPTY_PAGES {
        let provider = match providers.get(k) {
            Some(provider) => provider,
            None => break,
        };
        let page = provider.list(ctx, cursor.as_deref())?;
        let next = match page.next_cursor {
            Some(next) => Some((k, Some(next))),
            None if k + 1 < providers.len() => Some((k + 1, None)),
            None => None,
        };
        match next {
            Some((next_k, next_cursor)) if page.resources.is_empty() => {
                k = next_k;
                cursor = next_cursor;
            }
            _ => {
                let next = next.map(|(k, c)| Start::provider_cursor(k, c.as_deref()));
                return Ok((page.resources, next));
            }
        }
    }
    let next = providers
        .get(k)
        .map(|_| Start::provider_cursor(k, cursor.as_deref()));
    Ok((Vec::new(), next))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> Vec<Resource> {
        (0..n)
            .map(|i| Resource::new(format!("n://{}", i), i.to_string()))
            .collect()
    }

    // server/utilities/pagination: offsets as cursors, a bad one is -32602.
    #[test]
    fn paginate_follows_offsets() {
        let page = ResourcePage::paginate(numbered(5), None, 2).unwrap();
        assert_eq!(page.resources.len(), 2);
        assert_eq!(page.next_cursor.as_deref(), Some("2"));
        let page = ResourcePage::paginate(numbered(5), Some("4"), 2).unwrap();
        assert_eq!(page.resources[0].uri, "n://4");
        assert_eq!(page.next_cursor, None);
        assert!(ResourcePage::paginate(numbered(5), Some("6"), 2).is_err());
        assert!(ResourcePage::paginate(numbered(5), Some("x"), 2).is_err());
    }

    // The crate's cursors: its own offsets and the providers' cursors,
    // which may contain ':'.
    #[test]
    fn cursors_round_trip() {
        assert_eq!(Start::parse(None), Some(Start::Fixed(0)));
        assert_eq!(Start::parse(Some("o:7")), Some(Start::Fixed(7)));
        let cursor = Start::provider_cursor(2, Some("a:b"));
        assert_eq!(
            Start::parse(Some(&cursor)),
            Some(Start::Provider(2, Some("a:b")))
        );
        let first = Start::provider_cursor(0, None);
        assert_eq!(Start::parse(Some(&first)), Some(Start::Provider(0, None)));
        // A provider's empty cursor is not its first page.
        let empty = Start::provider_cursor(1, Some(""));
        assert_eq!(
            Start::parse(Some(&empty)),
            Some(Start::Provider(1, Some("")))
        );
        assert_eq!(Start::parse(Some("p:x:")), None);
        assert_eq!(Start::parse(Some("p:+0:")), None);
        assert_eq!(Start::parse(Some("o:+1")), None);
        assert_eq!(Start::parse(Some("nope")), None);
    }
}
