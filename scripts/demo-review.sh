#!/usr/bin/env bash
# The second half of `make demo`: a review procedure run for real, on the
# embedded store, against a local bare remote and the GitHub stand-in — a
# test double of GitHub's API on loopback, not GitHub — whose scripted
# reviewer leaves two comments, then approves, and a scripted agent that
# fixes them. Arguments: the demo folder, wo, gh-standin, prview.
set -euo pipefail
demo=$1 wo=$2 standin=$3 prview=$4
export XDG_STATE_HOME=$demo/state WO_STORE=
gitc() { git -C "$demo/repo" -c user.name="wo demo" -c user.email=demo@example.com "$@"; }
say() { printf '\n== %s\n' "$*"; }

say "a local repository: a base branch, a change on main, and a bare remote"
git init -q -b main "$demo/repo"
mkdir -p "$demo/repo/internal/config" "$demo/repo/internal/types" "$demo/repo/internal/server"
echo "# demo" > "$demo/repo/README.md"
gitc add -A && gitc commit -q -m base && gitc branch code-review-base
printf 'package config\n\nconst Port = 8080\n' > "$demo/repo/internal/config/config.go"
printf 'package types\n\ntype ID string\n' > "$demo/repo/internal/types/types.go"
printf 'package server\n\nfunc Run() {}\n' > "$demo/repo/internal/server/server.go"
gitc add -A && gitc commit -q -m "the big change"
git init -q --bare "$demo/origin.git"
gitc remote add origin "$demo/origin.git" && gitc push -q origin code-review-base

say "the GitHub stand-in (a test double): its reviewer comments twice, then approves"
"$standin" --token demo-token --repo "acme/demo=$demo/origin.git" --review-delay 1500ms \
  --round 'internal/config/config.go:3:Say what Port is for.|internal/types/types.go:3:Document what an ID names.' \
  --round '' --url-file "$demo/gh-url" 2>/dev/null &
standin_pid=$!
trap 'kill $standin_pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$demo/gh-url" ] && break; sleep 0.1; done
export GITHUB_TOKEN=demo-token GITHUB_API_URL=$(cat "$demo/gh-url")
export WO_AGENT="$PWD/fixtures/demo-agent.sh" WO_REVIEW_WAIT=30s WO_POLL_INTERVAL=200ms

say "wo import: an epic of two pull requests; wo validate checks the first as wo run would"
sed "s|@DEMO@|$demo|g" fixtures/demo-git.json > "$demo/demo-git.json"
"$wo" import "$demo/demo-git.json"
"$wo" validate task_demo_01

say "wo run task_demo_01 --dry-run: the plan, changing nothing"
"$wo" run task_demo_01 --dry-run

say "wo run task_demo_01, interrupted (Ctrl-C) while it waits for the review"
"$wo" run task_demo_01 &
run_pid=$!
for _ in $(seq 300); do
  [ "$("$wo" show task_demo_01 --jq .data.task.work_order.state.current_step 2>/dev/null)" = 6 ] && break
  sleep 0.1
done
sleep 0.3
kill -INT "$run_pid"
code=0; wait "$run_pid" || code=$?
echo "(wo run stopped with exit $code, as shells expect of an interrupted command)"
"$wo" status task_demo_01

say "wo run task_demo_01 again: it goes on from the step it was in"
"$wo" run task_demo_01

say "the pull request as the stand-in has it: the description with the table of the stack, and the review's comments"
"$prview" "$GITHUB_API_URL" acme/demo 1

say "the agent's fix, as pushed"
git --no-pager -C "$demo/origin.git" show --format='%h %s' review/01-foundation

say "wo log task_demo_01: the timeline, the interruption included"
"$wo" log task_demo_01

say "wo status task_demo_epic: the epic and its two pull requests"
"$wo" status task_demo_epic

say "wo undo task_demo_01 --dry-run: what wo would take back, and why it may"
"$wo" undo task_demo_01 --dry-run

say "the same procedure against CodeRabbit as it behaves on GitHub (the stand-in's coderabbit mode)"
echo "   it skips pull requests into other branches than the default one, reports through a status,"
echo "   and posts no review at all for a clean re-review; wo asks it for each review"
"$standin" --token demo-token --repo "acme/demo=$demo/origin.git" --review-delay 300ms --mode coderabbit --default-branch main \
  --round 'internal/config/config.go:3:Say what Port is for.|internal/types/types.go:3:Document what an ID names.' \
  --round '' --url-file "$demo/gh-url-cr" 2>/dev/null &
cr_pid=$!
trap 'kill $standin_pid $cr_pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$demo/gh-url-cr" ] && break; sleep 0.1; done
export GITHUB_API_URL=$(cat "$demo/gh-url-cr")
sed -e 's/task_demo_/task_demo_cr_/g' -e 's|review/0\([12]\)-|review/cr-0\1-|g' -e 's/pr-0\([12]\)-/pr-cr-0\1-/g' \
  -e 's/"repo": "acme\/demo"/"repo": "acme\/demo", "reviewers": ["coderabbitai"]/' -e 's/"duration_minutes": 10/"duration_minutes": 25/' \
  "$demo/demo-git.json" > "$demo/demo-cr.json"
"$wo" import "$demo/demo-cr.json"
"$wo" run task_demo_cr_01
say "wo show task_demo_cr_01: the review, and where CodeRabbit stood"
"$wo" show task_demo_cr_01 | sed -n '/^Review at the last check/,$p'
