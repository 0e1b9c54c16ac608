//! The self-contained report: report.html with the summary tables, inline SVG charts and each
//! run's metadata (server version and settings, host, reset outcomes, exact commands), openable
//! in a browser with no network. Also the small SVG bar chart the charts use.

use super::Analysis;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Markdown (headings, tables, paragraphs) as HTML: enough for what analyze writes.
fn md_to_html(md: &str) -> String {
    let mut out = String::new();
    let mut in_table = false;
    for line in md.lines() {
        let t = line.trim();
        if t.starts_with('|') {
            let cells: Vec<&str> = t.trim_matches('|').split('|').map(str::trim).collect();
            if cells
                .iter()
                .all(|c| c.chars().all(|ch| ch == '-' || ch == ':') && !c.is_empty())
            {
                continue;
            }
            if !in_table {
                out.push_str("<table>\n<tr>");
                for c in &cells {
                    out.push_str(&format!("<th>{}</th>", esc(c)));
                }
                out.push_str("</tr>\n");
                in_table = true;
            } else {
                out.push_str("<tr>");
                for c in &cells {
                    let c = esc(c);
                    let c = match c.strip_prefix("**").and_then(|x| x.strip_suffix("**")) {
                        Some(inner) => format!("<strong class=\"bad\">{inner}</strong>"),
                        None => c,
                    };
                    out.push_str(&format!("<td>{c}</td>"));
                }
                out.push_str("</tr>\n");
            }
            continue;
        }
        if in_table {
            out.push_str("</table>\n");
            in_table = false;
        }
        if let Some(h) = t.strip_prefix("### ") {
            out.push_str(&format!("<h3>{}</h3>\n", esc(h)));
        } else if let Some(h) = t.strip_prefix("## ") {
            out.push_str(&format!("<h2>{}</h2>\n", esc(h)));
        } else if !t.is_empty() {
            out.push_str(&format!("<p>{}</p>\n", esc(t)));
        }
    }
    if in_table {
        out.push_str("</table>\n");
    }
    out
}

pub fn html(a: &Analysis) -> String {
    let mut s = String::from(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>hotlab report</title>\n<style>\
         body{font-family:sans-serif;margin:2em;max-width:1200px}\
         table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
         th{background:#eee}.bad{color:#b00}.charts{display:flex;flex-wrap:wrap;gap:1em}\
         pre{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:85%}</style></head><body>\n<h1>hotlab report</h1>\n",
    );
    s.push_str(&md_to_html(&a.markdown));
    s.push_str("<h2>Charts</h2>\n<div class=\"charts\">\n");
    for (name, svg) in &a.charts {
        s.push_str(&format!("<figure id=\"{}\">{svg}</figure>\n", esc(name)));
    }
    s.push_str("</div>\n<h2>Runs</h2>\n");
    for r in &a.runs {
        let m = &r.meta;
        s.push_str(&format!(
            "<h3>{} ({})</h3>\n<table>\n",
            esc(&r.name()),
            esc(&r.status())
        ));
        let rows = [
            ("directory", r.dir.display().to_string()),
            (
                "server",
                m["server"]["version"].as_str().unwrap_or("?").to_string(),
            ),
            (
                "backend",
                m["server"]["backend"].as_str().unwrap_or("?").to_string(),
            ),
            ("host", m["host"].to_string()),
            ("hotlab", m["hotlab"].to_string()),
            ("start", m["start"].as_str().unwrap_or("").to_string()),
            ("end", m["end"].as_str().unwrap_or("").to_string()),
            ("fillfactor", r.fillfactor["relations"].to_string()),
        ];
        for (k, v) in rows {
            s.push_str(&format!(
                "<tr><th>{k}</th><td style=\"text-align:left\">{}</td></tr>\n",
                esc(&v)
            ));
        }
        s.push_str("</table>\n");
        // `advise` on this arm (written by `just arm` after the run): its selection table.
        if let Some(md) = crate::io::read_json(&r.dir.join("advise.json"))
            .ok()
            .and_then(|j| j["markdown"].as_str().map(str::to_string))
        {
            s.push_str(&format!(
                "<details open><summary>advise: the three tests on this arm</summary>\n{}</details>\n",
                md_to_html(&md)
            ));
        }
        s.push_str(&format!(
            "<details><summary>settings, resets, command</summary><pre>settings: {}\n\nresets:\n{}\n\ncommand: {}</pre></details>\n",
            esc(&serde_json::to_string_pretty(&m["server"]["settings"]).unwrap_or_default()),
            esc(&r.resets.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("\n")),
            esc(&r.workload["command"].to_string()),
        ));
    }
    s.push_str("</body></html>\n");
    s
}

/// A vertical bar chart, one bar per label, as standalone SVG.
pub fn bar_chart(title: &str, labels: &[String], values: &[f64], unit: &str) -> String {
    let (w, h, left, bottom, top) = (420.0, 260.0, 60.0, 40.0, 30.0);
    let max = values.iter().cloned().fold(0.0_f64, f64::max).max(1e-9);
    let n = values.len().max(1) as f64;
    let slot = (w - left - 10.0) / n;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"sans-serif\" font-size=\"11\">\
         <text x=\"{}\" y=\"18\" text-anchor=\"middle\" font-size=\"13\">{}</text>\
         <line x1=\"{left}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>",
        w / 2.0,
        esc(title),
        h - bottom,
        w - 10.0,
        h - bottom
    );
    for (i, (l, v)) in labels.iter().zip(values).enumerate() {
        let bh = (h - bottom - top) * v / max;
        let x = left + slot * i as f64 + slot * 0.15;
        let y = h - bottom - bh;
        s.push_str(&format!(
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" fill=\"#4a7ab8\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{v:.1}{}</text>",
            slot * 0.7,
            x + slot * 0.35,
            h - bottom + 15.0,
            esc(l),
            x + slot * 0.35,
            y - 4.0,
            esc(unit)
        ));
    }
    s.push_str("</svg>");
    s
}
