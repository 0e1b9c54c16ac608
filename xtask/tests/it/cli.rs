//! Bad input through the real `cargo xtask` binary: each case must fail with exit code non-zero,
//! one line on stderr that names the problem and the fix, and lose nothing already written.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

use steps::testing;

fn xtask(env: &[(String, String)], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .envs(env.iter().cloned())
        .env_remove(steps::env::PORT)
        .env_remove(steps::env::PG_BIN)
        .env_remove(steps::env::RUN)
        .output()
        .unwrap()
}

/// Exit code non-zero and exactly one stderr line, starting `error:` and containing each needle.
fn fails(out: &Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "succeeded; stderr: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "expected one error line, got: {err}");
    for n in needles {
        assert!(lines[0].contains(n), "{n:?} not in {:?}", lines[0]);
    }
}

fn files_under(p: &Path) -> Vec<String> {
    let mut v = vec![];
    let mut stack = vec![p.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                v.push(format!(
                    "{}:{}",
                    p.display(),
                    std::fs::metadata(&p).unwrap().len()
                ));
            }
        }
    }
    v.sort();
    v
}

#[test]
fn study_and_arm_input_is_checked() {
    let ctx = testing::ctx("cli-input");
    let env = testing::env_of(&ctx);
    fails(
        &xtask(&env, &["init", "--study", "spv", "--fillfactor", "spv=5"]),
        &["fillfactor 5", "10 to 100"],
    );
    fails(
        &xtask(&env, &["init", "--study", "spv", "--fillfactor", "spv=101"]),
        &["fillfactor 101", "10 to 100"],
    );
    fails(
        &xtask(
            &env,
            &["init", "--study", "spv", "--fillfactor", "stock=90"],
        ),
        &["stock", "not in study spv", "spv"],
    );
    fails(
        &xtask(&env, &["init", "--study", "spv", "--fillfactor", ""]),
        &["names no table", "TABLE=FF"],
    );
    fails(
        &xtask(&env, &["init", "--study", "spv", "--arms", "ff100,ff100"]),
        &["ff100 is given twice"],
    );
    fails(
        &xtask(&env, &["init", "--study", "spv", "--values", "100,90"]),
        &["--values needs --sweep"],
    );
    fails(
        &xtask(&env, &["init", "--study", "nope"]),
        &[
            "unknown study \"nope\"",
            "known: hexacluster-tprocc, small-table, spv",
        ],
    );
    fails(
        &xtask(&env, &["init", "--study", "spv", "--size", "huge"]),
        &["unknown size \"huge\"", "article, ci"],
    );
    fails(
        &xtask(&env, &["init", "--study", "spv", "--arms", "ff99"]),
        &["unknown arm", "ff100"],
    );
    let bad =
        std::fs::read_to_string(ctx.data_dir.join("studies/spv.yaml")).unwrap() + "colour: blue\n";
    std::fs::write(ctx.data_dir.join("studies/bad.yaml"), bad).unwrap();
    fails(
        &xtask(&env, &["init", "--study", "bad"]),
        &["unknown field `colour`", "fix the study file"],
    );
    // A field of another workload's size is refused by that workload's size type, by name.
    let misplaced = std::fs::read_to_string(ctx.data_dir.join("studies/spv.yaml"))
        .unwrap()
        .replacen("  ci:\n", "  ci:\n    warehouses: 4\n", 1);
    assert!(
        misplaced.contains("warehouses: 4"),
        "spv.yaml has no ci size"
    );
    std::fs::write(ctx.data_dir.join("studies/misplaced.yaml"), misplaced).unwrap();
    fails(
        &xtask(&env, &["init", "--study", "misplaced"]),
        &[
            "sizes.ci (spv size)",
            "unknown field `warehouses`",
            "fix the study file",
        ],
    );
    // Sweeps: one value, a repeated value, a table the workload never updates.
    let sweep = |t: &str, v: &str| {
        xtask(
            &env,
            &[
                "init",
                "--study",
                "hexacluster-tprocc",
                "--sweep",
                t,
                "--values",
                v,
            ],
        )
    };
    fails(
        &sweep("order_line", "90"),
        &["at least two fillfactor values"],
    );
    fails(
        &sweep("order_line", "90,80,90"),
        &["fillfactor 90 appears twice"],
    );
    fails(
        &sweep("item", "100,90"),
        &[
            "item is never updated by tprocc",
            "fillfactor cannot help it",
        ],
    );
    fails(&sweep("stock", "100,5"), &["fillfactor 5", "10 to 100"]);
    // Scale models: a churn so fast that checkpoint_timeout falls under 30 s, a scale with too
    // little shared buffers, a scale bigger than this machine's memory.
    fails(
        &xtask(
            &env,
            &[
                "init",
                "--study",
                "hexacluster-tprocc",
                "--size",
                "scaled",
                "--nopm-per-warehouse",
                "100000",
            ],
        ),
        &[
            "below PostgreSQL's 30 s",
            "--nopm-per-warehouse at most 54900",
        ],
    );
    let study =
        std::fs::read_to_string(ctx.data_dir.join("studies/hexacluster-tprocc.yaml")).unwrap();
    let scaled = "      warehouses: 2\n      nopm_per_warehouse: 23700";
    assert!(study.contains(scaled));
    for (name, wh, needle) in [
        ("tiny", 1, "the smallest valid scale is 2 warehouses"),
        ("huge", 100_000, "of memory: the largest scale that fits is"),
    ] {
        let text = study.replace(
            scaled,
            &format!("      warehouses: {wh}\n      nopm_per_warehouse: 23700"),
        );
        std::fs::write(ctx.data_dir.join(format!("studies/{name}.yaml")), text).unwrap();
        fails(
            &xtask(&env, &["init", "--study", name, "--size", "scaled"]),
            &["size scaled", needle],
        );
    }
    // No run directory was left behind by any of these.
    assert!(std::fs::read_dir(ctx.data_dir.join("runs"))
        .unwrap()
        .next()
        .is_none());
}

#[test]
fn init_writes_the_typed_plan_and_older_run_directories_are_refused() {
    let ctx = testing::ctx("cli-plan");
    let env = testing::env_of(&ctx);
    // A run directory written before plans were typed is refused with the command that fixes it.
    let made = xtask(
        &env,
        &["init", "--study", "spv", "--size", "ci", "--arms", "ff100"],
    );
    testing::succeeds(&made);
    let arm = String::from_utf8_lossy(&made.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    let meta_path = Path::new(&arm).join("meta.json");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&meta_path).unwrap()).unwrap();
    assert_eq!(meta["plan_version"], 1, "init writes the typed plan");
    assert_eq!(meta["rewrite"], serde_json::json!(["spv"]));
    meta.as_object_mut().unwrap().remove("plan_version");
    std::fs::write(&meta_path, meta.to_string()).unwrap();
    fails(
        &xtask(&env, &["build", "--run", &arm]),
        &["older hotlab", "cargo xtask init --study spv"],
    );
}

/// On the old main, `init --dir D --force` deleted D whatever it held, and a HOTLAB_CLUSTER with
/// a `data/` lacking PG_VERSION had that `data/` removed and initdb run over it.
#[test]
fn nothing_outside_hotlabs_own_is_deleted() {
    let ctx = testing::ctx("cli-own");
    let env = testing::env_of(&ctx);
    let mine = ctx.data_dir.join("mine");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("keep.txt"), "someone's").unwrap();
    let d = mine.display().to_string();
    fails(
        &xtask(&env, &["init", "--study", "spv", "--dir", &d, "--force"]),
        &["--force refused", &d, "not a hotlab run directory"],
    );
    assert_eq!(
        std::fs::read_to_string(mine.join("keep.txt")).unwrap(),
        "someone's"
    );
    // A run directory of ours may be replaced.
    let ours = ctx.data_dir.join("ours").display().to_string();
    for _ in 0..2 {
        let out = xtask(&env, &["init", "--study", "spv", "--dir", &ours, "--force"]);
        testing::succeeds(&out);
    }
    // A cluster directory that is someone else's.
    let checkout = ctx.data_dir.join("checkout");
    std::fs::create_dir_all(checkout.join("data")).unwrap();
    std::fs::write(checkout.join("data/keep.txt"), "data").unwrap();
    let mut other = env.clone();
    other.push((steps::env::CLUSTER.into(), checkout.display().to_string()));
    fails(
        &xtask(&other, &["server", "start"]),
        &[
            &checkout.display().to_string(),
            "not a hotlab cluster",
            steps::env::CLUSTER,
        ],
    );
    assert_eq!(
        std::fs::read_to_string(checkout.join("data/keep.txt")).unwrap(),
        "data"
    );
    assert!(!checkout.join("data/PG_VERSION").exists());
}

#[test]
fn run_directories_are_never_overwritten() {
    let ctx = testing::ctx("cli-dirs");
    let env = testing::env_of(&ctx);
    let dir = ctx.data_dir.join("runs/spv/fixed");
    let d = dir.display().to_string();
    let out = xtask(
        &env,
        &[
            "init", "--study", "spv", "--size", "ci", "--arms", "ff100", "--dir", &d,
        ],
    );
    testing::succeeds(&out);
    let arm = String::from_utf8_lossy(&out.stdout).trim().to_string();
    std::fs::write(Path::new(&arm).join("reset.jsonl"), "{\"kept\":true}\n").unwrap();
    let before = files_under(&dir);
    fails(
        &xtask(
            &env,
            &["init", "--study", "spv", "--size", "ci", "--dir", &d],
        ),
        &["already exists", "--force"],
    );
    assert_eq!(
        before,
        files_under(&dir),
        "a refused init changed the directory"
    );
    // Steps out of order name the step to run first.
    fails(
        &xtask(&env, &["run", "--run", &arm]),
        &["no build found", "cargo xtask build --run"],
    );
    fails(
        &xtask(&env, &["apply-fillfactor", "--run", &arm]),
        &["no build found"],
    );
    fails(
        &xtask(&env, &["run", "--run", "/nonexistent"]),
        &["not a hotlab run directory", "cargo xtask init"],
    );
    fails(
        &xtask(
            &env,
            &[
                "analyze",
                &ctx.data_dir.join("studies").display().to_string(),
            ],
        ),
        &["no runs found"],
    );
    assert_eq!(before, files_under(&dir));
    let forced = xtask(
        &env,
        &[
            "init", "--study", "spv", "--size", "ci", "--dir", &d, "--force",
        ],
    );
    testing::succeeds(&forced);
}

#[test]
fn server_problems_are_reported() {
    let ctx = testing::ctx("cli-server");
    let mut env = testing::env_of(&ctx);
    // An external server that is down.
    let free = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut ext = env.clone();
    ext.push((steps::env::BACKEND.into(), "external".into()));
    ext.push((
        "DATABASE_URL".into(),
        format!("postgres://hotlab:x@127.0.0.1:{free}/postgres"),
    ));
    fails(
        &xtask(&ext, &["server", "start"]),
        &["external server", "does not answer"],
    );
    // PostgreSQL 15 binaries. Debian's server package when present; otherwise a directory whose
    // pg_config reports 15, which is all the check reads.
    let pg15 = Path::new("/usr/lib/postgresql/15/bin");
    let fake = ctx.data_dir.join("pg15bin");
    let bin = if pg15.join("postgres").exists() {
        pg15.to_path_buf()
    } else {
        std::fs::create_dir_all(&fake).unwrap();
        let p = fake.join("pg_config");
        std::fs::write(&p, "#!/bin/sh\necho 'PostgreSQL 15.18'\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        fake
    };
    let mut old = env.clone();
    old.push((steps::env::PG_BIN.into(), bin.display().to_string()));
    old.push((
        steps::env::CLUSTER.into(),
        ctx.data_dir.join("cluster15").display().to_string(),
    ));
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["server", "start"])
        .envs(old.iter().cloned())
        .output()
        .unwrap();
    fails(
        &out,
        &["PostgreSQL 15", "16 or newer", "unset HOTLAB_PG_BIN"],
    );
    // A port already taken by another program, on a cluster that has to start.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    env.push((
        steps::env::CLUSTER.into(),
        format!("{}/port-cluster", ctx.home.display()),
    ));
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["server", "start"])
        .envs(env.iter().cloned())
        .env(steps::env::PORT, port.to_string())
        .output()
        .unwrap();
    fails(
        &out,
        &[&format!("port {port}"), "already taken", steps::env::PORT],
    );
}

#[test]
fn steps_start_the_server_themselves() {
    let _g = testing::serial();
    let ctx = testing::ctx("cli-start");
    let env = testing::env_of(&ctx);
    let out = xtask(&env, &["server", "stop"]);
    testing::succeeds(&out);
    let out = xtask(
        &env,
        &["init", "--study", "spv", "--size", "ci", "--arms", "ff100"],
    );
    let arm = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let out = xtask(&env, &["build", "--run", &arm]);
    testing::succeeds(&out);
    let out = xtask(&env, &["server", "status", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["running"], true);
    assert!(status["version"]
        .as_str()
        .unwrap()
        .starts_with("PostgreSQL 18.6"));
    assert_eq!(status["backend"], "embedded");
    assert!(status["port"].as_u64().unwrap() > 0);
}

#[test]
fn ctrl_c_keeps_the_samples_and_marks_the_arm_interrupted() {
    let _g = testing::serial();
    let ctx = testing::ctx("cli-interrupt");
    let env = testing::env_of(&ctx);
    // A 15-second TPROC-C window: interrupted a few seconds in, whatever the machine's speed.
    let out = xtask(
        &env,
        &[
            "init",
            "--study",
            "hexacluster-tprocc",
            "--size",
            "ci",
            "--arms",
            "default",
        ],
    );
    let arm = String::from_utf8_lossy(&out.stdout).trim().to_string();
    for step in ["build", "apply-fillfactor"] {
        let out = xtask(&env, &[step, "--run", &arm]);
        testing::succeeds(&out);
    }
    // A duration that is not a number is refused with one line, before anything runs.
    fails(
        &xtask(&env, &["run", "--run", &arm, "--duration", "nan"]),
        &["--duration", "NaN", "out of range"],
    );
    let out = interrupt(&env, &["run", "--run", &arm], 5000, 2);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fails(&out, &["interrupted", "kept"]);
    let read = |f: &str| std::fs::read_to_string(Path::new(&arm).join(f)).unwrap();
    let meta: serde_json::Value = serde_json::from_str(&read("meta.json")).unwrap();
    assert_eq!(meta["status"], "interrupted");
    let samples = read("snapshots/database.csv");
    assert!(
        samples
            .lines()
            .filter(|l| l.contains(",measured,lsn,insert_lsn_bytes,"))
            .count()
            >= 2
    );
    let w: serde_json::Value = serde_json::from_str(&read("workload.json")).unwrap();
    assert_eq!(w["interrupted"], true);
    let measured = w["duration_s"].as_f64().unwrap();
    assert!(
        measured < 10.0,
        "the run was not interrupted: {measured} s measured"
    );
    assert!(w["nopm"].as_f64().unwrap() > 0.0);
    // The interrupt unwound through every Drop: the memory cgroup the run was confined to is
    // gone, with no other `hotlab-*` beside it, and the arm's lock is free.
    let ml = &meta["memory_limit"];
    if ml["applied"] == true {
        let cgroup = Path::new(ml["cgroup"].as_str().unwrap());
        let left: Vec<_> = std::fs::read_dir(cgroup.parent().unwrap())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("hotlab-"))
            .collect();
        assert!(left.is_empty(), "cgroups left: {left:?}");
    }
    let rd = steps::rundir::RunDir::open(Path::new(&arm)).unwrap();
    assert!(rd.lock_free(), "the arm's lock is still held");

    // Any other step killed mid-way marks the arm interrupted too, rather than leaving it
    // `running`: SIGTERM during reset-cold.
    let out = interrupt(&env, &["reset-cold", "--run", &arm], 400, 15);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_str(&read("meta.json")).unwrap();
    assert_eq!(meta["status"], "interrupted", "{meta}");
    assert_eq!(
        meta["steps"]["reset-cold"]["status"], "interrupted",
        "{meta}"
    );

    // A step left `running` by a process that is gone is reported and marked, and the next
    // step goes on.
    let mut meta = meta;
    meta["status"] = serde_json::json!("running");
    meta["steps"]["vacuum-timing"] =
        serde_json::json!({"status": "running", "pid": 999_999_999u64});
    std::fs::write(Path::new(&arm).join("meta.json"), meta.to_string()).unwrap();
    let out = xtask(&env, &["snapshot", "--run", &arm, "--phase", "post"]);
    let err = testing::succeeds(&out);
    assert!(err.contains("left running by process 999999999"), "{err}");
    let meta: serde_json::Value = serde_json::from_str(&read("meta.json")).unwrap();
    assert_eq!(meta["steps"]["vacuum-timing"]["status"], "died", "{meta}");

    // A second process on the same arm is refused while the first holds it.
    let holder = Command::new("flock")
        .arg("-o")
        .arg(Path::new(&arm).join("lock"))
        .args(["sleep", "5"])
        .spawn();
    if let Ok(mut holder) = holder {
        std::thread::sleep(std::time::Duration::from_millis(300));
        fails(
            &xtask(&env, &["snapshot", "--run", &arm, "--phase", "post"]),
            &["is in use by", &arm],
        );
        holder.kill().ok();
        holder.wait().ok();
    }
    // Retrying the interrupted run moves that attempt aside and starts clean.
    let out = xtask(&env, &["snapshot", "--run", &arm, "--phase", "pre"]);
    testing::succeeds(&out);
    let out = xtask(
        &env,
        &["run", "--run", &arm, "--rampup", "0", "--duration", "3"],
    );
    let err = testing::succeeds(&out);
    assert!(err.contains("moved to"), "{err}");
    let old: serde_json::Value = serde_json::from_str(&read("attempt-1/workload.json")).unwrap();
    assert_eq!(old["interrupted"], true);
    let new: serde_json::Value = serde_json::from_str(&read("workload.json")).unwrap();
    assert_eq!(new["interrupted"], false);
    // Distinct samples of a phase in a snapshot file.
    let samples = |text: &str, phase: &str| {
        let mut s: Vec<&str> = text
            .lines()
            .filter(|l| l.split(',').nth(2) == Some(phase))
            .filter_map(|l| l.split(',').next())
            .collect();
        s.dedup();
        s.len()
    };
    let now = read("snapshots/database.csv");
    assert_eq!(
        samples(&now, "pre"),
        1,
        "the attempt keeps its one pre sample"
    );
    assert_eq!(samples(&now, "post"), 1, "only this attempt's post sample");
    let before = read("attempt-1/snapshots/database.csv");
    assert!(samples(&before, "measured") >= 2 && samples(&before, "post") >= 1);
}

/// A server hotlab does not own (here the test cluster, reached as an external server): its
/// settings are left alone and the differences recorded; with --apply-server-settings they are
/// applied and `restore-settings` puts the old ones back; a setting that needs a restart is
/// refused before anything is written; reset-cold creates no extension in the admin database;
/// a malformed PGPORT is refused, and so is a server without TLS under sslmode=require.
#[test]
fn a_server_hotlab_does_not_own_is_left_alone() {
    let _g = testing::serial();
    let ctx = testing::ctx("cli-external");
    let env = testing::env_of(&ctx);
    let out = xtask(&env, &["server", "start"]);
    testing::succeeds(&out);
    let cluster = testing::test_cluster();
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cluster.join("server.json")).unwrap())
            .unwrap();
    let port = state["port"].as_u64().unwrap();
    let pw = std::fs::read_to_string(cluster.join("password")).unwrap();
    let url = format!("postgres://hotlab:{}@127.0.0.1:{port}/postgres", pw.trim());
    let mut admin = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    for sql in [
        "ALTER SYSTEM RESET work_mem",
        "SELECT pg_reload_conf()",
        "DROP EXTENSION IF EXISTS pg_buffercache",
    ] {
        admin.batch_execute(sql).unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let mut ext = env.clone();
    ext.push((steps::env::BACKEND.into(), "external".into()));
    ext.push(("DATABASE_URL".into(), url.clone()));
    let auto = |c: &mut postgres::Client, name: &str| -> Option<String> {
        c.query_opt(
            "SELECT setting FROM pg_file_settings WHERE sourcefile LIKE '%postgresql.auto.conf' AND name = $1 ORDER BY seqno DESC LIMIT 1",
            &[&name],
        )
        .unwrap()
        .map(|r| r.get(0))
    };
    let show = |c: &mut postgres::Client, name: &str| -> String {
        c.query_one(&format!("SHOW {name}"), &[]).unwrap().get(0)
    };
    let default_work_mem = show(&mut admin, "work_mem");
    assert_ne!(default_work_mem, "7777kB");
    let spv = std::fs::read_to_string(ctx.data_dir.join("studies/spv.yaml")).unwrap();
    let study = |name: &str, setting: &str| {
        let text = spv
            .replacen("name: spv", &format!("name: {name}"), 1)
            .replacen(
                "default_size: article\n",
                &format!("default_size: article\nserver:\n  {setting}\n"),
                1,
            );
        std::fs::write(ctx.data_dir.join(format!("studies/{name}.yaml")), text).unwrap();
        let out = xtask(
            &ext,
            &["init", "--study", name, "--size", "ci", "--arms", "ff100"],
        );
        testing::succeeds(&out);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    // Left alone, the difference recorded.
    let arm = study("ext", "work_mem: 7777kB");
    let out = xtask(&ext, &["build", "--run", &arm]);
    testing::succeeds(&out);
    assert_eq!(show(&mut admin, "work_mem"), default_work_mem);
    assert_eq!(auto(&mut admin, "work_mem"), None);
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(Path::new(&arm).join("meta.json")).unwrap())
            .unwrap();
    assert_eq!(
        meta["server_settings_diff"][0]["name"], "work_mem",
        "{meta}"
    );
    assert_eq!(meta["server_settings_diff"][0]["study"], "7777kB", "{meta}");
    // A cold start without a restart (no HOTLAB_RESTART_CMD): the arm's own relations are
    // evicted from shared buffers (PostgreSQL 18: pg_buffercache_evict_relation), and the
    // confirmation finds none of them left.
    let db = meta["build"]["database"].as_str().unwrap().to_string();
    let arm_url = format!("{}/{db}", url.rsplit_once('/').unwrap().0);
    let mut in_arm = postgres::Client::connect(&arm_url, postgres::NoTls).unwrap();
    in_arm.query_one("SELECT count(*) FROM spv", &[]).unwrap();
    drop(in_arm);
    let out = xtask(&ext, &["reset-cold", "--run", &arm]);
    testing::succeeds(&out);
    let resets = std::fs::read_to_string(Path::new(&arm).join("reset.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(resets.lines().last().unwrap()).unwrap();
    let action = |name: &str| {
        last["actions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["action"] == name)
            .map(|a| a["outcome"].as_str().unwrap().to_string())
            .unwrap_or_default()
    };
    assert!(action("evict").starts_with("evicted "), "{last}");
    assert!(action("os_cache").starts_with("not done"), "{last}");
    assert_eq!(last["cold"], true, "{last}");
    // Applied when asked, and restored.
    let out = xtask(&ext, &["build", "--run", &arm, "--apply-server-settings"]);
    testing::succeeds(&out);
    assert_eq!(show(&mut admin, "work_mem"), "7777kB");
    let out = xtask(&ext, &["restore-settings", "--run", &arm]);
    testing::succeeds(&out);
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(auto(&mut admin, "work_mem"), None);
    assert_eq!(show(&mut admin, "work_mem"), default_work_mem);
    // A setting that needs a restart is refused before anything is written.
    let before = auto(&mut admin, "shared_buffers");
    let arm2 = study("ext2", "shared_buffers: 129MB");
    fails(
        &xtask(&ext, &["build", "--run", &arm2, "--apply-server-settings"]),
        &[
            "shared_buffers",
            "need a server restart",
            "nothing was changed",
        ],
    );
    assert_eq!(auto(&mut admin, "shared_buffers"), before);
    // reset-cold before any build: pg_buffercache in hotlab's own probe database only.
    let out = xtask(&ext, &["reset-cold"]);
    testing::succeeds(&out);
    let n: i64 = admin
        .query_one(
            "SELECT count(*) FROM pg_extension WHERE extname = 'pg_buffercache'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(
        n, 0,
        "reset-cold created an extension in the admin database"
    );
    // Connection settings that cannot be honoured are refused.
    let mut bad_port = env.clone();
    bad_port.push((steps::env::BACKEND.into(), "external".into()));
    bad_port.push(("PGHOST".into(), "127.0.0.1".into()));
    bad_port.push(("PGPORT".into(), "54x32".into()));
    fails(
        &xtask(&bad_port, &["server", "start"]),
        &["PGPORT", "54x32"],
    );
    let mut tls = env.clone();
    tls.push((steps::env::BACKEND.into(), "external".into()));
    tls.push(("DATABASE_URL".into(), format!("{url}?sslmode=require")));
    fails(
        &xtask(&tls, &["server", "start"]),
        &["refused TLS", "sslmode=require"],
    );
}

/// Run directories land in the checkout the command runs in (found from the working directory),
/// not in the one that holds the binary.
#[test]
fn run_directories_land_in_the_working_checkout() {
    let ctx = testing::ctx("cli-root");
    let other = ctx.data_dir.join("other-checkout");
    std::fs::create_dir_all(other.join("steps")).unwrap();
    std::fs::write(other.join("steps/Cargo.toml"), "").unwrap();
    std::fs::write(other.join("justfile"), "").unwrap();
    std::fs::create_dir_all(other.join("data/studies")).unwrap();
    std::fs::copy(
        ctx.data_dir.join("studies/spv.yaml"),
        other.join("data/studies/spv.yaml"),
    )
    .unwrap();
    let env: Vec<(String, String)> = testing::env_of(&ctx)
        .into_iter()
        .filter(|(k, _)| k != steps::env::DATA_DIR)
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["init", "--study", "spv", "--arms", "ff100"])
        .current_dir(other.join("steps"))
        .envs(env.iter().cloned())
        .env_remove(steps::env::DATA_DIR)
        .output()
        .unwrap();
    testing::succeeds(&out);
    let arm = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        arm.starts_with(&other.join("data/runs").display().to_string()),
        "the run directory went to {arm}"
    );
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

/// Runs xtask with `args`, sends it `signal` (2 SIGINT, 15 SIGTERM) after `after_ms`, and
/// returns what it printed and how it exited.
fn interrupt(env: &[(String, String)], args: &[&str], after_ms: u64, signal: i32) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .envs(env.iter().cloned())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(after_ms));
    // SAFETY: sending a signal to our own child process.
    unsafe { libc_kill(child.id() as i32, signal) };
    child.wait_with_output().unwrap()
}

/// Results over time, bad input: each one line naming the problem and the command that fixes it.
#[test]
fn history_and_baseline_input_is_checked() {
    let ctx = testing::ctx("cli-history");
    let env = testing::env_of(&ctx);
    let runs = ctx.data_dir.join("runs");
    // Nothing analyzed yet.
    fails(
        &xtask(&env, &["history"]),
        &["no run with results", "just demo"],
    );
    fails(
        &xtask(&env, &["history", "--since", "soon"]),
        &["soon", "30d"],
    );
    // A run directory whose results were never written: history names the rebuild.
    let golden = steps::ctx::project_root().join("steps/tests/data/spv-ci");
    let sweep = runs.join("spv/20261202-133150-golden");
    for arm in ["ff100", "ff50"] {
        copy_run(&golden.join(arm), &sweep.join(arm));
    }
    let out = xtask(&env, &["history"]);
    fails(&out, &["--rebuild-index"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("2 run(s)"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fails(
        &xtask(
            &env,
            &[
                "analyze",
                "--rebuild-index",
                &ctx.data_dir.join("studies").display().to_string(),
            ],
        ),
        &["no run directories"],
    );
    let out = xtask(
        &env,
        &["analyze", "--rebuild-index", &runs.display().to_string()],
    );
    testing::succeeds(&out);
    let out = xtask(&env, &["history", "ff50"]);
    testing::succeeds(&out);
    let listing = String::from_utf8_lossy(&out.stdout);
    assert_eq!(listing.lines().count(), 2, "{listing}");
    assert!(
        listing.contains("ff50") && !listing.contains("ff100"),
        "{listing}"
    );
    fails(
        &xtask(&env, &["history", "--arm", "ff75"]),
        &["no run matches arm=ff75", "arms ff100, ff50"],
    );
    // A baseline that does not exist, or holds another study.
    let arm = sweep.join("ff50").display().to_string();
    fails(
        &xtask(
            &env,
            &["analyze", &arm, "--baseline", "/nonexistent/hotlab"],
        ),
        &["--baseline /nonexistent/hotlab does not exist"],
    );
    let other = ctx.data_dir.join("other");
    copy_run(&golden.join("ff100"), &other);
    let meta = other.join("meta.json");
    let text = std::fs::read_to_string(&meta)
        .unwrap()
        .replace("\"study\": \"spv\"", "\"study\": \"other\"");
    std::fs::write(&meta, text).unwrap();
    fails(
        &xtask(
            &env,
            &["analyze", &arm, "--baseline", &other.display().to_string()],
        ),
        &["no run of study spv", "history"],
    );
    std::fs::remove_dir_all(&ctx.data_dir).ok();
}

/// The files `analyze` reads of a run directory, copied from `from` into `to`.
fn copy_run(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.join("snapshots")).unwrap();
    for f in [
        "meta.json",
        "workload.json",
        "snapshots/tables.csv",
        "snapshots/database.csv",
    ] {
        std::fs::copy(from.join(f), to.join(f)).unwrap();
    }
}
