//! Study 003 at the `ci` size against the real embedded PostgreSQL 18: every step, then analyze.
//! Asserts the effects the article reports (more HOT and less WAL at fillfactor 50 than 100),
//! the run directory contract, cold resets, and that the server does not run as root.

use steps::io::read_json;
use steps::rundir::{create_sweep, find_arm_dirs, RunDir};
use steps::study::PlanArgs;
use steps::{analyze, testing};

#[test]
fn spv_ci_fillfactor_50_beats_100() {
    let _g = testing::serial();
    let ctx = testing::ctx("spv");
    let plan = PlanArgs {
        study: Some("spv".into()),
        size: Some("ci".into()),
        arms: vec!["ff100".into(), "ff50".into()],
        repeats: 1,
        ..Default::default()
    }
    .plan(&ctx)
    .unwrap();
    let (sweep, arms) = create_sweep(&ctx, &plan, "test", None, false, "test").unwrap();
    // Every step reads the plan init resolved, never the study file: a study edited (here,
    // broken) half-way through a sweep changes nothing in it.
    std::fs::write(ctx.data_dir.join("studies/spv.yaml"), "not: [a study\n").unwrap();
    for a in &arms {
        testing::arm_cycle(&ctx, &a.path, false).unwrap();
    }
    let dirs = find_arm_dirs(&sweep).unwrap();
    assert_eq!(dirs.len(), 2);
    // Each arm's database was dropped once its last sample was written, and meta.json says so.
    let server = steps::server::Server::ensure(&ctx).unwrap();
    for d in &dirs {
        let meta = read_json(&d.join("meta.json")).unwrap();
        let db = meta["database"].as_str().unwrap();
        assert_eq!(meta["build"]["database"], db);
        assert_eq!(meta["database_end"]["dropped"], true, "{meta}");
        assert_eq!(
            server.database_state(db).unwrap(),
            steps::server::DbState::Missing,
            "{db} is still there"
        );
    }
    let a = analyze::analyze_dirs(&dirs, false).unwrap();
    analyze::write(&sweep, &a).unwrap();

    // The effects.
    let runs = a.json["runs"].as_array().unwrap();
    let by = |arm: &str| runs.iter().find(|r| r["arm"] == arm).unwrap().clone();
    let (r100, r50) = (by("ff100"), by("ff50"));
    let hot = |r: &serde_json::Value| r["tables"]["spv"]["hot_pct"].as_f64().unwrap();
    let wal = |r: &serde_json::Value| r["wal_bytes"].as_f64().unwrap();
    assert!(
        hot(&r50) > hot(&r100),
        "HOT % at 50 ({}) not above 100 ({})",
        hot(&r50),
        hot(&r100)
    );
    assert!(
        wal(&r100) > wal(&r50),
        "WAL at 100 ({}) not above 50 ({})",
        wal(&r100),
        wal(&r50)
    );
    // Every row update is counted: 200 statements x 200 rows.
    for r in [&r100, &r50] {
        assert_eq!(r["tables"]["spv"]["n_tup_upd"].as_f64(), Some(40_000.0));
        assert_eq!(r["status"], "complete");
        assert!(
            r["tables"]["spv"]["heap_bytes_after"].as_f64()
                >= r["tables"]["spv"]["heap_bytes_before"].as_f64()
        );
    }
    // Table before: fillfactor 50 packs half as many rows per page.
    let before = |r: &serde_json::Value| r["tables"]["spv"]["heap_bytes_before"].as_f64().unwrap();
    assert!(before(&r50) > 1.5 * before(&r100));

    // The run directory contract (docs/run-directory.md).
    for f in [
        "sweep.json",
        "summary.md",
        "summary.json",
        "report.html",
        "charts/hot_pct.svg",
    ] {
        assert!(
            sweep.join(f).exists(),
            "{f} missing from the sweep directory"
        );
    }
    for d in &dirs {
        for f in [
            "meta.json",
            "reset.jsonl",
            "ddl.sql",
            "fillfactor.json",
            "snapshots/tables.csv",
            "snapshots/database.csv",
            "snapshots/buffers.csv",
            "workload.csv",
            "workload.json",
            "vacuum.csv",
            "check.json",
        ] {
            assert!(d.join(f).exists(), "{f} missing from {}", d.display());
        }
        let meta = read_json(&d.join("meta.json")).unwrap();
        assert_eq!(meta["status"], "complete");
        assert!(meta["server"]["version"]
            .as_str()
            .unwrap()
            .starts_with("PostgreSQL 18"));
        assert_eq!(read_json(&d.join("check.json")).unwrap()["ok"], true);
        let ff = read_json(&d.join("fillfactor.json")).unwrap();
        let asked = &ff["relations"]["spv"];
        assert_eq!(asked["asked"], asked["read_back"]);
        assert!(
            asked["rewrite_s"].as_f64().is_some(),
            "spv not rewritten: {ff}"
        );
        // Two resets, each confirmed cold, each with its OS-cache outcome recorded.
        let resets: Vec<serde_json::Value> = std::fs::read_to_string(d.join("reset.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(resets.len(), 2);
        for r in &resets {
            assert_eq!(r["cold"], true, "{r}");
            let actions: Vec<&str> = r["actions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["action"].as_str().unwrap())
                .collect();
            assert_eq!(
                actions,
                [
                    "checkpoint",
                    "stop",
                    "sync",
                    "os_cache",
                    "fstrim",
                    "start",
                    "confirm"
                ]
            );
        }
        // Samples: pre, measured (at least first and last), post.
        let db = std::fs::read_to_string(d.join("snapshots/database.csv")).unwrap();
        for phase in [",pre,", ",measured,", ",post,"] {
            assert!(db.contains(phase), "no {phase} sample");
        }
    }
    let md = std::fs::read_to_string(sweep.join("summary.md")).unwrap();
    assert!(md.contains("| ff100 | 100 | complete |"), "{md}");
    let html = std::fs::read_to_string(sweep.join("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("PostgreSQL 18"));
}

#[test]
fn server_listens_on_loopback_and_not_as_root() {
    let _g = testing::serial();
    let ctx = testing::ctx("owner");
    let s = steps::server::Server::ensure(&ctx).unwrap();
    assert_eq!(s.conn.first_host(), "127.0.0.1");
    let e = s.embedded.as_ref().unwrap();
    let uid = e.process_owner_uid().expect("postmaster pid");
    if steps::ctx::is_root() {
        assert_ne!(uid, 0, "the server runs as root");
    }
    let mut c = s.connect("postgres").unwrap();
    let listen: String = c.query_one("SHOW listen_addresses", &[]).unwrap().get(0);
    assert_eq!(listen, "127.0.0.1");
    // TCP needs the password: the same connection without it is refused.
    let mut cfg = s.conn.config("postgres");
    cfg.password("wrong");
    assert!(
        cfg.connect(postgres::NoTls).is_err(),
        "TCP accepted a wrong password"
    );
    let hba: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_hba_file_rules WHERE type LIKE 'host%' AND auth_method = 'trust'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(hba, 0, "trust authentication over TCP");
    let pw = std::fs::metadata(ctx.cluster_dir.join("password")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(pw.permissions().mode() & 0o777, 0o600);
    // Extensions the snapshots rely on are preloaded or installable.
    let pss: String = c
        .query_one("SHOW shared_preload_libraries", &[])
        .unwrap()
        .get(0);
    assert!(pss.contains("pg_stat_statements"));
}

/// A hash-partitioned table, sampled by the real snapshot step before and after 4,000 updates:
/// analyze rolls the partitions up into their parent (counters and sizes summed, per sample too)
/// and does not add the indexes (which carry their table as parent) into the table.
#[test]
fn analyze_rolls_partitions_up_into_their_parent() {
    let _g = testing::serial();
    let ctx = testing::ctx("partitions");
    let server = steps::server::Server::ensure(&ctx).unwrap();
    let db = "hotlab_test_partitions";
    server.drop_own_database(db).unwrap();
    server.create_own_database(db, None).unwrap();
    let mut c = server.connect(db).unwrap();
    c.batch_execute(
        "CREATE EXTENSION IF NOT EXISTS pg_buffercache;
         CREATE TABLE p (id int PRIMARY KEY, v int) PARTITION BY HASH (id);
         CREATE TABLE p0 PARTITION OF p FOR VALUES WITH (MODULUS 4, REMAINDER 0) WITH (fillfactor = 50);
         CREATE TABLE p1 PARTITION OF p FOR VALUES WITH (MODULUS 4, REMAINDER 1) WITH (fillfactor = 50);
         CREATE TABLE p2 PARTITION OF p FOR VALUES WITH (MODULUS 4, REMAINDER 2) WITH (fillfactor = 50);
         CREATE TABLE p3 PARTITION OF p FOR VALUES WITH (MODULUS 4, REMAINDER 3) WITH (fillfactor = 50);
         INSERT INTO p SELECT g, 0 FROM generate_series(1, 4000) g;
         CREATE TABLE \"odd,\"\"name\" (id int PRIMARY KEY);
         INSERT INTO \"odd,\"\"name\" SELECT g FROM generate_series(1, 123) g;
         ANALYZE \"odd,\"\"name\";
         CREATE TABLE q (id int PRIMARY KEY, pad text);
         INSERT INTO q SELECT g, repeat('x', 200) FROM generate_series(1, 4000) g;
         ANALYZE q;",
    )
    .unwrap();
    let dir = ctx.data_dir.join("runs/partitions/parts");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("meta.json"),
        r#"{"run": "parts", "status": "complete", "study": "spv", "workload": "spv", "arm": {"name": "parts", "fillfactor": {}}}"#,
    )
    .unwrap();
    let rd = RunDir::open(&dir).unwrap();
    let mut sampler = steps::snapshot::Sampler::new(&server, db, &rd).unwrap();
    sampler.take(steps::snapshot::Phase::Measured).unwrap();
    c.batch_execute("UPDATE p SET v = v + 1").unwrap();
    // The statistics of this backend reach the shared counters at the end of its transaction;
    // give the cumulative statistics system its flush.
    c.batch_execute("SELECT pg_stat_force_next_flush()")
        .unwrap();
    drop(c);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    sampler.take(steps::snapshot::Phase::Measured).unwrap();
    drop(sampler);
    let r = analyze::load::ArmRun::load(&dir).unwrap();
    let upd = r.table("p", "n_tup_upd").delta.unwrap();
    assert_eq!(upd, 4000.0);
    // A table name with a comma and a quote survives the snapshot file and analyze's reading,
    // named as SQL (and a study) writes it: quoted, the quote doubled.
    assert_eq!(r.table("\"odd,\"\"name\"", "n_live_tup").last, Some(123.0));
    let parts: f64 = ["p0", "p1", "p2", "p3"]
        .iter()
        .map(|t| r.table(t, "n_tup_upd").delta.unwrap())
        .sum();
    assert_eq!(parts, 4000.0);
    let heap: f64 = ["p0", "p1", "p2", "p3"]
        .iter()
        .map(|t| r.table(t, "heap_bytes").last.unwrap())
        .sum();
    assert_eq!(r.table("p", "heap_bytes").last, Some(heap));
    assert!(heap > 0.0);
    let index: f64 = ["p0", "p1", "p2", "p3"]
        .iter()
        .map(|t| r.table(t, "index_bytes").last.unwrap())
        .sum();
    assert_eq!(r.table("p", "index_bytes").last, Some(index));
    // An ordinary table keeps its own figures: its index (tagged with it as parent) is not added
    // in.
    let mut c = server.connect(db).unwrap();
    let q_pages: i32 = c
        .query_one("SELECT relpages FROM pg_class WHERE relname = 'q'", &[])
        .unwrap()
        .get(0);
    let idx_pages: i32 = c
        .query_one(
            "SELECT relpages FROM pg_class WHERE relname = 'q_pkey'",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(q_pages > 0 && idx_pages > 0);
    assert_eq!(r.table("q", "relpages").last, Some(q_pages as f64));
    drop(c);
    let per_sample = r.table_series("p", "n_tup_upd");
    assert_eq!(per_sample.len(), 2);
    assert_eq!(per_sample[1].1 - per_sample[0].1, 4000.0);
    // Fillfactor is not summed: the parent shows its partitions' 50.
    assert_eq!(r.table("p", "fillfactor").last, Some(50.0));
    server.drop_own_database(db).unwrap();
}

/// A sweep of one arm of `study` at `ci`, labelled `label`: its directory and the arm.
fn one_arm(ctx: &steps::Ctx, study: &str, arm: &str, label: &str) -> (std::path::PathBuf, RunDir) {
    let plan = PlanArgs {
        study: Some(study.into()),
        size: Some("ci".into()),
        arms: vec![arm.into()],
        repeats: 1,
        ..Default::default()
    }
    .plan(ctx)
    .unwrap();
    let (dir, arms) = create_sweep(ctx, &plan, label, None, false, "test").unwrap();
    (dir, arms.into_iter().next().unwrap())
}

/// `build` of an arm, the server's settings left alone; the arm's database.
fn build(ctx: &steps::Ctx, rd: &RunDir) -> String {
    steps::build::run(
        ctx,
        &steps::build::Args {
            run: rd.path.clone(),
            no_template: false,
            apply_server_settings: false,
        },
    )
    .unwrap();
    rd.database().unwrap()
}

/// Two runs of the same arm each get their own database: building the second leaves the first's
/// (with the first's fillfactor) alone; `server gc` drops only databases whose run directory is
/// gone.
#[test]
fn two_runs_of_one_arm_never_share_a_database() {
    let _g = testing::serial();
    let ctx = testing::ctx("two-runs");
    let (_, a) = one_arm(&ctx, "spv", "ff50", "a");
    let (b_dir, b) = one_arm(&ctx, "spv", "ff50", "b");
    let (a, b) = (&a, &b);
    let db_a = build(&ctx, a);
    steps::apply_fillfactor::run(
        &ctx,
        &steps::apply_fillfactor::Args {
            run: a.path.clone(),
        },
    )
    .unwrap();
    let db_b = build(&ctx, b);
    assert_ne!(db_a, db_b);
    assert!(db_a.len() <= 63 && db_b.len() <= 63);
    let server = steps::server::Server::ensure(&ctx).unwrap();
    let ff: Option<String> = server
        .connect(&db_a)
        .unwrap()
        .query_one(
            "SELECT array_to_string(reloptions, ',') FROM pg_class WHERE relname = 'spv'",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(
        ff.as_deref().unwrap_or("").contains("fillfactor=50"),
        "run A's table was replaced: {ff:?}"
    );
    // gc: run B's directory is deleted, so its database goes; run A's stays.
    std::fs::remove_dir_all(&b_dir).unwrap();
    let xtask = testing::xtask_binary().unwrap();
    let out = std::process::Command::new(&xtask)
        .args(["server", "gc"])
        .envs(testing::env_of(&ctx))
        .output()
        .unwrap();
    testing::succeeds(&out);
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains(&format!("dropped    {db_b}")), "{listed}");
    assert!(listed.contains(&format!("keep       {db_a}")), "{listed}");
    use steps::server::DbState;
    assert_eq!(server.database_state(&db_b).unwrap(), DbState::Missing);
    assert_eq!(server.database_state(&db_a).unwrap(), DbState::Ours);
    server.drop_own_database(&db_a).unwrap();
}

/// An arm runs at PostgreSQL's defaults plus its study's settings, nothing else: a study that
/// names only `shared_buffers`, built after a study that set study 000's WAL and memory
/// settings, gets the default `max_wal_size`, `checkpoint_timeout` and `work_mem` (a user's
/// study once ran with 15 checkpoints a minute, left by the study before it).
#[test]
fn a_study_runs_at_the_defaults_plus_its_own_settings() {
    let _g = testing::serial();
    let ctx = testing::ctx("settings-reset");
    let spv = std::fs::read_to_string(ctx.data_dir.join("studies/spv.yaml")).unwrap();
    let study = |name: &str, settings: &str| {
        std::fs::write(
            ctx.data_dir.join(format!("studies/{name}.yaml")),
            spv.replacen("name: spv", &format!("name: {name}"), 1)
                .replacen(
                    "default_size: article\n",
                    &format!("default_size: article\nserver:\n{settings}"),
                    1,
                ),
        )
        .unwrap();
        let (_, rd) = one_arm(&ctx, name, "ff100", name);
        build(&ctx, &rd);
        rd
    };
    let server = steps::server::Server::ensure(&ctx).unwrap();
    let show = |name: &str| -> String {
        let mut c = server.connect("postgres").unwrap();
        c.query_one(&format!("SHOW {name}"), &[]).unwrap().get(0)
    };
    let defaults: Vec<(String, String)> = ["max_wal_size", "checkpoint_timeout", "work_mem"]
        .iter()
        .map(|n| {
            let mut c = server.connect("postgres").unwrap();
            let d: String = c
                .query_one(
                    "SELECT boot_val || coalesce(unit, '') FROM pg_settings WHERE name = $1",
                    &[n],
                )
                .unwrap()
                .get(0);
            (n.to_string(), d)
        })
        .collect();
    study(
        "set-wal",
        "  max_wal_size: 128MB\n  checkpoint_timeout: 15min\n  work_mem: 8MB\n",
    );
    assert_eq!(show("max_wal_size"), "128MB");
    assert_eq!(show("checkpoint_timeout"), "15min");
    let rd = study("only-sb", "  shared_buffers: 128MB\n");
    assert_eq!(show("max_wal_size"), "1GB");
    assert_eq!(show("checkpoint_timeout"), "5min");
    assert_eq!(show("work_mem"), "4MB");
    let meta = read_json(&rd.path.join("meta.json")).unwrap();
    // meta.json records the server's non-default sources; initdb's postgresql.conf names
    // max_wal_size at its default, so a recorded value must be the default.
    for (name, boot) in &defaults {
        let recorded = meta["server"]["settings"][name].as_str().unwrap_or(boot);
        assert_eq!(recorded, boot, "{name}: {}", meta["server"]["settings"]);
    }
    server.drop_own_database(&rd.database().unwrap()).ok();
}

/// What a user sees at the end of `just study spv ci`: the short answer, at most 15 lines after
/// the run, with the claims' verdicts and the report's path; the whole summary is in the file.
#[test]
fn a_study_ends_with_the_short_answer() {
    let _g = testing::serial();
    let ctx = testing::ctx("answer");
    let out = std::process::Command::new("just")
        .args([
            "study",
            "spv",
            "ci",
            "--arms",
            "ff100,ff50",
            "--label",
            "answer",
        ])
        .current_dir(steps::ctx::project_root())
        .envs(testing::env_of(&ctx))
        .env(steps::env::XTASK, testing::xtask_binary().unwrap())
        .env_remove("VERBOSE")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.contains("(study 003) — size ci: 2 run(s) of 2 arm(s), 2 complete"))
        .unwrap_or_else(|| panic!("no answer in:\n{stdout}"));
    let answer = &lines[start..];
    assert!(answer.len() <= 15, "{} lines:\n{stdout}", answer.len());
    let text = answer.join("\n");
    assert!(
        text.contains("- lower fillfactor finishes the updates faster: ")
            && (text.contains("agrees") || text.contains("disagrees"))
            && text.contains("report.html")
            && text.contains("one run has no spread")
            && !text.contains("**")
            && !text.contains('|'),
        "{text}"
    );
    // The whole summary is in summary.md, beside the report.
    let report = answer
        .iter()
        .find_map(|l| l.strip_prefix("Report: "))
        .unwrap();
    let dir = std::path::Path::new(report).parent().unwrap();
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.lines().count() > answer.len(), "{summary}");
    std::fs::remove_dir_all(&ctx.data_dir).ok();
}
