//! Results over time, on real runs of the embedded PostgreSQL 18: three sets of study 003's `ci`
//! runs (a baseline, the same again, and the same arm after its fillfactor was changed in the
//! study file) and one run of that arm at a smaller size, each analyzed by the `analyze` step, which writes every run's results files;
//! then `--baseline` verdicts, `history` over two studies with its filters and its refusals, and
//! the Parquet round trip.

use std::path::{Path, PathBuf};

use steps::analyze::{self, baseline, load::ArmRun, results};
use steps::history;
use steps::rundir::{create_sweep, find_arm_dirs};
use steps::study::PlanArgs;
use steps::testing;

/// Two runs of spv's ff100 (A B order irrelevant: one arm), analyzed like `just study` does.
fn two_runs(ctx: &steps::Ctx, label: &str) -> PathBuf {
    runs(ctx, label, "ci", 2)
}

/// `repeats` runs of spv's ff100 at `size`, analyzed.
fn runs(ctx: &steps::Ctx, label: &str, size: &str, repeats: u32) -> PathBuf {
    let plan = PlanArgs {
        study: Some("spv".into()),
        size: Some(size.into()),
        arms: vec!["ff100".into()],
        repeats,
        ..Default::default()
    }
    .plan(ctx)
    .unwrap();
    let (sweep, arms) = create_sweep(ctx, &plan, label, None, false, "test").unwrap();
    for a in &arms {
        testing::arm_cycle(ctx, &a.path, false).unwrap();
    }
    analyze::run(ctx, &args(&[&sweep])).unwrap();
    sweep
}

fn args(dirs: &[&Path]) -> analyze::Args {
    analyze::Args {
        dirs: dirs.iter().map(|d| d.to_path_buf()).collect(),
        out: None,
        allow_mixed: false,
        mix: false,
        threshold: analyze::DEFAULT_THRESHOLD,
        baseline: vec![],
        min_change: baseline::DEFAULT_MIN_CHANGE,
        rebuild_index: false,
        brief: false,
    }
}

fn load(sweep: &Path) -> Vec<ArmRun> {
    find_arm_dirs(sweep)
        .unwrap()
        .iter()
        .map(|d| ArmRun::load(d).unwrap())
        .collect()
}

/// The verdict line of one figure in the comparison's JSON.
fn verdict(j: &serde_json::Value, figure: &str) -> String {
    j["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["figure"] == figure)
        .unwrap_or_else(|| panic!("no {figure} in {j}"))["verdict"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn baseline_verdicts_and_history_on_real_runs() {
    let _g = testing::serial();
    let ctx = testing::ctx("history");
    let first = two_runs(&ctx, "first");
    let again = two_runs(&ctx, "again");

    // The same arm at another size, run for real: never averaged with the `ci` runs.
    let study = ctx.data_dir.join("studies/spv.yaml");
    let text = std::fs::read_to_string(&study).unwrap();
    let tiny = "  tiny:\n    rows: 1000\n    pad_chars: 100\n    statements: 100\n    rows_per_statement: 100\n    clients: 1\n    snapshot_every_s: 0.5\n    random_seed: 3\n  ci:\n";
    std::fs::write(&study, text.replacen("  ci:\n", tiny, 1)).unwrap();
    let small = runs(&ctx, "tiny", "tiny", 1);
    let mut both = args(&[&first, &small]);
    both.out = Some(ctx.data_dir.join("mixed"));
    let err = analyze::run(&ctx, &both).unwrap_err().to_string();
    assert!(
        err.contains("runs of arm ff100 differ in size (ci vs tiny)")
            && err.contains("--mix")
            && !err.contains('\n'),
        "{err}"
    );
    both.mix = true;
    analyze::run(&ctx, &both).unwrap();
    let md = std::fs::read_to_string(ctx.data_dir.join("mixed/summary.md")).unwrap();
    assert!(
        md.contains("Pooled on purpose (`--mix`)") && md.contains("- ff100: size (ci vs tiny)"),
        "{md}"
    );
    // A month later the DBA changed the study: arm ff100 now runs spv at fillfactor 50.
    let text = std::fs::read_to_string(&study).unwrap();
    std::fs::write(
        &study,
        text.replacen("fillfactor: {spv: 100}", "fillfactor: {spv: 50}", 1),
    )
    .unwrap();
    let changed = two_runs(&ctx, "changed");

    // Same study, same arm, same fingerprint: HOT % within noise.
    let (md, j) = baseline::compare(&load(&again), &load(&first), 5.0).unwrap();
    let j = serde_json::to_value(&j).unwrap();
    assert_eq!(verdict(&j, "HOT %"), "within noise", "{md}");
    assert!(md.contains("same fingerprint"), "{md}");
    // The fillfactor really differs: HOT % changed, and the fingerprint says why.
    let (md, j) = baseline::compare(&load(&changed), &load(&first), 5.0).unwrap();
    let j = serde_json::to_value(&j).unwrap();
    assert_eq!(verdict(&j, "HOT %"), "changed", "{md}");
    assert!(
        md.contains("arm {\"fillfactor\":{\"spv\":100}} → {\"fillfactor\":{\"spv\":50}}")
            && md.contains("same host"),
        "{md}"
    );
    // Through the step: the comparison is in summary.md.
    let mut a = args(&[&changed]);
    a.baseline = vec![first.clone()];
    analyze::run(&ctx, &a).unwrap();
    let summary = std::fs::read_to_string(changed.join("summary.md")).unwrap();
    assert!(
        summary.starts_with("## Compared with the baseline"),
        "{summary}"
    );
    // A baseline of another study is refused in one line.
    let mut other = load(&first);
    for r in &mut other {
        r.plan.study = "tprocc".into();
    }
    let err = baseline::compare(&load(&changed), &other, 5.0)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no run of study spv") && !err.contains('\n'),
        "{err}"
    );

    // A second study: the checked-in TPROC-C runs, whose results are rebuilt from their run
    // directories.
    let tprocc = ctx.data_dir.join("runs/tprocc/20261203-030000-golden");
    copy_dir(
        &steps::ctx::project_root().join("steps/tests/data/tprocc-ci-repeats"),
        &tprocc,
    );
    let h = history::Args::default();
    let (rows, scan) = history::select(&ctx, &h).unwrap();
    assert_eq!(rows.len(), 7, "only the spv runs have results yet");
    assert_eq!(scan.without.len(), 4);
    let mut rebuild = args(&[&ctx.runs_dir()]);
    rebuild.rebuild_index = true;
    analyze::run(&ctx, &rebuild).unwrap();
    let (rows, scan) = history::select(&ctx, &h).unwrap();
    assert_eq!((rows.len(), scan.without.len()), (11, 0));
    let listing = history::lines(&rows);
    assert!(
        listing.contains("tprocc") && listing.contains("NOPM") && listing.contains("statements/s"),
        "{listing}"
    );
    let count = |f: &dyn Fn(&mut history::Args)| {
        let mut a = history::Args::default();
        f(&mut a);
        history::select(&ctx, &a).unwrap().0.len()
    };
    assert_eq!(count(&|a| a.study = Some("hexacluster-tprocc".into())), 4);
    assert_eq!(count(&|a| a.words = vec!["spv".into()]), 7);
    assert_eq!(
        count(&|a| a.words = vec!["stock".into()]),
        0,
        "the old plans name no tables"
    );
    assert_eq!(count(&|a| a.arm = Some("tuned".into())), 2);
    assert_eq!(count(&|a| a.size = Some("tiny".into())), 1);
    assert_eq!(count(&|a| a.postgres = Some("18".into())), 11);
    let spv_start = rows
        .iter()
        .find(|r| r.study == "spv")
        .unwrap()
        .start
        .clone();
    assert_eq!(count(&|a| a.until = Some(spv_start.clone())), 4);
    assert_eq!(count(&|a| a.since = Some(spv_start.clone())), 7);
    // A filter that matches nothing says what exists.
    let none = history::Args {
        study: Some("nosuch".into()),
        ..Default::default()
    };
    let err = history::run(&ctx, &none).unwrap_err().to_string();
    assert!(
        err.contains("no run matches study=nosuch")
            && err.contains("studies hexacluster-tprocc, spv"),
        "{err}"
    );

    // What history reads is what analyze wrote: the Parquet round trip.
    for r in &rows {
        let again = results::RunRow::of(&ArmRun::load(Path::new(&r.dir)).unwrap());
        assert_eq!(*r, again);
    }
    let samples = metrics_of(&PathBuf::from(&rows[0].dir).join(results::SAMPLES_FILE));
    for m in ["n_tup_hot_upd", "insert_lsn_bytes", "buffers"] {
        assert!(samples.iter().any(|s| s == m), "{m} not in {samples:?}");
    }

    // A results file from a newer schema is refused, naming the version that reads it.
    let newer = PathBuf::from(&rows[0].dir);
    let mut row = rows[0].clone();
    row.schema_version = results::SCHEMA_VERSION + 1;
    let mut df = results::runs_frame(&[row]).unwrap();
    let f = std::fs::File::create(newer.join(results::RUNS_FILE)).unwrap();
    polars_io::prelude::ParquetWriter::new(f)
        .finish(&mut df)
        .unwrap();
    let err = history::run(&ctx, &history::Args::default())
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains(&format!("reads up to version {}", results::SCHEMA_VERSION))
            && err.contains("--rebuild-index"),
        "{err}"
    );
    std::fs::remove_dir_all(&ctx.data_dir).ok();
}

/// The metrics a samples file holds.
fn metrics_of(path: &Path) -> Vec<String> {
    use polars_io::prelude::{ParquetReader, SerReader};
    let df = ParquetReader::new(std::fs::File::open(path).unwrap())
        .finish()
        .unwrap();
    let m = df
        .column("metric")
        .unwrap()
        .as_materialized_series()
        .clone();
    let m = m.str().unwrap();
    let mut v: Vec<String> = (0..m.len())
        .filter_map(|i| m.get(i).map(str::to_string))
        .collect();
    v.sort();
    v.dedup();
    v
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}
