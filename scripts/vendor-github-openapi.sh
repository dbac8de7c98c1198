#!/bin/sh
# Regenerates integration/testdata/openapi/github-subset.json: the part of
# GitHub's official OpenAPI description of the REST API (npm package
# @octokit/openapi, MIT) that covers the operations wo calls, with every
# component those operations reference. Run it by hand after a change to
# github/client.go or to bump VERSION; tests never download anything.
#
#   scripts/vendor-github-openapi.sh            # the pinned VERSION
#   VERSION=23.1.0 scripts/vendor-github-openapi.sh
#
# Needs node and npm (the npm registry reachable, or the package in npm's
# cache: npm_config_offline=true scripts/vendor-github-openapi.sh).
set -eu

VERSION=${VERSION:-23.0.2}
here=$(cd "$(dirname "$0")/.." && pwd)
out="$here/integration/testdata/openapi/github-subset.json"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# npm pack checks the tarball against the registry's integrity hash.
(cd "$tmp" && npm pack --silent "@octokit/openapi@$VERSION" >/dev/null && tar xzf octokit-openapi-"$VERSION".tgz)

# The operations wo sends (github/client.go); keep this list in step with it.
# The source is generated/api.github.com.json: the same description as
# generated/api.github.com.deref.json, with $refs kept, so that a component
# that several operations use is vendored once.
node - "$tmp/package" "$VERSION" "$out" <<'JS'
const fs = require("fs");
const [pkgDir, version, out] = process.argv.slice(2);
const spec = JSON.parse(fs.readFileSync(pkgDir + "/generated/api.github.com.json", "utf8"));
const license = fs.readFileSync(pkgDir + "/LICENSE", "utf8").split("\n")[0];
const operations = [
  ["get", "/user"],
  ["get", "/repos/{owner}/{repo}/pulls"],
  ["post", "/repos/{owner}/{repo}/pulls"],
  ["get", "/repos/{owner}/{repo}/pulls/{pull_number}"],
  ["patch", "/repos/{owner}/{repo}/pulls/{pull_number}"],
  ["get", "/repos/{owner}/{repo}/pulls/{pull_number}/reviews"],
  ["get", "/repos/{owner}/{repo}/pulls/{pull_number}/comments"],
  ["get", "/repos/{owner}/{repo}/issues/{issue_number}/comments"],
  ["post", "/repos/{owner}/{repo}/issues/{issue_number}/comments"],
  ["delete", "/repos/{owner}/{repo}/issues/comments/{comment_id}"],
  ["get", "/repos/{owner}/{repo}/commits/{ref}/statuses"],
  ["get", "/repos/{owner}/{repo}/commits/{ref}/check-runs"],
  ["post", "/repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers"],
  // Stacked pull requests and the asynchronous merge (the stand-in serves
  // them; wo's client is being taught them).
  ["get", "/repos/{owner}/{repo}/stacks"],
  ["post", "/repos/{owner}/{repo}/stacks"],
  ["get", "/repos/{owner}/{repo}/stacks/{stack_number}"],
  ["post", "/repos/{owner}/{repo}/stacks/{stack_number}/add"],
  ["post", "/repos/{owner}/{repo}/stacks/{stack_number}/unstack"],
  ["put", "/repos/{owner}/{repo}/pulls/{pull_number}/merge-async"],
  ["get", "/repos/{owner}/{repo}/pulls/{pull_number}/merge-async/{uuid}"],
  ["put", "/repos/{owner}/{repo}/pulls/{pull_number}/merge"],
];
const paths = {};
for (const [method, path] of operations) {
  const item = spec.paths[path];
  if (!item || !item[method]) throw new Error(`${method} ${path} is not in @octokit/openapi@${version}`);
  paths[path] = paths[path] || {};
  for (const k of Object.keys(item)) if (!["get", "put", "post", "delete", "options", "head", "patch", "trace"].includes(k)) paths[path][k] = item[k];
  paths[path][method] = item[method];
}
// Every component reachable from the kept operations, transitively.
const components = {};
const seen = new Set();
const walk = (v) => {
  if (Array.isArray(v)) return v.forEach(walk);
  if (v === null || typeof v !== "object") return;
  for (const [k, x] of Object.entries(v)) {
    if (k === "$ref" && typeof x === "string") {
      const m = /^#\/components\/([^/]+)\/(.+)$/.exec(x);
      if (!m) throw new Error("unexpected $ref " + x);
      if (seen.has(x)) continue;
      seen.add(x);
      const [, kind, name] = m;
      const target = spec.components[kind][name];
      if (!target) throw new Error("dangling $ref " + x);
      (components[kind] = components[kind] || {})[name] = target;
      walk(target);
    } else walk(x);
  }
};
walk(paths);
const sorted = {};
for (const kind of Object.keys(spec.components)) {
  if (!components[kind]) continue;
  sorted[kind] = {};
  for (const name of Object.keys(components[kind]).sort()) sorted[kind][name] = components[kind][name];
}
const subset = {
  openapi: spec.openapi,
  info: {
    ...spec.info,
    "x-wo-vendored": {
      source: `npm @octokit/openapi@${version}, generated/api.github.com.json`,
      license: `MIT (${license})`,
      regenerate: "scripts/vendor-github-openapi.sh",
      operations: operations.map(([m, p]) => `${m.toUpperCase()} ${p}`),
    },
  },
  servers: spec.servers,
  paths,
  components: sorted,
};
fs.writeFileSync(out, JSON.stringify(subset, null, 1) + "\n");
console.error(`wrote ${out}: ${operations.length} operations, ${seen.size} components from @octokit/openapi@${version}`);
JS
cp "$tmp/package/LICENSE" "$here/integration/testdata/openapi/LICENSE"
