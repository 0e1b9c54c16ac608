//! Study 001/004 against the article: what explains its figures (one row per hypothesis, from the
//! arms that test it), every figure it printed beside ours with a direction, and its five claims.
//! Reads only the per-run rows `script` made and the article's figures
//! (data/reference/001-small-table.csv); writes nothing.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{arm_ratio as ratio, arm_stats as stat, Arms, Getter, Row};
use crate::analyze::load::ArmRun;
use crate::analyze::{direction, md_table, num};
use crate::io::csv_maps;
use crate::stats::Stats;

/// The article's figures (data/reference/001-small-table.csv; README there).
const REFERENCE: &str = include_str!("../../../../../data/reference/001-small-table.csv");

/// The article's published figures by (variant, column), PostgreSQL 18.2 (seeds/001) and 13.23
/// (seeds/004) alike; sizes in bytes.
struct Published(Vec<std::collections::BTreeMap<String, String>>);

impl Published {
    fn load() -> Published {
        Published(csv_maps(REFERENCE).unwrap_or_default())
    }

    fn get(&self, variant: &str, column: &str) -> Option<f64> {
        let v = self
            .0
            .iter()
            .filter(|m| m.get("variant").map(String::as_str) == Some(variant))
            .find_map(|m| m.get(column).filter(|v| !v.is_empty()))?;
        v.parse().ok().or_else(|| decimal_bytes(v))
    }
}

/// "938MB", "1.40GB" in decimal units, as the article prints them (1.40 GB / 938 MB = 1.49×).
fn decimal_bytes(v: &str) -> Option<f64> {
    let split = v.find(|c: char| c.is_ascii_alphabetic())?;
    let (n, unit) = v.split_at(split);
    let m = match unit.trim() {
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        _ => return None,
    };
    Some(n.trim().parse::<f64>().ok()? * m)
}

/// The article's buffer ratio and final-sample TPS change are reproduced when ours fall within
/// these: the ratio within ±25 % of 7.46× (5.97× to 9.33×), the change within 5 points of
/// −15.2 % (−20.2 % to −10.2 %).
const RATIO_TOLERANCE: f64 = 0.25;
const TPS_TOLERANCE_POINTS: f64 = 5.0;

fn mean(arms: &Arms, arm: &str, g: Getter) -> Option<f64> {
    stat(arms, arm, g).map(|s| s.mean)
}

/// `a` against `b` in % (means).
fn change(arms: &Arms, a: &str, b: &str, g: Getter) -> Option<f64> {
    match (mean(arms, a, g), mean(arms, b, g)) {
        (Some(x), Some(y)) if y != 0.0 => Some(100.0 * (x - y) / y),
        _ => None,
    }
}

/// Two arms' repeats overlap (min–max): their difference is within the noise of this run.
fn overlap(a: Option<Stats>, b: Option<Stats>) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a.n > 1 && b.n > 1 && a.min <= b.max && b.min <= a.max)
}

fn pct_text(v: Option<f64>) -> String {
    v.map(|x| format!("{x:+.1} %")).unwrap_or("–".into())
}

fn times(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.2}×")).unwrap_or("–".into())
}

/// One explanation and the pair of arms that tests it (`x` against `base`).
struct Hypothesis {
    id: &'static str,
    what: &'static str,
    x: &'static str,
    base: &'static str,
}

const HYPOTHESES: &[Hypothesis] = &[
    Hypothesis {
        id: "–",
        what: "our first model: hit rows in the newest tenth, both arms cold",
        x: "onlyff",
        base: "ori",
    },
    Hypothesis {
        id: "H1",
        what: "hit rows spread evenly over every page, both cold",
        x: "onlyff-spread",
        base: "ori-spread",
    },
    Hypothesis {
        id: "H1",
        what: "as above, table only at 50",
        x: "heap50-spread",
        base: "ori-spread",
    },
    Hypothesis {
        id: "H1",
        what: "hit rows by a random user-to-group mapping, both cold",
        x: "onlyff-random",
        base: "ori-random",
    },
    Hypothesis {
        id: "H2",
        what:
            "fillfactor 50 created and loaded on the running server (cache as loaded), default cold",
        x: "onlyff-createwith",
        base: "ori",
    },
    Hypothesis {
        id: "H2",
        what: "as above, table only at 50",
        x: "heap50-createwith",
        base: "ori",
    },
    Hypothesis {
        id: "H2",
        what: "both created and loaded on the running server",
        x: "onlyff-createwith",
        base: "ori-createwith",
    },
    Hypothesis {
        id: "H1+H2",
        what:
            "hit rows spread, fillfactor 50 created and loaded on the running server, default cold",
        x: "onlyff-spread-createwith",
        base: "ori-spread",
    },
    Hypothesis {
        id: "H3",
        what: "both at the same time on one server, the clients split",
        x: "onlyff-together",
        base: "ori-together",
    },
];

/// The article's figures this section compares with: onlyff/ori buffers at the end, and
/// onlyff's final TPS sample against ori's, in %.
fn article_targets(p: &Published) -> (Option<f64>, Option<f64>) {
    let r = match (
        p.get("onlyff", "final_buffers"),
        p.get("ori", "final_buffers"),
    ) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let t = match (
        p.get("onlyff", "final_tps_sample"),
        p.get("ori", "final_tps_sample"),
    ) {
        (Some(a), Some(b)) if b > 0.0 => Some(100.0 * (a - b) / b),
        _ => None,
    };
    (r, t)
}

/// "What explains the article's figures": one row per hypothesis whose arms ran, then H4 (one
/// sample) from the repeats of ori and onlyff.
fn hypotheses(arms: &Arms, p: &Published) -> (String, Vec<HypothesisJson>) {
    let (target_ratio, target_tps) = article_targets(p);
    let mut rows = vec![];
    let mut js = vec![];
    let pair = |x: &str, b: &str, g: Getter| -> String {
        format!(
            "{} / {}",
            num(mean(arms, x, g), 2),
            num(mean(arms, b, g), 2)
        )
    };
    let pages = |a: &str| -> String {
        format!(
            "{} → {} %",
            num(mean(arms, a, |r| r.hot_pages_start), 0),
            num(mean(arms, a, |r| r.hot_pages_end), 0)
        )
    };
    for h in HYPOTHESES {
        let ran = |a: &str| arms.iter().any(|(x, _)| x == a);
        if !ran(h.x) || !ran(h.base) {
            continue;
        }
        let end = ratio(arms, h.x, h.base, |r| r.buffers_end);
        let mid = ratio(arms, h.x, h.base, |r| r.buffers_mid);
        let dirty = ratio(arms, h.x, h.base, |r| r.dirty_end);
        let fin = change(arms, h.x, h.base, |r| r.tps_final);
        let mean_tps = change(arms, h.x, h.base, |r| r.tps);
        let fp = match (end, target_ratio) {
            (Some(e), Some(t)) => (e - t).abs() <= RATIO_TOLERANCE * t,
            _ => false,
        };
        let tp = match (fin, target_tps) {
            (Some(f), Some(t)) => (f - t).abs() <= TPS_TOLERANCE_POINTS,
            _ => false,
        };
        let verdict = format!(
            "footprint {} ({}); final TPS {} ({})",
            if fp {
                "**reproduced**"
            } else {
                "not reproduced"
            },
            times(end),
            if tp {
                "**reproduced**"
            } else {
                "not reproduced"
            },
            pct_text(fin)
        );
        rows.push(vec![
            h.id.to_string(),
            h.what.to_string(),
            format!("{} / {}", h.x, h.base),
            times(end),
            times(mid),
            times(dirty),
            pct_text(fin),
            pct_text(mean_tps),
            pair(h.x, h.base, |r| r.fpi_per_txn),
            pair(h.x, h.base, |r| r.wal_per_txn),
            format!("{}; {}", pages(h.x), pages(h.base)),
            verdict,
        ]);
        let hot_pages = |a: &str| {
            [
                mean(arms, a, |r| r.hot_pages_start),
                mean(arms, a, |r| r.hot_pages_end),
            ]
        };
        js.push(HypothesisJson::Pair(PairHypothesis {
            hypothesis: h.id,
            what: h.what,
            arm: h.x,
            against: h.base,
            buffers_ratio_end: end,
            buffers_ratio_mid: mid,
            dirty_ratio_end: dirty,
            final_tps_change_pct: fin,
            mean_tps_change_pct: mean_tps,
            fpi_per_txn: [
                mean(arms, h.x, |r| r.fpi_per_txn),
                mean(arms, h.base, |r| r.fpi_per_txn),
            ],
            wal_bytes_per_txn: [
                mean(arms, h.x, |r| r.wal_per_txn),
                mean(arms, h.base, |r| r.wal_per_txn),
            ],
            hot_pages_pct: [(h.x, hot_pages(h.x)), (h.base, hot_pages(h.base))].into(),
            footprint_reproduced: fp,
            final_tps_reproduced: tp,
        }));
    }
    // H4: every pairing of an onlyff repeat with an ori repeat gives one final-sample change.
    let finals = |a: &str| -> Vec<f64> {
        arms.iter()
            .find(|(x, _)| x == a)
            .map(|(_, v)| v.iter().filter_map(|r| r.tps_final).collect())
            .unwrap_or_default()
    };
    let (ff, ori) = (finals("onlyff"), finals("ori"));
    let changes: Vec<f64> = ff
        .iter()
        .flat_map(|f| ori.iter().map(move |o| 100.0 * (f - o) / o))
        .collect();
    if ff.len() > 1 || ori.len() > 1 {
        let lo = changes.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = changes.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let inside = target_tps.is_some_and(|t| t >= lo && t <= hi);
        let spread = |a: &str| {
            stat(arms, a, |r| r.tps_final)
                .and_then(|s| s.spread_pct)
                .map(|x| format!("{x:.1} %"))
                .unwrap_or("–".into())
        };
        rows.push(vec![
            "H4".into(),
            format!(
                "one sample: the final-sample change over every pairing of {} onlyff and {} ori repeats",
                ff.len(),
                ori.len()
            ),
            "onlyff / ori".into(),
            "".into(),
            "".into(),
            "".into(),
            format!("{} to {}", pct_text(Some(lo)), pct_text(Some(hi))),
            pct_text(change(arms, "onlyff", "ori", |r| r.tps)),
            "".into(),
            "".into(),
            format!(
                "final-sample spread: onlyff {}, ori {}",
                spread("onlyff"),
                spread("ori")
            ),
            format!(
                "the article's {} is {} the range of our single-sample changes",
                pct_text(target_tps),
                if inside { "**inside**" } else { "outside" }
            ),
        ]);
        js.push(HypothesisJson::Spread(SpreadHypothesis {
            hypothesis: "H4",
            final_tps_change_pct_min: lo,
            final_tps_change_pct_max: hi,
            pairs: changes.len(),
            article_inside: inside,
        }));
    }
    if rows.is_empty() {
        return (String::new(), js);
    }
    let mut md = String::from("\n### What explains the article's figures\n\n");
    md.push_str(&format!(
        "The article: fillfactor 50 (table and indexes) ended with {} the default's buffers and a final TPS sample {} the default's. Each row is a pair of arms that differ in one thing besides fillfactor; a figure is reproduced when ours falls within ±{:.0} % of the article's ratio or {:.0} points of its TPS change.\n\n",
        times(target_ratio),
        pct_text(target_tps),
        RATIO_TOLERANCE * 100.0,
        TPS_TOLERANCE_POINTS
    ));
    md.push_str(&md_table(
        &[
            "",
            "explanation",
            "arms",
            "buffers × (end)",
            "buffers × (middle)",
            "dirty × (end)",
            "final TPS",
            "mean TPS",
            "FPI/txn",
            "WAL B/txn",
            "pages holding a hit row (start → end)",
            "verdict",
        ],
        &rows,
    ));
    md.push_str("\nBuffers: the table's and its indexes' pages in shared_buffers (pg_buffercache) at the window's last and middle samples. FPI/txn and WAL B/txn: the first arm / the second. Pages holding a hit row: from the ctids of the rows the upsert hits (the study's hot_rows query), as a share of the table's pages, after the build and after the run.\n");
    (md, js)
}

/// (intervals onlyff is ahead, intervals, ahead in the first, where ori leads for good).
type Crossover = (usize, usize, bool, Option<(usize, f64)>);

/// The article's HOT crossover, read per interval on its measure, HOT updates per second (its
/// chart is "HOT updates per table", a rate): in how many intervals onlyff's rate is above
/// ori's, whether it is above in the first, and the first interval (its index, and seconds into
/// the window) from which ori is at or above it for good. Each arm's first complete run,
/// intervals by index.
fn hot_crossover(arms: &Arms) -> Option<Crossover> {
    let first = |a: &str| arms.iter().find(|(x, _)| x == a)?.1.first().copied();
    let (ff, ori) = (first("onlyff")?, first("ori")?);
    let (f, o) = (&ff.hot_rate_series, &ori.hot_rate_series);
    let n = f.len().min(o.len());
    if n == 0 {
        return None;
    }
    let above: Vec<bool> = (0..n).map(|i| f[i].1 > o[i].1).collect();
    let ahead = above.iter().filter(|a| **a).count();
    let from = (1..n)
        .find(|i| above[*i..].iter().all(|a| !a) && above[..*i].iter().any(|a| *a))
        .map(|i| (i, o[i].0));
    Some((ahead, n, above[0], from))
}

/// A ratio beside the article's: "agrees" within the tolerance, "direction only" when on the
/// same side of 1 but outside it, else "disagrees".
fn ratio_verdict(ours: Option<f64>, article: Option<f64>) -> String {
    match (ours, article) {
        (Some(o), Some(a)) if (o - a).abs() <= RATIO_TOLERANCE * a => "agrees".into(),
        (Some(o), Some(a)) if (o > 1.0) == (a > 1.0) => format!(
            "direction only ({} against {}, outside ±{:.0} %)",
            times(Some(o)),
            times(Some(a)),
            RATIO_TOLERANCE * 100.0
        ),
        (Some(_), Some(_)) => "**disagrees**".into(),
        _ => "–".into(),
    }
}

/// Every figure the article printed, ours beside it with a direction.
fn every_figure(
    arms: &Arms,
    p: &Published,
    bytes_factor: Option<f64>,
) -> (String, Vec<FigureJson>) {
    let mut rows: Vec<[String; 4]> = vec![];
    let fin: Getter = |r| r.tps_final;
    for a in ["ori", "by_hash", "onlyff"] {
        let art = p.get(a, "final_tps_sample");
        let (art_c, ours_c) = if a == "ori" {
            (None, None)
        } else {
            (
                match (art, p.get("ori", "final_tps_sample")) {
                    (Some(x), Some(y)) => Some(100.0 * (x - y) / y),
                    _ => None,
                },
                change(arms, a, "ori", fin),
            )
        };
        rows.push([
            format!("final TPS sample, {a}"),
            format!(
                "{}{}",
                num(art, 0),
                art_c.map(|c| format!(" ({c:+.1} %)")).unwrap_or_default()
            ),
            format!(
                "{}{}",
                num(mean(arms, a, fin), 0),
                ours_c.map(|c| format!(" ({c:+.1} %)")).unwrap_or_default()
            ),
            if a == "ori" {
                "the baseline".into()
            } else {
                direction(ours_c, art_c)
            },
        ]);
    }
    let (target_ratio, _) = article_targets(p);
    let buf = ratio(arms, "onlyff", "ori", |r| r.buffers_end);
    for a in ["ori", "onlyff"] {
        rows.push([
            format!("buffers at the end, {a}"),
            num(p.get(a, "final_buffers"), 0),
            num(mean(arms, a, |r| r.buffers_end), 0),
            "(absolute: see the ratio)".into(),
        ]);
    }
    rows.push([
        "buffers at the end, onlyff / ori".into(),
        times(target_ratio),
        times(buf),
        ratio_verdict(buf, target_ratio),
    ]);
    let dirty = ratio(arms, "onlyff", "ori", |r| r.dirty_end);
    rows.push([
        "dirty buffers at the end, onlyff / ori (\"a similar endpoint ratio\")".into(),
        format!("similar to {}", times(target_ratio)),
        times(dirty),
        ratio_verdict(dirty, target_ratio),
    ]);
    let mid = ratio(arms, "onlyff", "ori", |r| r.buffers_mid);
    let near_end = match (mid, buf) {
        (Some(m), Some(e)) => Some(e > 1.5 && m < e / 2.0),
        _ => None,
    };
    rows.push([
        "the footprint gap \"appears near the end\" (ratio at the middle → end)".into(),
        "small, then ~7.5× at the end".into(),
        format!("{} → {}", times(mid), times(buf)),
        match near_end {
            Some(true) => "agrees".into(),
            Some(false) => "**disagrees**".into(),
            None => "–".into(),
        },
    ]);
    let size = |r: &Row| match (r.heap_end, r.index_end) {
        (Some(h), Some(i)) => Some(h + i),
        _ => None,
    };
    let art_size = match (p.get("onlyff", "table_size"), p.get("ori", "table_size")) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let ours_size = ratio(arms, "onlyff", "ori", size);
    rows.push([
        "size at the end, onlyff / ori (004: 1.40 GB / 938 MB, PostgreSQL 13.23)".into(),
        times(art_size),
        format!("{} (table + indexes, PostgreSQL 18)", times(ours_size)),
        ratio_verdict(ours_size, art_size),
    ]);
    let heap = mean(arms, "ori", |r| r.heap_start);
    let at_article = heap.map(|h| h / bytes_factor.unwrap_or(1.0));
    rows.push([
        "\"a table of approximately 500 MB\" (ori's heap at the start)".into(),
        "≈ 500 MB".into(),
        format!(
            "{}{}",
            crate::analyze::bytes(at_article),
            if bytes_factor.is_some_and(|f| f < 1.0) {
                format!(
                    " (ours {} × 1/{:.0})",
                    crate::analyze::bytes(heap),
                    1.0 / bytes_factor.unwrap_or(1.0)
                )
            } else {
                String::new()
            }
        ),
        match at_article {
            Some(b) if (400e6..=600e6).contains(&b) => "agrees".into(),
            Some(_) => "**disagrees**".into(),
            None => "–".into(),
        },
    ]);
    let upd: Getter = |r| r.upd_per_s;
    let (uh, uf) = (
        change(arms, "by_hash", "ori", upd),
        change(arms, "onlyff", "ori", upd),
    );
    rows.push([
        "update throughput: \"default and hash close, fillfactor trails\"".into(),
        "hash ≈ default, fillfactor below".into(),
        format!(
            "by_hash {}, onlyff {} (updates/s)",
            pct_text(uh),
            pct_text(uf)
        ),
        match (uh, uf) {
            (Some(h), Some(f)) if h.abs() <= 5.0 && f < -1.0 => "agrees".into(),
            (Some(_), Some(_)) => "**disagrees**".into(),
            _ => "–".into(),
        },
    ]);
    let cross = hot_crossover(arms);
    rows.push([
        "HOT activity: \"fillfactor starts higher, the default overtakes it later\" (HOT updates/s per interval)".into(),
        "onlyff above early, ori above later".into(),
        match cross {
            Some((ahead, n, first, from)) => format!(
                "onlyff above ori in {ahead} of {n} intervals ({} in the first); ori at or above for good from {}",
                if first { "above" } else { "not above" },
                from.map(|(_, t)| format!("{t:.0} s")).unwrap_or("never".into())
            ),
            None => "–".into(),
        },
        // "Overtakes later" holds when ori stays at or above onlyff for the last quarter of the
        // window at least, not merely in its last interval.
        match cross {
            Some((_, n, true, Some((i, _)))) if 4 * i <= 3 * n => "agrees".into(),
            Some(_) => "**disagrees**".into(),
            None => "–".into(),
        },
    ]);
    let rise = mean(arms, "ori", |r| r.tps_rise_pct);
    rows.push([
        "\"throughput continues to rise during the recording\" (ori, last third against first)"
            .into(),
        "rising".into(),
        pct_text(rise),
        match rise {
            Some(r) if r > 1.0 => "agrees".into(),
            Some(_) => "**disagrees**".into(),
            None => "–".into(),
        },
    ]);
    rows.push([
        "primary-key index hits (onlyff against ori, over the window)".into(),
        "a chart only: no figure printed".into(),
        pct_text(change(arms, "onlyff", "ori", |r| r.pk_hits)),
        "no figure to compare".into(),
    ]);
    let mut md = String::from("\n### Every figure the article printed, beside ours\n\n");
    md.push_str(&md_table(
        &["figure", "article", "ours", "direction"],
        &rows.iter().map(|r| r.to_vec()).collect::<Vec<_>>(),
    ));
    md.push_str("\nPostgreSQL 13 is not available on this machine: the 004 sizes (PostgreSQL 13.23) are compared as a ratio on PostgreSQL 18. The article's figures are single samples of one Docker run; ours are means over every repeat.\n");
    let js = rows
        .iter()
        .map(|r| FigureJson {
            figure: r[0].clone(),
            article: r[1].clone(),
            ours: r[2].clone(),
            direction: r[3].clone(),
        })
        .collect();
    (md, js)
}

/// The article's five claims.
fn claims(arms: &Arms, p: &Published) -> (String, Vec<ClaimJson>) {
    let (pub_ratio, _) = article_targets(p);
    let ratio_ours = ratio(arms, "onlyff", "ori", |r| r.buffers_end);
    let pub_change = |a: &str| match (
        p.get(a, "final_tps_sample"),
        p.get("ori", "final_tps_sample"),
    ) {
        (Some(x), Some(y)) if y > 0.0 => Some(100.0 * (x - y) / y),
        _ => None,
    };
    let tps: Getter = |r| r.tps;
    let hash = change(arms, "by_hash", "ori", tps);
    let ff = change(arms, "onlyff", "ori", tps);
    let hash_noise = overlap(stat(arms, "by_hash", tps), stat(arms, "ori", tps));
    let ff_noise = overlap(stat(arms, "onlyff", tps), stat(arms, "ori", tps));
    let noise = "within noise (the repeats' ranges overlap)".to_string();
    let hot_early = change(arms, "onlyff", "ori", |r| r.hot_first);
    let dead = change(arms, "onlyff", "ori", |r| r.dead_end);
    let both = |x: Option<f64>, want_x_below: bool| match (x, ff) {
        _ if ff_noise => noise.clone(),
        (Some(x), Some(f)) if (x < 0.0) == want_x_below && f < 0.0 => "agrees".to_string(),
        (Some(_), Some(_)) => "**disagrees**".to_string(),
        _ => "–".to_string(),
    };
    let claims = [
        (
            "hash partitioning stays close to the default (within 5 % TPS)",
            format!("{} (final sample)", pct_text(pub_change("by_hash"))),
            hash,
            match hash {
                Some(h) if h.abs() <= 5.0 || hash_noise => "agrees".to_string(),
                Some(_) => "**disagrees**".to_string(),
                None => "–".to_string(),
            },
        ),
        (
            "fillfactor 50 (table and indexes) has lower throughput than the default",
            format!("{} (final sample)", pct_text(pub_change("onlyff"))),
            ff,
            if ff_noise {
                noise.clone()
            } else {
                direction(ff, pub_change("onlyff"))
            },
        ),
        (
            "fillfactor 50's buffer footprint is far larger (onlyff / ori buffers − 1)",
            pct_text(pub_ratio.map(|r| 100.0 * (r - 1.0))),
            ratio_ours.map(|r| 100.0 * (r - 1.0)),
            ratio_verdict(ratio_ours, pub_ratio),
        ),
        (
            "fillfactor 50 starts with more HOT (first interval's HOT %), yet lower throughput",
            "more HOT early, lower TPS".to_string(),
            hot_early,
            both(hot_early, false),
        ),
        (
            "fillfactor 50 ends with fewer dead tuples, yet lower throughput",
            "fewer dead tuples, lower TPS".to_string(),
            dead,
            both(dead, true),
        ),
    ];
    let mut md = String::from("\n### The article's five claims\n\n");
    let rows: Vec<Vec<String>> = claims
        .iter()
        .map(|(c, p, o, d)| vec![c.to_string(), p.clone(), pct_text(*o), d.clone()])
        .collect();
    md.push_str(&md_table(
        &["claim", "article", "ours (means, against ori)", "direction"],
        &rows,
    ));
    md.push_str(
        "\nIts buffer counts come from an exporter query it does not give; ours count the table's and its indexes' pages in shared_buffers (docs/study-001-small-table.md).\n",
    );
    let js = claims
        .iter()
        .map(|(c, p, o, d)| ClaimJson {
            claim: c.to_string(),
            article: p.clone(),
            ours_pct: *o,
            direction: d.clone(),
        })
        .collect();
    (md, js)
}

/// Study 001's sections: the hypotheses, every figure, the five claims. Returns the Markdown,
/// the claims (summary.json's `claims`) and the rest (`study_001`).
pub(crate) fn sections(arms: &Arms, runs: &[&ArmRun]) -> (String, Vec<ClaimJson>, Study001Json) {
    let p = Published::load();
    let bytes_factor = runs
        .iter()
        .find_map(|r| r.plan.scale.as_ref().map(|s| s.bytes_factor));
    let (h_md, h_js) = hypotheses(arms, &p);
    let (f_md, f_js) = every_figure(arms, &p, bytes_factor);
    let (c_md, c_js) = claims(arms, &p);
    (
        format!("{h_md}{f_md}{c_md}"),
        c_js,
        Study001Json {
            hypotheses: h_js,
            every_figure: f_js,
        },
    )
}

/// summary.json's `study_001`: what explains the article's figures, and every figure it printed.
#[derive(Serialize)]
pub(crate) struct Study001Json {
    hypotheses: Vec<HypothesisJson>,
    every_figure: Vec<FigureJson>,
}

/// A hypothesis: a pair of arms tested against the article's figures (H1–H3), or the spread of
/// single-sample changes (H4).
#[derive(Serialize)]
#[serde(untagged)]
enum HypothesisJson {
    Pair(PairHypothesis),
    Spread(SpreadHypothesis),
}

#[derive(Serialize)]
struct PairHypothesis {
    hypothesis: &'static str,
    what: &'static str,
    arm: &'static str,
    against: &'static str,
    buffers_ratio_end: Option<f64>,
    buffers_ratio_mid: Option<f64>,
    dirty_ratio_end: Option<f64>,
    final_tps_change_pct: Option<f64>,
    mean_tps_change_pct: Option<f64>,
    /// (arm, against)
    fpi_per_txn: [Option<f64>; 2],
    wal_bytes_per_txn: [Option<f64>; 2],
    /// Per arm: (start, end).
    hot_pages_pct: BTreeMap<&'static str, [Option<f64>; 2]>,
    footprint_reproduced: bool,
    final_tps_reproduced: bool,
}

#[derive(Serialize)]
struct SpreadHypothesis {
    hypothesis: &'static str,
    final_tps_change_pct_min: f64,
    final_tps_change_pct_max: f64,
    pairs: usize,
    article_inside: bool,
}

/// A figure the article printed, beside ours.
#[derive(Serialize)]
struct FigureJson {
    figure: String,
    article: String,
    ours: String,
    direction: String,
}

/// One of the article's claims checked (summary.json `claims`).
#[derive(Serialize)]
pub(crate) struct ClaimJson {
    pub(crate) claim: String,
    article: String,
    ours_pct: Option<f64>,
    pub(crate) direction: String,
}
