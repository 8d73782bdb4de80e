//! Chart geometry for the SVG the templates draw. Only numbers leave this
//! module; every label is text the template escapes, so no chart needs to be
//! marked safe.

/// The drawing's size in SVG user units; it scales to its container.
pub const WIDTH: f64 = 960.0;
pub const HEIGHT: f64 = 240.0;
const LEFT: f64 = 56.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;
/// Labels under the x axis, at most.
const X_LABELS: usize = 6;

#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    /// The position along the axis it labels, in user units.
    pub at: f64,
    pub label: String,
}

/// One series as a polyline's `points` attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub name: &'static str,
    /// A CSS class giving the stroke colour.
    pub class: &'static str,
    pub points: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub width: f64,
    pub height: f64,
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub bottom: f64,
    pub lines: Vec<Line>,
    pub y_ticks: Vec<Tick>,
    pub x_ticks: Vec<Tick>,
}

/// The smallest "nice" step (1, 2, 2.5 or 5 times a power of ten, whole
/// numbers only) of which four reach `max`.
pub fn nice_step(max: i64) -> i64 {
    let wanted = (max.max(1) + 3) / 4;
    let mut power = 1i64;
    loop {
        for factor in [10, 20, 25, 50] {
            let step = power * factor / 10;
            if factor == 25 && power < 10 {
                continue;
            }
            if step >= wanted {
                return step;
            }
        }
        match power.checked_mul(10) {
            Some(next) => power = next,
            None => return wanted,
        }
    }
}

/// A line chart of several series over the same x labels (one per point).
pub fn line_chart(labels: &[String], series: &[(&'static str, &'static str, Vec<i64>)]) -> LineChart {
    let max = series.iter().flat_map(|(_, _, values)| values.iter().copied()).max().unwrap_or(0);
    let step = nice_step(max);
    let top_value = (step * 4) as f64;
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let count = labels.len().max(series.iter().map(|(_, _, v)| v.len()).max().unwrap_or(0));
    let x = |i: usize| if count <= 1 { LEFT + plot_w / 2.0 } else { LEFT + plot_w * i as f64 / (count - 1) as f64 };
    let y = |value: i64| TOP + plot_h * (1.0 - value as f64 / top_value);
    let lines = series
        .iter()
        .map(|(name, class, values)| Line {
            name,
            class,
            points: values
                .iter()
                .enumerate()
                .map(|(i, &value)| format!("{:.1},{:.1}", x(i), y(value)))
                .collect::<Vec<_>>()
                .join(" "),
        })
        .collect();
    let y_ticks = (0..=4).map(|i| Tick { at: y(step * i), label: (step * i).to_string() }).collect();
    let every = count.div_ceil(X_LABELS).max(1);
    let x_ticks = labels
        .iter()
        .enumerate()
        .filter(|(i, _)| i % every == 0)
        .map(|(i, label)| Tick { at: x(i), label: label.clone() })
        .collect();
    LineChart {
        width: WIDTH,
        height: HEIGHT,
        left: LEFT,
        right: WIDTH - RIGHT,
        top: TOP,
        bottom: HEIGHT - BOTTOM,
        lines,
        y_ticks,
        x_ticks,
    }
}

/// Each value as a percentage of the largest, for bars; a non-zero value
/// stays visible however small.
pub fn bar_percentages(values: &[i64]) -> Vec<f64> {
    let max = values.iter().copied().max().unwrap_or(0);
    values
        .iter()
        .map(|&value| match value {
            v if v <= 0 || max <= 0 => 0.0,
            v => ((v as f64 / max as f64) * 100.0).max(1.0),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_nice_and_four_of_them_reach_the_maximum() {
        let cases = [
            (0, 1),
            (1, 1),
            (4, 1),
            (5, 2),
            (8, 2),
            (9, 5),
            (20, 5),
            (21, 10),
            (100, 25),
            (101, 50),
            (1_000, 250),
            (3_999, 1_000),
        ];
        for (max, step) in cases {
            assert_eq!(nice_step(max), step, "max {max}");
            assert!(step * 4 >= max, "max {max}");
        }
    }

    #[test]
    fn points_span_the_plot_and_scale_to_the_top_tick() {
        let labels: Vec<String> = ["a", "b", "c"].iter().map(|s| (*s).to_owned()).collect();
        let chart = line_chart(&labels, &[("Pageviews", "s1", vec![0, 4, 2])]);
        // Step 1, top tick 4: the first point is on the baseline, the second at the top.
        assert_eq!(chart.lines[0].points, "56.0,212.0 502.0,12.0 948.0,112.0");
        let labels: Vec<_> = chart.y_ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["0", "1", "2", "3", "4"]);
        assert_eq!(chart.x_ticks.len(), 3);
    }

    #[test]
    fn one_point_sits_in_the_middle_and_no_data_draws_a_flat_line() {
        let chart = line_chart(&["only".to_owned()], &[("Visitors", "s2", vec![0])]);
        assert_eq!(chart.lines[0].points, "502.0,212.0");
        let empty = line_chart(&[], &[("Visitors", "s2", vec![])]);
        assert_eq!(empty.lines[0].points, "");
    }

    #[test]
    fn x_labels_are_thinned_to_about_six() {
        let labels: Vec<String> = (0..31).map(|i| i.to_string()).collect();
        let chart = line_chart(&labels, &[("Visitors", "s2", vec![1; 31])]);
        let shown: Vec<_> = chart.x_ticks.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(shown, ["0", "6", "12", "18", "24", "30"]);
    }

    #[test]
    fn bars_are_percentages_of_the_largest() {
        let cases: [(&[i64], &[f64]); 4] =
            [(&[], &[]), (&[0, 0], &[0.0, 0.0]), (&[10, 5, 0], &[100.0, 50.0, 0.0]), (&[1000, 1], &[100.0, 1.0])];
        for (values, expected) in cases {
            assert_eq!(bar_percentages(values), expected, "{values:?}");
        }
    }
}
