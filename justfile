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

# Show the recipes
default:
    @just --list

# Start, stop or inspect the server: start | stop | status | psql
[group('server')]
server ACTION='status':
    cargo xtask server {{ACTION}}

# Create a run directory for a study; prints one arm directory per line
[group('steps')]
init STUDY SIZE='' *ARGS:
    cargo xtask init --study {{STUDY}} {{ if SIZE != '' { '--size ' + SIZE } else { '' } }} {{ARGS}}

# Checkpoint, stop, drop the OS cache, start; record what happened in RUN/reset.jsonl
[group('steps')]
reset-cold RUN:
    cargo xtask reset-cold --run {{RUN}}

# Create RUN's database from the cached template (loading it the first time)
[group('steps')]
build RUN:
    cargo xtask build --run {{RUN}}

# Set RUN's fillfactor and rewrite the study's tables with VACUUM FULL
[group('steps')]
apply-fillfactor RUN:
    cargo xtask apply-fillfactor --run {{RUN}}

# Run RUN's timed workload with statistics snapshots
[group('steps')]
run RUN:
    cargo xtask run --run {{RUN}}

# Take one statistics sample into RUN (phase: pre, rampup, measured, post)
[group('steps')]
snapshot RUN PHASE='post':
    cargo xtask snapshot --run {{RUN}} --phase {{PHASE}}

# Time VACUUM of the study's tables in RUN
[group('steps')]
vacuum-timing RUN:
    cargo xtask vacuum-timing --run {{RUN}}

# Verify the TPC-C consistency conditions of a TPROC-C arm
[group('steps')]
check RUN:
    cargo xtask check --run {{RUN}}

# Which tables could use a fillfactor? The article's three tests, read-only, on DATABASE_URL/PG*
# or one of hotlab's arms (--run ARM); prints the selection table, writes advise.json
[group('steps')]
advise *ARGS:
    cargo xtask advise {{ARGS}}

# Turn run directories into summary.md, summary.json, report.html
[group('steps')]
analyze +DIRS:
    cargo xtask analyze {{DIRS}}

# Every run with results, one line each; words match a study, arm, size or table, flags filter
# (`just history tprocc --since 30d`, `just history stock --pg 18.6`)
[group('steps')]
history *ARGS:
    cargo xtask history {{ARGS}}

# Put back server settings that build --apply-server-settings changed (external servers)
[group('steps')]
restore-settings RUN:
    {{XTASK}} restore-settings --run {{RUN}}

# One arm's full cold cycle: reset, build, fillfactor + rewrite, reset, measure, advise, vacuum; on any
# exit (a failure or Ctrl-C too) the server settings a build changed are restored
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

# Every arm of STUDY at SIZE through every step, then analyze (a failed arm does not stop the others)
[group('studies')]
study STUDY SIZE='' *ARGS:
    #!/usr/bin/env bash
    set -euo pipefail
    cargo build --release --quiet --package xtask
    # One binary for the whole study: a source edit made while it runs cannot rebuild a step
    # between two arms (each arm runs the code the first one ran).
    export HOTLAB_XTASK="${CARGO_TARGET_DIR:-{{justfile_directory()}}/target}/release/xtask"
    arms=$("$HOTLAB_XTASK" init --study {{STUDY}} {{ if SIZE != '' { '--size ' + SIZE } else { '' } }} {{ARGS}})
    for arm in $arms; do
        rc=0
        just arm "$arm" || rc=$?
        if [ "$rc" -eq 130 ]; then echo "interrupted; the arms so far are kept" >&2; break; fi
        if [ "$rc" -ne 0 ]; then echo "arm $arm failed (see its meta.json); going on" >&2; fi
    done
    "$HOTLAB_XTASK" analyze "$(dirname "$(echo "$arms" | head -n 1)")"

# Run a study's arms at the same time on one server, each in its own database, the size's clients
# split among them (a test of shared resources, not a comparison): `just together small-table quick --arms ori,onlyff`
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
    "$x" analyze "$(dirname "$(echo "$arms" | head -n 1)")"

# Which fillfactor does TABLE need? Each value through the full cold cycle, then the ladder
[group('studies')]
sweep TABLE +FFS:
    just study {{STUDY}} {{SIZE}} --label sweep-{{TABLE}} --sweep {{TABLE}} --values {{replace(FFS, ' ', ',')}}

# Run a study's arms; REPEATS=n runs them n times in alternating order (A B B A …)
[group('studies')]
compare STUDY SIZE='':
    just study {{STUDY}} {{SIZE}} --repeats {{REPEATS}}

# Study 000 (HammerDB TPROC-C): default vs tuned per-table fillfactor at SIZE (default: the
# article-small scale model; `REPEATS=2 just hexacluster` for A B B A)
[group('studies')]
hexacluster SIZE='scaled':
    just compare hexacluster-tprocc {{SIZE}}

# Study 001/004: small_table upsert, default vs hash partitions vs fillfactor 50 (table and
# indexes, table only, indexes only) at SIZE; `REPEATS=2 just small-table` for A B … B A
[group('studies')]
small-table SIZE='quick':
    just compare small-table {{SIZE}}

# Study 001's H3: ARMS run at the same time on one server, the clients split among them
[group('studies')]
small-table-together SIZE='quick' ARMS='ori,onlyff':
    just together small-table {{SIZE}} --arms {{ARMS}}

# Study 003: fillfactor 100/75/50/30 on 10,000 rows, 1M row updates
[group('studies')]
spv SIZE='article':
    just study spv {{SIZE}}

# The demo (589 s measured on 2 cores after the first compile): study 000 at the quick size
# (default vs tuned), then `sweep order_line 100 90 80`, one report over both
[group('studies')]
demo:
    #!/usr/bin/env bash
    set -euo pipefail
    start=$(date +%s)
    runs="${HOTLAB_DATA_DIR:-data}/runs/hexacluster-tprocc"
    just study hexacluster-tprocc quick --label demo-compare
    compare=$(ls -td "$runs"/*-demo-compare | head -n 1)
    just study hexacluster-tprocc quick --label demo-sweep-order_line --sweep order_line --values 100,90,80
    sweep=$(ls -td "$runs"/*-demo-sweep-order_line | head -n 1)
    out="${HOTLAB_DATA_DIR:-data}/runs/demo/$(date +%Y%m%d-%H%M%S)"
    cargo xtask analyze "$compare" "$sweep" --out "$out" > /dev/null
    echo "demo: $(( $(date +%s) - start )) s; comparison $compare, sweep $sweep"
    echo "report: $out/report.html"

# Benchmarks against pgbench in the same run: `just bench build`, `just bench driver --vus 2`
[group('dev')]
bench WHAT *ARGS:
    cargo xtask bench {{WHAT}} {{ARGS}}

# The test suite (starts its own PostgreSQL 18)
[group('dev')]
test:
    cargo test
