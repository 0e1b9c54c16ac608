//! TPROC-C at one warehouse against the real embedded PostgreSQL 18: exact row counts and index
//! set after the build, a 15-second run with 2 VUs (NOPM > 0, TPM/NOPM between 2.0 and 2.6),
//! the consistency conditions of both profiles, and HOT behaviour at fillfactor 100.

use std::path::{Path, PathBuf};

use steps::io::read_json;
use steps::rundir::create_sweep;
use steps::study::PlanArgs;
use steps::{analyze, check, server::Server, testing};

fn arm(ctx: &steps::Ctx, size: &str) -> PathBuf {
    let plan = PlanArgs {
        study: Some("hexacluster-tprocc".into()),
        size: Some(size.into()),
        arms: vec!["default".into()],
        repeats: 1,
        ..Default::default()
    }
    .plan(ctx)
    .unwrap();
    let (_, arms) = create_sweep(ctx, &plan, size, None, false, "test").unwrap();
    arms[0].path.clone()
}

/// The arm's database, kept for the test's queries and dropped when the test ends (a kept
/// database whose run directory is a temporary one would be left in the test cluster for good).
struct KeptDb(steps::Ctx, String);

impl Drop for KeptDb {
    fn drop(&mut self) {
        if let Ok(s) = Server::ensure(&self.0) {
            let _ = s.drop_own_database(&self.1);
        }
    }
}

fn build_and_run(ctx: &steps::Ctx, dir: &Path) -> KeptDb {
    testing::arm_cycle(ctx, dir, true).unwrap();
    let db = read_json(&dir.join("meta.json")).unwrap()["build"]["database"]
        .as_str()
        .unwrap()
        .to_string();
    let kept = KeptDb(ctx.clone(), db);
    check::run(
        ctx,
        &check::Args {
            run: dir.to_path_buf(),
        },
    )
    .unwrap();
    kept
}

#[test]
fn hammerdb_profile_one_warehouse() {
    let _g = testing::serial();
    let ctx = testing::ctx("tprocc");
    let dir = arm(&ctx, "ci");
    let _kept = build_and_run(&ctx, &dir);
    let meta = read_json(&dir.join("meta.json")).unwrap();
    let db = meta["build"]["database"].as_str().unwrap().to_string();
    let server = Server::ensure(&ctx).unwrap();

    // The size's 1GB of RAM: where hotlab may (root, a cgroup memory controller), the run was
    // confined to it, page cache included, and the cgroup is gone afterwards; elsewhere meta.json
    // says why not.
    let ml = &meta["memory_limit"];
    let v1 = Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists();
    if steps::ctx::is_root() && v1 {
        assert_eq!(ml["applied"], true, "{ml}");
        let peak = ml["usage_bytes_peak"].as_u64().unwrap();
        assert!(peak > 0 && peak <= 1 << 30, "{ml}");
        assert!(!Path::new(ml["cgroup"].as_str().unwrap()).exists(), "{ml}");
    } else if ml["applied"] == false {
        assert!(!ml["why"].as_str().unwrap().is_empty(), "{ml}");
    }
    assert_eq!(ml["bytes"], 1u64 << 30, "{ml}");
    let mut c = server.connect(&db).unwrap();

    // The build: HammerDB's row counts (checked on the template copy, before the run added rows).
    let rows = &meta["build"]["rows"];
    for (t, n) in [
        ("item", 100_000),
        ("warehouse", 1),
        ("district", 10),
        ("customer", 30_000),
        ("history", 30_000),
        ("orders", 30_000),
        ("new_order", 9_000),
        ("stock", 100_000),
    ] {
        assert_eq!(rows[t].as_i64(), Some(n), "{t}");
    }
    let ol = rows["order_line"].as_i64().unwrap();
    assert!((250_000..=350_000).contains(&ol), "order_line {ol}");
    // The exact index set: nine primary keys but none on history, plus the two secondary ones.
    let idx: Vec<String> = c
        .query(
            "SELECT indexname::text FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        idx,
        [
            "customer_i1",
            "customer_i2",
            "district_i1",
            "item_i1",
            "new_order_i1",
            "order_line_i1",
            "orders_i1",
            "orders_i2",
            "stock_i1",
            "warehouse_i1",
        ]
    );
    let fks: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_constraint WHERE contype = 'f'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(fks, 0);

    // The run.
    let w = read_json(&dir.join("workload.json")).unwrap();
    let nopm = w["nopm"].as_f64().unwrap();
    let ratio = w["tpm_per_nopm"].as_f64().unwrap();
    assert!(nopm > 0.0, "{w}");
    assert!((2.0..=2.6).contains(&ratio), "TPM/NOPM {ratio}: {w}");
    let no = &w["transactions"]["new_order"];
    assert!(no["count"].as_u64().unwrap() > 0);
    assert_eq!(w["transactions"]["payment"]["errors"], 0);
    assert_eq!(read_json(&dir.join("check.json")).unwrap()["ok"], true);

    // samples.csv: a row per transaction type about every second, whatever the snapshot
    // interval, and its measured rows add up to the run's committed transactions per type.
    let samples =
        steps::io::csv_maps(&std::fs::read_to_string(dir.join("samples.csv")).unwrap()).unwrap();
    let measured: Vec<_> = samples
        .iter()
        .filter(|m| m["phase"] == "measured")
        .collect();
    let secs = w["duration_s"].as_f64().unwrap();
    let new_orders = measured.iter().filter(|m| m["txn"] == "new_order").count() as f64;
    assert!(new_orders >= secs - 1.0, "{new_orders} samples in {secs} s");
    for (t, v) in w["transactions"].as_object().unwrap() {
        let sum: u64 = measured
            .iter()
            .filter(|m| m["txn"] == *t)
            .map(|m| m["count"].parse::<u64>().unwrap())
            .sum();
        assert_eq!(sum, v["count"].as_u64().unwrap(), "{t}");
        let rollbacks: u64 = measured
            .iter()
            .filter(|m| m["txn"] == *t)
            .map(|m| m["rollbacks"].parse::<u64>().unwrap())
            .sum();
        assert_eq!(rollbacks, v["rollbacks"].as_u64().unwrap(), "{t}");
    }

    // HOT at fillfactor 100: order_line moves to new pages, warehouse and district stay HOT.
    let a = analyze::analyze_dirs(std::slice::from_ref(&dir), false).unwrap();
    let t = &a.json["runs"][0]["tables"];
    assert!(
        t["order_line"]["n_tup_newpage_upd"].as_f64().unwrap() > 0.0,
        "{t}"
    );
    for small in ["warehouse", "district"] {
        let hot = t[small]["hot_pct"].as_f64().unwrap();
        assert!(hot > 95.0, "{small} HOT {hot}");
    }
    assert!(a.markdown.contains("TPM/NOPM"));
}

#[test]
fn spec_profile_keeps_conditions_1_to_10_and_12() {
    let _g = testing::serial();
    let ctx = testing::ctx("tprocc-spec");
    let dir = arm(&ctx, "ci-spec");
    let _kept = build_and_run(&ctx, &dir);
    let check = read_json(&dir.join("check.json")).unwrap();
    assert_eq!(check["ok"], true, "{check}");
    let numbers: Vec<i64> = check["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["condition"].as_i64().unwrap())
        .collect();
    assert_eq!(numbers, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12]);
    let w = read_json(&dir.join("workload.json")).unwrap();
    assert_eq!(w["profile"], "spec");
    assert!(w["nopm"].as_f64().unwrap() > 0.0);
    // A spec run updates the columns HammerDB leaves alone.
    let db = read_json(&dir.join("meta.json")).unwrap()["build"]["database"]
        .as_str()
        .unwrap()
        .to_string();
    let mut c = Server::ensure(&ctx).unwrap().connect(&db).unwrap();
    let moved: i64 = c
        .query_one("SELECT count(*) FROM stock WHERE s_order_cnt > 0", &[])
        .unwrap()
        .get(0);
    assert!(moved > 0);
}

#[test]
fn sweep_of_order_line_recommends_a_fillfactor() {
    let _g = testing::serial();
    let ctx = testing::ctx("sweep");
    let plan = PlanArgs {
        study: Some("hexacluster-tprocc".into()),
        size: Some("ci".into()),
        sweep: Some("order_line".into()),
        values: vec![100, 70],
        repeats: 1,
        ..Default::default()
    }
    .plan(&ctx)
    .unwrap();
    let (sweep, arms) = create_sweep(&ctx, &plan, "sweep", None, false, "test").unwrap();
    assert_eq!(arms.len(), 2);
    let _kept: Vec<KeptDb> = arms.iter().map(|a| build_and_run(&ctx, &a.path)).collect();
    let dirs = steps::rundir::find_arm_dirs(&sweep).unwrap();
    let a = analyze::analyze_dirs(&dirs, false).unwrap();
    let ladder = &a.json["ladder"];
    assert_eq!(ladder["table"], "order_line");
    let rows = ladder["rows"].as_array().unwrap();
    let ff: Vec<u64> = rows
        .iter()
        .map(|r| r["fillfactor"].as_u64().unwrap())
        .collect();
    assert_eq!(ff, [100, 70]);
    let np = |i: usize| rows[i]["newpage_pct"].as_f64().unwrap();
    assert!(
        np(1) < np(0),
        "new-page % at 70 ({}) not below 100 ({})",
        np(1),
        np(0)
    );
    assert!(rows[0]["vacuum_s"].as_f64().is_some(), "{ladder}");
    let text = ladder["recommendation"]["text"].as_str().unwrap();
    assert!(text.contains("order_line"), "{text}");
    assert!(
        a.markdown.starts_with("## Sweep of order_line"),
        "{}",
        a.markdown
    );
}

/// The server dies in the middle of a TPROC-C window (SIGQUIT to the postmaster: what
/// `pg_ctl stop -m immediate` sends). The arm ends `failed` with a one-line reason, every sample
/// taken before the crash is kept, and the next arm of the sweep runs (the server recovers).
#[test]
fn a_server_crash_mid_window_fails_the_arm_and_the_next_arm_runs() {
    let _g = testing::serial();
    let ctx = testing::ctx("fault");
    let plan = PlanArgs {
        study: Some("hexacluster-tprocc".into()),
        size: Some("ci".into()),
        arms: vec!["default".into(), "tuned".into()],
        repeats: 1,
        ..Default::default()
    }
    .plan(&ctx)
    .unwrap();
    let (_, arms) = create_sweep(&ctx, &plan, "fault", None, false, "test").unwrap();
    let (first, second) = (&arms[0].path, &arms[1].path);
    let mut child = std::process::Command::new("just")
        .arg("arm")
        .arg(first)
        .current_dir(steps::ctx::project_root())
        .envs(testing::env_of(&ctx))
        .env(steps::env::XTASK, testing::xtask_binary().unwrap())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait for two measured samples of the run, then crash the server.
    let measured = |dir: &Path| -> usize {
        std::fs::read_to_string(dir.join("snapshots/database.csv"))
            .unwrap_or_default()
            .lines()
            .filter(|l| l.contains(",measured,lsn,insert_lsn_bytes,"))
            .count()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(240);
    while measured(first) < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the run never reached its window"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the arm ended before its window"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let before = measured(first);
    let pid = testing::postmaster_pid(&testing::test_cluster());
    // SAFETY: signalling the test cluster's postmaster, which this test suite started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGQUIT) }, 0);
    let status = child.wait().unwrap();
    assert!(!status.success(), "the arm did not fail");
    let meta = read_json(&first.join("meta.json")).unwrap();
    assert_eq!(meta["status"], "failed", "{meta}");
    let err = meta["steps"]["run"]["error"].as_str().unwrap_or_default();
    assert!(!err.is_empty() && !err.contains('\n'), "{meta}");
    assert!(measured(first) >= before, "samples were lost");
    // The next arm runs on the recovered server.
    testing::arm_cycle(&ctx, second, false).unwrap();
    let meta = read_json(&second.join("meta.json")).unwrap();
    assert_eq!(meta["status"], "complete", "{meta}");
}
