# hotlab: reproduce PostgreSQL HOT / fillfactor studies. `just --list` shows every recipe.
# Behaviour lives in Rust (`cargo xtask <step>`); recipes only compose steps.

set shell := ["bash", "-euo", "pipefail", "-c"]

# The study and size `just sweep` uses: STUDY=spv SIZE=ci just sweep spv 100 50 (without
# STUDY: the one study that updates the table)
STUDY := env_var_or_default('STUDY', 'auto')
SIZE := env_var_or_default('SIZE', 'quick')
# How many times `just compare` runs each arm (alternating order: A B B A …)
REPEATS := env_var_or_default('REPEATS', '1')
# How `just arm` calls a step: `cargo xtask` (builds first), or the binary `just study` built once
XTASK := env_var_or_default('HOTLAB_XTASK', 'cargo xtask')
# The study recipes end with the short answer (`analyze --brief`); VERBOSE=1 prints the whole
# summary instead (it is in summary.md either way)
BRIEF := if env_var_or_default('VERBOSE', '') == '' { '--brief' } else { '' }

[doc("Show the recipes.")]
default:
    @just --list

[doc("Start, stop or inspect the server: start, stop, status or psql.")]
[group('server')]
server ACTION='status':
    cargo xtask server {{ACTION}}

[doc("Create a run directory for a study and print one arm directory per line.")]
[group('steps')]
init STUDY SIZE='' *ARGS:
    cargo xtask init --study {{STUDY}} {{ if SIZE != '' { '--size ' + SIZE } else { '' } }} {{ARGS}}

[doc("Checkpoint, stop, drop the OS cache and start again, recording what happened in RUN/reset.jsonl.")]
[group('steps')]
reset-cold RUN:
    cargo xtask reset-cold --run {{RUN}}

[doc("Create RUN's database from the cached template, loading the template the first time.")]
[group('steps')]
build RUN:
    cargo xtask build --run {{RUN}}

[doc("Set RUN's fillfactor and rewrite the study's tables with VACUUM FULL.")]
[group('steps')]
apply-fillfactor RUN:
    cargo xtask apply-fillfactor --run {{RUN}}

[doc("Run RUN's timed workload with statistics snapshots.")]
[group('steps')]
run RUN:
    cargo xtask run --run {{RUN}}

[doc("Take one statistics sample into RUN (phase pre, rampup, measured or post).")]
[group('steps')]
snapshot RUN PHASE='post':
    cargo xtask snapshot --run {{RUN}} --phase {{PHASE}}

[doc("Time VACUUM of the study's tables in RUN.")]
[group('steps')]
vacuum-timing RUN:
    cargo xtask vacuum-timing --run {{RUN}}

[doc("Verify the TPC-C consistency conditions of a TPROC-C arm.")]
[group('steps')]
check RUN:
    cargo xtask check --run {{RUN}}

[doc("Say which tables could use a lower fillfactor: the article's three tests, read-only, on any PostgreSQL 16+ or on one of hotlab's arms.")]
[group('steps')]
advise *ARGS:
    cargo xtask advise {{ARGS}}

[doc("Turn run directories into summary.md, summary.json and report.html.")]
[group('steps')]
analyze +DIRS:
    cargo xtask analyze {{DIRS}}

[doc("List every run with results, one line each, filtered by words and flags (just history stock --since 30d).")]
[group('steps')]
history *ARGS:
    cargo xtask history {{ARGS}}

[doc("Put back the server settings that build --apply-server-settings changed on an external server.")]
[group('steps')]
restore-settings RUN:
    {{XTASK}} restore-settings --run {{RUN}}

[doc("Run one arm's full cold cycle, restoring on exit any server setting its build changed.")]
[group('steps')]
arm RUN:
    #!/usr/bin/env bash
    set -euo pipefail
    trap '{{XTASK}} restore-settings --run "{{RUN}}"' EXIT
    {{XTASK}} reset-cold --run "{{RUN}}"
    {{XTASK}} build --run "{{RUN}}"
    {{XTASK}} apply-fillfactor --run "{{RUN}}"
    {{XTASK}} reset-cold --run "{{RUN}}"
    {{XTASK}} snapshot --run "{{RUN}}" --phase pre
    {{XTASK}} run --run "{{RUN}}"
    # advise reads only statistics and catalogs (read-only); its failure does not fail the arm
    rc=0; {{XTASK}} advise --run "{{RUN}}" > /dev/null || rc=$?
    if [ "$rc" -eq 130 ]; then exit 130; fi
    {{XTASK}} vacuum-timing --run "{{RUN}}"

[doc("Run every arm of STUDY at SIZE through every step, then analyze; a failed arm does not stop the others.")]
[group('studies')]
study STUDY SIZE='' *ARGS:
    #!/usr/bin/env bash
    set -euo pipefail
    # One binary for the whole study: a source edit made while it runs cannot rebuild a step
    # between two arms (each arm runs the code the first one ran). A binary already named in
    # HOTLAB_XTASK is used as it is.
    if [ -z "${HOTLAB_XTASK:-}" ] || [ "$HOTLAB_XTASK" = "cargo xtask" ]; then
        cargo build --release --quiet --package xtask
        export HOTLAB_XTASK="${CARGO_TARGET_DIR:-{{justfile_directory()}}/target}/release/xtask"
    fi
    arms=$("$HOTLAB_XTASK" init --study {{STUDY}} {{ if SIZE != '' { '--size ' + SIZE } else { '' } }} {{ARGS}})
    for arm in $arms; do
        rc=0
        just arm "$arm" || rc=$?
        if [ "$rc" -eq 130 ]; then echo "interrupted; the arms so far are kept" >&2; break; fi
        if [ "$rc" -ne 0 ]; then echo "arm $arm failed (see its meta.json); going on" >&2; fi
    done
    "$HOTLAB_XTASK" analyze {{BRIEF}} "$(dirname "$(echo "$arms" | head -n 1)")"

[doc("Run a study's arms at the same time on one server with the clients split among them, a test of shared resources rather than a comparison.")]
[group('studies')]
together STUDY SIZE='' *ARGS:
    #!/usr/bin/env bash
    set -euo pipefail
    x="${HOTLAB_XTASK:-}"
    if [ -z "$x" ] || [ "$x" = "cargo xtask" ]; then
        cargo build --release --quiet --package xtask
        x="${CARGO_TARGET_DIR:-{{justfile_directory()}}/target}/release/xtask"
    fi
    arms=$("$x" init --study {{STUDY}} {{ if SIZE != '' { '--size ' + SIZE } else { '' } }} --together --label together {{ARGS}})
    trap 'for a in $arms; do "$x" restore-settings --run "$a"; done' EXIT
    # Built one after another (a template is built once), then every arm reset cold, then the
    # workloads started side by side.
    for arm in $arms; do
        "$x" reset-cold --run "$arm"
        "$x" build --run "$arm"
        "$x" apply-fillfactor --run "$arm"
    done
    for arm in $arms; do "$x" reset-cold --run "$arm"; done
    for arm in $arms; do "$x" snapshot --run "$arm" --phase pre; done
    pids=()
    for arm in $arms; do "$x" run --run "$arm" & pids+=($!); done
    rc=0
    for p in "${pids[@]}"; do wait "$p" || rc=$?; done
    if [ "$rc" -eq 130 ]; then echo "interrupted; the arms so far are kept" >&2; exit 130; fi
    for arm in $arms; do "$x" vacuum-timing --run "$arm" || echo "vacuum-timing of $arm failed" >&2; done
    "$x" analyze {{BRIEF}} "$(dirname "$(echo "$arms" | head -n 1)")"

[doc("Find which fillfactor TABLE needs: each value through the full cold cycle, then the ladder and a recommendation.")]
[group('studies')]
sweep TABLE +FFS:
    just study {{STUDY}} {{SIZE}} --label sweep-{{TABLE}} --sweep {{TABLE}} --values {{replace(FFS, ' ', ',')}}

[doc("Run a study's arms, REPEATS=n times in alternating order (A B B A).")]
[group('studies')]
compare STUDY SIZE='':
    just study {{STUDY}} {{SIZE}} --repeats {{REPEATS}}

[doc("Run study 000 (HammerDB TPROC-C), default against tuned fillfactors, at SIZE (default: the article-small scale model).")]
[group('studies')]
hexacluster SIZE='scaled':
    just compare hexacluster-tprocc {{SIZE}}

[doc("Run study 001/004 (the small_table upsert): default, hash-partitioned and fillfactor-50 arms at SIZE.")]
[group('studies')]
small-table SIZE='quick':
    just compare small-table {{SIZE}}

[doc("Run study 001's H3: ARMS at the same time on one server, the clients split among them.")]
[group('studies')]
small-table-together SIZE='quick' ARMS='ori,onlyff':
    just together small-table {{SIZE}} --arms {{ARMS}}

[doc("Run study 003: fillfactor 100/75/50/30 on 10,000 rows with 1M row updates.")]
[group('studies')]
spv SIZE='article':
    just study spv {{SIZE}}

[doc("Run the demo: study 000's comparison at the quick size, a sweep of order_line 100 90 80, and one report over both.")]
[group('studies')]
demo:
    #!/usr/bin/env bash
    set -euo pipefail
    start=$(date +%s)
    runs="${HOTLAB_DATA_DIR:-data}/runs/hexacluster-tprocc"
    # Each study's own answer is left out: the demo ends with one answer over both.
    just study hexacluster-tprocc quick --label demo-compare > /dev/null
    compare=$(ls -td "$runs"/*-demo-compare | head -n 1)
    just study hexacluster-tprocc quick --label demo-sweep-order_line --sweep order_line --values 100,90,80 > /dev/null
    sweep=$(ls -td "$runs"/*-demo-sweep-order_line | head -n 1)
    out="${HOTLAB_DATA_DIR:-data}/runs/demo/$(date +%Y%m%d-%H%M%S)"
    echo "demo: $(( $(date +%s) - start )) s; comparison $compare, sweep $sweep"
    cargo xtask analyze "$compare" "$sweep" --out "$out" {{BRIEF}}

[doc("Benchmark against pgbench in the same run (just bench build, just bench driver --vus 2).")]
[group('dev')]
bench WHAT *ARGS:
    cargo xtask bench {{WHAT}} {{ARGS}}

[doc("Run the test suite, which starts its own PostgreSQL 18.")]
[group('dev')]
test:
    cargo test
