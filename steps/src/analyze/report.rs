//! The self-contained report: report.html with a title (study, size, date, host), a table of
//! contents, the summary (Markdown rendered by pulldown-cmark: tables, emphasis, code, lists),
//! sortable tables with numbers right-aligned, inline SVG charts, and each run's metadata as
//! readable tables with relative links to its files, openable in a browser with no network.
//! Also the small SVG bar chart the charts use.

use std::path::{Component, Path, PathBuf};

use pulldown_cmark::{html, CowStr, Event, Options, Parser, Tag, TagEnd};
use serde_json::Value;

use super::Analysis;

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A heading's anchor: lower-case words joined by `-`.
fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

/// Whether a table cell holds a number (or the dash of a missing one): it is right-aligned.
fn numeric(text: &str) -> bool {
    let t = text.trim();
    let t = t.strip_prefix(['+', '-', '−']).unwrap_or(t);
    t == "–" || t.starts_with(|c: char| c.is_ascii_digit())
}

/// Markdown as HTML, with an id on every heading (returned as (level, id, text) for the
/// contents) and body cells classed `num` when they hold a number. Headings start at `<h2>`.
fn md_to_html(md: &str, headings: &mut Vec<(u8, String, String)>) -> String {
    let events: Vec<Event> = Parser::new_ext(md, Options::ENABLE_TABLES).collect();
    let mut out = vec![];
    let mut i = 0;
    let mut in_head = false;
    while i < events.len() {
        match &events[i] {
            Event::Start(Tag::Heading { level, .. }) => {
                let mut text = String::new();
                let mut j = i + 1;
                while !matches!(events.get(j), Some(Event::End(TagEnd::Heading(_))) | None) {
                    if let Event::Text(t) | Event::Code(t) = &events[j] {
                        text.push_str(t);
                    }
                    j += 1;
                }
                let id = slug(&text);
                let n = (*level as u8).max(2);
                headings.push((n, id.clone(), text));
                out.push(Event::Html(CowStr::from(format!("<h{n} id=\"{id}\">"))));
                out.extend(events[i + 1..j].iter().cloned());
                out.push(Event::Html(CowStr::from(format!("</h{n}>\n"))));
                i = j + 1;
                continue;
            }
            Event::Start(Tag::TableHead) => in_head = true,
            Event::End(TagEnd::TableHead) => in_head = false,
            Event::Start(Tag::TableCell) if !in_head => {
                let mut text = String::new();
                let mut j = i + 1;
                while !matches!(events.get(j), Some(Event::End(TagEnd::TableCell)) | None) {
                    if let Event::Text(t) | Event::Code(t) = &events[j] {
                        text.push_str(t);
                    }
                    j += 1;
                }
                let class = if numeric(&text) { " class=\"num\"" } else { "" };
                out.push(Event::Html(CowStr::from(format!("<td{class}>"))));
                out.extend(events[i + 1..j].iter().cloned());
                out.push(Event::Html(CowStr::from("</td>")));
                i = j + 1;
                continue;
            }
            _ => {}
        }
        out.push(events[i].clone());
        i += 1;
    }
    let mut s = String::new();
    html::push_html(&mut s, out.into_iter());
    s
}

/// `to` relative to the directory `from` (both made absolute first), so that the report's links
/// still work when the whole directory moves.
fn relative(from: &Path, to: &Path) -> PathBuf {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (from, to) = (abs(from), abs(to));
    let f: Vec<Component> = from.components().collect();
    let t: Vec<Component> = to.components().collect();
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..f.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c.as_os_str());
    }
    out
}

/// A two-column table of (name, value) rows, values escaped.
fn kv_table(rows: &[(String, String)]) -> String {
    let mut s = String::from("<table class=\"kv\">\n");
    for (k, v) in rows {
        s.push_str(&format!(
            "<tr><th>{}</th><td>{}</td></tr>\n",
            esc(k),
            esc(v)
        ));
    }
    s.push_str("</table>\n");
    s
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => "–".into(),
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// A recorded text, or a dash for none.
fn or_dash(v: Option<String>) -> String {
    v.unwrap_or_else(|| "–".into())
}

/// The host as a person reads it: "AMD EPYC, 2 cores, 24.0 GiB".
fn host_line(h: Option<&crate::host::HostInfo>) -> String {
    format!(
        "{}, {} cores, {}",
        h.and_then(|h| h.cpu.clone()).unwrap_or_else(|| "–".into()),
        h.map_or("–".to_string(), |h| h.cores.to_string()),
        super::bytes(h.and_then(|h| h.memory_bytes).map(|b| b as f64))
    )
}

/// The files of a run directory a reader may open, as links relative to the report.
const RUN_FILES: &[&str] = &[
    "meta.json",
    "fillfactor.json",
    "workload.json",
    "workload.csv",
    "samples.csv",
    "reset.jsonl",
    "vacuum.csv",
    "hot_rows.csv",
    "check.json",
    "advise.json",
    "snapshots/tables.csv",
    "snapshots/database.csv",
    "snapshots/buffers.csv",
    "results.parquet",
    "samples.parquet",
];

/// Sorts a table by the clicked header: numbers by value, the rest as text; again reverses.
const SORT_JS: &str = "<script>\
document.querySelectorAll('table.sortable th').forEach(function(th){th.addEventListener('click',function(){\
var t=th.closest('table'),b=t.tBodies[0],i=Array.prototype.indexOf.call(th.parentNode.children,th),d=th.dataset.d==='1'?-1:1;th.dataset.d=d===1?'1':'0';\
var n=function(r){var x=parseFloat(r.cells[i].textContent.replace('−','-'));return isNaN(x)?null:x;};\
Array.prototype.slice.call(b.rows).sort(function(p,q){var a=n(p),c=n(q);if(a!==null&&c!==null)return d*(a-c);return d*p.cells[i].textContent.localeCompare(q.cells[i].textContent);}).forEach(function(r){b.appendChild(r);});});});\
</script>\n";

const STYLE: &str = "<style>\
body{font-family:sans-serif;margin:2em;max-width:1300px;line-height:1.4}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}\
td.num{text-align:right;font-variant-numeric:tabular-nums}th{background:#eee}table.sortable th{cursor:pointer}\
table.kv th{text-align:left;font-weight:normal;color:#444}strong{color:#b00}\
.charts{display:flex;flex-wrap:wrap;gap:1em}.answer{background:#f4f7fb;border-left:4px solid #1f77b4;padding:.2em 1em;margin:1em 0}figure{margin:0}nav ul{columns:2}\
pre{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:85%}</style>\n";

/// The short answer (`answer::lines`) at the top of the page: the verdicts and the
/// recommendation, the regime sentence in bold; the title already names the runs, and the page
/// is the report the paths point to.
fn answer_box(a: &Analysis, out: &Path) -> String {
    let lines = super::answer::lines(a, out);
    let mut md = String::new();
    for l in lines.iter().skip(1) {
        if l.starts_with("Report: ") || l.starts_with("Summary: ") {
            continue;
        }
        if l.starts_with("- ") {
            md.push_str(&format!("{l}\n"));
        } else if l.contains("article's regime") {
            md.push_str(&format!("\n**{l}**\n\n"));
        } else {
            md.push_str(&format!("\n{l}\n\n"));
        }
    }
    let mut headings = vec![];
    format!(
        "<section class=\"answer\"><h2 id=\"answer\">The answer</h2>\n{}</section>\n",
        md_to_html(&md, &mut headings)
    )
}

/// A run's metadata as a table: server, backend, host, hotlab, start, end, fillfactor.
fn run_facts(r: &super::load::ArmRun) -> String {
    let m = &r.meta;
    let fillfactor = r
        .fillfactor
        .as_ref()
        .map(|f| {
            f.relations
                .iter()
                .map(|(t, v)| {
                    let ff = v.read_back.map_or("–".into(), |n| n.to_string());
                    format!("{t} {ff}")
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_else(|| "–".into());
    kv_table(&[
        (
            "server".into(),
            or_dash(m.server.as_ref().map(|s| s.version.clone())),
        ),
        (
            "backend".into(),
            or_dash(
                m.server
                    .as_ref()
                    .and_then(|s| s.backend)
                    .map(|b| b.name().to_string()),
            ),
        ),
        ("host".into(), host_line(m.host.as_ref())),
        (
            "hotlab".into(),
            or_dash(m.hotlab.as_ref().and_then(|h| h.git.clone())),
        ),
        ("start".into(), or_dash(m.start.clone())),
        ("end".into(), or_dash(m.end.clone())),
        ("fillfactor".into(), fillfactor),
    ])
}

/// One run's section of the page: its metadata as tables, relative links to its files, its
/// advise, settings, cold resets and command.
fn run_section(r: &super::load::ArmRun, out: &Path) -> String {
    let mut s = String::new();
    let m = &r.meta;
    let dir = relative(out, &r.dir);
    s.push_str(&format!(
        "<h3 id=\"run-{}\">{} ({})</h3>\n",
        slug(&r.name()),
        esc(&r.name()),
        esc(&r.status())
    ));
    s.push_str(&run_facts(r));
    let links: Vec<String> = RUN_FILES
        .iter()
        .filter(|f| r.dir.join(f).exists())
        .map(|f| {
            let href = dir.join(f);
            format!("<a href=\"{}\">{f}</a>", esc(&href.to_string_lossy()))
        })
        .collect();
    s.push_str(&format!("<p>Files: {}</p>\n", links.join(" · ")));
    // `advise` on this arm (written by `just arm` after the run): its selection table.
    if let Some(md) = crate::io::read_json(&r.dir.join("advise.json"))
        .ok()
        .and_then(|j| serde_json::from_value::<crate::advise::files::AdviseJson>(j).ok())
        .map(|a| a.markdown)
    {
        s.push_str(&format!(
            "<details open><summary>advise: the three tests on this arm</summary>\n{}</details>\n",
            md_to_html(&md, &mut vec![])
        ));
    }
    let settings: Vec<(String, String)> = m
        .server
        .as_ref()
        .map(|s| s.settings.clone().into_iter().collect())
        .unwrap_or_default();
    s.push_str(&format!(
        "<details><summary>server settings</summary>\n{}</details>\n",
        kv_table(&settings)
    ));
    let resets: Vec<(String, String)> = r
        .resets
        .iter()
        .map(|x| {
            let what = format!("{} (cold: {})", text(&x["ts"]), text(&x["cold"]));
            let actions = x["actions"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|a| format!("{}: {}", text(&a["action"]), text(&a["outcome"])))
                        .collect::<Vec<_>>()
                        .join("; ")
                })
                .unwrap_or_else(|| x.to_string());
            (what, actions)
        })
        .collect();
    s.push_str(&format!(
        "<details><summary>cold resets</summary>\n{}</details>\n<details><summary>command</summary><pre>{}</pre></details>\n",
        kv_table(&resets),
        esc(&super::headline(r)
            .command
            .map_or("–".to_string(), |c| serde_json::to_string(&c).unwrap_or_default())),
    ));
    s
}

/// report.html of an analysis written into `out`.
pub(crate) fn html(a: &Analysis, out: &Path) -> String {
    let first = a.runs.first();
    let title = match first {
        Some(r) => format!("{} — size {}", r.plan.label(), r.plan.size),
        None => "hotlab report".to_string(),
    };
    let date = first
        .and_then(|r| r.meta.start.as_deref())
        .map(|s| s.chars().take(16).collect::<String>().replace('T', " "))
        .unwrap_or_default();
    let host = first
        .map(|r| host_line(r.meta.host.as_ref()))
        .unwrap_or_default();
    // "PostgreSQL 18.6 on x86_64-pc-linux-gnu, compiled by …": the first two words.
    let version = first
        .and_then(|r| r.meta.server.as_ref().map(|s| s.version.as_str()))
        .map(|v| v.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "?".into());
    let mut headings = vec![];
    let body = md_to_html(&a.markdown, &mut headings);
    let mut s = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title>\n{STYLE}</head><body>\n<h1>{}</h1>\n<p>{} runs, first started {} · {} · {}</p>\n",
        esc(&title),
        esc(&title),
        a.runs.len(),
        esc(&date),
        esc(&host),
        esc(&version)
    );
    s.push_str(&answer_box(a, out));
    s.push_str("<nav><h2>Contents</h2><ul>\n<li><a href=\"#answer\">The answer</a></li>\n");
    for (_, id, text) in headings.iter().filter(|(l, _, _)| *l == 2) {
        s.push_str(&format!("<li><a href=\"#{id}\">{}</a></li>\n", esc(text)));
    }
    s.push_str("<li><a href=\"#charts\">Charts</a></li>\n<li><a href=\"#runs\">Runs</a></li>\n</ul></nav>\n");
    s.push_str(&body.replace("<table>", "<table class=\"sortable\">"));
    s.push_str("<h2 id=\"charts\">Charts</h2>\n<div class=\"charts\">\n");
    for (name, svg) in &a.charts {
        s.push_str(&format!("<figure id=\"{}\">{svg}</figure>\n", esc(name)));
    }
    s.push_str("</div>\n<h2 id=\"runs\">Runs</h2>\n");
    for r in &a.runs {
        s.push_str(&run_section(r, out));
    }
    s.push_str(SORT_JS);
    s.push_str("</body></html>\n");
    s
}

/// A vertical bar chart, one bar per label, as standalone SVG.
pub(crate) fn bar_chart(title: &str, labels: &[String], values: &[f64], unit: &str) -> String {
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
