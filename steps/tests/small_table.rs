//! Study 001 (small_table upsert) and the pgbench-script workload against the real embedded
//! PostgreSQL 18: every arm at `ci` through the justfile's cold cycle, partitions added up into
//! their parent (tables, indexes and buffers), a fillfactor on a partitioned parent reaching every
//! leaf, a user-style study through a sweep, and the bad input the issue names.

use std::path::Path;

use steps::analyze::load::ArmRun;
use steps::io::read_json;
use steps::rundir::{create_sweep, find_arm_dirs, RunDir};
use steps::study::PlanArgs;
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
    let plan = PlanArgs {
        study: Some("small-table".into()),
        size: Some("ci".into()),
        repeats: 1,
        ..Default::default()
    }
    .plan(&ctx)
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
        a.markdown.contains("| final TPS sample, onlyff | 3340 |"),
        "{}",
        a.markdown
    );
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
    let p = PlanArgs {
        study: Some("badkey".into()),
        size: Some("ci".into()),
        arms: vec!["by_hash".into()],
        repeats: 1,
        ..Default::default()
    }
    .plan(&ctx)
    .unwrap();
    let (_, arms) = create_sweep(&ctx, &p, "bad-key", None, false, "test").unwrap();
    one_line(
        build(&ctx, &arms[0]).unwrap_err(),
        "partition key team_id is not in the primary key",
    );
}

fn copy_files(studies: &Path, name: &str) {
    let to = studies.join(name);
    std::fs::create_dir_all(&to).unwrap();
    for e in std::fs::read_dir(studies.join("small-table")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}
