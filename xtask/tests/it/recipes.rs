//! The command line against the justfile, read through clap's `CommandFactory` (not by reading
//! `main.rs`): every `cargo xtask` subcommand has a recipe of the same name, and every
//! subcommand a recipe calls exists.

use clap::CommandFactory;

fn justfile() -> String {
    std::fs::read_to_string(steps::ctx::project_root().join("justfile")).unwrap()
}

fn subcommands() -> Vec<String> {
    xtask::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|n| n != "help")
        .collect()
}

/// Recipe names: lines that start a recipe (`name ARGS:` at column 0).
fn recipes(just: &str) -> Vec<String> {
    just.lines()
        .filter(|l| {
            !l.starts_with([' ', '\t', '#', '[', '@']) && l.contains(':') && !l.contains(":=")
        })
        .filter_map(|l| l.split([' ', ':']).next())
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_subcommand_has_a_recipe() {
    let subs = subcommands();
    assert!(subs.len() >= 10, "found only {subs:?}");
    let recipes = recipes(&justfile());
    for s in &subs {
        assert!(
            recipes.contains(s),
            "no justfile recipe for `cargo xtask {s}` (recipes: {recipes:?})"
        );
    }
}

#[test]
fn every_subcommand_a_recipe_calls_exists() {
    let subs = subcommands();
    let just = justfile();
    let mut called = 0;
    for line in just.lines() {
        for marker in ["cargo xtask ", "{{XTASK}} ", "$HOTLAB_XTASK "] {
            for part in line.split(marker).skip(1) {
                let sub: String = part
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '-')
                    .collect();
                if sub.is_empty() {
                    continue;
                }
                called += 1;
                assert!(
                    subs.contains(&sub),
                    "the justfile calls `{marker}{sub}`, which is no subcommand: {line}"
                );
            }
        }
    }
    assert!(called >= 10, "found only {called} calls in the justfile");
}

/// `just --list` reads as a menu: every recipe carries one whole sentence in a `[doc("…")]`
/// attribute (a comment of several lines shows only its last line there).
#[test]
fn every_recipe_has_one_sentence_of_doc() {
    let just = justfile();
    let lines: Vec<&str> = just.lines().collect();
    let names = recipes(&just);
    assert!(names.len() >= 20, "found only {names:?}");
    for name in &names {
        let i = lines
            .iter()
            .position(|l| l.starts_with(&format!("{name} ")) || l.starts_with(&format!("{name}:")))
            .unwrap();
        let mut j = i;
        let mut doc = None;
        while j > 0 && lines[j - 1].starts_with('[') {
            j -= 1;
            if let Some(d) = lines[j]
                .strip_prefix("[doc(\"")
                .and_then(|d| d.strip_suffix("\")]"))
            {
                doc = Some(d);
            }
        }
        let doc = doc.unwrap_or_else(|| {
            panic!("recipe {name} has no [doc(\"…\")]: `just --list` would show only a comment's last line")
        });
        assert!(
            doc.starts_with(|c: char| c.is_ascii_uppercase())
                && doc.ends_with('.')
                && !doc[..doc.len() - 1].contains(". "),
            "recipe {name}: its doc is not one sentence: {doc}"
        );
        assert!(
            j == 0 || !lines[j - 1].starts_with('#'),
            "recipe {name}: a comment above its attributes, which `just --list` would show instead"
        );
    }
}
