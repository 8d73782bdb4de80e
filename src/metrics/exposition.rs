//! The two text expositions a scraper may ask for at GET /metrics.
//!
//! prometheus-client (through 0.25) encodes only OpenMetrics 1.0. For the metric
//! types it offers, the Prometheus text format 0.0.4 differs from that output only
//! in family names and framing, so 0.0.4 is derived from it line by line:
//!
//! - a counter family is named after its samples (`x_total`), not `x`;
//! - an info metric becomes a gauge named after its `x_info` sample, and `unknown`
//!   is spelled `untyped`, the types 0.0.4 knows;
//! - `# UNIT` and `# EOF` do not exist in 0.0.4 and are left out.
//!
//! Exemplars and `_created` samples would need more than this, and nothing here
//! records them.

use std::collections::HashMap;

use axum::http::HeaderValue;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The Prometheus text format 0.0.4: what scrapers read when they name no format.
    Prometheus,
    OpenMetrics,
}

impl Format {
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Prometheus => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
        }
    }

    /// OpenMetrics when the Accept header names it and ranks it no lower than
    /// plain text; anything else, including no Accept header, gets 0.0.4.
    /// Wildcards count for plain text only, so `*/*` keeps the long-standing format.
    pub fn negotiate<'a>(accept: impl IntoIterator<Item = &'a HeaderValue>) -> Self {
        let (mut openmetrics, mut text) = (0.0_f32, 0.0_f32);
        let ranges = accept.into_iter().filter_map(|value| value.to_str().ok()).flat_map(|value| value.split(','));
        for range in ranges {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or_default().to_ascii_lowercase();
            let quality = parts
                .filter_map(|param| param.split_once('='))
                .find(|(name, _)| name.trim().eq_ignore_ascii_case("q"))
                .and_then(|(_, q)| q.trim().parse::<f32>().ok())
                .filter(|q| q.is_finite())
                .map_or(1.0, |q| q.clamp(0.0, 1.0));
            match media.as_str() {
                "application/openmetrics-text" => openmetrics = openmetrics.max(quality),
                "text/plain" | "text/*" | "*/*" => text = text.max(quality),
                _ => {}
            }
        }
        if openmetrics > 0.0 && openmetrics >= text { Format::OpenMetrics } else { Format::Prometheus }
    }
}

/// The 0.0.4 name and type of a family that OpenMetrics declares as `name kind`.
fn prometheus_family(name: &str, kind: &str) -> Option<(String, &'static str)> {
    match kind {
        "counter" => Some((format!("{name}_total"), "counter")),
        "info" => Some((format!("{name}_info"), "gauge")),
        "unknown" => Some((name.to_owned(), "untyped")),
        _ => None,
    }
}

/// prometheus-client's OpenMetrics text, rewritten as Prometheus text 0.0.4.
pub fn to_prometheus(openmetrics: &str) -> String {
    // HELP precedes TYPE, so the renames are gathered first.
    let renames: HashMap<&str, (String, &'static str)> = openmetrics
        .lines()
        .filter_map(|line| line.strip_prefix("# TYPE ")?.split_once(' '))
        .filter_map(|(name, kind)| Some((name, prometheus_family(name, kind.trim())?)))
        .collect();
    let mut text = String::with_capacity(openmetrics.len() + 8 * renames.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let descriptor = ["# HELP ", "# TYPE "].into_iter().find_map(|tag| Some((tag, line.strip_prefix(tag)?)));
        let renamed = descriptor.and_then(|(tag, rest)| {
            let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
            let (new_name, new_kind) = renames.get(name)?;
            let tail = if tag == "# TYPE " { new_kind } else { tail };
            Some(format!("{tag}{new_name} {tail}"))
        });
        text.push_str(renamed.as_deref().unwrap_or(line));
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    #[test]
    fn scrapers_get_the_format_they_rank_first() {
        let prometheus_default = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        for (accept, expected) in [
            (&[][..], Format::Prometheus),
            (&["*/*"][..], Format::Prometheus),
            (&["text/plain"][..], Format::Prometheus),
            (&["text/plain;version=0.0.4;q=1,*/*;q=0.1"][..], Format::Prometheus),
            (&["application/json"][..], Format::Prometheus),
            (&["application/openmetrics-text"][..], Format::OpenMetrics),
            (&["Application/OpenMetrics-Text; version=1.0.0; charset=utf-8"][..], Format::OpenMetrics),
            (&[prometheus_default][..], Format::OpenMetrics),
            (&["text/plain", "application/openmetrics-text"][..], Format::OpenMetrics),
            (&["application/openmetrics-text;q=0.5, text/plain"][..], Format::Prometheus),
            (&["application/openmetrics-text;q=0"][..], Format::Prometheus),
            (&["application/openmetrics-text;q=nan"][..], Format::OpenMetrics),
        ] {
            let values: Vec<HeaderValue> = accept.iter().map(|value| HeaderValue::from_static(value)).collect();
            assert_eq!(Format::negotiate(&values), expected, "{accept:?}");
        }
    }

    #[test]
    fn openmetrics_becomes_prometheus_text() {
        for (openmetrics, expected) in [
            (
                "# HELP a_requests Requests.\n# TYPE a_requests counter\na_requests_total{x=\"1\"} 3\n# EOF\n",
                "# HELP a_requests_total Requests.\n# TYPE a_requests_total counter\na_requests_total{x=\"1\"} 3\n",
            ),
            (
                "# HELP a_wait_seconds Wait.\n# TYPE a_wait_seconds counter\n# UNIT a_wait_seconds seconds\na_wait_seconds_total 1.5\n# EOF\n",
                "# HELP a_wait_seconds_total Wait.\n# TYPE a_wait_seconds_total counter\na_wait_seconds_total 1.5\n",
            ),
            (
                "# HELP a_build Build.\n# TYPE a_build info\na_build_info{version=\"1\"} 1\n# EOF\n",
                "# HELP a_build_info Build.\n# TYPE a_build_info gauge\na_build_info{version=\"1\"} 1\n",
            ),
            (
                "# HELP a_odd Odd.\n# TYPE a_odd unknown\na_odd 1\n# EOF\n",
                "# HELP a_odd Odd.\n# TYPE a_odd untyped\na_odd 1\n",
            ),
            (
                "# HELP a_size Size.\n# TYPE a_size gauge\na_size 2\n# HELP a_t T.\n# TYPE a_t histogram\na_t_sum 1.0\na_t_count 1\na_t_bucket{le=\"+Inf\"} 1\n# EOF\n",
                "# HELP a_size Size.\n# TYPE a_size gauge\na_size 2\n# HELP a_t T.\n# TYPE a_t histogram\na_t_sum 1.0\na_t_count 1\na_t_bucket{le=\"+Inf\"} 1\n",
            ),
            // A label value that looks like a descriptor is a sample, left alone.
            (
                "# HELP a_n N.\n# TYPE a_n counter\na_n_total{p=\"# TYPE a_n counter\"} 1\n# EOF\n",
                "# HELP a_n_total N.\n# TYPE a_n_total counter\na_n_total{p=\"# TYPE a_n counter\"} 1\n",
            ),
            ("# EOF\n", ""),
        ] {
            assert_eq!(to_prometheus(openmetrics), expected, "{openmetrics}");
        }
    }
}
