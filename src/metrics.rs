//! The Prometheus metrics the service keeps, rendered as Prometheus text
//! 0.0.4 or, when the scraper asks for it, OpenMetrics 1.0 (`health` serves
//! them at GET /metrics).

mod exposition;

use axum::{extract::MatchedPath, http::Method};
use prometheus_client::{
    encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder, text::encode},
    metrics::{counter::Counter, family::Family, histogram::Histogram},
    registry::Registry,
};

pub use self::exposition::Format;
use crate::service::{
    alerts::worker::AlertMetrics,
    email::worker::EmailMetrics,
    explore::visit_copy::{CopyLoads, CopyTailReads},
};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub method: &'static str,
    pub route: Route,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub route: Route,
}

/// The route pattern, not the raw path, so ids do not explode the label set.
/// It shares axum's `MatchedPath`, so labelling a request allocates nothing.
#[derive(Clone, Debug)]
pub struct Route(pub Option<MatchedPath>);

impl Route {
    fn as_str(&self) -> &str {
        self.0.as_ref().map_or("unmatched", MatchedPath::as_str)
    }
}

impl PartialEq for Route {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Route {}

impl std::hash::Hash for Route {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl EncodeLabelValue for Route {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        EncodeLabelValue::encode(&self.as_str(), encoder)
    }
}

pub fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        Method::PATCH => "PATCH",
        _ => "OTHER",
    }
}

pub struct Metrics {
    registry: Registry,
    pub requests: Family<RequestLabels, Counter>,
    pub latency: Family<RouteLabels, Histogram>,
    /// SQL statements sent to the database; lets tests prove a query's cost.
    pub db_statements: Counter,
    /// Redirects answered without their click being stored (the writer was behind).
    pub clicks_unrecorded: Counter,
    /// SQLite WAL checkpoints run beside the batch writer (`db::checkpoint`).
    pub sqlite_checkpoints: Counter,
    /// Alert deliveries by outcome, and the outbox's oldest due row.
    pub alerts: AlertMetrics,
    pub emails: EmailMetrics,
    /// Explore's in-memory copies loaded, by kind and outcome.
    pub copy_loads: CopyLoads,
    pub copy_tail_reads: CopyTailReads,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("leadtrail");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register("http_requests", "HTTP requests answered", requests.clone());
        let latency = Family::<RouteLabels, Histogram>::new_with_constructor(|| {
            Histogram::new([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5])
        });
        registry.register("http_request_duration_seconds", "Time to answer HTTP requests", latency.clone());
        let db_statements = Counter::default();
        registry.register("db_statements", "SQL statements executed", db_statements.clone());
        let clicks_unrecorded = Counter::default();
        registry.register(
            "clicks_unrecorded",
            "Redirects sent on without their click stored, because the click writer was behind",
            clicks_unrecorded.clone(),
        );
        let sqlite_checkpoints = Counter::default();
        registry.register(
            "sqlite_checkpoints",
            "SQLite WAL checkpoints run beside the batch writer (0 on PostgreSQL)",
            sqlite_checkpoints.clone(),
        );
        let alerts = AlertMetrics::default();
        registry.register(
            "alert_deliveries",
            "Alert delivery attempts by outcome: delivered, retrying (failed, tried again later) or failed (given up)",
            alerts.deliveries.clone(),
        );
        registry.register(
            "alert_outbox_oldest_due_seconds",
            "Seconds the oldest due alert delivery has waited",
            alerts.oldest_due_seconds.clone(),
        );
        let emails = EmailMetrics::default();
        registry.register(
            "emails",
            "Email attempts by outcome: sent, retrying (tried again later) or failed (given up)",
            emails.messages.clone(),
        );
        let copy_loads = CopyLoads::default();
        registry.register(
            "explore_copy_loads",
            "Explore's in-memory copies of a site's visits or events loaded, by outcome: loaded, stale (the rows \
             changed while it waited) or failed",
            copy_loads.0.clone(),
        );
        let copy_tail_reads = CopyTailReads::default();
        registry.register(
            "explore_copy_tail_reads",
            "Tails of Explore's copies (what began since the copy's end) read for a snapshot whose tail had moved, \
             by how: read whole, or refreshed from what was written since",
            copy_tail_reads.0.clone(),
        );
        Self {
            registry,
            requests,
            latency,
            db_statements,
            clicks_unrecorded,
            sqlite_checkpoints,
            alerts,
            emails,
            copy_loads,
            copy_tail_reads,
        }
    }
}

impl Metrics {
    pub fn render(&self, format: Format) -> Result<String, std::fmt::Error> {
        let mut openmetrics = String::new();
        encode(&mut openmetrics, &self.registry)?;
        Ok(match format {
            Format::OpenMetrics => openmetrics,
            Format::Prometheus => exposition::to_prometheus(&openmetrics),
        })
    }
}
