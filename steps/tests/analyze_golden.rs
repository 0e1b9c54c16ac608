//! Golden test for `analyze`: a checked-in snapshot set of study 003 at the `ci` size (four arms,
//! captured from a real run) must give exactly the checked-in summary.md, and summary.json must
//! carry the figures the issue names, with percentages 0–100 and sizes in bytes.

use std::path::PathBuf;

use steps::analyze;
use steps::rundir::find_arm_dirs;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

#[test]
fn spv_summary_matches_golden() {
    let dirs = find_arm_dirs(&data().join("spv-ci")).unwrap();
    assert_eq!(dirs.len(), 4);
    let a = analyze::analyze_dirs(&dirs, false).unwrap();
    let want = std::fs::read_to_string(data().join("spv-ci.summary.md")).unwrap();
    assert_eq!(a.markdown, want);
}

#[test]
fn spv_summary_json_has_every_field() {
    let dirs = find_arm_dirs(&data().join("spv-ci")).unwrap();
    let a = analyze::analyze_dirs(&dirs, false).unwrap();
    let runs = a.json["runs"].as_array().unwrap();
    let arms: Vec<&str> = runs.iter().map(|r| r["arm"].as_str().unwrap()).collect();
    assert_eq!(arms, ["ff100", "ff75", "ff50", "ff30"]);
    for r in runs {
        for k in [
            "fillfactor",
            "status",
            "duration_s",
            "statements_per_s",
            "wal_bytes",
        ] {
            assert!(!r[k].is_null(), "{k} missing in {r}");
        }
        let t = &r["tables"]["spv"];
        for k in [
            "n_tup_upd",
            "n_tup_hot_upd",
            "n_tup_newpage_upd",
            "hot_pct",
            "newpage_pct",
            "n_live_tup",
            "n_dead_tup",
            "heap_bytes_before",
            "heap_bytes_after",
            "index_bytes_before",
            "index_bytes_after",
        ] {
            assert!(t[k].as_f64().is_some(), "{k} missing in {t}");
        }
        assert_eq!(t["n_tup_upd"].as_f64(), Some(40_000.0));
        let hot = t["hot_pct"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&hot));
        let parts = t["n_tup_hot_upd"].as_f64().unwrap() + t["n_tup_newpage_upd"].as_f64().unwrap();
        assert!(parts <= 40_000.0);
    }
    assert_eq!(runs[0]["fillfactor"]["spv"], 100);
    // The article's seven claims are all checked.
    assert_eq!(a.json["claims"].as_array().unwrap().len(), 7);
}

#[test]
fn analyze_refuses_mixed_studies() {
    let dir = std::env::temp_dir().join(format!("hotlab-mixed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let src = data().join("spv-ci/ff100");
    for name in ["a", "b"] {
        let d = dir.join(name);
        std::fs::create_dir_all(d.join("snapshots")).unwrap();
        for f in [
            "meta.json",
            "workload.json",
            "snapshots/tables.csv",
            "snapshots/database.csv",
        ] {
            std::fs::copy(src.join(f), d.join(f)).unwrap();
        }
    }
    let meta = dir.join("b/meta.json");
    let text = std::fs::read_to_string(&meta)
        .unwrap()
        .replace("\"study\": \"spv\"", "\"study\": \"other\"");
    std::fs::write(&meta, text).unwrap();
    let dirs = find_arm_dirs(&dir).unwrap();
    let err = analyze::analyze_dirs(&dirs, false)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("mix studies") && err.contains("--allow-mixed"),
        "{err}"
    );
    assert!(analyze::analyze_dirs(&dirs, true).is_ok());
}
