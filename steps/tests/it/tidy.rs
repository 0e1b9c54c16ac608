//! Tidy: modules import one way (no cycle, nothing upward of the layers in `lib.rs`), the compose
//! file keeps the server on loopback with scram and the same settings as the embedded one, every
//! source file opens with a `//!` doc, and the code is formatted and clippy-clean. (Subcommands
//! against justfile recipes: `xtask/tests/it/recipes.rs`.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    steps::ctx::project_root()
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

/// The layers of `steps/src/lib.rs`, bottom first: a module may import its own layer's modules
/// below it in this list and any lower layer, never a higher one. A workload's room spans
/// layers: its size type sits under the study model (which lists it), its tables over `analyze`
/// (whose kit they use); `study/size.rs` ties them together without either importing the other.
const LAYERS: &[&[&str]] = &[
    &["env"],
    &["ctx"],
    &["io", "interrupt", "stats"],
    &["proc", "host", "churn"],
    &["study::bounds", "study::kind"],
    &["workload::*::size"],
    &["study"],
    &["rundir", "advise::files"],
    &["server"],
    &["snapshot"],
    &["workload"],
    &[
        "init",
        "reset_cold",
        "build",
        "apply_fillfactor",
        "run",
        "vacuum_timing",
        "restore_settings",
        "check",
        "analyze",
        "history",
        "advise",
    ],
    &["workload::*::tables"],
    &["bench"],
    &["testing"],
];

/// Module path of a source file: `study/scale.rs` → `study::scale`, `server/mod.rs` → `server`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|l| l == "mod") {
        parts.pop();
    }
    parts.join("::")
}

/// Source without comments, string literals and `#[cfg(test)]` modules.
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' => {
                while let Some(c) = chars.next() {
                    if c == '\\' {
                        chars.next();
                    } else if c == '"' {
                        break;
                    }
                }
                out.push_str("\"\"");
            }
            _ => out.push(c),
        }
    }
    out
}

/// The crate modules a file's code names: `crate::a::b`, `crate::{a, b::c}`, `crate::a::{b, c}`,
/// and the same through `super::` and `self::`.
fn imports_of(module: &str, code: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let parts: Vec<&str> = module.split("::").collect();
    let parent = parts[..parts.len() - 1].join("::");
    let abs = |p: &str| {
        if p.is_empty() {
            "crate::".to_string()
        } else {
            format!("crate::{p}::")
        }
    };
    // `$crate::` in a macro's body is imported where the macro is expanded, not where it is
    // written (`study/kind.rs` writes the enums that `study/size.rs` expands).
    let code = code
        .replace("$crate::", "$")
        .replace("super::", &abs(&parent))
        .replace("self::", &abs(module));
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    let mut paths = vec![];
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + 7..];
        let path: String = rest.chars().take_while(|c| ident(*c)).collect();
        let after = &rest[path.len()..];
        if let Some(group) = after.strip_prefix('{') {
            // Items of the group, split at its top level, each under `path`.
            let mut depth = 0;
            let mut cur = String::new();
            for ch in group.chars() {
                match ch {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        paths.push(format!("{path}{}", std::mem::take(&mut cur).trim()))
                    }
                    _ if depth == 0 => cur.push(ch),
                    _ => {}
                }
            }
            paths.push(format!("{path}{}", cur.trim()));
        } else {
            paths.push(path);
        }
    }
    // Paths relative to this module: its own submodules (`size::Size` in `study/mod.rs`).
    let prefix = format!("{module}::");
    for child in modules.iter().filter_map(|m| m.strip_prefix(&prefix)) {
        if child.contains("::") {
            continue;
        }
        let needle = format!("{child}::");
        let mut at = 0;
        while let Some(i) = code[at..].find(&needle) {
            let start = at + i;
            let before = code[..start].chars().next_back();
            if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                paths.push(format!("{module}::{child}"));
            }
            at = start + needle.len();
        }
    }
    let mut out = BTreeSet::new();
    for p in paths {
        let segs: Vec<&str> = p.trim().split("::").filter(|s| !s.is_empty()).collect();
        // The longest prefix that is a module.
        for n in (1..=segs.len()).rev() {
            let cand = segs[..n].join("::");
            if modules.contains(&cand) {
                if cand != module {
                    out.insert(cand);
                }
                break;
            }
        }
    }
    out
}

/// Every module of `steps/src` and the modules it imports.
fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = root().join("steps/src");
    let mut files = vec![];
    let mut stack = vec![src.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") && !p.ends_with("lib.rs") {
                files.push(p);
            }
        }
    }
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
    files
        .iter()
        .map(|f| {
            let m = module_of(&src, f);
            let code = code_of(&std::fs::read_to_string(f).unwrap());
            let deps = imports_of(&m, &code, &modules);
            (m, deps)
        })
        .collect()
}

/// Strongly connected sets of more than one module (Tarjan).
fn cycles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = vec![];
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: vec![],
        on: BTreeSet::new(),
        out: vec![],
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// The entry of LAYERS that places a module, and its layer: the most specific entry naming it. An
/// entry is a top-level module (`study`) or a path whose `*` stands for any one segment
/// (`workload::*::size`), so the files of a workload's room sit at the layer of what they are.
fn placement(module: &str) -> Option<(usize, &'static str)> {
    let segs: Vec<&str> = module.split("::").collect();
    let names = |entry: &str| {
        let pat: Vec<&str> = entry.split("::").collect();
        pat.len() <= segs.len() && pat.iter().zip(&segs).all(|(p, s)| p == s || *p == "*")
    };
    LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, l)| l.iter().map(move |e| (i, *e)))
        .filter(|(_, e)| names(e))
        .max_by_key(|(_, e)| e.split("::").count())
}

fn layer_of(module: &str) -> Option<usize> {
    placement(module).map(|(i, _)| i)
}

/// A module placed by a path entry is a unit of its own: `workload::spv::size::x` becomes
/// `workload/spv/size::x`, so a room's parts at different layers are not one unit.
fn placed_unit(module: &str) -> String {
    match placement(module) {
        Some((_, entry)) if entry.contains("::") => {
            let k = entry.split("::").count();
            let segs: Vec<&str> = module.split("::").collect();
            let mut out = segs[..k].join("/");
            for s in &segs[k..] {
                out.push_str("::");
                out.push_str(s);
            }
            out
        }
        _ => module.to_string(),
    }
}

/// The graph between units: a module and its submodules are one unit, so an edge counts at the
/// level where its two ends part (`analyze::tprocc -> analyze::charts` is an edge between
/// siblings; `analyze::spv -> analyze` is a child using its parent and no edge).
fn unit_graph(g: &BTreeMap<String, BTreeSet<String>>) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, deps) in g {
        for b in deps {
            let (sa, sb): (Vec<&str>, Vec<&str>) =
                (a.split("::").collect(), b.split("::").collect());
            let common = sa.iter().zip(&sb).take_while(|(x, y)| x == y).count();
            if common == sa.len() || common == sb.len() {
                continue;
            }
            out.entry(sa[..=common].join("::"))
                .or_default()
                .insert(sb[..=common].join("::"));
        }
    }
    out
}

#[test]
fn modules_import_one_way() {
    let g = import_graph();
    assert!(g.len() > 30, "found only {} modules", g.len());
    assert!(
        g["run"].contains("rundir") && g["rundir"].contains("study"),
        "the import scanner lost known edges: {g:?}"
    );
    let placed: BTreeMap<String, BTreeSet<String>> = g
        .iter()
        .map(|(m, d)| (placed_unit(m), d.iter().map(|x| placed_unit(x)).collect()))
        .collect();
    if std::env::var_os(steps::env::PRINT_IMPORTS).is_some() {
        for (m, d) in unit_graph(&placed) {
            println!("{m} -> {}", d.into_iter().collect::<Vec<_>>().join(" "));
        }
    }
    let found = cycles(&unit_graph(&placed));
    assert!(
        found.is_empty(),
        "modules import each other in a loop: {found:?}"
    );
    let mut upward = vec![];
    for (m, deps) in &g {
        let Some(lm) = layer_of(m) else {
            panic!("module {m} is in no layer of LAYERS (and of lib.rs); place it");
        };
        for d in deps {
            let ld = layer_of(d).unwrap_or(usize::MAX);
            if ld > lm {
                upward.push(format!("{m} -> {d}"));
            }
        }
    }
    assert!(upward.is_empty(), "imports running upward: {upward:?}");
}

/// `analyze` asks the rooms through `StudyTables` and never imports `workload` (ARCHITECTURE.md):
/// what a workload's tables need is in its room.
#[test]
fn analyze_imports_no_workload() {
    let g = import_graph();
    let found: Vec<String> = g
        .iter()
        .filter(|(m, _)| m.as_str() == "analyze" || m.starts_with("analyze::"))
        .flat_map(|(m, d)| {
            d.iter()
                .filter(|x| x.as_str() == "workload" || x.starts_with("workload::"))
                .map(move |x| format!("{m} -> {x}"))
        })
        .collect();
    assert!(
        g.contains_key("analyze::mechanism") && found.is_empty(),
        "analyze imports a workload: {found:?}; move the code into the workload's room"
    );
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.insert("a".into(), BTreeSet::from(["b".to_string()]));
    g.insert("b".into(), BTreeSet::from(["c".to_string()]));
    g.insert("c".into(), BTreeSet::from(["a".to_string()]));
    g.insert("d".into(), BTreeSet::from(["a".to_string()]));
    assert_eq!(cycles(&g), vec![vec!["a", "b", "c"]]);
    // Siblings in a loop are a cycle; a child using its parent is not.
    let mut h: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    h.insert(
        "p::x".into(),
        BTreeSet::from(["p::y::z".to_string(), "p".to_string()]),
    );
    h.insert("p::y::z".into(), BTreeSet::from(["p::x".to_string()]));
    h.insert("p".into(), BTreeSet::from(["p::x".to_string()]));
    assert_eq!(cycles(&unit_graph(&h)), vec![vec!["p::x", "p::y"]]);
    let modules: BTreeSet<String> = ["x", "x::y", "z"].iter().map(|s| s.to_string()).collect();
    let code = "use crate::{z, x::y::Thing};\nlet a = \"crate::nope\"; // crate::z2\n";
    assert_eq!(
        imports_of("w", code, &modules),
        BTreeSet::from(["z".to_string(), "x::y".to_string()])
    );
    assert_eq!(
        imports_of("x", "let t = y::Thing; let u = zy::No;", &modules),
        BTreeSet::from(["x::y".to_string()])
    );
}

/// A constant's line in env.rs (public to the other crates or to this one).
fn is_const(line: &str) -> bool {
    line.starts_with("pub const ") || line.starts_with("pub(crate) const ")
}

/// The environment table of docs/safety.md as steps/src/env.rs declares it: one row per
/// constant, its doc comment as the meaning.
fn env_table() -> String {
    let text = std::fs::read_to_string(root().join("steps/src/env.rs")).unwrap();
    let mut rows = vec![
        "| variable | meaning |".to_string(),
        "| --- | --- |".to_string(),
    ];
    let mut doc: Vec<&str> = vec![];
    for line in text.lines() {
        let t = line.trim();
        if let Some(d) = t.strip_prefix("///") {
            doc.push(d.trim());
            continue;
        }
        if is_const(t) {
            if let Some(name) = t.split('"').nth(1) {
                rows.push(format!("| `{name}` | {} |", doc.join(" ")));
            }
        }
        doc.clear();
    }
    rows.join("\n") + "\n"
}

const ENV_BEGIN: &str = "<!-- env-table: generated from steps/src/env.rs -->\n";
const ENV_END: &str = "<!-- /env-table -->";

#[test]
fn env_table_is_generated() {
    let path = root().join("docs/safety.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let i = text
        .find(ENV_BEGIN)
        .expect("docs/safety.md has the env-table markers")
        + ENV_BEGIN.len();
    let j = text
        .find(ENV_END)
        .expect("docs/safety.md has the env-table end marker");
    let want = env_table();
    if text[i..j] == want {
        return;
    }
    if std::env::var_os(steps::env::BLESS).is_some() {
        std::fs::write(&path, format!("{}{want}{}", &text[..i], &text[j..])).unwrap();
        return;
    }
    panic!(
        "docs/safety.md's environment table is not what steps/src/env.rs declares: regenerate it with `HOTLAB_BLESS=1 cargo test -p steps --test it tidy::env_table_is_generated`"
    );
}

/// Every `HOTLAB_…` name the code, the recipes or the docs use is declared in env.rs (and so in
/// the generated table).
#[test]
fn every_variable_is_declared_in_env_rs() {
    let env = std::fs::read_to_string(root().join("steps/src/env.rs")).unwrap();
    let declared: BTreeSet<String> = env
        .lines()
        .filter(|l| is_const(l.trim()))
        .filter_map(|l| l.split('"').nth(1).map(str::to_string))
        .collect();
    let mut files = vec![];
    for dir in ["steps/src", "xtask/src", "docs"] {
        collect(&root().join(dir), &mut files);
    }
    for f in [
        "justfile",
        "docker-compose.yml",
        ".ci/run",
        "README.md",
        "ARCHITECTURE.md",
    ] {
        files.push(root().join(f));
    }
    let mut undeclared = BTreeSet::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        for (i, _) in text.match_indices("HOTLAB_") {
            let name: String = text[i..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect();
            // "HOTLAB_" alone is the prefix, named in prose.
            if name.len() > "HOTLAB_".len() && !declared.contains(&name) {
                undeclared.insert(format!("{name} ({})", rel(f)));
            }
        }
    }
    assert!(
        undeclared.is_empty(),
        "variables not declared in steps/src/env.rs: {undeclared:?}; declare each there with a doc comment, then `HOTLAB_BLESS=1 cargo test -p steps --test it tidy::env_table_is_generated`"
    );
}

/// No `"HOTLAB_…"` string literal outside env.rs: code names a variable through its constant, so
/// env.rs is the one list (the docs' table is generated from it).
#[test]
fn no_variable_literal_outside_env_rs() {
    let mut files = vec![];
    for dir in ["steps/src", "xtask/src", "steps/tests", "xtask/tests"] {
        collect(&root().join(dir), &mut files);
    }
    let env = root().join("steps/src/env.rs");
    let mut found = vec![];
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs") && **f != env)
    {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            let hit = line.match_indices("\"HOTLAB_").any(|(i, _)| {
                line[i + 8..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_uppercase())
            });
            if hit {
                found.push(format!("{}:{}", rel(f), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "HOTLAB_ variables named by string literal outside steps/src/env.rs: {found:?}; use its constant (steps::env::NAME, or crate::env::NAME inside the crate)"
    );
}

/// ARCHITECTURE.md names every file under steps/src by its path from there (`analyze/load.rs`),
/// so a new module cannot arrive without its line in the code map.
#[test]
fn codemap_names_every_file() {
    let map = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let src = root().join("steps/src");
    let mut files = vec![];
    collect(&src, &mut files);
    let missing: Vec<String> = files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
        .map(|f| f.strip_prefix(&src).unwrap().display().to_string())
        .filter(|r| !map.contains(&format!("`{r}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "files under steps/src/ that ARCHITECTURE.md does not name (add a line to its code map): {missing:?}"
    );
}

/// The most lines a function in steps/src may run to, its signature and closing brace included.
const FN_BUDGET: usize = 100;

/// Longer by design, and why.
const LONG_BY_DESIGN: &[(&str, &str)] = &[
    (
        "workload/script/tables/small_table.rs every_figure",
        "one table: every figure the article printed, a row each in the article's order",
    ),
    (
        "workload/script/tables/small_table.rs hypotheses",
        "one table: a row per hypothesis, each with the pair of arms that tests it",
    ),
    (
        "workload/script/tables/mod.rs charts_of",
        "the study's charts, one after another in the order the report shows them",
    ),
    (
        "advise/mod.rs markdown",
        "advise's page, one section after another in the order it prints",
    ),
];

/// Every `fn` in a file with its length in lines: from the `fn` line to the closing brace at
/// its indentation (rustfmt's layout).
fn function_lengths(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = vec![];
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim_start();
        let indent = &l[..l.len() - t.len()];
        let rest = [
            "pub(crate) ",
            "pub(super) ",
            "pub ",
            "const ",
            "async ",
            "unsafe ",
        ]
        .iter()
        .fold(t, |r, p| r.strip_prefix(p).unwrap_or(r));
        let Some(name) = rest.strip_prefix("fn ") else {
            continue;
        };
        if l.trim_end().ends_with(';') {
            continue;
        }
        let name: String = name
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let close = format!("{indent}}}");
        if let Some(j) = lines[i + 1..].iter().position(|x| *x == close) {
            out.push((name, j + 2));
        }
    }
    out
}

/// No function in steps/src runs over `FN_BUDGET` lines unless `LONG_BY_DESIGN` says why.
#[test]
fn functions_stay_short() {
    let src = root().join("steps/src");
    let mut files = vec![];
    collect(&src, &mut files);
    let mut long = BTreeSet::new();
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "rs"))
    {
        let rel = f.strip_prefix(&src).unwrap().display().to_string();
        for (name, n) in function_lengths(&std::fs::read_to_string(f).unwrap()) {
            if n > FN_BUDGET {
                long.insert(format!("{rel} {name}"));
            }
        }
    }
    let allowed: BTreeSet<String> = LONG_BY_DESIGN.iter().map(|(k, _)| k.to_string()).collect();
    let new: Vec<&String> = long.difference(&allowed).collect();
    assert!(
        new.is_empty(),
        "functions over {FN_BUDGET} lines: {new:?}; split them (or, if a long one is the clearest form, add it to LONG_BY_DESIGN in steps/tests/it/tidy.rs with why)"
    );
    let stale: Vec<&String> = allowed.difference(&long).collect();
    assert!(
        stale.is_empty(),
        "no longer over {FN_BUDGET} lines (or gone): {stale:?}; remove them from the lists in steps/tests/it/tidy.rs"
    );
}

#[test]
fn function_lengths_count_to_the_closing_brace() {
    let code = "fn a() {\n    x;\n}\n\nimpl T {\n    pub(crate) fn b(&self) {\n        y;\n        z;\n    }\n    fn c();\n}\n";
    assert_eq!(
        function_lengths(code),
        vec![("a".to_string(), 3), ("b".to_string(), 4)]
    );
}

/// A file of the repository as its path from the root.
fn rel(f: &Path) -> String {
    f.strip_prefix(root()).unwrap().display().to_string()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// A path-like inline code span of the docs: it has a `/`, no space, no placeholder (`<arm>`,
/// `*`, `…`, `$VAR`, `{…}`), is not a URL or an absolute path, and either names a file (its last
/// part has an extension) or starts at a top-level entry of the repository (`steps/sql`), so
/// that a figure's label (`statements/s`) is not taken for a path.
fn path_like(span: &str) -> Option<&str> {
    let s = span.trim().trim_end_matches('/');
    let placeholder = s.chars().any(|c| "<>*…${}|=,;()'\"`".contains(c));
    let last = s.rsplit('/').next().unwrap_or("");
    let first = s.split('/').next().unwrap_or("");
    let file_or_repo = last.contains('.') || (!first.is_empty() && root().join(first).exists());
    (s.contains('/')
        && !s.contains(' ')
        && !s.contains("://")
        && !placeholder
        && !s.starts_with(['/', '~', '-', '.'])
        && s.chars().any(|c| c.is_ascii_alphabetic())
        && file_or_repo)
        .then_some(s)
}

/// Every path written in backticks in README.md and docs/ exists: in the repository, or, for a
/// run directory's own files (`snapshots/tables.csv`), in a checked-in run directory; paths
/// under `data/runs/` are what runs create.
#[test]
fn paths_in_the_docs_exist() {
    let mut files = vec![root().join("README.md")];
    collect(&root().join("docs"), &mut files);
    let run_dirs = [
        root().join("steps/tests/data/tprocc-ci-repeats/default-r1"),
        root().join("steps/tests/data/small-table-ci"),
    ];
    let mut missing = vec![];
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "md"))
    {
        let text = std::fs::read_to_string(f).unwrap();
        let mut fenced = false;
        for line in text.lines() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                continue;
            }
            if fenced {
                continue;
            }
            for (k, span) in line.split('`').enumerate() {
                let Some(p) = path_like(span).filter(|_| k % 2 == 1) else {
                    continue;
                };
                let exists = root().join(p).exists()
                    || p.starts_with("data/runs/")
                    || run_dirs.iter().any(|d| d.join(p).exists());
                if !exists {
                    missing.push(format!("{}: `{p}`", rel(f)));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "paths in backticks that do not exist: {missing:#?}"
    );
}

#[test]
fn path_like_spans() {
    assert_eq!(path_like("steps/src/env.rs"), Some("steps/src/env.rs"));
    assert_eq!(path_like("data/runs/"), Some("data/runs"));
    assert_eq!(path_like("nosuch/x.rs"), Some("nosuch/x.rs"));
    for not in [
        "statements/s",
        "<arm>/lock",
        "postgres://me@db1/app",
        "charts/*.svg",
        "1/20",
        "a b/c",
        "/var/lib/hotlab",
        "$HOTLAB_HOME/pg",
    ] {
        assert_eq!(path_like(not), None, "{not}");
    }
}
