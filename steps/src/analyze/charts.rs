//! The charts of the report (docs/run-directory.md) as standalone SVG (plotters): one
//! line per run over the seconds of the measured window. Text is left to the browser (no font files are read).

use anyhow::{anyhow, Result};
use plotters::prelude::*;

use super::load::ArmRun;

/// One line of a chart: its label and its (x, y) points.
pub type Line = (String, Vec<(f64, f64)>);

/// A per-run throughput series for the throughput chart: (axis label, series of a run).
pub type Throughput<'a> = (&'a str, &'a dyn Fn(&ArmRun) -> Vec<(f64, f64)>);

const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];

/// A line chart as SVG text; lines with no points are left out.
pub fn line_chart(title: &str, x_desc: &str, y_desc: &str, lines: &[Line]) -> Result<String> {
    draw(title, x_desc, y_desc, lines, 1)
}

/// Like `line_chart`, with `group` consecutive lines per run sharing its colour (the first
/// thick, the others thin), e.g. heap and indexes.
fn draw(title: &str, x_desc: &str, y_desc: &str, lines: &[Line], group: usize) -> Result<String> {
    let pts = lines.iter().flat_map(|(_, p)| p.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (x, y) in pts {
        x0 = x0.min(*x);
        x1 = x1.max(*x);
        y0 = y0.min(*y);
        y1 = y1.max(*y);
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if x1 - x0 < 1e-9 {
        x1 = x0 + 1.0;
    }
    // Sizes and counts start at zero; a flat line still gets some height.
    y0 = y0.min(0.0);
    if y1 - y0 < 1e-9 {
        y1 = y0 + 1.0;
    }
    y1 += (y1 - y0) * 0.05;
    let mut svg = String::new();
    {
        let e = |e: DrawingAreaErrorKind<_>| anyhow!("drawing chart {title:?}: {e}");
        let root = SVGBackend::with_string(&mut svg, (640, 360)).into_drawing_area();
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 17))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .y_label_formatter(&|v| short(*v))
            .light_line_style(RGBColor(235, 235, 235))
            .draw()
            .map_err(e)?;
        for (i, (label, points)) in lines.iter().enumerate() {
            if points.is_empty() {
                continue;
            }
            let color = COLORS[(i / group.max(1)) % COLORS.len()];
            let width = if i % group.max(1) == 0 { 2 } else { 1 };
            chart
                .draw_series(LineSeries::new(
                    points.iter().copied(),
                    color.stroke_width(width),
                ))
                .map_err(e)?
                .label(label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(width))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .draw()
            .map_err(e)?;
        root.present().map_err(e)?;
    }
    Ok(svg)
}

/// 1234567 → "1.2M", for axis labels.
fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Sums per sample time of several series (e.g. heap bytes of every updated table).
pub fn sum_series(series: &[&[(f64, f64)]]) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = vec![];
    for s in series {
        for (t, v) in s.iter() {
            match out.iter_mut().find(|(x, _)| (x - t).abs() < 1e-6) {
                Some((_, sum)) => *sum += v,
                None => out.push((*t, *v)),
            }
        }
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// Rate per `per` seconds between consecutive samples of a cumulative counter, at the interval's
/// end.
pub fn per_interval(series: &[(f64, f64)], per: f64) -> Vec<(f64, f64)> {
    series
        .windows(2)
        .filter(|w| w[1].0 > w[0].0)
        .map(|w| (w[1].0, per * (w[1].1 - w[0].1) / (w[1].0 - w[0].0)))
        .collect()
}

/// HOT % of the updates made in each interval between consecutive samples.
pub fn hot_per_interval(upd: &[(f64, f64)], hot: &[(f64, f64)]) -> Vec<(f64, f64)> {
    upd.windows(2)
        .zip(hot.windows(2))
        .filter(|(u, _)| u[1].1 > u[0].1)
        .map(|(u, h)| (u[1].0, 100.0 * (h[1].1 - h[0].1) / (u[1].1 - u[0].1)))
        .collect()
}

/// The five charts for a set of runs; `tables` are the updated tables that count as the workload's
/// data, `hot_table` the table whose HOT % per interval is drawn, `throughput` the per-interval
/// rate (label, per-run series).
pub fn standard(
    runs: &[ArmRun],
    tables: &[&str],
    hot_table: &str,
    throughput: Throughput<'_>,
) -> Result<Vec<(String, String)>> {
    let mib = |s: Vec<(f64, f64)>| s.into_iter().map(|(t, v)| (t, v / 1048576.0)).collect();
    let sum_of = |r: &ArmRun, metric: &str| {
        let s: Vec<&[(f64, f64)]> = tables.iter().map(|t| r.table_series(t, metric)).collect();
        sum_series(&s)
    };
    let mut bloat = vec![];
    let mut dead = vec![];
    let mut hot = vec![];
    let mut tput = vec![];
    let mut buffers = vec![];
    for r in runs {
        let name = r.name();
        bloat.push((format!("{name} heap"), mib(sum_of(r, "heap_bytes"))));
        bloat.push((format!("{name} indexes"), mib(sum_of(r, "index_bytes"))));
        dead.push((name.clone(), sum_of(r, "n_dead_tup")));
        hot.push((
            name.clone(),
            hot_per_interval(
                r.table_series(hot_table, "n_tup_upd"),
                r.table_series(hot_table, "n_tup_hot_upd"),
            ),
        ));
        tput.push((name.clone(), (throughput.1)(r)));
        let all: Vec<&[(f64, f64)]> = r
            .buffers
            .series
            .iter()
            .filter(|((o, m), _)| m == "buffers" && !r.buffers.rolled.contains(o))
            .map(|(_, v)| v.as_slice())
            .collect();
        let pages = sum_series(&all);
        buffers.push((
            name,
            pages
                .into_iter()
                .map(|(t, v)| (t, v * 8192.0 / 1048576.0))
                .collect(),
        ));
    }
    let x = "seconds into the measured window";
    let what = tables.join(", ");
    Ok(vec![
        (
            "bloat.svg".into(),
            draw(
                &format!("Heap (thick) and index (thin) size ({what})"),
                x,
                "MiB",
                &bloat,
                2,
            )?,
        ),
        (
            "dead_tuples.svg".into(),
            line_chart(&format!("Dead tuples ({what})"), x, "n_dead_tup", &dead)?,
        ),
        (
            "hot_per_interval.svg".into(),
            line_chart(
                &format!("HOT % of {hot_table} updates per interval"),
                x,
                "HOT %",
                &hot,
            )?,
        ),
        (
            "throughput.svg".into(),
            line_chart(
                &format!("{} per interval", throughput.0),
                x,
                throughput.0,
                &tput,
            )?,
        ),
        (
            "buffers.svg".into(),
            line_chart(
                "Buffer cache footprint (all relations)",
                x,
                "MiB in shared_buffers",
                &buffers,
            )?,
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_rates_and_hot_shares() {
        let c = [(0.0, 0.0), (10.0, 100.0), (20.0, 300.0)];
        assert_eq!(per_interval(&c, 60.0), vec![(10.0, 600.0), (20.0, 1200.0)]);
        let upd = [(0.0, 0.0), (10.0, 100.0), (20.0, 200.0)];
        let hot = [(0.0, 0.0), (10.0, 90.0), (20.0, 100.0)];
        assert_eq!(
            hot_per_interval(&upd, &hot),
            vec![(10.0, 90.0), (20.0, 10.0)]
        );
        let s = sum_series(&[&[(0.0, 1.0), (10.0, 2.0)], &[(0.0, 3.0), (10.0, 4.0)]]);
        assert_eq!(s, vec![(0.0, 4.0), (10.0, 6.0)]);
    }

    #[test]
    fn a_chart_is_svg_with_its_labels() {
        let svg = line_chart(
            "Dead tuples",
            "s",
            "n",
            &[
                ("default".into(), vec![(0.0, 1.0), (10.0, 5.0)]),
                ("tuned".into(), vec![]),
            ],
        )
        .unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("Dead tuples") && svg.contains("default"));
        assert!(svg.contains("<polyline") || svg.contains("<path"));
        let empty = line_chart("x", "s", "n", &[]).unwrap();
        assert!(empty.starts_with("<svg"));
    }
}
