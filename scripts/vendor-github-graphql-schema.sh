#!/bin/sh
# Regenerates integration/ghstandin/testdata/graphql/schema.docs.graphql:
# GitHub's official GraphQL schema (the public schema.docs.graphql that
# GitHub publishes, as the npm package @octokit/graphql-schema republishes
# it in schema.graphql, MIT), vendored whole, and the LICENSE beside it.
# The GitHub stand-in validates every GraphQL query and mutation wo sends
# against it. Run it by hand to bump VERSION; tests never download anything.
#
#   scripts/vendor-github-graphql-schema.sh             # the pinned VERSION
#   VERSION=15.27.0 scripts/vendor-github-graphql-schema.sh
#
# Needs npm (the npm registry reachable) and tar.
set -eu

VERSION=${VERSION:-15.26.1}
here=$(cd "$(dirname "$0")/.." && pwd)
out="$here/integration/ghstandin/testdata/graphql"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# npm pack checks the tarball against the registry's integrity hash.
(cd "$tmp" && npm pack --silent "@octokit/graphql-schema@$VERSION" >/dev/null && tar xzf octokit-graphql-schema-"$VERSION".tgz)
cp "$tmp/package/schema.graphql" "$out/schema.docs.graphql"
cp "$tmp/package/LICENSE.md" "$out/LICENSE"
echo "vendored @octokit/graphql-schema $VERSION into $out; update the version in $out/README.md"
