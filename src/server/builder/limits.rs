//! The builder's limits and timeouts: sizes, counts, the worker pool and
//! its shares (DESIGN.md §6, §26).

use std::time::Duration;

use super::ServerBuilder;

impl ServerBuilder {
    /// Items per page of `tools/list`, `prompts/list`,
    /// `resources/templates/list`, and of the fixed resources of
    /// `resources/list`. Defaults to 100; at least 1. A
    /// [`ResourceProvider`](crate::ResourceProvider)'s pages are its own: they follow the last page
    /// of fixed resources (which may be short), each as the provider
    /// returns it.
    pub fn page_size(mut self, n: usize) -> Self {
        self.config.page_size = n.max(1);
        self
    }

    /// Longest message accepted on stdio, in bytes. A longer line is
    /// discarded up to its newline and answered with `-32600`. Defaults to
    /// 4 MiB.
    pub fn max_message_bytes(mut self, n: usize) -> Self {
        self.config.max_line_bytes = n.max(64);
        self
    }

    /// Most bytes of requests (their lines as read) that may wait behind a
    /// handler that waits for its client when stdio is served
    /// single-threaded (DESIGN.md §31: WASI, or `max_workers(0)`); past
    /// it a request that would queue is answered `-32603` "too many
    /// requests queued" at once. One request always fits. Defaults to
    /// 64 MiB: on wasm32 all memory is 4 GiB, and `max_in_flight` times
    /// `max_message_bytes` would be all of it.
    pub fn max_queued_bytes(mut self, n: usize) -> Self {
        self.config.max_queued_bytes = n;
        self
    }

    /// How long `create_message`, `elicit` and `list_roots` wait for the
    /// client. Defaults to 60 s. On timeout the request is cancelled with
    /// `notifications/cancelled` (LC-6). Served single-threaded
    /// (DESIGN.md §31), the time is checked between the messages the wait
    /// reads: a client that sends nothing holds the wait until it does.
    pub fn client_request_timeout(mut self, timeout: Duration) -> Self {
        self.config.client_request_timeout = timeout;
        self
    }

    /// How long handlers still running when stdin closes get to finish and
    /// answer before they are cancelled. Defaults to 1 s; zero cancels them
    /// at once. `Server::close` gives them the same; on `serve_stdio` a
    /// quick tool's call running on the reading thread shares that one
    /// grace with them (what it takes of it is gone).
    pub fn end_of_input_grace(mut self, grace: Duration) -> Self {
        self.config.end_of_input_grace = grace;
        self
    }

    /// How long `serve_stdio` (after end of input) and
    /// `HttpServer::shutdown` wait for cancelled handlers to return. A
    /// handler that ignores cancellation past it is left running on its
    /// thread (logged) so that serving still returns. Defaults to 5 s.
    pub fn handler_exit_timeout(mut self, timeout: Duration) -> Self {
        self.config.handler_exit_timeout = timeout;
        self
    }

    /// Most requests one session may have in flight. Past it a request gets
    /// `-32603` "too many requests in flight". Defaults to 1024. A quick
    /// tool's call on stdio is not counted: it runs on the thread that
    /// reads, one at a time ([`quick_tool`](Self::quick_tool)).
    pub fn max_in_flight(mut self, n: usize) -> Self {
        self.config.max_in_flight = n.max(1);
        self
    }

    /// Most worker threads running handlers at once. Past it requests wait
    /// in a queue for a free worker. Defaults to 256; 0 on a target
    /// without threads (`wasm32-wasip1`, `wasm32-wasip2`).
    ///
    /// `0` serves stdio ([`Server::serve_stdio`](crate::Server::serve_stdio),
    /// [`serve_io`](crate::Server::serve_io)) single-threaded: each
    /// request's handler runs on the thread that reads, to its end, before
    /// the next line is read (DESIGN.md §31). HTTP, whose connections need
    /// threads, and the in-memory client keep one worker.
    pub fn max_workers(mut self, n: usize) -> Self {
        self.config.max_workers = n;
        self
    }

    /// Most workers one caller may hold at once on HTTP (DESIGN.md §26):
    /// the principal, else the 2025-11-25 session, else the peer address.
    /// Its requests past it wait (they are not refused) until one of its
    /// own ends; waiting callers are served in turn, so a caller with many
    /// waiting calls does not go before one with a single call. A task
    /// runs on the worker that took its call, so a running task (also one
    /// waiting for input) and a 2025-11-25 `tasks/result` waiting for it
    /// count too. Defaults to a quarter of [`max_workers`](Self::max_workers)
    /// (64 of 256); at least 1. stdio and the in-memory client serve one
    /// client, which has every worker.
    pub fn max_workers_per_caller(mut self, n: usize) -> Self {
        self.config.max_workers_per_caller = Some(n.max(1));
        self
    }

    /// Most workers the callers of one peer address may hold together on
    /// HTTP, however many sessions or principals it brings (DESIGN.md
    /// §26); past it their requests wait as for
    /// [`max_workers_per_caller`](Self::max_workers_per_caller). Defaults
    /// to half of [`max_workers`](Self::max_workers) (128 of 256); at
    /// least 1. Not applied when per-peer shares are off
    /// ([`HttpServerBuilder::per_peer_shares`](crate::HttpServerBuilder::per_peer_shares)).
    pub fn max_workers_per_peer(mut self, n: usize) -> Self {
        self.config.max_workers_per_peer = Some(n.max(1));
        self
    }

    /// Most `resources/subscribe` URIs per session; past it `-32602`.
    /// Defaults to 1024.
    pub fn max_subscriptions(mut self, n: usize) -> Self {
        self.config.max_subscriptions = n;
        self
    }

    /// Most `subscriptions/listen` streams open at once (2026-07-28). Past
    /// it a listen request gets `-32603` "too many listen streams" (HTTP
    /// 503) before any acknowledgement. Defaults to 10,000.
    pub fn max_listen_streams(mut self, n: usize) -> Self {
        self.config.max_listen_streams = n;
        self
    }

    /// Counts requests, sessions and HTTP refusals for
    /// [`Server::metrics`](crate::Server::metrics) (feature `metrics`).
    /// `false` reads no clock and counts nothing but the gauges; for
    /// measuring what counting costs. Defaults to `true`.
    pub fn collect_metrics(mut self, on: bool) -> Self {
        self.config.collect_metrics = on;
        self
    }

    /// Most tool names used as a metrics label (`gen_ai.tool.name`, feature
    /// `metrics`): the first `n` registered tools called get their own
    /// series, later ones share `_OTHER`. A name the registry does not know
    /// is never a label. Defaults to 256.
    pub fn max_metric_tools(mut self, n: usize) -> Self {
        self.config.max_metric_tools = n;
        self
    }
}
