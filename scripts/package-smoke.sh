#!/usr/bin/env bash
# The package as users get it: `npm pack` (prepack builds), installed into an
# empty project with `npm install <tarball> --omit=dev` (no build step, no dev
# dependency) and checked to hold no package with an install script or a
# native build (the SQLite drivers, node:sqlite and libsql, need none); then
# `npx fsbucket serve` on a temporary data directory, one PUT and GET over
# the HTTP routes compared byte for byte, the console page and its script,
# and the object commands `cp` and `ls` beside the running server. It is run
# once per Node binary given (default: the `node` on PATH); each binary is
# put first on PATH, so npm, npx and the bin's `#!/usr/bin/env node` all run
# under it. A binary given as `plain:<binary>` installs with a plain
# `npm install <tarball>`, no --omit at all.
#
#   scripts/package-smoke.sh [--tarball fsbucket-x.y.z.tgz] [--tests "dist/test/a.test.js ..."] [[plain:]node-binary ...]
#
# --tests runs those test files of this checkout with tap under each binary
# too (the checkout must be built and its node_modules installed), and where
# the binary has node:sqlite, the SQLite driver's test once more on libsql
# (FSBUCKET_SQLITE_DRIVER=libsql).
#
# Three checks of how the package is published follow, per binary, each on
# a line of its own:
# - source maps: no file of the installed package names a source map that
#   is not in it, nor a map whose sources are not in it;
# - types: a consumer project (`"type": "module"`, with typescript and
#   @types/node installed from the registry's cache) type-checks
#   docs/library.md's first example and an import of startServer under
#   `strict` and moduleResolution node16, nodenext and bundler, where a deep
#   import is refused; the package declares @types/node as an optional peer
#   dependency, which the installed one satisfies (`npm ls`);
# - exports: Node imports `fsbucket` and `fsbucket/package.json`, resolves
#   `fsbucket/bin/fsbucket.js` and runs it, and refuses a deep import
#   (`fsbucket/dist/...`, ERR_PACKAGE_PATH_NOT_EXPORTED).
# Lines such as `package smoke <version>: ok`, `package exports <version>:
# FAILED (<step>)` close the output; the exit status is the number of
# FAILED lines.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

tarball=''
tests=''
binaries=()
while [ $# -gt 0 ]; do
  case "$1" in
    --tarball) tarball=$(realpath "$2"); shift 2 ;;
    --tests) tests=$2; shift 2 ;;
    -h|--help) sed -n '2,36p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    plain:*) binaries+=("plain:$(realpath "${1#plain:}")"); shift ;;
    *) binaries+=("$(realpath "$1")"); shift ;;
  esac
done
[ ${#binaries[@]} -gt 0 ] || binaries=("$(command -v node)")

work=$(mktemp -d "${TMPDIR:-/tmp}/fsbucket-smoke.XXXXXX")
server=''
trap 'rm -rf "$work"' EXIT

log () { echo "[smoke] $*" >&2; }

if [ -z "$tarball" ]; then
  log "npm pack (prepack builds)"
  tarball=$(cd "$root" && npm pack --pack-destination "$work" --silent | tail -n 1)
  tarball="$work/$tarball"
  [ -f "$tarball" ] || { echo "package smoke: FAILED (npm pack)"; exit 1; }
fi

free_port () {
  node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })'
}

# Puts one binary first on PATH (so npm and npx run under it too), in this shell.
use_node () {
  local bin=${1#plain:} dir=$2
  mkdir -p "$dir/path"
  ln -sfn "$bin" "$dir/path/node"
  export PATH="$dir/path:$PATH"
  hash -r
  [ "$(node -p process.version)" = "$("$bin" -p process.version)" ] || { echo 'node on PATH'; return 1; }
}

# One binary: install, serve, PUT/GET, object commands, tests. Echoes the failed step and returns 1 on failure.
smoke () {
  local bin=$1 dir=$2 plain=''
  [[ $bin == plain:* ]] && { plain=1; bin=${bin#plain:}; }
  mkdir -p "$dir/project" "$dir/data"
  use_node "$bin" "$dir" || return 1
  local version
  version=$(node -p process.version)
  cd "$dir/project" || return 1
  echo '{ "name": "smoke", "private": true }' >package.json

  # node:sqlite where Node has it (22.13+, 24), else libsql (Node 20).
  local omit=() sqlite=true
  node -e 'require("node:sqlite")' 2>/dev/null || sqlite=false
  [ -n "$plain" ] || omit+=(--omit=dev)
  log "$version: npm install $(basename "$tarball") ${omit[*]}"
  local start=$SECONDS
  npm install "$tarball" "${omit[@]}" --no-audit --no-fund --loglevel=error >"$dir/install.log" 2>&1 \
    || { cat "$dir/install.log" >&2; echo 'npm install'; return 1; }
  log "$version: installed in $((SECONDS - start)) s"
  # Nothing built at install: no package with an install script or a
  # binding.gyp (which npm would build with node-gyp), at any depth.
  local scripted
  scripted=$(node -e '
    const fs = require("node:fs"), path = require("node:path")
    const found = []
    const walk = dir => {
      for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
        if (name.startsWith(".")) continue
        const pkg = path.join(dir, name)
        if (name.startsWith("@")) { walk(pkg); continue }
        const json = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8"))
        const scripts = json.scripts ?? {}
        if (["preinstall", "install", "postinstall"].some(s => s in scripts) || fs.existsSync(path.join(pkg, "binding.gyp"))) found.push(json.name)
        walk(path.join(pkg, "node_modules"))
      }
    }
    walk("node_modules")
    console.log(found.join(" "))') || { echo 'install scripts: the check failed'; return 1; }
  [ -z "$scripted" ] || { echo "packages built at install: $scripted"; return 1; }
  # The driver the server will run.
  local driver
  driver=$(cd node_modules/fsbucket && node --input-type=module -e 'console.log((await import("./dist/src/stores/fs/sqlite.js")).sqliteDriver().name)') \
    || { echo 'SQLite driver does not load'; return 1; }
  [ "$driver" = "$([ "$sqlite" = true ] && echo node:sqlite || echo libsql)" ] || { echo "SQLite driver $driver"; return 1; }
  # What --omit=dev must keep out, and what the package must bring.
  for dev in typescript tap esbuild @aws-sdk/client-s3; do
    [ ! -e "node_modules/$dev" ] || { echo "dev dependency $dev installed"; return 1; }
  done
  [ -f node_modules/fsbucket/dist/console/index.html ] || { echo 'console bundle missing'; return 1; }
  [ -f node_modules/fsbucket/dist/bundle/main.js ] && [ -f node_modules/fsbucket/dist/bundle/worker.js ] || { echo 'the command'"'"'s bundle missing'; return 1; }

  local port s3port
  port=$(free_port) && s3port=$(free_port) || { echo 'free port'; return 1; }
  log "$version: npx fsbucket serve on $port"
  # In a process group of its own, signalled as a whole as a terminal's Ctrl-C
  # would be: npx does not pass SIGTERM on to the server.
  setsid npx --no-install fsbucket serve --data "$dir/data" --port "$port" --s3-port "$s3port" --workers 1 --log-level warn \
    >"$dir/serve.log" 2>&1 &
  server=$!
  local base="http://127.0.0.1:$port" i
  for i in $(seq 1 100); do
    curl -fs "$base/_health/ready" >/dev/null 2>&1 && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.2
  done
  curl -fs "$base/_health/ready" >/dev/null || { cat "$dir/serve.log" >&2; echo 'serve did not become ready'; return 1; }

  head -c 300000 /dev/urandom >"$dir/body.bin"
  curl -fsS -T "$dir/body.bin" "$base/default/smoke/body.bin" >/dev/null || { echo 'PUT'; return 1; }
  curl -fsS "$base/default/smoke/body.bin" -o "$dir/back.bin" || { echo 'GET'; return 1; }
  cmp -s "$dir/body.bin" "$dir/back.bin" || { echo 'GET bytes differ from PUT'; return 1; }

  local page script
  page=$(curl -fsS "$base/_console/") || { echo 'console page'; return 1; }
  script=$(grep -oE 'console-[A-Za-z0-9]+\.js' <<<"$page" | head -n 1)
  [ -n "$script" ] && curl -fsS "$base/_console/$script" -o /dev/null || { echo 'console script'; return 1; }

  log "$version: npx fsbucket cp / ls"
  echo "from the object commands" >"$dir/note.txt"
  npx --no-install fsbucket cp -q --data "$dir/data" "$dir/note.txt" fsb://default/smoke/note.txt >"$dir/cli.log" 2>&1 \
    || { cat "$dir/cli.log" >&2; echo 'fsbucket cp'; return 1; }
  curl -fsS "$base/default/smoke/note.txt" | cmp -s - "$dir/note.txt" || { echo 'GET of the cp upload'; return 1; }
  local listing
  listing=$(npx --no-install fsbucket ls -r --data "$dir/data" fsb://default/smoke/ 2>&1) || { echo "$listing" >&2; echo 'fsbucket ls'; return 1; }
  grep -q 'smoke/body.bin' <<<"$listing" && grep -q 'smoke/note.txt' <<<"$listing" \
    || { echo "$listing" >&2; echo 'fsbucket ls lacks a key'; return 1; }

  kill -TERM -- "-$server"
  wait "$server"
  local status=$?
  server=''
  [ "$status" -eq 0 ] || [ "$status" -eq 143 ] || { cat "$dir/serve.log" >&2; echo "serve exited $status on SIGTERM"; return 1; }
  for i in $(seq 1 50); do
    curl -fs "$base/_health/live" >/dev/null 2>&1 || break
    sleep 0.2
  done
  ! curl -fs "$base/_health/live" >/dev/null 2>&1 || { echo 'server still answering after SIGTERM'; return 1; }

  # serve --memory writes nothing, in the temporary directory either (Node 22+'s compile cache is left off).
  log "$version: fsbucket serve --memory"
  mkdir "$dir/tmp"
  TMPDIR="$dir/tmp" setsid node node_modules/fsbucket/bin/fsbucket.js serve --memory --port "$port" --s3-port 0 --log-level warn >"$dir/memory.log" 2>&1 &
  server=$!
  for i in $(seq 1 100); do
    curl -fs "$base/_health/ready" >/dev/null 2>&1 && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.2
  done
  curl -fsS -T "$dir/note.txt" "$base/default/note.txt" >/dev/null || { cat "$dir/memory.log" >&2; echo 'serve --memory: PUT'; return 1; }
  kill -TERM -- "-$server"
  wait "$server"
  server=''
  [ -z "$(ls -A "$dir/tmp")" ] || { ls -A "$dir/tmp" >&2; echo 'serve --memory wrote in the temporary directory'; return 1; }

  if [ -n "$tests" ]; then
    log "$version: tap $tests"
    # shellcheck disable=SC2086 # a list of files
    (cd "$root" && npx --no-install tap --disable-coverage $tests) >"$dir/tap.log" 2>&1 \
      || { cat "$dir/tap.log" >&2; echo 'tests'; return 1; }
    if [ "$sqlite" = true ]; then
      log "$version: tap the SQLite driver's test on libsql"
      (cd "$root" && FSBUCKET_SQLITE_DRIVER=libsql npx --no-install tap --disable-coverage dist/test/stores/fs/sqlite-driver.test.js) >"$dir/tap-libsql.log" 2>&1 \
        || { cat "$dir/tap-libsql.log" >&2; echo 'tests on libsql'; return 1; }
    fi
  fi
  return 0
}

# The installed package's files, in the project: each source map a file names
# (`//# sourceMappingURL=`) is in the package, and so is each source that map
# names (a map of ../../src/x.ts, which is not published, leaves a consumer's
# tools warning as a missing map does).
check_source_maps () {
  local found
  found=$(node -e '
    const fs = require("node:fs"), path = require("node:path")
    const pkg = fs.realpathSync("node_modules/fsbucket"), found = []
    const inPackage = file => !path.relative(pkg, file).startsWith("..") && fs.existsSync(file)
    const check = file => {
      for (const [, url] of fs.readFileSync(file, "utf8").matchAll(/^\s*\/[/*][#@]\s*sourceMappingURL=([^\s*]+)/gm)) {
        if (url.startsWith("data:")) continue
        const map = path.resolve(path.dirname(file), decodeURIComponent(url))
        if (!inPackage(map)) { found.push(`${path.relative(pkg, file)} names ${url}, not in the package`); continue }
        const json = JSON.parse(fs.readFileSync(map, "utf8"))
        for (const source of json.sources ?? []) {
          if (!inPackage(path.resolve(path.dirname(map), json.sourceRoot ?? "", source))) found.push(`${path.relative(pkg, map)} names ${source}, not in the package`)
        }
      }
    }
    const walk = dir => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name)
        if (entry.isDirectory()) { if (entry.name !== "node_modules") walk(file) } else if (/\.[cm]?js$|\.d\.[cm]?ts$/.test(entry.name)) check(file)
      }
    }
    walk(pkg)
    if (found.length > 0) console.log(`${found.length} files, such as ${found.slice(0, 2).join("; ")}`)') \
    || { echo 'the check failed'; return 1; }
  [ -z "$found" ] || { echo "$found"; return 1; }
}

# A TypeScript consumer, a project of its own: the tarball with typescript and
# @types/node (the versions this checkout's npm ci installed, so from npm's
# cache; its package.json's ranges where it has none), type-checked under
# `strict` with each moduleResolution. Echoes every failed step, `; ` between.
check_types () {
  local dir=$1 ts types_node problems=() mode module
  ts=$(node -p "require('$root/node_modules/typescript/package.json').version" 2>/dev/null \
    || node -p "require('$root/package.json').devDependencies.typescript")
  types_node=$(node -p "require('$root/node_modules/@types/node/package.json').version" 2>/dev/null \
    || node -p "require('$root/package.json').devDependencies['@types/node']")
  mkdir -p "$dir/types" && cd "$dir/types" || return 1
  echo '{ "name": "smoke-types", "private": true, "type": "module" }' >package.json
  log "$(node -p process.version): npm install $(basename "$tarball") typescript@$ts @types/node@$types_node"
  npm install "$tarball" "typescript@$ts" "@types/node@$types_node" --prefer-offline --no-audit --no-fund --loglevel=error \
    >"$dir/types-install.log" 2>&1 || { cat "$dir/types-install.log" >&2; echo 'npm install'; return 1; }
  # The example that opens docs/library.md (the installed copy), and the embedding API.
  node -e '
    const page = require("node:fs").readFileSync("node_modules/fsbucket/docs/library.md", "utf8")
    process.stdout.write(/```ts\n([^]*?)```/.exec(page)?.[1] ?? "")' >library.ts
  grep -q "from 'fsbucket'" library.ts || { echo 'no example in the installed docs/library.md'; return 1; }
  printf '%s\n' \
    "import { startServer, type StartedServer } from 'fsbucket'" \
    "// @ts-expect-error only what the package exports is its API: a deep import is refused" \
    "import { sqliteDriver } from 'fsbucket/dist/src/stores/fs/sqlite.js'" \
    '' \
    'const server: StartedServer = await startServer()' \
    'await server.close()' \
    'export const driver = sqliteDriver' >embed.ts
  for mode in node16 nodenext bundler; do
    module=$mode
    [ "$mode" = bundler ] && module=esnext
    if ! node node_modules/typescript/bin/tsc --noEmit --strict --skipLibCheck false --target es2022 \
        --module "$module" --moduleResolution "$mode" library.ts embed.ts >"$dir/tsc-$mode.log" 2>&1; then
      cat "$dir/tsc-$mode.log" >&2
      problems+=("$mode: $(grep -m 1 -oE 'error TS[0-9]+: .{0,80}' "$dir/tsc-$mode.log")")
    fi
  done
  # The declarations need @types/node (Buffer, node:stream): declared, optional
  # (JavaScript needs none), and the version installed satisfies it.
  node -e '
    const pkg = require("./node_modules/fsbucket/package.json")
    process.exit(pkg.peerDependencies?.["@types/node"] && pkg.peerDependenciesMeta?.["@types/node"]?.optional === true ? 0 : 1)' \
    || problems+=('no optional peer dependency on @types/node')
  npm ls @types/node >"$dir/types-ls.log" 2>&1 || { cat "$dir/types-ls.log" >&2; problems+=('npm ls @types/node'); }
  [ ${#problems[@]} -eq 0 ] || { printf '%s; ' "${problems[@]}" | sed 's/; $//'; return 1; }
}

# Node's view of `exports`, in the smoke's project: the entry point (import,
# and require on Node >= 20.19 and 22.12), package.json, the bin's path and
# the bin run from it; a deep import is refused.
check_exports () {
  local dir=$1 out bin
  out=$(node --input-type=module -e '
    import { createRequire } from "node:module"
    const require = createRequire(`${process.cwd()}/consumer.js`)
    const lib = await import("fsbucket")
    if (typeof lib.openBucket !== "function" || typeof lib.startServer !== "function") throw new Error("import(\"fsbucket\") lacks openBucket or startServer")
    if (require("fsbucket").openBucket !== lib.openBucket) throw new Error("require(\"fsbucket\") is another module")
    const { default: pkg } = await import("fsbucket/package.json", { with: { type: "json" } })
    if (pkg.name !== "fsbucket" || require("fsbucket/package.json").version !== pkg.version) throw new Error("fsbucket/package.json")
    for (const deep of ["fsbucket/dist/src/stores/fs/sqlite.js", "fsbucket/dist/src/index.js", "fsbucket/dist/bundle/main.js"]) {
      const refused = await import(deep).then(() => "it loaded", err => err.code)
      if (refused !== "ERR_PACKAGE_PATH_NOT_EXPORTED") throw new Error(`import("${deep}"): ${refused}`)
    }
    console.log(require.resolve("fsbucket/bin/fsbucket.js"))' 2>"$dir/exports.log") \
    || { cat "$dir/exports.log" >&2; grep -m 1 -oE '^[A-Za-z]*Error.{0,140}' "$dir/exports.log" || echo 'node failed'; return 1; }
  bin=$out
  [ "$(node "$bin" --version 2>&1)" = "$(node -p 'require("fsbucket/package.json").version')" ] \
    || { echo "node $bin --version"; return 1; }
  [ "$(node_modules/.bin/fsbucket --version 2>&1)" = "$(node "$bin" --version)" ] || { echo 'node_modules/.bin/fsbucket --version'; return 1; }
}

failed=0
results=()
n=0
for bin in "${binaries[@]}"; do
  n=$((n + 1))
  version=$("${bin#plain:}" -p process.version 2>/dev/null || echo "$bin")
  [[ $bin == plain:* ]] && version="$version (plain npm install)"
  start=$SECONDS
  # A subshell per binary: its PATH and working directory stay its own,
  # and a server it leaves behind on failure is stopped as it ends.
  step=$(
    smoke "$bin" "$work/$n"
    status=$?
    if [ -n "$server" ]; then kill -TERM -- "-$server" 2>/dev/null; wait "$server" 2>/dev/null; fi
    exit "$status"
  )
  if [ $? -eq 0 ]; then
    results+=("package smoke $version: ok ($((SECONDS - start)) s)")
  else
    failed=$((failed + 1))
    results+=("package smoke $version: FAILED (${step:-unknown step})")
  fi
  # What is published, checked on the project the smoke installed (the types in one of their own).
  for check in 'source maps' types exports; do
    step=$(
      use_node "$bin" "$work/$n" || exit 1
      [ -d "$work/$n/project/node_modules/fsbucket" ] || { echo 'the package is not installed'; exit 1; }
      cd "$work/$n/project" && "check_${check// /_}" "$work/$n"
    )
    if [ $? -eq 0 ]; then
      results+=("package $check $version: ok")
    else
      failed=$((failed + 1))
      results+=("package $check $version: FAILED (${step:-unknown step})")
    fi
  done
done
printf '%s\n' "${results[@]}"
exit "$failed"
