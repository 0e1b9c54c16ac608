//! Tidy: every `cargo xtask` subcommand has a justfile recipe, the compose file keeps the
//! server on loopback with scram and the same settings as the embedded one, every source file
//! opens with a `//!` doc, and the code is formatted and clippy-clean.

use std::path::PathBuf;

fn root() -> PathBuf {
    steps::ctx::project_root()
}

#[test]
fn every_subcommand_has_a_recipe() {
    let main = std::fs::read_to_string(root().join("xtask/src/main.rs")).unwrap();
    let just = std::fs::read_to_string(root().join("justfile")).unwrap();
    // Variants of `enum Step` in CamelCase → kebab-case subcommands.
    let body = main
        .split("enum Step {")
        .nth(1)
        .unwrap()
        .split("\n}")
        .next()
        .unwrap();
    let mut n = 0;
    for line in body.lines() {
        let t = line.trim();
        if t.starts_with("///") || t.is_empty() {
            continue;
        }
        let name: String = t.split('(').next().unwrap().to_string();
        let mut kebab = String::new();
        for (i, c) in name.chars().enumerate() {
            if c.is_uppercase() && i > 0 {
                kebab.push('-');
            }
            kebab.push(c.to_ascii_lowercase());
        }
        assert!(
            just.lines().any(|l| l.starts_with(&format!("{kebab} ")) || l.starts_with(&format!("{kebab}:"))),
            "no justfile recipe for `cargo xtask {kebab}`"
        );
        n += 1;
    }
    assert!(n >= 9, "found only {n} subcommands");
}

#[test]
fn compose_file_is_loopback_scram_and_postgres_18() {
    let text = std::fs::read_to_string(root().join("docker-compose.yml")).unwrap();
    let doc: serde_json::Value = serde_norway::from_str(&text).unwrap();
    let pg = &doc["services"]["postgres"];
    assert_eq!(pg["image"], "postgres:18");
    for p in pg["ports"].as_array().unwrap() {
        assert!(
            p.as_str().unwrap().starts_with("127.0.0.1:"),
            "port {p} not bound to loopback"
        );
    }
    assert_eq!(
        pg["environment"]["POSTGRES_HOST_AUTH_METHOD"],
        "scram-sha-256"
    );
    assert!(!text.contains("trust"));
    let cmd: Vec<&str> = pg["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for s in [
        "shared_preload_libraries=pg_stat_statements",
        "pg_stat_statements.track=all",
        "track_io_timing=on",
        "track_wal_io_timing=on",
    ] {
        assert!(cmd.contains(&s), "compose lacks {s}");
    }
}

#[test]
fn every_source_file_has_a_doc_header() {
    let mut stack = vec![root().join("steps/src"), root().join("xtask/src")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                assert!(text.starts_with("//!"), "{} has no //! header", p.display());
            }
        }
    }
}

#[test]
fn code_is_formatted() {
    let out = std::process::Command::new("cargo")
        .args(["fmt", "--all", "--", "--check"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "run `cargo fmt --all`:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn clippy_is_clean() {
    let out = std::process::Command::new("cargo")
        .args(["clippy", "--quiet", "--all-targets", "--", "-D", "warnings"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "fix clippy's findings:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
