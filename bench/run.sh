#!/usr/bin/env bash
# Runs every comparison of bench/ — persistence round trip, growth of the
# canonical encoder and decoder against the fastest JSON engines, request
# building, stream accumulation, token counting — with go test -bench, COUNT times
# interleaved (every benchmark once, then again, so a change in the machine's
# load hits every library alike), then writes docs/benchmarks.md and
# docs/benchmarks-growth.svg from the medians.
#
#   bench/run.sh                      # COUNT=5, BENCHTIME=1s
#   COUNT=10 BENCHTIME=2s bench/run.sh
#   BENCH='Persist' bench/run.sh      # only the benchmarks matching a regexp
#   REPORT_ONLY=1 bench/run.sh        # rewrite the report from bench/results/
#   GROWTH_ROUNDS=15 bench/run.sh     # rounds of the interleaved growth measurement (11)
#
# The raw output stays in bench/results/ (committed beside the report, so the
# numbers can be checked and re-summarised, e.g. with benchstat).
set -euo pipefail
cd "$(dirname "$0")"
COUNT=${COUNT:-5}
BENCHTIME=${BENCHTIME:-1s}
BENCH=${BENCH:-.}
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

results=results
mkdir -p "$results"
if [ -z "${REPORT_ONLY:-}" ]; then
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT

# module dir : package dir, relative to bench/. growth is not among them: it
# is measured by its own interleaved test, below.
pkgs=(".:persist" ".:request" ".:stream" ".:tokencount" "genkit:.")
# Only what this script writes goes: gateway.txt (bench/gateway), record.txt
# (the store's Record benchmark) and tools.txt come from their own commands,
# named in their first lines or in docs/benchmarks.md.
for p in "${pkgs[@]}"; do
	rm -f "$results/$(basename "$(cd "${p%%:*}/${p#*:}" && pwd)").txt"
done
rm -f "$results"/growth.txt "$results"/growth-alone.txt "$results"/fidelity.jsonl "$results"/machine.env

echo "== tests (the equality and fidelity checks behind the numbers)"
go test -count=1 ./...
(cd genkit && go test -count=1 ./...)
GOEXPERIMENT=jsonv2 go test -count=1 ./growth

echo "== fidelity"
go test -count=1 -run '^TestFidelity$' ./persist -args -fidelity.out="$PWD/$results/fidelity.jsonl" >/dev/null
(cd genkit && go test -count=1 -run '^TestFidelity$' . -args -fidelity.out="$PWD/../$results/fidelity.jsonl" >/dev/null)

echo "== building test binaries"
for p in "${pkgs[@]}"; do
	mod=${p%%:*} pkg=${p#*:}
	name=$(basename "$(cd "$mod/$pkg" && pwd)")
	(cd "$mod" && go test -c -o "$bin/$name.test" "./$pkg")
done
# growth measures encoding/json/v2 too, which needs the experiment.
GOEXPERIMENT=jsonv2 go test -c -o "$bin/growth.test" ./growth

load_start=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "")
for i in $(seq 1 "$COUNT"); do
	echo "== run $i of $COUNT"
	for p in "${pkgs[@]}"; do
		mod=${p%%:*} pkg=${p#*:}
		dir=$(cd "$mod/$pkg" && pwd)
		name=$(basename "$dir")
		# Run in the package directory: the tests read their test data
		# relative to it.
		(cd "$dir" && "$bin/$name.test" -test.run '^$' -test.bench "$BENCH" -test.benchmem \
			-test.count 1 -test.benchtime "$BENCHTIME") >>"$results/$name.txt"
	done
done
# The growth of the canonical encoder and decoder from 100 to 100,000
# messages: every size interleaved in one process, GROWTH_ROUNDS rounds
# (bench/growth TestInterleaved; sizes measured tens of seconds apart
# drift by more than the 10% the target allows). Then convo alone in its
# process, whose heap is a fraction of the run with every engine: the run
# convo's own growth is judged by.
if echo GrowthInterleaved | grep -qE -- "$BENCH"; then
	echo "== growth, interleaved"
	(cd growth && "$bin/growth.test" -test.run '^TestInterleaved$' -growth.rounds "${GROWTH_ROUNDS:-11}") >"$results/growth.txt"
	echo "== growth, convo alone"
	(cd growth && "$bin/growth.test" -test.run '^TestInterleaved$' -growth.rounds "${GROWTH_ROUNDS:-11}" -growth.engines convo) >"$results/growth-alone.txt"
fi
load_end=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "")
{
	echo "cpu=\"$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//')\""
	echo "cores=\"$(nproc) (GOMAXPROCS $(nproc))\""
	echo "gover=\"$(go version | cut -d' ' -f3)\""
	echo "date=\"$(date -u +%Y-%m-%d)\""
	echo "count=\"$COUNT\""
	echo "benchtime=\"$BENCHTIME\""
	echo "load_start=\"$load_start\""
	echo "load_end=\"$load_end\""
} >"$results/machine.env"
fi
# shellcheck source=/dev/null
. "$results/machine.env"

echo "== report"
go run ./cmd/report \
	-md ../docs/benchmarks.md -svg ../docs/benchmarks-growth.svg \
	-fidelity "$results/fidelity.jsonl" -notes analysis.md \
	-cpu "$cpu" -cores "$cores" -go "$gover" -date "$date" -count "$count" -benchtime "$benchtime" \
	-load-start "$load_start" -load-end "$load_end" \
	"$results"/*.txt
echo "wrote docs/benchmarks.md and docs/benchmarks-growth.svg"
