//! Study 000's first tables: per arm, NOPM, TPM and their ratio (HammerDB's way, over the
//! measured window), and per updated table the share of updates that stayed HOT, went to a new
//! page, or stayed on the page without HOT, with the published values beside ours where the
//! article printed them. Full article tables (bloat curve, every-run table) come later.

use anyhow::Result;
use serde_json::{json, Value};

use super::load::ArmRun;
use super::{md_table, num, pct};

const TABLES: &[&str] = &[
    "warehouse",
    "district",
    "customer",
    "stock",
    "orders",
    "order_line",
];

fn table_figures(r: &ArmRun, t: &str) -> Value {
    let upd = r.table(t, "n_tup_upd").delta;
    let hot = r.table(t, "n_tup_hot_upd").delta;
    let newpage = r.table(t, "n_tup_newpage_upd").delta;
    let same_page = match (upd, hot, newpage) {
        (Some(u), Some(h), Some(n)) => Some(u - h - n),
        _ => None,
    };
    json!({
        "fillfactor": r.table(t, "fillfactor").last,
        "n_tup_upd": upd,
        "n_tup_hot_upd": hot,
        "n_tup_newpage_upd": newpage,
        "hot_pct": pct(hot, upd),
        "newpage_pct": pct(newpage, upd),
        "samepage_nonhot_pct": pct(same_page, upd),
        "heap_bytes_before": r.table(t, "heap_bytes").first,
        "heap_bytes_after": r.table(t, "heap_bytes").last,
        "n_dead_tup": r.table(t, "n_dead_tup").last,
    })
}

pub fn tables(runs: &[ArmRun]) -> Result<super::Tables> {
    let mut md = String::from("## TPROC-C: throughput per arm\n\n");
    let mut rows = vec![];
    let mut json_runs = vec![];
    for r in runs {
        let w = &r.workload;
        let nopm = w["nopm"].as_f64();
        let tpm = w["tpm"].as_f64();
        rows.push(vec![
            r.name(),
            r.status(),
            w["profile"].as_str().unwrap_or("–").to_string(),
            num(w["warehouses"].as_f64(), 0),
            num(w["vus"].as_f64(), 0),
            num(w["duration_s"].as_f64(), 0),
            num(nopm, 0),
            num(tpm, 0),
            num(w["tpm_per_nopm"].as_f64(), 2),
        ]);
        let tables: serde_json::Map<String, Value> = TABLES
            .iter()
            .map(|t| (t.to_string(), table_figures(r, t)))
            .collect();
        json_runs.push(json!({
            "arm": r.name(),
            "dir": r.dir,
            "fillfactor": r.meta["arm"]["fillfactor"],
            "status": r.status(),
            "nopm": nopm,
            "tpm": tpm,
            "tpm_per_nopm": w["tpm_per_nopm"],
            "duration_s": w["duration_s"],
            "wal_bytes": r.source("lsn", "insert_lsn_bytes").delta,
            "tables": tables,
        }));
    }
    md.push_str(&md_table(
        &[
            "run",
            "status",
            "profile",
            "warehouses",
            "VUs",
            "measured s",
            "NOPM",
            "TPM",
            "TPM/NOPM",
        ],
        &rows,
    ));
    md.push_str("\nNOPM = Δsum(d_next_o_id) per minute and TPM = Δsum(xact_commit + xact_rollback) of pg_stat_database (whole cluster) per minute, over the measured window, as HammerDB computes them. The article saw TPM/NOPM = 2.30 in all six runs.\n\n");
    md.push_str("## Updates per table: HOT, new page, same page without HOT\n\n");
    let mut trows = vec![];
    for (r, j) in runs.iter().zip(&json_runs) {
        for t in TABLES {
            let f = &j["tables"][t];
            trows.push(vec![
                r.name(),
                t.to_string(),
                num(f["fillfactor"].as_f64(), 0),
                num(f["n_tup_upd"].as_f64(), 0),
                num(f["hot_pct"].as_f64(), 1),
                num(f["newpage_pct"].as_f64(), 1),
                num(f["samepage_nonhot_pct"].as_f64(), 1),
            ]);
        }
    }
    md.push_str(&md_table(
        &[
            "run",
            "table",
            "fillfactor",
            "updates",
            "HOT %",
            "new-page %",
            "same-page non-HOT %",
        ],
        &trows,
    ));
    md.push_str("\nShares of `n_tup_upd` over the measured window (deltas between its first and last sample).\n");
    let json = json!({ "study": "tprocc", "runs": json_runs });
    Ok((md, json, vec![]))
}
