#!/usr/bin/env node
// Compiles src/ into dist/ (`npm run build`). With --if-stale (`npm start` runs it first), it
// compiles only when dist/ is missing or older than src/, so a start does not recompile, and a
// production install without dev dependencies starts from the dist/ it was built with.
// tsc compiles every module (the demo, the sandbox and the tests' helpers load them from dist/);
// then esbuild bundles the bot's entry point and what it imports into dist/main.js alone, which
// starts faster and takes less memory than loading hundreds of modules (issue 18).
// Plain JavaScript: it must run where TypeScript and tsx are not installed.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Written after each successful compile: tsc leaves unchanged outputs (and their times) alone. */
const STAMP = join(ROOT, 'dist', '.built');
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json'];

const PRODUCTION_PATH = 'npm ci && npm run build && npm prune --omit=dev && node dist/main.js';

/** The newest modification time among the files under `path`, 0 when there is none. */
function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((latest, entry) => Math.max(latest, newest(join(path, entry))), 0);
}

/** Left out of the bundle: native code (libsql), the PostgreSQL driver loaded only for that
 * dialect, and the demo, which stays as tsc compiled it (dist/demo/main.js). */
const UNBUNDLED = ['libsql', 'pg', './demo/main.js'];
/** Lets the bundled CommonJS packages `require` Node's modules from an ES module. */
const REQUIRE_SHIM =
  "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);";

function typescriptCompiler() {
  try {
    return createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    return undefined;
  }
}

function loadEsbuild() {
  try {
    return createRequire(join(ROOT, 'package.json'))('esbuild');
  } catch {
    return undefined;
  }
}

/**
 * Replaces tsc's dist/main.js with one file holding the bot and its dependencies, minus
 * UNBUNDLED. Whitespace and comments go, and template literals become plain strings (esbuild
 * escapes those, not a tagged template's "—"), so the source has no character beyond Latin-1
 * and V8 holds it in one byte a character instead of two. Names stay, so stack traces still
 * name the functions; dist/main.js.map maps positions back to src/ under
 * `node --enable-source-maps`.
 */
function bundle(esbuild) {
  esbuild.buildSync({
    absWorkingDir: ROOT,
    entryPoints: ['src/main.ts'],
    outfile: 'dist/main.js',
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: UNBUNDLED,
    banner: { js: REQUIRE_SHIM },
    minifyWhitespace: true,
    supported: { 'template-literal': false },
    sourcemap: true,
    logLevel: 'warning',
  });
}

/** Why dist/ must be rebuilt, or undefined when it is current. */
export function staleness() {
  if (!existsSync(STAMP)) return 'dist/ has not been built';
  const sources = Math.max(...INPUTS.map((input) => newest(join(ROOT, input))));
  return sources > statSync(STAMP).mtimeMs ? 'src/ changed since the last build' : undefined;
}

/** Compiles; throws with a message for the operator when it cannot. */
export function build() {
  const tsc = typescriptCompiler();
  if (!tsc) {
    throw new Error(
      `TypeScript is not installed (dev dependencies were left out), so dist/ cannot be built here.\n` +
        `Build before leaving them out: ${PRODUCTION_PATH}`,
    );
  }
  const run = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (run.status !== 0) throw new Error('TypeScript reported errors; dist/ was not updated.');
  const esbuild = loadEsbuild();
  if (esbuild) bundle(esbuild);
  else
    console.error('esbuild is not installed: dist/main.js is left unbundled (slower to start, more memory).');
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
}

/** Builds when dist/ is stale; says so on stderr (stdout may carry a hook's answer). */
export function buildIfStale() {
  const reason = staleness();
  if (reason === undefined) return;
  console.error(`Building dist/ (${reason})…`);
  build();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    if (process.argv.includes('--if-stale')) buildIfStale();
    else build();
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}
