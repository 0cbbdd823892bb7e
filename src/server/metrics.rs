//! Metrics (feature `metrics`, DESIGN.md §29): what every request, session
//! and HTTP refusal adds to the server's counters, with bounded labels.
//!
//! The names follow OpenTelemetry's semantic conventions for MCP where they
//! define one (`mcp.server.operation.duration`,
//! `mcp.server.session.duration`); the rest are the crate's own
//! (`tiny_mcp.*`). A request is counted once, where it ends: by the
//! dispatcher for an answer given on the reading thread, by the run for a
//! handler's answer. Labels come from bounded sets only: a method is the
//! table's name or `_OTHER`, a tool one the registry found (at most
//! [`ServerBuilder::max_metric_tools`](crate::ServerBuilder::max_metric_tools)
//! of them, then `_OTHER`), an error a known JSON-RPC code, `tool_error`,
//! `cancelled` or `_OTHER`.

mod prometheus;

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::RwLock;

use super::inner::ServerInner;
use super::outcome::RequestStatus;
use crate::jsonrpc::ErrorCode;

/// The upper bounds of the duration histograms' buckets, in nanoseconds
/// (compared as integers: no floating point on the counting path, nor in
/// the static binary); the last bucket (`+Inf`) takes the rest.
pub(crate) const BUCKETS: [u64; 17] = [
    100_000,
    500_000,
    1_000_000,
    5_000_000,
    10_000_000,
    20_000_000,
    50_000_000,
    100_000_000,
    200_000_000,
    500_000_000,
    1_000_000_000,
    2_000_000_000,
    5_000_000_000,
    10_000_000_000,
    30_000_000_000,
    60_000_000_000,
    300_000_000_000,
];

/// [`BUCKETS`] in seconds, as the `le` labels write them.
pub(crate) const BUCKET_LABELS: [&str; 17] = [
    "0.0001", "0.0005", "0.001", "0.005", "0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2",
    "5", "10", "30", "60", "300",
];

/// The JSON-RPC error codes counted under their own `error.type`; any
/// other code is `_OTHER`.
const KNOWN_CODES: [ErrorCode; 10] = [
    ErrorCode::PARSE_ERROR,
    ErrorCode::INVALID_REQUEST,
    ErrorCode::METHOD_NOT_FOUND,
    ErrorCode::INVALID_PARAMS,
    ErrorCode::INTERNAL_ERROR,
    ErrorCode::RESOURCE_NOT_FOUND,
    ErrorCode::URL_ELICITATION_REQUIRED,
    ErrorCode::HEADER_MISMATCH,
    ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
    ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
];

/// The server's metrics, readable from code and rendered for Prometheus.
///
/// A cheap handle (an `Arc`) on the counters of one [`Server`](crate::Server):
/// [`Server::metrics`](crate::Server::metrics). Counting is on unless
/// [`ServerBuilder::collect_metrics`](crate::ServerBuilder::collect_metrics)
/// turned it off.
///
/// # Example
///
/// ```
/// use tiny_mcp::Server;
///
/// let server = Server::builder("demo", "1.0.0").build();
/// let text = server.metrics().render_prometheus();
/// assert!(text.contains("# TYPE mcp_server_operation_duration_seconds histogram"));
/// ```
#[derive(Clone)]
pub struct Metrics {
    pub(crate) server: Arc<ServerInner>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

/// A gauge: how many of a thing are open or busy now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Gauge {
    /// Lasting sessions: a stdio or in-memory connection, a 2025-11-25
    /// HTTP session (`tiny_mcp.sessions.open`).
    Sessions,
    /// Open HTTP connections (`tiny_mcp.http.connections.open`).
    HttpConnections,
    /// Open SSE streams: POST response streams, GET streams and
    /// `subscriptions/listen` streams (`tiny_mcp.http.sse_streams.open`).
    SseStreams,
    /// Tasks running on this instance (`tiny_mcp.tasks.running`).
    RunningTasks,
    /// Workers running a job (`tiny_mcp.workers.busy`).
    BusyWorkers,
    /// Worker threads started and not ended (`tiny_mcp.workers.total`).
    Workers,
}

/// How a request ended, as a label: `error.type` (OpenTelemetry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ErrorType {
    /// A result was sent.
    None,
    /// A JSON-RPC error with a code of [`KNOWN_CODES`].
    Code(i32),
    /// A `tools/call` result with `isError: true`.
    ToolError,
    /// Cancelled: no response was sent.
    Cancelled,
    /// Another JSON-RPC error code.
    Other,
}

impl ErrorType {
    /// The label of `status`; `tool_error` when a result said `isError`.
    pub(crate) fn of(status: &RequestStatus, tool_error: bool) -> ErrorType {
        match status {
            RequestStatus::Ok if tool_error => ErrorType::ToolError,
            RequestStatus::Ok => ErrorType::None,
            RequestStatus::Error(code) if KNOWN_CODES.contains(code) => ErrorType::Code(code.0),
            RequestStatus::Error(_) => ErrorType::Other,
            RequestStatus::Cancelled { .. } => ErrorType::Cancelled,
        }
    }
}

/// `network.transport`: `pipe` for stdio (and the in-memory client),
/// `tcp` for HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Transport {
    Pipe = 0,
    Tcp = 1,
}

impl Transport {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Transport::Pipe => "pipe",
            Transport::Tcp => "tcp",
        }
    }
}

/// The labels of one operation series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Operation {
    /// The table's name of the method, or `_OTHER`.
    pub(crate) method: &'static str,
    /// 0: no tool; else 1 + the tool's index in [`Tools`].
    pub(crate) tool: u32,
    pub(crate) error: ErrorType,
    /// One of the crate's protocol versions, or `_OTHER`.
    pub(crate) version: &'static str,
    pub(crate) transport: Transport,
}

/// A histogram of durations with [`BUCKETS`]: per-bucket counts (not
/// cumulative; the rendering adds them up), the sum in nanoseconds.
#[derive(Default)]
pub(crate) struct Histogram {
    buckets: [AtomicU64; BUCKETS.len() + 1],
    sum_nanos: AtomicU64,
}

impl Histogram {
    fn observe(&self, duration: Duration) {
        let nanos = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
        let at = BUCKETS
            .iter()
            .position(|&bound| nanos <= bound)
            .unwrap_or(BUCKETS.len());
        self.buckets[at].fetch_add(1, Ordering::Relaxed);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// The per-bucket counts, the count and the sum in nanoseconds.
    pub(crate) fn read(&self) -> ([u64; BUCKETS.len() + 1], u64, u64) {
        let mut counts = [0u64; BUCKETS.len() + 1];
        for (count, bucket) in counts.iter_mut().zip(&self.buckets) {
            *count = bucket.load(Ordering::Relaxed);
        }
        let sum = self.sum_nanos.load(Ordering::Relaxed);
        (counts, counts.iter().sum(), sum)
    }
}

/// The tool names used as labels: interned in the order first counted,
/// at most `max` of them.
struct Tools {
    index: HashMap<Box<str>, u32>,
    names: Vec<Arc<str>>,
}

/// What a server counts (held by [`ServerInner`]).
pub(crate) struct MetricsCore {
    on: bool,
    max_tools: usize,
    tools: RwLock<Tools>,
    operations: RwLock<HashMap<Operation, Arc<Histogram>>>,
    /// Session durations: `pipe`, then `tcp`.
    sessions: [Histogram; 2],
    /// HTTP answers with a status of 400 or more, by status.
    refusals: [AtomicU64; 200],
    connections: AtomicI64,
    streams: AtomicI64,
    pub(crate) workers: Arc<WorkerGauges>,
}

/// The worker pools' counts, shared by every pool of a server.
#[derive(Default)]
pub(crate) struct WorkerGauges {
    busy: AtomicI64,
    total: AtomicI64,
}

impl WorkerGauges {
    /// A worker thread started (`+1`) or ended (`-1`).
    pub(crate) fn started(&self, delta: i64) {
        self.total.fetch_add(delta, Ordering::Relaxed);
    }

    /// A worker took a job (`+1`) or finished it (`-1`).
    pub(crate) fn busy(&self, delta: i64) {
        self.busy.fetch_add(delta, Ordering::Relaxed);
    }
}

/// The tool label of the `tools/call` a run serves: 0 until the registry
/// found the tool.
#[derive(Default)]
pub(crate) struct ToolSlot(AtomicU32);

impl ToolSlot {
    pub(crate) fn set(&self, label: u32) {
        self.0.store(label, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> u32 {
        self.0.load(Ordering::Relaxed)
    }
}

impl MetricsCore {
    /// Counters that count when `on`, with at most `max_tools` tool labels.
    pub(crate) fn new(on: bool, max_tools: usize) -> MetricsCore {
        MetricsCore {
            on,
            max_tools,
            tools: RwLock::new(Tools {
                index: HashMap::new(),
                names: Vec::new(),
            }),
            operations: RwLock::new(HashMap::new()),
            sessions: Default::default(),
            refusals: [(); 200].map(|_| AtomicU64::new(0)),
            connections: AtomicI64::new(0),
            streams: AtomicI64::new(0),
            workers: Arc::new(WorkerGauges::default()),
        }
    }

    /// `true` when requests are counted (their clock is read).
    pub(crate) fn is_on(&self) -> bool {
        self.on
    }

    /// The label of registered tool `name`: its index + 1, or `u32::MAX`
    /// (`_OTHER`) past the bound.
    pub(crate) fn tool(&self, name: &str) -> u32 {
        if !self.on {
            return 0;
        }
        if let Some(&label) = self.tools.read().index.get(name) {
            return label;
        }
        let mut tools = self.tools.write();
        if let Some(&label) = tools.index.get(name) {
            return label;
        }
        if tools.names.len() >= self.max_tools {
            return u32::MAX;
        }
        tools.names.push(Arc::from(name));
        let label = u32::try_from(tools.names.len()).unwrap_or(u32::MAX);
        tools.index.insert(Box::from(name), label);
        label
    }

    /// The name of tool label `label` (`None` for 0).
    pub(crate) fn tool_name(&self, label: u32) -> Option<Arc<str>> {
        match label {
            0 => None,
            u32::MAX => Some(Arc::from("_OTHER")),
            n => self.tools.read().names.get(n as usize - 1).cloned(),
        }
    }

    /// Counts one request that ended after `duration`.
    pub(crate) fn request(&self, operation: Operation, duration: Duration) {
        if !self.on {
            return;
        }
        observe(&self.operations, operation, duration);
    }

    /// Counts an HTTP answer with `status` (400 to 599; others are not
    /// counted).
    pub(crate) fn http_refusal(&self, status: u16) {
        if !self.on {
            return;
        }
        if let Some(count) = self.refusals.get(usize::from(status.wrapping_sub(400))) {
            count.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts an open HTTP connection until the mark drops.
    pub(crate) fn connection(self: &Arc<Self>) -> OpenMark {
        OpenMark::new(self, |core| &core.connections)
    }

    /// Counts an open SSE stream until the mark drops.
    pub(crate) fn stream(self: &Arc<Self>) -> OpenMark {
        OpenMark::new(self, |core| &core.streams)
    }

    /// A lasting session opened on `transport`: counted until the mark
    /// drops, when its duration is observed.
    pub(crate) fn session(self: &Arc<Self>, transport: Transport) -> SessionMark {
        SessionMark(Some((Arc::clone(self), transport, Instant::now())))
    }

    /// The operation series, cloned out of the lock.
    fn operations(&self) -> Vec<(Operation, Arc<Histogram>)> {
        let operations = self.operations.read();
        operations
            .iter()
            .map(|(k, h)| (*k, Arc::clone(h)))
            .collect()
    }
}

/// Adds `duration` to the histogram of `key`, made on first use.
fn observe<K: Copy + Eq + std::hash::Hash>(
    map: &RwLock<HashMap<K, Arc<Histogram>>>,
    key: K,
    duration: Duration,
) {
    let found = map.read().get(&key).cloned();
    let histogram = match found {
        Some(histogram) => histogram,
        None => Arc::clone(map.write().entry(key).or_default()),
    };
    histogram.observe(duration);
}

/// An open thing counted in a gauge of [`MetricsCore`] until dropped.
pub(crate) struct OpenMark {
    core: Arc<MetricsCore>,
    gauge: fn(&MetricsCore) -> &AtomicI64,
}

impl OpenMark {
    fn new(core: &Arc<MetricsCore>, gauge: fn(&MetricsCore) -> &AtomicI64) -> OpenMark {
        gauge(core).fetch_add(1, Ordering::Relaxed);
        OpenMark {
            core: Arc::clone(core),
            gauge,
        }
    }
}

impl Drop for OpenMark {
    fn drop(&mut self) {
        (self.gauge)(&self.core).fetch_sub(1, Ordering::Relaxed);
    }
}

/// A lasting session, observed in `mcp.server.session.duration` when it
/// drops.
#[derive(Default)]
pub(crate) struct SessionMark(Option<(Arc<MetricsCore>, Transport, Instant)>);

impl Drop for SessionMark {
    fn drop(&mut self) {
        if let Some((core, transport, opened)) = self.0.take() {
            if core.on {
                core.sessions[transport as usize].observe(opened.elapsed());
            }
        }
    }
}

/// One operation series as read for [`Metrics`].
pub(crate) struct Series {
    pub(crate) method: &'static str,
    pub(crate) tool: Option<Arc<str>>,
    pub(crate) error: ErrorType,
    pub(crate) version: &'static str,
    pub(crate) transport: &'static str,
    pub(crate) histogram: Arc<Histogram>,
}

impl Metrics {
    /// The Prometheus text exposition format 0.0.4 of every metric, with
    /// `# HELP` and `# TYPE` lines: OpenTelemetry names with dots as
    /// underscores and the unit as a suffix
    /// (`mcp_server_operation_duration_seconds_bucket{mcp_method_name="tools/call",…}`).
    /// Serve it with `Content-Type: text/plain; version=0.0.4`, or let
    /// [`HttpServerBuilder::metrics_path`](crate::HttpServerBuilder::metrics_path) do it.
    pub fn render_prometheus(&self) -> String {
        prometheus::render(self)
    }

    /// How many requests of `method` ended (`tools/call` counted per tool
    /// when `tool` is `Some`), with `error_type` (`None`: those that
    /// succeeded; `Some("-32601")`, `Some("tool_error")`,
    /// `Some("cancelled")`, `Some("_OTHER")`), over every version and
    /// transport.
    pub fn requests(&self, method: &str, tool: Option<&str>, error_type: Option<&str>) -> u64 {
        let error_type = error_type.unwrap_or("");
        self.series()
            .iter()
            .filter(|s| s.method == method && s.tool.as_deref() == tool)
            .filter(|s| prometheus::error_label(s.error) == error_type)
            .map(|s| s.histogram.read().1)
            .sum()
    }

    /// How many HTTP answers had `status` (400 to 599): refusals at the
    /// edge and JSON-RPC errors sent with an error status.
    pub fn http_responses(&self, status: u16) -> u64 {
        let refusals = &self.server.metrics.refusals;
        refusals
            .get(usize::from(status.wrapping_sub(400)))
            .map_or(0, |count| count.load(Ordering::Relaxed))
    }

    /// The value of `gauge` now.
    pub fn gauge(&self, gauge: Gauge) -> i64 {
        let core = &self.server.metrics;
        let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        match gauge {
            Gauge::Sessions => count(self.server.live_session_count()),
            Gauge::HttpConnections => core.connections.load(Ordering::Relaxed),
            Gauge::SseStreams => core.streams.load(Ordering::Relaxed),
            Gauge::RunningTasks => count(self.server.tasks.running_count()),
            Gauge::BusyWorkers => core.workers.busy.load(Ordering::Relaxed),
            Gauge::Workers => core.workers.total.load(Ordering::Relaxed),
        }
    }

    /// Every operation series, with its labels as names.
    pub(crate) fn series(&self) -> Vec<Series> {
        let core = &self.server.metrics;
        core.operations()
            .into_iter()
            .map(|(operation, histogram)| Series {
                method: operation.method,
                tool: core.tool_name(operation.tool),
                error: operation.error,
                version: operation.version,
                transport: operation.transport.name(),
                histogram,
            })
            .collect()
    }

    /// The session-duration series that counted a session, by transport
    /// name.
    pub(crate) fn sessions(&self) -> Vec<(&'static str, &Histogram)> {
        let sessions = &self.server.metrics.sessions;
        [
            (Transport::Pipe, &sessions[0]),
            (Transport::Tcp, &sessions[1]),
        ]
        .into_iter()
        .filter(|(_, histogram)| histogram.read().1 > 0)
        .map(|(transport, histogram)| (transport.name(), histogram))
        .collect()
    }

    /// How many change events the server's bus dropped, unsent
    /// ([`ChangeBus::dropped`](crate::ChangeBus::dropped); 0 without a
    /// bus).
    pub fn change_bus_dropped(&self) -> u64 {
        self.server.bus.as_ref().map_or(0, |bus| bus.dropped())
    }

    /// The HTTP error-status counts that are not zero, by status.
    pub(crate) fn refusals(&self) -> Vec<(u16, u64)> {
        let refusals = &self.server.metrics.refusals;
        (400u16..600)
            .zip(refusals.iter())
            .map(|(status, count)| (status, count.load(Ordering::Relaxed)))
            .filter(|(_, count)| *count > 0)
            .collect()
    }
}
