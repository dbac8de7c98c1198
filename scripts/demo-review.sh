#!/usr/bin/env bash
# The second half of `make demo`: the seed's full procedure, on the embedded
# store, against a local bare remote and the GitHub stand-in — a test double
# of GitHub's API on loopback, not GitHub — with a scripted reviewer that
# leaves two comments, then approves, and a scripted agent that fixes them.
set -euo pipefail
demo=$1 wo=$2 standin=$3
export XDG_STATE_HOME=$demo/state WO_STORE=
gitc() { git -C "$demo/repo" -c user.name="wo demo" -c user.email=demo@example.com "$@"; }

echo "== a local repository with a base branch, a change on main, and a bare remote"
git init -q -b main "$demo/repo"
mkdir -p "$demo/repo/internal/config" "$demo/repo/internal/types"
echo "# demo" > "$demo/repo/README.md"
gitc add -A && gitc commit -q -m base && gitc branch code-review-base
printf 'package config\n\nconst Port = 8080\n' > "$demo/repo/internal/config/config.go"
printf 'package types\n\ntype ID string\n' > "$demo/repo/internal/types/types.go"
gitc add -A && gitc commit -q -m "the big change"
git init -q --bare "$demo/origin.git"
gitc remote add origin "$demo/origin.git" && gitc push -q origin code-review-base

echo "== the GitHub stand-in (a test double), with a reviewer: two comments, then approval"
"$standin" --token demo-token --repo "acme/demo=$demo/origin.git" --review-delay 300ms \
  --round 'internal/config/config.go:3:Say what Port is for.|internal/types/types.go:3:Document what an ID names.' \
  --round '' --url-file "$demo/gh-url" &
standin_pid=$!
trap 'kill $standin_pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$demo/gh-url" ] && break; sleep 0.1; done
export GITHUB_TOKEN=demo-token GITHUB_API_URL=$(cat "$demo/gh-url")
export WO_AGENT="$PWD/fixtures/demo-agent.sh" WO_REVIEW_WAIT=30s WO_POLL_INTERVAL=200ms

sed "s|@DEMO@|$demo|g" fixtures/demo-git.json > "$demo/demo-git.json"
echo "== wo import, wo run --dry-run, wo run"
"$wo" import "$demo/demo-git.json"
"$wo" run task_demo_01 --dry-run
"$wo" run task_demo_01

echo "== the result, as git sees it"
git -C "$demo/origin.git" log --oneline review/01-foundation
git -C "$demo/repo" worktree list
echo "== wo log task_demo_01"
"$wo" log task_demo_01
echo "== wo status task_demo_01"
"$wo" status task_demo_01

echo
echo "== the same procedure against CodeRabbit as it behaves on GitHub (the stand-in's coderabbit mode):"
echo "   it skips pull requests into other branches than the default one, reports through a status,"
echo "   and posts no review at all for a clean re-review; wo asks it for each review"
"$standin" --token demo-token --repo "acme/demo=$demo/origin.git" --review-delay 300ms --mode coderabbit --default-branch main \
  --round 'internal/config/config.go:3:Say what Port is for.|internal/types/types.go:3:Document what an ID names.' \
  --round '' --url-file "$demo/gh-url-cr" &
cr_pid=$!
trap 'kill $standin_pid $cr_pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$demo/gh-url-cr" ] && break; sleep 0.1; done
export GITHUB_API_URL=$(cat "$demo/gh-url-cr")
sed -e 's/task_demo_01/task_demo_cr/g' -e 's|review/01-foundation|review/01-coderabbit|' -e 's/pr-01-foundation/pr-01-coderabbit/' \
  -e 's/"repo": "acme\/demo"/"repo": "acme\/demo", "reviewers": ["coderabbitai"]/' -e 's/"duration_minutes": 10/"duration_minutes": 25/' "$demo/demo-git.json" > "$demo/demo-cr.json"
"$wo" import "$demo/demo-cr.json"
"$wo" run task_demo_cr
echo "== wo show task_demo_cr (the review, and where CodeRabbit stood)"
"$wo" show task_demo_cr | sed -n '/^Review at the last check/,$p'
