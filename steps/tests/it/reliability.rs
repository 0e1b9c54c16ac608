//! Reliability, as an adversarial user tries it: one test per defect of the second reliability
//! round, each with real processes (the xtask binary this build made), real signals, a real full
//! disk where the test may mount a tmpfs, and the real embedded server. Each asserts what the
//! user must see (docs/safety.md): a refused command changes nothing, one workload per server,
//! damaged results are never averaged, no secret in SQL.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use steps::ctx::Ctx;
use steps::io::read_json;
use steps::testing;

/// The xtask binary with the test context; `idle` is the lease's idle time (seconds).
fn xtask(ctx: &Ctx, idle: u64) -> Command {
    let mut c = Command::new(testing::xtask_binary().unwrap());
    c.envs(testing::env_of(ctx))
        .env(steps::env::LEASE_IDLE_S, idle.to_string())
        .env(steps::env::WAIT, "0")
        .current_dir(steps::ctx::project_root());
    c
}

fn run(ctx: &Ctx, args: &[&str]) -> Output {
    xtask(ctx, 0).args(args).output().unwrap()
}

fn ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn refused(o: &Output, what: &str, says: &str) -> String {
    let err = String::from_utf8_lossy(&o.stderr).trim().to_string();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{what}: exit {:?}: {err}",
        o.status
    );
    assert_eq!(err.lines().count(), 1, "{what}: not one line: {err}");
    assert!(err.contains(says), "{what}: {err:?} does not say {says:?}");
    err
}

/// `init` of one arm of `study` at `size` into `dir`; returns the arm directory.
fn init(ctx: &Ctx, study: &str, size: &str, arm: &str, dir: &Path) -> PathBuf {
    let o = run(
        ctx,
        &[
            "init",
            "--study",
            study,
            "--size",
            size,
            "--arms",
            arm,
            "--dir",
            dir.to_str().unwrap(),
        ],
    );
    ok(&o, "init");
    PathBuf::from(String::from_utf8_lossy(&o.stdout).lines().next().unwrap())
}

/// The preparation every defect test starts from: init, reset-cold, build, apply-fillfactor and
/// a `pre` snapshot.
fn prep(ctx: &Ctx, study: &str, size: &str, arm: &str, dir: &Path) -> PathBuf {
    let a = init(ctx, study, size, arm, dir);
    let s = a.to_str().unwrap();
    for step in [
        vec!["reset-cold", "--run", s],
        vec!["build", "--run", s],
        vec!["apply-fillfactor", "--run", s],
        vec!["snapshot", "--run", s, "--phase", "pre"],
    ] {
        ok(&run(ctx, &step), step[0]);
    }
    a
}

/// Every file of a directory tree and its bytes (the arm's lock file aside: its holder line is
/// the lock's, not a result).
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let (p, t) = (e.path(), e.file_type().unwrap());
            if t.is_dir() {
                stack.push(p);
            } else if t.is_file() && p.file_name().unwrap() != "lock" {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn status(arm: &Path) -> String {
    read_json(&arm.join("meta.json")).unwrap()["status"]
        .as_str()
        .unwrap_or("?")
        .to_string()
}

fn wait_for(what: &str, secs: u64, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn measured_samples(arm: &Path) -> usize {
    std::fs::read_to_string(arm.join("snapshots/database.csv"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(",measured,"))
        .count()
}

/// `run` of `arm` for `duration` seconds (no ramp-up) in the background, once its measured
/// window has its first sample.
fn started_run(ctx: &Ctx, arm: &Path, duration: &str) -> std::process::Child {
    let child = xtask(ctx, 0)
        .args([
            "run",
            "--run",
            arm.to_str().unwrap(),
            "--rampup",
            "0",
            "--duration",
            duration,
        ])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the run's window", 120, || measured_samples(arm) >= 1);
    child
}

/// The runs of an analyze of `dir`, by arm directory name.
fn analyzed(ctx: &Ctx, dir: &Path) -> BTreeMap<String, serde_json::Value> {
    ok(&run(ctx, &["analyze", dir.to_str().unwrap()]), "analyze");
    let j = read_json(&dir.join("summary.json")).unwrap();
    j["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let dir = Path::new(r["dir"].as_str().unwrap());
            (
                dir.file_name().unwrap().to_string_lossy().into_owned(),
                r.clone(),
            )
        })
        .collect()
}

/// A small tmpfs (a real full disk), or `None` with the reason when this machine may not mount
/// one.
fn tmpfs(name: &str, size: &str) -> Option<PathBuf> {
    let d = std::env::temp_dir().join(format!("hotlab-full-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let o = Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(&d)
        .output();
    match o {
        Ok(o) if o.status.success() => Some(d),
        Ok(o) => {
            eprintln!(
                "skipped: cannot mount a tmpfs here ({})",
                String::from_utf8_lossy(&o.stderr).trim()
            );
            None
        }
        Err(e) => {
            eprintln!("skipped: no mount command ({e})");
            None
        }
    }
}

fn umount(d: &Path) {
    let _ = Command::new("umount").arg(d).status();
    let _ = std::fs::remove_dir_all(d);
}

/// Defect 1: A second `run` refused because the first still runs moves nothing: the first finishes
/// `complete` with every sample, and analyze has its figures.
#[test]
fn a_refused_second_run_strips_nothing() {
    let _g = testing::serial();
    let ctx = testing::ctx("rel-run2");
    let dir = ctx.runs_dir().join("c2");
    let a = prep(&ctx, "hexacluster-tprocc", "ci", "default", &dir);
    let s = a.to_str().unwrap();
    let mut first = started_run(&ctx, &a, "10");
    let o = run(&ctx, &["run", "--run", s]);
    refused(&o, "a second run", "in use");
    assert!(
        !a.join("attempt-1").exists(),
        "the refused run moved files aside"
    );
    assert!(first.wait().unwrap().success());
    assert_eq!(status(&a), "complete");
    let runs = analyzed(&ctx, &dir);
    let r = runs.values().next().unwrap();
    assert!(r["nopm"].as_f64().unwrap_or(0.0) > 0.0, "{r}");
    assert!(
        r["tables"]["stock"]["hot_pct"].as_f64().is_some(),
        "HOT figures lost: {r}"
    );
}

/// Defect 2: `init --force` is refused while an arm of the directory is locked, and names the arm.
#[test]
fn init_force_refuses_while_an_arm_runs() {
    let _g = testing::serial();
    let ctx = testing::ctx("rel-force");
    let dir = ctx.runs_dir().join("f");
    let a = init(&ctx, "spv", "ci", "ff100", &dir);
    let before = files(&dir);
    // The lock a running step holds (this process holds it; the child is another process).
    let _held = steps::rundir::RunDir::open(&a)
        .unwrap()
        .lock("run")
        .unwrap();
    let o = run(
        &ctx,
        &[
            "init",
            "--study",
            "spv",
            "--size",
            "ci",
            "--arms",
            "ff100",
            "--dir",
            dir.to_str().unwrap(),
            "--force",
        ],
    );
    let err = refused(&o, "init --force", "in use");
    assert!(
        err.contains(a.file_name().unwrap().to_str().unwrap()),
        "{err}"
    );
    assert_eq!(
        files(&dir),
        before,
        "the refused init changed the directory"
    );
}

/// Defect 3: One workload per server: a second arm's step is refused naming the holder (or waits with
/// `--wait`), and an arm whose cold start another arm took is refused too.
#[test]
fn one_workload_per_server() {
    let _g = testing::serial();
    let ctx = testing::ctx("rel-lease");
    let a = init(&ctx, "spv", "ci", "ff100", &ctx.runs_dir().join("a"));
    let b = init(&ctx, "spv", "ci", "ff50", &ctx.runs_dir().join("b"));
    let (sa, sb) = (a.to_str().unwrap(), b.to_str().unwrap());
    ok(
        &xtask(&ctx, 300)
            .args(["reset-cold", "--run", sa])
            .output()
            .unwrap(),
        "reset-cold a",
    );
    let before = files(&b);
    let o = xtask(&ctx, 300)
        .args(["reset-cold", "--run", sb])
        .output()
        .unwrap();
    let err = refused(&o, "a second arm's reset-cold", "the server is in use");
    assert!(err.contains(sa), "does not name the holder: {err}");
    assert_eq!(files(&b), before, "the refused step changed the arm");
    // --wait: waits with a progress line, then runs once the holder lets go.
    let waiter = xtask(&ctx, 300)
        .args(["--wait", "reset-cold", "--run", sb])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(3));
    ok(&run(&ctx, &["server", "release"]), "server release");
    let out = waiter.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("waiting"), "no progress line: {err}");
    // a's cold start is gone (b reset the server since): a's next step is refused.
    let before = files(&a);
    let o = run(&ctx, &["build", "--run", sa]);
    refused(
        &o,
        "a's build after b took the server",
        "cold start is gone",
    );
    assert_eq!(files(&a), before);
    ok(&run(&ctx, &["server", "release"]), "server release");
    // A server hotlab does not own (the test cluster reached by URL): the lease lives in
    // hotlab's probe database, so two machines driving one server see each other.
    let cluster = testing::test_cluster();
    let state = read_json(&cluster.join("server.json")).unwrap();
    let pw = std::fs::read_to_string(cluster.join("password")).unwrap();
    let url = format!(
        "postgres://hotlab:{}@127.0.0.1:{}/postgres",
        pw.trim(),
        state["port"]
    );
    let ext = |idle: u64, args: &[&str]| {
        xtask(&ctx, idle)
            .env(steps::env::BACKEND, "external")
            .env("DATABASE_URL", &url)
            .args(args)
            .output()
            .unwrap()
    };
    let c = init(&ctx, "spv", "ci", "ff100", &ctx.runs_dir().join("c"));
    let d = init(&ctx, "spv", "ci", "ff50", &ctx.runs_dir().join("d"));
    let (sc, sd) = (c.to_str().unwrap(), d.to_str().unwrap());
    ok(
        &ext(300, &["reset-cold", "--run", sc]),
        "external reset-cold c",
    );
    let o = ext(300, &["reset-cold", "--run", sd]);
    let err = refused(
        &o,
        "a second arm on the external server",
        "the server is in use",
    );
    assert!(err.contains(sc), "{err}");
    let o = ext(300, &["server", "status", "--json"]);
    ok(&o, "server status");
    let status: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        status["workload_lease"].as_str().unwrap().contains(sc),
        "{status}"
    );
    ok(&ext(300, &["server", "release"]), "external server release");
    ok(
        &ext(300, &["reset-cold", "--run", sd]),
        "external reset-cold d",
    );
    ok(&ext(300, &["server", "release"]), "external server release");
}

/// Defect 4: A result file cut short, or a workload.json that does not parse, makes the arm
/// `damaged` in the report, naming the file, and it is never averaged in.
#[test]
fn truncated_results_are_damaged_and_left_out() {
    let _g = testing::serial();
    let ctx = testing::ctx("rel-trunc");
    let dir = ctx.runs_dir().join("t");
    let o = run(
        &ctx,
        &[
            "init",
            "--study",
            "spv",
            "--size",
            "ci",
            "--arms",
            "ff100",
            "--repeats",
            "3",
            "--dir",
            dir.to_str().unwrap(),
        ],
    );
    ok(&o, "init");
    let arms: Vec<PathBuf> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(PathBuf::from)
        .collect();
    for a in &arms {
        testing::arm_cycle(&ctx, a, false).unwrap();
    }
    let whole = analyzed(&ctx, &dir);
    // Cut one arm's tables.csv mid-line, and another's workload.json.
    let t = arms[0].join("snapshots/tables.csv");
    let text = std::fs::read(&t).unwrap();
    std::fs::write(&t, &text[..text.len() * 2 / 3 + 7]).unwrap();
    let w = arms[1].join("workload.json");
    let text = std::fs::read(&w).unwrap();
    std::fs::write(&w, &text[..text.len() / 2]).unwrap();
    let runs = analyzed(&ctx, &dir);
    let name = |a: &Path| a.file_name().unwrap().to_str().unwrap().to_string();
    assert_eq!(runs[&name(&arms[0])]["status"], "damaged");
    assert_eq!(runs[&name(&arms[1])]["status"], "damaged");
    assert_eq!(runs[&name(&arms[2])]["status"], "complete");
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        md.contains("snapshots/tables.csv") && md.contains("workload.json"),
        "{md}"
    );
    // The spv table counts only the whole arm: its updates are one arm's, not a mix.
    let upd = |m: &BTreeMap<String, serde_json::Value>, a: &Path| {
        m[&name(a)]["tables"]["spv"]["n_tup_upd"].as_f64()
    };
    assert_eq!(upd(&runs, &arms[2]), upd(&whole, &arms[2]));
    assert_eq!(
        upd(&runs, &arms[0]),
        None,
        "a damaged arm's figures were read"
    );
}

/// Defect 5: Durations and thresholds have bounds, checked before anything acts; no panic path.
#[test]
fn durations_and_thresholds_have_bounds() {
    let _g = testing::serial();
    let ctx = testing::ctx("rel-bounds");
    let dir = ctx.runs_dir().join("b");
    let a = init(&ctx, "hexacluster-tprocc", "ci", "default", &dir);
    let s = a.to_str().unwrap();
    let before = files(&dir);
    for d in ["1e308", "1e12", "0.0000001", "NaN", "-5"] {
        let o = run(&ctx, &["run", "--run", s, &format!("--duration={d}")]);
        // 2: clap refused the value; 1: the step refused it (the 1 s floor). Never a panic.
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            matches!(o.status.code(), Some(1 | 2)),
            "--duration {d}: {o:?}"
        );
        assert!(err.contains("out of range"), "{d}: {err}");
    }
    for t in ["NaN", "-1", "1e12"] {
        let flag = format!("--threshold={t}");
        for cmd in [vec!["analyze", s, &flag], vec!["advise", "--run", s, &flag]] {
            let o = run(&ctx, &cmd);
            assert_eq!(o.status.code(), Some(2), "{cmd:?}: {o:?}");
        }
    }
    assert_eq!(files(&dir), before, "a refused command changed the arm");
    // A study's NaN ramp-up is refused at init.
    let y = ctx.studies_dir().join("hexacluster-tprocc.yaml");
    let text =
        std::fs::read_to_string(&y)
            .unwrap()
            .replacen("rampup_s: 2\n", "rampup_s: .nan\n", 1);
    std::fs::write(&y, text).unwrap();
    let o = run(
        &ctx,
        &[
            "init",
            "--study",
            "hexacluster-tprocc",
            "--size",
            "ci",
            "--label",
            "nan",
        ],
    );
    refused(&o, "a NaN ramp-up", "rampup_s");
}

/// Defect 6: The superuser's password is nowhere in the server's statistics, its log or the files
/// under the cluster (the 0600 `password` file, hotlab's own copy for its clients, aside); a
/// cluster an older hotlab left with the statement in pg_stat_statements is cleared once.
#[test]
fn no_password_in_the_servers_statistics() {
    let _g = testing::serial();
    let mut ctx = testing::ctx("rel-secret");
    ctx.cluster_dir = std::env::temp_dir().join(format!("hotlab-secret-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&ctx.cluster_dir);
    // The first contact is an arm's first step, as a new user's is: the step claims the new
    // cluster directory for its lease and the server in it (the lease must not make it look
    // like someone else's directory).
    let a = init(&ctx, "spv", "ci", "ff100", &ctx.runs_dir().join("first"));
    ok(
        &run(&ctx, &["reset-cold", "--run", a.to_str().unwrap()]),
        "reset-cold on a new cluster",
    );
    let pw = std::fs::read_to_string(ctx.cluster_dir.join("password"))
        .unwrap()
        .trim()
        .to_string();
    let psql = |sql: &str| -> String {
        let o = run(&ctx, &["server", "psql", "--", "-Atc", sql]);
        ok(&o, sql);
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    let leaks = || {
        psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        let q = psql("SELECT count(*) FROM pg_stat_statements WHERE query ILIKE '%PASSWORD%'");
        let mut found: Vec<String> = vec![];
        if q.trim() != "0" {
            found.push(format!("pg_stat_statements: {q}"));
        }
        for (p, bytes) in files(&ctx.cluster_dir) {
            if p.file_name().unwrap() == "password" {
                continue;
            }
            let text = String::from_utf8_lossy(&bytes);
            if text.contains(&pw) || text.contains("PASSWORD '") {
                found.push(p.display().to_string());
            }
        }
        found
    };
    assert_eq!(leaks(), Vec::<String>::new(), "a fresh cluster");
    // An older hotlab's cluster: the statement as it ran it, recorded by pg_stat_statements.
    psql(&format!("ALTER ROLE hotlab PASSWORD '{pw}'"));
    assert!(!leaks().is_empty(), "the simulation recorded nothing");
    let _ = std::fs::remove_file(ctx.cluster_dir.join("statements.clean"));
    ok(&run(&ctx, &["server", "stop"]), "server stop");
    ok(&run(&ctx, &["server", "start"]), "server start");
    assert_eq!(
        leaks(),
        Vec::<String>::new(),
        "after the upgrade's one reset"
    );
    ok(&run(&ctx, &["server", "stop"]), "server stop");
    let _ = std::fs::remove_dir_all(&ctx.cluster_dir);
}

/// Defect 7: Bad input does not change an arm's status.
#[test]
fn bad_input_keeps_the_arms_status() {
    let _g = testing::serial();
    let ctx = testing::ctx("rel-status");
    let dir = ctx.runs_dir().join("s");
    let a = init(&ctx, "spv", "ci", "ff100", &dir);
    testing::arm_cycle(&ctx, &a, false).unwrap();
    assert_eq!(status(&a), "complete");
    let before = files(&dir);
    let s = a.to_str().unwrap();
    let o = run(&ctx, &["snapshot", "--run", s, "--phase", "bogus"]);
    refused(&o, "snapshot --phase bogus", "bogus");
    let o = run(&ctx, &["run", "--run", s, "--duration", "NaN"]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert_eq!(status(&a), "complete");
    assert_eq!(files(&dir), before);
    let runs = analyzed(&ctx, &dir);
    assert_eq!(runs.values().next().unwrap()["status"], "complete");
}

/// Defect 8: After a SIGKILL of `run`: analyze says `died`, and the next run moves the server out of
/// the killed run's memory cgroup instead of nesting a new one inside it.
#[test]
fn a_killed_run_is_reported_died_and_its_cgroup_is_not_nested() {
    let _g = testing::serial();
    let ctx = testing::ctx("rel-kill");
    let dir = ctx.runs_dir().join("k");
    let a = prep(&ctx, "hexacluster-tprocc", "ci", "default", &dir);
    let s = a.to_str().unwrap();
    let mut child = started_run(&ctx, &a, "60");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        status(&a),
        "running",
        "the meta as the killed process left it"
    );
    let runs = analyzed(&ctx, &dir);
    assert_eq!(runs.values().next().unwrap()["status"], "died");
    let cgroup = || {
        let pid = testing::postmaster_pid(&ctx.cluster_dir);
        std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap()
    };
    let confined = read_json(&a.join("meta.json")).unwrap()["memory_limit"]["applied"] == true;
    if confined {
        assert!(
            cgroup().contains("hotlab-"),
            "the kill left no cgroup to test"
        );
    } else {
        eprintln!("no memory cgroup here: the nesting half is not exercised");
    }
    // The next run: not nested, and nothing of ours left around the server afterwards.
    let o = run(
        &ctx,
        &["run", "--run", s, "--rampup", "0", "--duration", "3"],
    );
    ok(&o, "the run after the kill");
    let m = read_json(&a.join("meta.json")).unwrap();
    if confined {
        let path = m["memory_limit"]["cgroup"].as_str().unwrap();
        assert_eq!(path.matches("hotlab-").count(), 1, "nested: {path}");
        assert!(!cgroup().contains("hotlab-"), "{}", cgroup());
    }
    assert!(a.join("attempt-1").exists());
    assert_eq!(status(&a), "complete");
    assert_eq!(m["steps"]["run"]["status"], "complete");
}

/// Defect 9: A quoted table name works end to end: fillfactor, rewrite, run, vacuum timing.
#[test]
fn quoted_table_names_take_a_fillfactor() {
    let _g = testing::serial();
    let ctx = testing::ctx("rel-ident");
    let d = ctx.studies_dir().join("mixed-case");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("schema.sql"),
        "CREATE TABLE \"MyTable\" (id integer PRIMARY KEY, v integer NOT NULL);\n",
    )
    .unwrap();
    std::fs::write(
        d.join("load.sql"),
        "INSERT INTO \"MyTable\" SELECT g, 0 FROM generate_series(1, :rows) g;\n",
    )
    .unwrap();
    std::fs::write(
        d.join("update.pgbench"),
        "\\set id random(1, :rows)\nUPDATE \"MyTable\" SET v = v + 1 WHERE id = :id;\n",
    )
    .unwrap();
    std::fs::write(
        ctx.studies_dir().join("mixed-case.yaml"),
        r#"name: mixed-case
title: A table whose name needs quoting
workload: pgbench
pgbench:
  schema: schema.sql
  load: load.sql
  scripts:
    - {file: update.pgbench, weight: 1}
default_size: ci
sizes:
  ci:
    clients: 1
    transactions: 500
    snapshot_every_s: 1
    vars: {rows: 2000}
tables: ['"MyTable"']
rewrite: ['"MyTable"']
vacuum_timing: ['"MyTable"']
arms:
  - name: ff50
    fillfactor: {'"MyTable"': 50}
"#,
    )
    .unwrap();
    let dir = ctx.runs_dir().join("q");
    let a = init(&ctx, "mixed-case", "ci", "ff50", &dir);
    testing::arm_cycle(&ctx, &a, false).unwrap();
    assert_eq!(status(&a), "complete");
    let ff = read_json(&a.join("fillfactor.json")).unwrap();
    assert_eq!(ff["relations"]["\"MyTable\""]["read_back"], 50, "{ff}");
    // An unquoted name that is no identifier is refused at init, in one line.
    let y = ctx.studies_dir().join("mixed-case.yaml");
    let text = std::fs::read_to_string(&y)
        .unwrap()
        .replace("'\"MyTable\"'", "My;Table");
    std::fs::write(&y, text).unwrap();
    let o = run(&ctx, &["init", "--study", "mixed-case", "--label", "bad"]);
    refused(
        &o,
        "an unquoted name with a semicolon",
        "not an SQL identifier",
    );
}

/// Defect 10: `server psql` talks to the terminal (stdin is inherited) and passes its arguments on.
#[test]
fn server_psql_is_interactive() {
    let _g = testing::serial();
    let ctx = testing::ctx("rel-psql");
    let o = run(&ctx, &["server", "psql", "--", "-Atc", "select 40 + 2"]);
    ok(&o, "server psql -c");
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "42");
    let mut child = xtask(&ctx, 0)
        .args(["server", "psql", "--", "-At"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"select 6 * 7;\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "42");
}

/// Defect 11: A study may not set how the server is reached or where its files are.
#[test]
fn a_study_may_not_move_the_server() {
    let _g = testing::serial();
    let ctx = testing::ctx("rel-settings");
    let y = ctx.studies_dir().join("spv.yaml");
    let text = std::fs::read_to_string(&y).unwrap();
    for (k, v) in [
        ("listen_addresses", "127.0.0.1,127.0.0.2"),
        ("port", "5999"),
        ("unix_socket_directories", "/tmp"),
        ("ssl", "on"),
        ("shared_preload_libraries", "auto_explain"),
    ] {
        assert!(
            !text.contains("\nserver:"),
            "spv.yaml has a server: section already"
        );
        let t = format!("{text}\nserver:\n  {k}: \"{v}\"\n");
        std::fs::write(&y, t).unwrap();
        let o = run(
            &ctx,
            &["init", "--study", "spv", "--size", "ci", "--label", k],
        );
        refused(&o, k, k);
    }
    std::fs::write(&y, text).unwrap();
}

/// Defect 12: A full disk leaves no temporary files and no partial row, and every error names its file.
#[test]
fn a_full_disk_leaves_no_litter() {
    let _g = testing::serial();
    let Some(d) = tmpfs("litter", "64k") else {
        return;
    };
    // JSON: whole or nothing, no temporary file left, the error names the file.
    let big = serde_json::json!({"x": "y".repeat(200_000)});
    let p = d.join("meta.json");
    let e = format!("{:#}", steps::io::write_json_atomic(&p, &big).unwrap_err());
    assert!(e.contains(&p.display().to_string()), "{e}");
    // CSV: rows until the disk is full; the file ends with a whole row.
    let c = d.join("tables.csv");
    let mut w = steps::io::CsvAppender::open(&c, &["a", "b"]).unwrap();
    let err = (0..100_000)
        .find_map(|i| w.row(&[i.to_string(), "z".repeat(100)]).err())
        .expect("the disk never filled");
    assert!(format!("{err:#}").contains("tables.csv"), "{err:#}");
    let text = std::fs::read(&c).unwrap();
    assert_eq!(text.last(), Some(&b'\n'), "a partial row was left");
    let litter: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp"))
        .collect();
    assert!(litter.is_empty(), "{litter:?}");
    umount(&d);
}
