#!/usr/bin/env bash
# Runs openapi-backend's own test suite (from an upstream checkout) three times:
#   src        on the checkout's own TypeScript sources (does the checkout pass on itself?)
#   unpatched  on the published openapi-backend@<installed version> (compiled JS)
#   patched    on node_modules/openapi-backend as installed here: exactly what we ship
# and prints, for each, the runner's summary and the failing tests, then which failures the patch
# adds or removes. In the last two runs the test files' own imports of ./backend, ./router,
# ./validation, ./utils, ./refparser and ./index load the package's compiled .js files instead of
# the checkout's src/*.ts (a jest resolver, or a vite plugin for a vitest checkout); nothing else
# is redirected. node_modules/openapi-backend is read afresh on every run, so after the patch
# changes, rerunning this re-tests the new patch (even before the .patch file is regenerated).
#
# Usage:  patches/upstream-tests.sh /path/to/openapi-backend-checkout    (KEEP=1 keeps the scratch folder)
# Exit:   0 when the patched run fails no test that the unpatched run passes, 1 otherwise.
#
# The script fetches nothing (the unpatched package comes from the npm cache, which npm ci filled,
# or else from reversing the patch on a copy of node_modules/openapi-backend). Get the checkout
# once, outside this repository, at the installed version's tag (tags are bare: 5.21.2), or the
# newest tag your clone has (the mirror used for patches/README.md stops at 5.17.0):
#   git clone https://github.com/openapistack/openapi-backend /tmp/oab-git
#   git -C /tmp/oab-git worktree add --detach /tmp/oab 5.17.0
#   (cd /tmp/oab && npm ci)
# or from a bare mirror:
#   mkdir /tmp/oab && git --git-dir=<mirror> archive 5.17.0 | tar -x -C /tmp/oab && (cd /tmp/oab && npm ci)
set -euo pipefail

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
UP="$(cd "$1" && pwd)"
PKG="$ROOT/node_modules/openapi-backend"

[ -f "$PKG/package.json" ] || { echo "no $PKG: run npm ci in $ROOT first" >&2; exit 2; }
[ "$(node -p "require('$UP/package.json').name" 2>/dev/null)" = openapi-backend ] || { echo "$UP is not an openapi-backend checkout" >&2; exit 2; }
[ -d "$UP/node_modules" ] || { echo "$UP/node_modules is missing: run npm ci in $UP first" >&2; exit 2; }
VERSION="$(node -p "require('$PKG/package.json').version")"
# the patch, or a patch-package sequence of them (openapi-backend+<version>+001+<name>.patch, ...)
PATCHES=()
for f in "$ROOT/patches/openapi-backend+$VERSION.patch" "$ROOT/patches/openapi-backend+$VERSION+"*.patch; do
  if [ -f "$f" ]; then PATCHES+=("$f"); fi
done
PATCH_NAMES="$(for f in "${PATCHES[@]}"; do printf '%s ' "patches/${f##*/}"; done)"
PATCH_NAMES="${PATCH_NAMES% }"
UP_VERSION="$(node -p "require('$UP/package.json').version")"
UP_REV="$(git -C "$UP" describe --tags --always 2>/dev/null || echo "no git work tree")"
RUNNER=jest
if node -e "const p = require('$UP/package.json'); process.exit({ ...p.dependencies, ...p.devDependencies }.vitest ? 0 : 1)"; then
  RUNNER=vitest
fi

echo "upstream checkout:  $UP (package.json $UP_VERSION; git $UP_REV; $RUNNER)"
echo "package under test: $PKG ($VERSION); patch: ${PATCH_NAMES:-none}"
if [ "$UP_VERSION" != "$VERSION" ]; then
  echo "NOTE: these are the tests of $UP_VERSION, the package is $VERSION: a test that also fails unpatched"
  echo "      tests a change between the two versions, not the patch."
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/oab-upstream-tests.XXXXXX")"
if [ -n "${KEEP:-}" ]; then echo "scratch folder (kept): $WORK"; else trap 'rm -rf "$WORK"' EXIT; fi

# The published package for the unpatched run: from the npm cache (offline, the tarball checked
# against package-lock.json's integrity), else a copy of node_modules/openapi-backend with the patch
# reversed (which fails while node_modules is being edited and the patch not yet regenerated).
# It sits in a node_modules folder whose parent's node_modules is this project's, so its require()s
# find the same dependency versions as the installed package's.
UNPATCHED=""
COPY="$WORK/unpatched/node_modules/openapi-backend"
mkdir -p "$COPY" "$WORK/pack"
ln -s "$ROOT/node_modules" "$WORK/node_modules"
INTEGRITY="$(node -p "(require('$ROOT/package-lock.json').packages['node_modules/openapi-backend'] || {}).integrity || ''")"
TARBALL="$(cd "$WORK/pack" && npm pack "openapi-backend@$VERSION" --offline --silent 2>/dev/null | tail -n 1)" || TARBALL=""
if [ -n "$TARBALL" ] && [ -n "$INTEGRITY" ] &&
  [ "$(node -p "'sha512-' + require('crypto').createHash('sha512').update(require('fs').readFileSync('$WORK/pack/$TARBALL')).digest('base64')")" = "$INTEGRITY" ]; then
  tar -xzf "$WORK/pack/$TARBALL" -C "$COPY" --strip-components=1
  # the package's own nested dependencies, as installed (patch-package touches only its *.js)
  if [ -d "$PKG/node_modules" ]; then cp -R "$PKG/node_modules" "$COPY/node_modules"; fi
  UNPATCHED="$COPY"
  echo "unpatched package:  openapi-backend@$VERSION from the npm cache (integrity as in package-lock.json)"
elif [ ${#PATCHES[@]} -gt 0 ]; then
  cp -R "$PKG/." "$COPY"
  reversed=yes
  for ((i = ${#PATCHES[@]} - 1; i >= 0; i--)); do
    (cd "$COPY" && patch -R -p3 -s -f --no-backup-if-mismatch <"${PATCHES[$i]}" >/dev/null 2>&1) || { reversed=""; break; }
  done
  if [ -n "$reversed" ]; then
    UNPATCHED="$COPY"
    echo "unpatched package:  node_modules/openapi-backend with $PATCH_NAMES reversed"
  else
    echo "NOTE: openapi-backend@$VERSION is not in the npm cache (npm cache add openapi-backend@$VERSION), and"
    echo "      $PATCH_NAMES does not reverse cleanly on node_modules/openapi-backend (edited since the"
    echo "      patch was made? regenerate it: npx patch-package openapi-backend). No unpatched run."
  fi
else
  echo "NOTE: openapi-backend@$VERSION is not in the npm cache and there is no patches/openapi-backend+$VERSION*.patch. No unpatched run."
fi
if [ -n "$UNPATCHED" ] && [ ${#PATCHES[@]} -gt 0 ] && diff -q <(cd "$UNPATCHED" && cat ./*.js) <(cd "$PKG" && cat ./*.js) >/dev/null; then
  echo "WARNING: node_modules/openapi-backend is the published package, UNPATCHED: run npx patch-package"
fi

MODULES='backend|router|validation|utils|refparser|index'

# Writes the configuration of one run. $1: its name; $2: the folder of the compiled package ("": the checkout's src).
write_config() {
  local name="$1" dir="$2"
  if [ "$RUNNER" = jest ]; then
    node - "$UP" "$dir" "$MODULES" "$WORK/$name.resolver.cjs" >"$WORK/$name.config.json" <<'JS'
const [up, dir, modules, resolverFile] = process.argv.slice(2);
const fs = require('fs');
const path = require('path');
// the checkout's own jest configuration
let base;
for (const file of ['jest.config.js', 'jest.config.cjs', 'jest.config.json']) {
  if (fs.existsSync(path.join(up, file))) { base = require(path.join(up, file)); break; }
}
base = base || require(path.join(up, 'package.json')).jest || {};
const config = { ...base, rootDir: up, silent: true, verbose: false };
if (dir) {
  // jest's require() cannot load an ES module: when the package's @apidevtools/json-schema-ref-parser
  // is ESM-only (16.x, used from openapi-backend 5.18 on), the package's refparser.js (which the patch
  // does not touch) gets the checkout's CommonJS copy, in the unpatched and the patched run alike.
  const refParser = '@apidevtools/json-schema-ref-parser';
  const manifest = (from) => { try { return require(require.resolve(`${refParser}/package.json`, { paths: [from] })); } catch { return undefined; } };
  const theirs = manifest(dir), ours = manifest(up);
  let refParserFile = '';
  if (theirs && theirs.type === 'module' && ours && ours.type !== 'module') {
    refParserFile = require.resolve(refParser, { paths: [up] });
    process.stderr.write(`NOTE: jest cannot require() ${refParser} ${theirs.version} (ESM only): the package's refparser.js gets the checkout's ${ours.version}\n`);
  }
  // only the test files' own imports are redirected (jest's internals have a ./utils too)
  fs.writeFileSync(resolverFile, `const path = require('path');
const tests = ${JSON.stringify(path.join(up, 'src'))}, dir = ${JSON.stringify(dir)}, refParserFile = ${JSON.stringify(refParserFile)};
const own = /^\\.\\/(${modules})$/;
module.exports = (request, options) => {
  const m = own.exec(request);
  if (m && (options.basedir === tests || options.basedir.startsWith(tests + path.sep))) return path.join(dir, m[1] + '.js');
  if (refParserFile && request === ${JSON.stringify(refParser)} && options.basedir === dir) return refParserFile;
  return options.defaultResolver(request, options);
};
`);
  config.resolver = resolverFile;
}
process.stdout.write(JSON.stringify(config, null, 2));
JS
  else
    local base="" f
    for f in vitest.config.ts vitest.config.mts vitest.config.js vitest.config.mjs vite.config.ts vite.config.mts vite.config.js vite.config.mjs; do
      if [ -f "$UP/$f" ]; then base="$UP/$f"; break; fi
    done
    node - "$UP" "$dir" "$MODULES" "$base" >"$WORK/$name.config.mjs" <<'JS'
const [up, dir, modules, base] = process.argv.slice(2);
// the checkout's own vitest configuration, plus (for a compiled package) a plugin that sends the
// test files' own imports of ./backend, ./router ... to the package's .js files
process.stdout.write(`import path from 'node:path';
${base ? `import base from ${JSON.stringify(base)};` : 'const base = {};'}
const tests = ${JSON.stringify(up + '/src/')}, dir = ${JSON.stringify(dir)};
const own = /^\\.\\/(${modules})$/;
const config = typeof base === 'function' ? await base({ mode: 'test', command: 'serve' }) : base;
const redirect = {
  name: 'openapi-backend-compiled',
  enforce: 'pre',
  resolveId(source, importer) {
    const m = own.exec(source);
    if (dir && m && importer && importer.startsWith(tests)) return path.join(dir, m[1] + '.js');
    return null;
  },
};
export default { ...config, root: ${JSON.stringify(up)}, plugins: [...(config.plugins || []), redirect] };
`);
JS
  fi
}

# Runs one configuration. $1: its name; $2: as for write_config. Prints the summary and the failing
# tests, writes $WORK/$1.failed.
run() {
  local name="$1" status=0
  echo
  echo "=== $name ==="
  write_config "$name" "$2" 2>&1
  if [ "$RUNNER" = jest ]; then
    (cd "$UP" && NODE_ENV=test "$UP/node_modules/.bin/jest" --config "$WORK/$name.config.json" --ci --no-watchman \
      --json --outputFile "$WORK/$name.json" >"$WORK/$name.log" 2>&1) || status=$?
  else
    (cd "$UP" && NODE_ENV=test NO_COLOR=1 "$UP/node_modules/.bin/vitest" run --config "$WORK/$name.config.mjs" --root "$UP" \
      --reporter=default --reporter=json --outputFile.json="$WORK/$name.json" >"$WORK/$name.log" 2>&1) || status=$?
  fi
  : >"$WORK/$name.failed"
  if [ ! -s "$WORK/$name.json" ]; then
    echo "no results ($RUNNER exited $status); the end of its output:"
    tail -n 40 "$WORK/$name.log"
    echo "(no results)" >"$WORK/$name.failed"
    return
  fi
  grep -E '^ *(Test Suites:|Tests:|Time:|Test Files |Tests |Duration )' "$WORK/$name.log" || true
  node - "$WORK/$name.json" "$UP" >"$WORK/$name.failed" <<'JS'
const [file, up] = process.argv.slice(2);
const report = require(file);
const failed = [];
for (const suite of report.testResults || []) {
  const where = suite.name.replace(up + '/', '');
  const tests = suite.assertionResults || [];
  if (suite.status === 'failed' && !tests.some((t) => t.status === 'failed')) {
    const reason = String(suite.message || '').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('●'))[0] || '';
    failed.push(`${where} › (the file failed to run: ${reason})`);
  }
  for (const t of tests) if (t.status === 'failed') failed.push(`${where} › ${t.fullName || [...(t.ancestorTitles || []), t.title].join(' ')}`);
}
process.stdout.write(failed.map((line) => line + '\n').join(''));
JS
  node -p "const r = require('$WORK/$name.json'); \`passed \${r.numPassedTests}, failed \${r.numFailedTests}, of \${r.numTotalTests} tests\`"
  if [ -s "$WORK/$name.failed" ]; then
    echo "failing:"
    sed 's/^/  /' "$WORK/$name.failed"
  fi
  [ "$status" -eq 0 ] || [ -s "$WORK/$name.failed" ] || echo "($RUNNER exited $status; see its output with KEEP=1: $WORK/$name.log)"
}

run src ""
if [ -n "$UNPATCHED" ]; then run unpatched "$UNPATCHED"; fi
run patched "$PKG"

echo
if [ "$(node -p "require('$WORK/patched.json').numPassedTests" 2>/dev/null || echo 0)" = 0 ]; then
  echo "the patched run passed no test: the result is not usable"
  exit 1
fi
if [ -z "$UNPATCHED" ]; then
  [ ! -s "$WORK/patched.failed" ]
  exit
fi
echo "=== patched against unpatched ==="
broken="$(comm -13 <(sort "$WORK/unpatched.failed") <(sort "$WORK/patched.failed"))"
fixed="$(comm -23 <(sort "$WORK/unpatched.failed") <(sort "$WORK/patched.failed"))"
if [ -n "$broken" ]; then echo "failing only with the patch:"; echo "$broken" | sed 's/^/  /'; else echo "the patch makes no upstream test fail"; fi
if [ -n "$fixed" ]; then echo "passing only with the patch:"; echo "$fixed" | sed 's/^/  /'; fi
[ -z "$broken" ]
