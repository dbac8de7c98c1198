#!/usr/bin/env bash
# make test-stress: ROUNDS rounds (default 10) of two `make test` at once,
# each in a fresh clone of this checkout's HEAD, on the same machine (two
# cores: a load of 4 and more). It prints each run's result and the pass
# counts, keeps every log under $OUT (default a new temporary folder), and
# exits 1 when any run failed. docs/BENCHMARKS.md records its figures.
set -uo pipefail
rounds=${ROUNDS:-10}
out=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/wo-stress-XXXXXX")}
src=$(git rev-parse --show-toplevel)
head=$(git -C "$src" rev-parse --short HEAD)
echo "== make test-stress: $rounds round(s) of two make test at once, at $head; logs in $out"
passed=0 failed=0
for r in $(seq 1 "$rounds"); do
	pids=()
	for side in a b; do
		dir="$out/round-$r-$side"
		git clone -q --no-hardlinks "$src" "$dir" && git -C "$dir" checkout -q "$head"
		(cd "$dir" && make test > "$out/round-$r-$side.log" 2>&1) &
		pids+=($!)
	done
	load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo "?")
	for i in 0 1; do
		side=$([ $i = 0 ] && echo a || echo b)
		if wait "${pids[$i]}"; then
			passed=$((passed + 1)); echo "round $r $side: passed (load $load)"
		else
			failed=$((failed + 1)); echo "round $r $side: FAILED (load $load): $(grep -E '^(--- FAIL|== make test: these)' "$out/round-$r-$side.log" | head -3 | tr '\n' ' ')"
		fi
		rm -rf "$out/round-$r-$side"
	done
done
echo "stress: $passed passed, $failed failed"
[ "$failed" = 0 ]
