//! Study 001 (small_table upsert) and the pgbench-script workload against the real embedded
//! PostgreSQL 18: every arm at `ci` through the justfile's cold cycle, partitions added up into
//! their parent (tables, indexes and buffers), a fillfactor on a partitioned parent reaching every
//! leaf, a user-style study through a sweep, and bad input to its steps.

use std::path::Path;

use steps::analyze::load::ArmRun;
use steps::io::read_json;
use steps::rundir::{create_sweep, find_arm_dirs, RunDir};
use steps::study::{Plan, PlanArgs};
use steps::{analyze, testing};

fn build(ctx: &steps::ctx::Ctx, rd: &RunDir) -> anyhow::Result<()> {
    steps::build::run(
        ctx,
        &steps::build::Args {
            run: rd.path.clone(),
            no_template: false,
            apply_server_settings: false,
        },
    )
}

/// Appends `text` to a study file of the test's private data directory.
fn append(ctx: &steps::ctx::Ctx, study: &str, text: &str) {
    let p = ctx.data_dir.join(format!("studies/{study}.yaml"));
    let mut s = std::fs::read_to_string(&p).unwrap();
    s.push_str(text);
    std::fs::write(&p, s).unwrap();
}

/// Study `study` at `ci` with the named arms, once.
fn plan_ci(ctx: &steps::ctx::Ctx, study: &str, arms: &[&str]) -> anyhow::Result<Plan> {
    PlanArgs {
        study: Some(study.into()),
        size: Some("ci".into()),
        arms: arms.iter().map(|a| a.to_string()).collect(),
        repeats: 1,
        ..Default::default()
    }
    .plan(ctx)
}

fn leaves_sum(r: &ArmRun, prefix: &str, n: u32, metric: &str, buffers: bool) -> f64 {
    (0..n)
        .map(|i| {
            let o = format!("{prefix}{i}");
            let w = if buffers {
                r.buffers
                    .window
                    .get(&(o, metric.to_string()))
                    .cloned()
                    .unwrap_or_default()
            } else {
                r.table(&o, metric)
            };
            w.last.unwrap_or(0.0)
        })
        .sum()
}

#[test]
fn small_table_ci_every_arm_through_the_cold_cycle() {
    let _g = testing::serial();
    let ctx = testing::ctx("small-table");
    // A sixth arm: the partitioned table at fillfactor 50, heap and primary key (PostgreSQL
    // refuses a fillfactor on the partitioned parent: it must reach every leaf).
    append(
        &ctx,
        "small-table",
        "  - name: hash50\n    partition: {table: small_table, key: user_id, count: 4}\n    fillfactor: {small_table: 50}\n    index_fillfactor: {small_table_pkey: 50}\n",
    );
    let plan = plan_ci(
        &ctx,
        "small-table",
        &["ori", "by_hash", "onlyff", "heap50", "index50", "hash50"],
    )
    .unwrap();
    let (sweep, arms) = create_sweep(&ctx, &plan, "test", None, false, "test").unwrap();
    assert_eq!(arms.len(), 6);
    for a in &arms {
        testing::arm_cycle(&ctx, &a.path, false).unwrap();
    }
    let dirs = find_arm_dirs(&sweep).unwrap();
    let runs: Vec<ArmRun> = dirs.iter().map(|d| ArmRun::load(d).unwrap()).collect();
    let by = |arm: &str| runs.iter().find(|r| r.arm() == arm).unwrap();
    for r in &runs {
        assert_eq!(r.status(), "complete", "{}", r.name());
        let check = read_json(&r.dir.join("check.json")).unwrap();
        assert_eq!(check["ok"], true, "{check}");
        assert_eq!(check["conditions"][0]["got"], 6000, "{check}");
        let w = &r.workload;
        assert_eq!(w["transactions_all"], 6000, "{w}");
        let measured = w["transactions"].as_u64().unwrap();
        assert!(
            measured > 0 && measured < 6000,
            "the ramp-up is left out: {w}"
        );
        for k in ["latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "tps"] {
            assert!(w[k].as_f64().is_some_and(|x| x > 0.0), "{k}: {w}");
        }
        assert!(w["latency_p50_ms"].as_f64() <= w["latency_p99_ms"].as_f64());
        // The window's histogram counts exactly its transactions (analyze pools these).
        let in_hist: u64 = w["hist_us"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b[1].as_u64().unwrap())
            .sum();
        assert_eq!(in_hist, measured, "{w}");
        // The upsert updates an existing row every time: updates, never inserts.
        let upd = r.table("small_table", "n_tup_upd").delta.unwrap();
        assert!(upd as u64 >= measured, "{upd} updates for {measured} txns");
        assert_eq!(r.table("small_table", "n_tup_ins").delta, Some(0.0));
        let csv = std::fs::read_to_string(r.dir.join("workload.csv")).unwrap();
        assert!(
            csv.starts_with("t_s,phase,transactions,tps,failures,latency_avg_ms,latency_p50_ms")
        );
        assert!(
            csv.contains(",rampup,") && csv.contains(",measured,"),
            "{csv}"
        );
    }

    // Partitions add up into their parent: heap, counters, indexes and buffers.
    let h = by("by_hash");
    let parts = leaves_sum(h, "small_table_p", 8, "heap_bytes", false);
    assert!(parts > 0.0);
    assert_eq!(h.table("small_table", "heap_bytes").last, Some(parts));
    assert_eq!(
        h.table("small_table", "n_tup_upd").last,
        Some(leaves_sum(h, "small_table_p", 8, "n_tup_upd", false))
    );
    let leaf_pk: f64 = (0..8)
        .map(|i| {
            h.table(&format!("small_table_p{i}_pkey"), "idx_blks_hit")
                .last
                .unwrap_or(0.0)
        })
        .sum();
    assert!(leaf_pk > 0.0);
    assert_eq!(
        h.table("small_table_pkey", "idx_blks_hit").last,
        Some(leaf_pk)
    );
    let buf_parts = leaves_sum(h, "small_table_p", 8, "buffers", true);
    assert!(buf_parts > 0.0);
    assert_eq!(
        h.buffers
            .window
            .get(&("small_table".to_string(), "buffers".to_string()))
            .and_then(|w| w.last),
        Some(buf_parts)
    );

    // A fillfactor on the partitioned parent reached every leaf, table and index.
    let ff = read_json(&by("hash50").dir.join("fillfactor.json")).unwrap();
    for i in 0..4 {
        let leaf = &ff["relations"][format!("small_table_p{i}")];
        assert_eq!(leaf["read_back"], 50, "{ff}");
        assert_eq!(leaf["partition_of"], "small_table", "{ff}");
        assert_eq!(
            ff["relations"][format!("small_table_p{i}_pkey")]["read_back"],
            50,
            "{ff}"
        );
    }
    assert_eq!(
        by("hash50").table("small_table_p0", "fillfactor").last,
        Some(50.0)
    );

    // Fillfactor 50 packs half the rows per page; the index-only arm leaves the heap alone.
    let heap = |a: &str| by(a).table("small_table", "heap_bytes").first.unwrap();
    assert!(
        heap("onlyff") > 1.8 * heap("ori"),
        "{} {}",
        heap("onlyff"),
        heap("ori")
    );
    assert!(heap("heap50") > 1.8 * heap("ori"));
    assert!(heap("index50") < 1.2 * heap("ori"));
    let idx = |a: &str| by(a).table("small_table", "index_bytes").first.unwrap();
    assert!(
        idx("index50") > 1.3 * idx("ori"),
        "{} {}",
        idx("index50"),
        idx("ori")
    );

    let a = analyze::analyze_dirs(&dirs, false).unwrap();
    analyze::write(&sweep, &a).unwrap();
    assert_eq!(a.json["claims"].as_array().unwrap().len(), 5);
    assert!(a.json["onlyff_ori_buffer_ratio"].as_f64().unwrap() > 0.0);
    assert!(
        a.markdown
            .contains("| final TPS sample, onlyff | 3340 (-15.2 %) |"),
        "{}",
        a.markdown
    );
    assert!(a.markdown.contains("latency p95 ms (pooled)"));
    for c in [
        "tps.svg",
        "buffers.svg",
        "dirty_buffers.svg",
        "hot_per_interval.svg",
        "dead_tuples.svg",
        "pk_index_hits.svg",
    ] {
        assert!(sweep.join("charts").join(c).exists(), "{c}");
    }
}

/// Buffers of `rel` in the arm's `pre` sample (after the second reset-cold, before the run).
fn pre_buffers(r: &ArmRun, rel: &str) -> f64 {
    let text = std::fs::read_to_string(r.dir.join("snapshots/buffers.csv")).unwrap();
    steps::io::csv_maps(&text)
        .unwrap()
        .iter()
        .filter(|m| m["phase"] == "pre" && m["object"] == rel && m["metric"] == "buffers")
        .map(|m| m["value"].parse::<f64>().unwrap())
        .sum()
}

/// Both build routes at `ci`, and an arm's vars reaching the load: `ori` (rewrite: VACUUM FULL,
/// cold reset), `onlyff-createwith` (created at fillfactor 50 and loaded on the running server,
/// its cache kept), `ori-spread` (layout spread). After create-with the table's pages are in
/// shared buffers before the run; after rewrite they are not (pg_buffercache).
#[test]
fn build_routes_and_arm_vars_at_ci() {
    let _g = testing::serial();
    let ctx = testing::ctx("small-table-routes");
    let plan = plan_ci(
        &ctx,
        "small-table",
        &["ori", "onlyff-createwith", "ori-spread"],
    )
    .unwrap();
    let (sweep, arms) = create_sweep(&ctx, &plan, "routes", None, false, "test").unwrap();
    // A setting an earlier study left in hotlab's own server, which this one does not set, is
    // reset to PostgreSQL's default by the build (it leaked into the next run before).
    let server = steps::server::Server::ensure(&ctx).unwrap();
    let mut admin = server.connect(&server.conn.admin_db).unwrap();
    admin
        .batch_execute("ALTER SYSTEM SET checkpoint_timeout = '45s'")
        .unwrap();
    admin.batch_execute("SELECT pg_reload_conf()").unwrap();
    drop(admin);
    for a in &arms {
        testing::arm_cycle(&ctx, &a.path, false).unwrap();
    }
    let mut admin = server.connect(&server.conn.admin_db).unwrap();
    let ct: String = admin
        .query_one("SHOW checkpoint_timeout", &[])
        .unwrap()
        .get(0);
    assert_eq!(ct, "5min");
    let dirs = find_arm_dirs(&sweep).unwrap();
    let runs: Vec<ArmRun> = dirs.iter().map(|d| ArmRun::load(d).unwrap()).collect();
    let by = |arm: &str| runs.iter().find(|r| r.arm() == arm).unwrap();
    for r in &runs {
        assert_eq!(r.status(), "complete", "{}", r.name());
        assert_eq!(r.hot_rows.len(), 2, "hot_rows.csv: start and end");
    }
    let (rw, cw) = (by("ori"), by("onlyff-createwith"));
    // Rewrite: cold before the run. create-with: the load's pages are still cached.
    assert_eq!(pre_buffers(rw, "small_table"), 0.0);
    let pages = cw.table("small_table", "relpages").first.unwrap();
    let cached = pre_buffers(cw, "small_table");
    assert!(cached >= 0.9 * pages, "{cached} of {pages} pages cached");
    // What each reset did is recorded: the create-with arm's second reset was not done.
    let resets = |r: &ArmRun| r.resets.clone();
    assert_eq!(resets(rw)[1]["cold"], true);
    assert_eq!(
        resets(cw)[0]["cold"],
        true,
        "the reset before the build is done"
    );
    assert_eq!(resets(cw)[1]["kept_warm"], true, "{:?}", resets(cw));
    assert!(resets(cw)[1]["user_buffers"].as_i64().unwrap() > 0);
    let meta = |r: &ArmRun| steps::io::read_json(&r.dir.join("meta.json")).unwrap();
    let (cw_meta, rw_meta) = (meta(cw), meta(rw));
    assert_eq!(cw_meta["build"]["route"], "create-with");
    assert!(cw_meta["build"]["template"].is_null());
    assert_eq!(rw_meta["build"]["route"], "rewrite");
    let changed = rw_meta["build"]["settings_changed"].to_string();
    assert!(
        changed.contains("checkpoint_timeout (reset to its default)"),
        "{changed}"
    );
    let ff = &cw.fillfactor.as_ref().unwrap().relations["small_table"];
    assert_eq!(ff.read_back, Some(50), "{ff:?}");
    assert!(ff.rewrite.as_deref().unwrap().starts_with("skipped"));
    let rewritten = &rw.fillfactor.as_ref().unwrap().relations["small_table"];
    assert!(rewritten.rewrite_s.is_some(), "{rewritten:?}");
    // Created at 50: twice the heap of the default, as the rewrite gives.
    let heap = |r: &ArmRun| r.table("small_table", "heap_bytes").first.unwrap();
    assert!(heap(cw) > 1.8 * heap(rw), "{} {}", heap(cw), heap(rw));
    let ddl = std::fs::read_to_string(cw.dir.join("ddl.sql")).unwrap();
    assert!(
        ddl.contains("ALTER TABLE small_table SET (fillfactor = 50)"),
        "{ddl}"
    );
    // The arm's layout reached the load: recent puts the hit rows in the newest 4 of 20 groups
    // (a fifth of the pages), spread puts one on nearly every page.
    let spread = by("ori-spread");
    let share = |r: &ArmRun| r.hot_pages_pct("start").unwrap();
    assert!(share(rw) < 30.0, "{}", share(rw));
    assert!(share(spread) > 80.0, "{}", share(spread));
    match spread.plan.size_spec.as_ref().unwrap() {
        steps::study::Size::Pgbench(p) => assert_eq!(p.var("layout").as_deref(), Some("spread")),
        _ => unreachable!(),
    }
    let a = analyze::analyze_dirs(&dirs, false).unwrap();
    assert!(
        a.markdown
            .contains("### What explains the article's figures"),
        "{}",
        a.markdown
    );
    assert!(a.markdown.contains("| H2 |"), "{}", a.markdown);
    assert!(a.markdown.contains("### Every figure the article printed"));
}

/// The concurrent mode: two arms side by side on one server through the justfile's `together`
/// recipe, the clients and transactions split between them.
#[test]
fn together_runs_two_arms_side_by_side() {
    let _g = testing::serial();
    let ctx = testing::ctx("small-table-together");
    testing::together(&ctx, "small-table", "ci", "ori,onlyff").unwrap();
    let study = ctx.data_dir.join("runs/small-table");
    let sweep = std::fs::read_dir(&study)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let dirs = find_arm_dirs(&sweep).unwrap();
    let runs: Vec<ArmRun> = dirs.iter().map(|d| ArmRun::load(d).unwrap()).collect();
    assert_eq!(runs.len(), 2);
    for r in &runs {
        assert_eq!(r.status(), "complete", "{}", r.name());
        assert!(r.arm().ends_with("-together"));
        assert_eq!(r.plan.together.len(), 2);
        // ci has 2 clients and 6,000 transactions: one client and 3,000 each.
        assert_eq!(r.workload["clients"], 1);
        assert_eq!(r.workload["transactions_all"], 3000);
    }
    // The two windows overlap: they ran at the same time.
    let span = |r: &ArmRun| {
        let s = r.workload["start_epoch_us"].as_i64().unwrap();
        (s, s + (r.workload["wall_s"].as_f64().unwrap() * 1e6) as i64)
    };
    let (a, b) = (span(&runs[0]), span(&runs[1]));
    assert!(a.0 < b.1 && b.0 < a.1, "{a:?} {b:?}");
    let md = std::fs::read_to_string(sweep.join("summary.md")).unwrap();
    assert!(md.contains("ran at the same time on one server"), "{md}");
    assert!(md.contains("| H3 |"), "{md}");
}

const MINE_YAML: &str = r#"name: mine
title: My counters table
workload: pgbench
pgbench:
  schema: schema.sql
  load: load.sql
  scripts:
    - {file: bump.pgbench, weight: 3}
    - {file: read.pgbench, weight: 1}
  protocol: prepared
default_size: ci
sizes:
  ci:
    clients: 2
    transactions: 2000
    rampup_s: 0.2
    snapshot_every_s: 0.3
    vars: {rows: 3000}
tables: [counters]
rewrite: [counters]
vacuum_timing: [counters]
arms:
  - name: base
"#;

fn write_mine(dir: &Path) {
    std::fs::write(dir.join("mine.yaml"), MINE_YAML).unwrap();
    let d = dir.join("mine");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("schema.sql"),
        "CREATE TABLE counters (id integer PRIMARY KEY, hits integer NOT NULL, label text NOT NULL);\nCREATE INDEX ON counters (label);\n",
    )
    .unwrap();
    std::fs::write(
        d.join("load.sql"),
        "INSERT INTO counters SELECT i, 0, 'row ' || i FROM generate_series(1, :rows) i;\n",
    )
    .unwrap();
    std::fs::write(
        d.join("bump.pgbench"),
        "\\set id random(1, :rows)\nUPDATE counters SET hits = hits + 1 WHERE id = :id;\n",
    )
    .unwrap();
    std::fs::write(
        d.join("read.pgbench"),
        "\\set id random(1, :rows)\nSELECT hits FROM counters WHERE id = :id;\n",
    )
    .unwrap();
}

#[test]
fn a_user_style_study_runs_through_a_sweep() {
    let _g = testing::serial();
    let ctx = testing::ctx("mine");
    write_mine(&ctx.data_dir.join("studies"));
    // `just sweep counters 100 70` without STUDY: the one study updating counters is found.
    let plan = PlanArgs {
        study: Some("auto".into()),
        size: Some("ci".into()),
        sweep: Some("counters".into()),
        values: vec![100, 70],
        repeats: 1,
        ..Default::default()
    }
    .plan(&ctx)
    .unwrap();
    assert_eq!(plan.study.name, "mine");
    let (sweep, arms) = create_sweep(&ctx, &plan, "sweep-counters", None, false, "test").unwrap();
    assert_eq!(arms.len(), 2);
    for a in &arms {
        testing::arm_cycle(&ctx, &a.path, false).unwrap();
    }
    let dirs = find_arm_dirs(&sweep).unwrap();
    let a = analyze::analyze_dirs(&dirs, false).unwrap();
    assert!(a.json["ladder"].is_object(), "{}", a.json);
    // The ladder's throughput is the scripts' TPS.
    for row in a.json["ladder"]["rows"].as_array().unwrap() {
        assert!(row["throughput"].as_f64().is_some_and(|t| t > 0.0), "{row}");
    }
    assert!(a.markdown.contains("| TPS |"), "{}", a.markdown);
    let runs: Vec<ArmRun> = dirs.iter().map(|d| ArmRun::load(d).unwrap()).collect();
    for r in &runs {
        assert_eq!(r.status(), "complete");
        assert_eq!(r.workload["transactions_all"], 2000);
        assert_eq!(r.workload["protocol"], "prepared");
        // Weights 3:1 — about three quarters of the transactions update (the counters are
        // the database's own since its copy from the template: the whole run's).
        let upd = r.table("counters", "n_tup_upd").last.unwrap();
        let all = r.workload["transactions_all"].as_f64().unwrap();
        assert!(upd > 0.6 * all && upd < 0.9 * all, "{upd} of {all}");
    }
    let ff70 = runs.iter().find(|r| r.arm() == "counters-ff70").unwrap();
    assert_eq!(ff70.table("counters", "fillfactor").last, Some(70.0));
    // The load's variable reached the data.
    assert_eq!(ff70.table("counters", "n_live_tup").first, Some(3000.0));
}

#[test]
fn bad_pgbench_study_input_is_refused_in_one_line() {
    let _g = testing::serial();
    let ctx = testing::ctx("small-table-bad");
    let studies = ctx.data_dir.join("studies");
    let plan = |study: &str| {
        PlanArgs {
            study: Some(study.into()),
            size: Some("ci".into()),
            repeats: 1,
            ..Default::default()
        }
        .plan(&ctx)
    };
    let one_line = |e: anyhow::Error, want: &str| {
        let m = format!("{e:#}");
        assert!(m.contains(want), "{m:?} lacks {want:?}");
        assert!(!m.contains('\n'), "{m:?}");
    };
    // Partition counts out of range.
    for (n, name) in [(1, "p1"), (1025, "p1025")] {
        let y = std::fs::read_to_string(studies.join("small-table.yaml"))
            .unwrap()
            .replace("name: small-table", &format!("name: {name}"))
            .replace("count: 8", &format!("count: {n}"));
        std::fs::write(studies.join(format!("{name}.yaml")), y).unwrap();
        copy_files(&studies, name);
        one_line(plan(name).unwrap_err(), "2 to 1024");
    }
    // A script that does not exist.
    write_mine(&studies);
    let y = MINE_YAML.replace("read.pgbench", "nowhere.pgbench");
    std::fs::write(studies.join("mine.yaml"), y).unwrap();
    one_line(plan("mine").unwrap_err(), "nowhere.pgbench");
    // A load that fails: the file and the server's message; the template stays _partial.
    write_mine(&studies);
    std::fs::write(
        studies.join("mine/load.sql"),
        "INSERT INTO counters SELECT i, 0 FROM generate_series(1, :rows) i;\n",
    )
    .unwrap();
    let p = plan("mine").unwrap();
    let (_, arms) = create_sweep(&ctx, &p, "bad-load", None, false, "test").unwrap();
    let e = build(&ctx, &arms[0]).unwrap_err();
    one_line(e, "load.sql failed: null value in column \"label\"");
    let m = format!("{:#}", build(&ctx, &arms[0]).unwrap_err());
    assert!(m.contains("_partial and is never used"), "{m}");
    // A partition key outside the primary key.
    let y = std::fs::read_to_string(studies.join("small-table.yaml"))
        .unwrap()
        .replace("name: small-table", "name: badkey")
        .replace("key: user_id", "key: team_id");
    std::fs::write(studies.join("badkey.yaml"), y).unwrap();
    copy_files(&studies, "badkey");
    let p = plan_ci(&ctx, "badkey", &["by_hash"]).unwrap();
    let (_, arms) = create_sweep(&ctx, &p, "bad-key", None, false, "test").unwrap();
    one_line(
        build(&ctx, &arms[0]).unwrap_err(),
        "partition key team_id is not in the primary key",
    );
    // An arm variable neither the load nor a script uses; an unknown build route; create-with
    // on a partitioned arm.
    let base = std::fs::read_to_string(studies.join("small-table.yaml")).unwrap();
    // A copy of small-table named `name` with one more arm `x`.
    let variant = |name: &str, arm: &str| {
        let y = base.replace("name: small-table", &format!("name: {name}")) + arm;
        std::fs::write(studies.join(format!("{name}.yaml")), y).unwrap();
        copy_files(&studies, name);
    };
    for (name, arm, want) in [
        ("badvar", "  - name: x\n    vars: {layuot: spread}\n", "variable layuot is used neither by load.sql nor by a script"),
        ("badroute", "  - name: x\n    build: copy\n", "unknown variant `copy`, expected `rewrite` or `create-with`"),
        ("badcw", "  - name: x\n    build: create-with\n    partition: {table: small_table, key: user_id, count: 4}\n", "build create-with cannot create a partitioned table"),
    ] {
        variant(name, arm);
        one_line(plan(name).unwrap_err(), want);
    }
    // A layout the load does not know: the load says so, and nothing is left half-built.
    variant("badlayout", "  - name: x\n    vars: {layout: diagonal}\n");
    let p = plan_ci(&ctx, "badlayout", &["x"]).unwrap();
    let (_, arms) = create_sweep(&ctx, &p, "bad-layout", None, false, "test").unwrap();
    one_line(
        build(&ctx, &arms[0]).unwrap_err(),
        "layout \"diagonal\" is not one of recent, spread, random",
    );
    // Together: a create-with arm, and clients that do not split evenly.
    let together = |arms: &[&str]| {
        PlanArgs {
            study: Some("small-table".into()),
            size: Some("ci".into()),
            arms: arms.iter().map(|a| a.to_string()).collect(),
            together: true,
            repeats: 1,
            ..Default::default()
        }
        .plan(&ctx)
    };
    one_line(
        together(&["ori", "onlyff-createwith"]).unwrap_err(),
        "onlyff-createwith is built create-with",
    );
    one_line(
        together(&["ori", "onlyff", "heap50"]).unwrap_err(),
        "2 clients cannot be split evenly among 3 arms",
    );
    // A template still being built by another process (its lock held): refused, not copied.
    let p = plan("small-table").unwrap();
    let (_, arms) = create_sweep(&ctx, &p, "locked", None, false, "test").unwrap();
    let plan0 = arms[0].plan().unwrap();
    let tpl = steps::build::Loader::for_plan(&plan0)
        .unwrap()
        .template_name();
    let server = steps::server::Server::ensure(&ctx).unwrap();
    let mut holder = server.connect(&server.conn.admin_db).unwrap();
    holder
        .query_one(
            "SELECT pg_advisory_lock(hashtext('hotlab template ' || $1))",
            &[&tpl],
        )
        .unwrap();
    one_line(
        build(&ctx, &arms[0]).unwrap_err(),
        "is still being built by another hotlab process",
    );
    drop(holder);
}

fn copy_files(studies: &Path, name: &str) {
    let to = studies.join(name);
    std::fs::create_dir_all(&to).unwrap();
    for e in std::fs::read_dir(studies.join("small-table")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}
