//! The charts of the report (docs/run-directory.md) as standalone SVG (plotters). One colour per
//! arm: an arm with one run is one line; an arm with repeats draws each run as a thin line of its
//! colour and their mean (where every run has a value) in bold. The legend sits under the plot,
//! never over the data. Text is left to the browser (no font files are read).

use anyhow::{anyhow, Result};
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;

use super::load::ArmRun;

/// One line of a chart: the arm it belongs to (its colour and legend entry) and its (x, y) points.
pub(crate) type Line = (String, Vec<(f64, f64)>);

/// A per-run throughput series for the throughput chart: (axis label, series of a run).
pub(crate) type Throughput<'a> = (&'a str, &'a dyn Fn(&ArmRun) -> Vec<(f64, f64)>);

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
const WIDTH: u32 = 640;
const PLOT_HEIGHT: u32 = 360;
const LEGEND_ROW: u32 = 20;

/// A chart: `lines` solid, `dashed` in the same arm colours (e.g. index size beside heap size).
pub(crate) struct Chart<'a> {
    pub(crate) title: String,
    pub(crate) x: &'a str,
    pub(crate) y: &'a str,
    pub(crate) lines: Vec<Line>,
    pub(crate) dashed: Vec<Line>,
    /// x is a percentile (50 … 99.99) on a "nines" axis and y is logarithmic, so the tail shows.
    pub(crate) percentiles: bool,
}

/// A line chart as SVG text; lines with no points are left out.
pub(crate) fn line_chart(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[Line],
) -> Result<String> {
    Chart {
        title: title.into(),
        x: x_desc,
        y: y_desc,
        lines: lines.to_vec(),
        dashed: vec![],
        percentiles: false,
    }
    .svg()
}

/// Latency by percentile, one line per arm: `lines` hold (percentile in %, milliseconds).
pub(crate) fn percentile_chart(title: &str, lines: &[Line]) -> Result<String> {
    Chart {
        title: title.into(),
        x: "percentile (nines axis: 50, 90, 99, 99.9 evenly spaced)",
        y: "latency, ms (log scale)",
        lines: lines.to_vec(),
        dashed: vec![],
        percentiles: true,
    }
    .svg()
}

/// x of a percentile on the nines axis: 90 → 1, 99 → 2, 99.9 → 3.
fn nines(q: f64) -> f64 {
    -(1.0 - q / 100.0).max(1e-6).log10()
}

impl Chart<'_> {
    /// The arms in order of first appearance, each with its colour.
    fn arms(&self) -> Vec<(String, RGBColor)> {
        let mut arms: Vec<String> = vec![];
        for (a, p) in self.lines.iter().chain(&self.dashed) {
            if !p.is_empty() && !arms.contains(a) {
                arms.push(a.clone());
            }
        }
        arms.into_iter()
            .enumerate()
            .map(|(i, a)| (a, COLORS[i % COLORS.len()]))
            .collect()
    }

    pub(crate) fn svg(&self) -> Result<String> {
        let t = |p: &(f64, f64)| {
            if self.percentiles {
                (nines(p.0), p.1)
            } else {
                *p
            }
        };
        let lines: Vec<Line> = self
            .lines
            .iter()
            .map(|(a, p)| (a.clone(), p.iter().map(t).collect()))
            .collect();
        let arms = self.arms();
        let legend = legend_rows(&arms, &lines);
        let height = PLOT_HEIGHT + LEGEND_ROW * legend.len() as u32 + 6;
        let all = lines.iter().chain(&self.dashed).flat_map(|(_, p)| p.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for (x, y) in all {
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
        let mut svg = String::new();
        {
            let e = |e: DrawingAreaErrorKind<_>| anyhow!("drawing chart {:?}: {e}", self.title);
            let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
            root.fill(&WHITE).map_err(e)?;
            let (plot, below) = root.split_vertically(PLOT_HEIGHT);
            if self.percentiles {
                let lo = if y0 > 0.0 { y0 } else { 0.001 };
                let hi = y1.max(lo * 10.0);
                let keys: Vec<f64> = [50.0, 90.0, 99.0, 99.9, 99.99]
                    .iter()
                    .map(|q| nines(*q))
                    .filter(|n| *n >= x0 - 1e-9 && *n <= x1 + 1e-9)
                    .collect();
                let yr = (lo / 1.3..hi * 1.3).log_scale();
                let x = (x0 - 0.05, x1 + 0.05);
                self.plot(&plot, x.0..x.1, yr, &lines, &arms, &keys)?;
            } else {
                // Sizes and counts start at zero; a flat line still gets some height.
                y0 = y0.min(0.0);
                if y1 - y0 < 1e-9 {
                    y1 = y0 + 1.0;
                }
                y1 += (y1 - y0) * 0.05;
                self.plot(&plot, x0..x1, y0..y1, &lines, &arms, &[])?;
            }
            draw_legend(&below, &legend).map_err(e)?;
            root.present().map_err(e)?;
        }
        Ok(svg)
    }

    /// Draws the axes and the lines; `x_keys` (nines) replace the x labels by percentiles.
    fn plot<X, Y>(
        &self,
        area: &DrawingArea<SVGBackend, Shift>,
        xr: X,
        yr: Y,
        lines: &[Line],
        arms: &[(String, RGBColor)],
        x_keys: &[f64],
    ) -> Result<()>
    where
        X: plotters::coord::ranged1d::AsRangedCoord<Value = f64>,
        Y: plotters::coord::ranged1d::AsRangedCoord<Value = f64>,
        X::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y::CoordDescType: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let e = |e: DrawingAreaErrorKind<_>| anyhow!("drawing chart {:?}: {e}", self.title);
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, ("sans-serif", 17))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(xr, yr)
            .map_err(e)?;
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(self.x)
            .y_desc(self.y)
            .x_label_formatter(&|v| short(*v))
            .y_label_formatter(&|v| short(*v))
            .light_line_style(RGBColor(246, 246, 246));
        if !x_keys.is_empty() {
            mesh.x_labels(0);
        }
        mesh.draw().map_err(e)?;
        let (y_lo, y_hi) = (chart.y_range().start, chart.y_range().end);
        for k in x_keys {
            let grid = RGBColor(215, 215, 215);
            chart
                .draw_series(LineSeries::new([(*k, y_lo), (*k, y_hi)], grid))
                .map_err(e)?;
            let (px, py) = chart.backend_coord(&(*k, y_lo));
            let q = 100.0 * (1.0 - 10f64.powf(-k));
            let label = format!("{}", (q * 100.0).round() / 100.0);
            area.draw(&Text::new(
                label.clone(),
                (px - 3 * label.len() as i32, py + 6),
                ("sans-serif", 12).into_font(),
            ))
            .map_err(e)?;
        }
        for (arm, color) in arms {
            let runs: Vec<&Vec<(f64, f64)>> = lines
                .iter()
                .filter(|(a, p)| a == arm && !p.is_empty())
                .map(|(_, p)| p)
                .collect();
            let thin = runs.len() > 1;
            for p in &runs {
                let style = if thin {
                    color.mix(0.45).stroke_width(1)
                } else {
                    color.stroke_width(2)
                };
                chart
                    .draw_series(LineSeries::new(p.iter().copied(), style))
                    .map_err(e)?;
            }
            if thin {
                chart
                    .draw_series(LineSeries::new(mean_of(&runs), color.stroke_width(3)))
                    .map_err(e)?;
            }
            for (_, p) in self.dashed.iter().filter(|(a, _)| a == arm) {
                chart
                    .draw_series(DashedLineSeries::new(
                        p.iter().copied(),
                        6,
                        4,
                        color.stroke_width(1),
                    ))
                    .map_err(e)?;
            }
        }
        Ok(())
    }
}

/// The legend's entries (colour, text), laid out in rows that fit the chart's width.
fn legend_rows(arms: &[(String, RGBColor)], lines: &[Line]) -> Vec<Vec<(RGBColor, String)>> {
    let mut rows: Vec<Vec<(RGBColor, String)>> = vec![];
    let mut used = WIDTH;
    for (arm, color) in arms {
        let n = lines
            .iter()
            .filter(|(a, p)| a == arm && !p.is_empty())
            .count();
        let text = if n > 1 {
            format!("{arm} ({n} runs, mean bold)")
        } else {
            arm.clone()
        };
        let w = 40 + 7 * text.chars().count() as u32;
        if used + w > WIDTH - 20 {
            rows.push(vec![]);
            used = 70;
        }
        used += w;
        rows.last_mut().unwrap().push((*color, text));
    }
    rows
}

fn draw_legend(
    area: &DrawingArea<SVGBackend, Shift>,
    rows: &[Vec<(RGBColor, String)>],
) -> std::result::Result<(), DrawingAreaErrorKind<std::io::Error>> {
    for (i, row) in rows.iter().enumerate() {
        let y = (i as u32 * LEGEND_ROW + LEGEND_ROW / 2) as i32;
        let mut x = 82;
        for (color, text) in row {
            area.draw(&PathElement::new(
                vec![(x, y), (x + 22, y)],
                color.stroke_width(3),
            ))?;
            area.draw(&Text::new(
                text.clone(),
                (x + 28, y - 6),
                ("sans-serif", 12).into_font(),
            ))?;
            x += 40 + 7 * text.chars().count() as i32;
        }
    }
    Ok(())
}

/// The mean of several runs' series on the x values of the longest one, where every run has a
/// value (linear interpolation between a run's own points).
fn mean_of(runs: &[&Vec<(f64, f64)>]) -> Vec<(f64, f64)> {
    let Some(grid) = runs.iter().max_by_key(|r| r.len()) else {
        return vec![];
    };
    grid.iter()
        .filter_map(|(x, _)| {
            let ys: Option<Vec<f64>> = runs.iter().map(|r| at(r, *x)).collect();
            ys.map(|ys| (*x, ys.iter().sum::<f64>() / ys.len() as f64))
        })
        .collect()
}

/// A series' value at x, interpolated between its neighbours; within half its mean step past
/// either end, its end value (repeats' samples land a fraction of a second apart); else None.
fn at(s: &[(f64, f64)], x: f64) -> Option<f64> {
    let (first, last) = (s.first()?, s.last()?);
    let slack = if s.len() > 1 {
        0.5 * (last.0 - first.0) / (s.len() - 1) as f64
    } else {
        0.0
    };
    if x < first.0 {
        return (first.0 - x <= slack).then_some(first.1);
    }
    if x > last.0 {
        return (x - last.0 <= slack).then_some(last.1);
    }
    let i = s.partition_point(|p| p.0 < x);
    let b = s[i];
    if (b.0 - x).abs() < 1e-9 || i == 0 {
        return Some(b.1);
    }
    let a = s[i - 1];
    Some(a.1 + (b.1 - a.1) * (x - a.0) / (b.0 - a.0))
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
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Sums per sample time of several series (e.g. heap bytes of every updated table).
pub(crate) fn sum_series(series: &[&[(f64, f64)]]) -> Vec<(f64, f64)> {
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
pub(crate) fn per_interval(series: &[(f64, f64)], per: f64) -> Vec<(f64, f64)> {
    series
        .windows(2)
        .filter(|w| w[1].0 > w[0].0)
        .map(|w| (w[1].0, per * (w[1].1 - w[0].1) / (w[1].0 - w[0].0)))
        .collect()
}

/// HOT % of the updates made in each interval between consecutive samples.
pub(crate) fn hot_per_interval(upd: &[(f64, f64)], hot: &[(f64, f64)]) -> Vec<(f64, f64)> {
    upd.windows(2)
        .zip(hot.windows(2))
        .filter(|(u, _)| u[1].1 > u[0].1)
        .map(|(u, h)| (u[1].0, 100.0 * (h[1].1 - h[0].1) / (u[1].1 - u[0].1)))
        .collect()
}

/// The five charts for a set of runs; `tables` are the updated tables that count as the workload's
/// data, `hot_table` the table whose HOT % per interval is drawn, `throughput` the rate over time
/// (label with its unit, per-run series).
pub(crate) fn standard(
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
    let (mut heap, mut index, mut dead, mut hot, mut tput, mut buffers) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for r in runs {
        let arm = r.arm();
        heap.push((arm.clone(), mib(sum_of(r, "heap_bytes"))));
        index.push((arm.clone(), mib(sum_of(r, "index_bytes"))));
        dead.push((arm.clone(), sum_of(r, "n_dead_tup")));
        hot.push((
            arm.clone(),
            hot_per_interval(
                r.table_series(hot_table, "n_tup_upd"),
                r.table_series(hot_table, "n_tup_hot_upd"),
            ),
        ));
        tput.push((arm.clone(), (throughput.1)(r)));
        let all: Vec<&[(f64, f64)]> = r
            .buffers
            .series
            .iter()
            .filter(|((o, m), _)| m == "buffers" && !r.buffers.rolled.contains(o))
            .map(|(_, v)| v.as_slice())
            .collect();
        buffers.push((arm, mib(pages_to_bytes(sum_series(&all)))));
    }
    let x = "seconds into the measured window";
    let what = tables.join(", ");
    let bloat = Chart {
        title: format!("Heap (solid) and index (dashed) size of {what}"),
        x,
        y: "MiB",
        lines: heap,
        dashed: index,
        percentiles: false,
    };
    Ok(vec![
        ("bloat.svg".into(), bloat.svg()?),
        (
            "dead_tuples.svg".into(),
            line_chart(
                &format!("Dead tuples ({what})"),
                x,
                "dead tuples (n_dead_tup)",
                &dead,
            )?,
        ),
        (
            "hot_per_interval.svg".into(),
            line_chart(
                &format!("HOT % of {hot_table} updates per snapshot interval"),
                x,
                "HOT updates, % of updates",
                &hot,
            )?,
        ),
        (
            "throughput.svg".into(),
            line_chart(
                &format!("Throughput over time ({})", throughput.0),
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

/// 8 kB pages → bytes.
pub(crate) fn pages_to_bytes(s: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    s.into_iter().map(|(t, v)| (t, v * 8192.0)).collect()
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

    /// Two repeats of an arm share its colour and get a mean; the legend names the arm once.
    #[test]
    fn repeats_share_a_colour_and_a_bold_mean() {
        let a = vec![(0.0, 10.0), (1.0, 20.0), (2.0, 30.0)];
        let b = vec![(0.5, 20.0), (2.0, 40.0)];
        // At x = 1, b is 20 + 20 × 0.5 / 1.5 between its points; x = 0 is within half b's step
        // of its start, so b counts there with its first value; far outside, nothing.
        let m = mean_of(&[&a, &b]);
        assert_eq!(m.len(), 3);
        assert_eq!((m[0], m[2]), ((0.0, 15.0), (2.0, 35.0)));
        assert!((m[1].1 - (20.0 + 80.0 / 3.0) / 2.0).abs() < 1e-9);
        let far = vec![(5.0, 1.0), (6.0, 1.0)];
        assert!(mean_of(&[&a, &far]).is_empty());
        let svg = line_chart(
            "t",
            "s",
            "n",
            &[
                ("ff100".into(), a),
                ("ff100".into(), b),
                ("ff90".into(), vec![(0.0, 1.0)]),
            ],
        )
        .unwrap();
        assert_eq!(svg.matches("ff100 (2 runs, mean bold)").count(), 1);
        assert!(svg.contains("ff90\n"), "{svg}");
        let p = percentile_chart("lat", &[("a".into(), vec![(50.0, 1.0), (99.9, 80.0)])]).unwrap();
        assert!(p.contains("99.9\n") && p.contains("log scale"), "{p}");
    }
}
