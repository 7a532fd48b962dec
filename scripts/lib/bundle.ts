/**
 * The server as `npm start` ships it, for the tests and the benchmark that run it as a child
 * process: the esbuild bundle dist/server/server.mjs with the node flags of package.json's `start`
 * script, and the docs that `/docs` serves from dist/docs. Nothing here is hard-coded: the build
 * step and the node command are read from `scripts.start`, so they cannot drift from what
 * `npm start` runs.
 *
 * `ensureBundle()` builds only when dist/ is missing or older than what it was built from (every
 * source its source maps list, plus the build scripts, the contract, the changelog and the
 * lockfile): a clean clone (CI) always builds, a second run on unchanged sources does not. Builds
 * from concurrent test runs in the same checkout take turns through a lock directory, because the
 * build starts by deleting dist/server.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { buildSync, type BuildOptions } from 'esbuild';
import { startProcess } from './processes.js';

/** The project root: this file lives in scripts/lib/. */
export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const serverDir = join(root, 'dist', 'server');
const docsDir = join(root, 'dist', 'docs');
const lockDir = join(root, 'dist', '.build-lock');

/** What the build writes and the server needs: the entry module, and what GET /docs serves. */
const OUTPUTS = [
  join(serverDir, 'server.mjs'),
  join(docsDir, 'index.html'),
  join(docsDir, 'openapi.json'),
  join(docsDir, 'CHANGELOG.md'),
  join(root, 'dist', 'docs-server', 'index.html'),
  join(root, 'dist', 'docs-server', 'changes.html'),
];

/**
 * Inputs of the build besides the bundled sources: what the docs are rendered from (the Try it
 * panel is bundled into the pages by path, not imported), and what decides the bundled
 * dependencies (lockfile, patches). The scripts `npm run build` runs are found by buildScripts.
 */
const FIXED_INPUTS = ['package.json', 'package-lock.json', 'scripts/lib/docs/docsTryItPanel.ts', 'spec/released', 'generated/openapi.json', 'spec/CHANGELOG.md', 'redocly.yaml', 'patches'];

/** The scripts `npm run build` runs and every module of ours they import, as esbuild resolves them: a list kept by hand went stale. */
function buildScripts(): string[] {
  const { metafile } = buildSync({ absWorkingDir: root, entryPoints: ['scripts/build.ts', 'scripts/docs.ts'], bundle: true, packages: 'external', platform: 'node', format: 'esm', outdir: 'unused', write: false, metafile: true, logLevel: 'silent' });
  return Object.keys(metafile.inputs).map((file) => join(root, file));
}

/**
 * How the server is bundled (scripts/build.ts), and every other entry that must run as it does
 * (the robust suite's fixture server): one ES module with its chunks for Node 20, whitespace and
 * syntax minified (less to parse at start; identifiers are not renamed, so stack traces and the
 * logs' error types keep their names without esbuild's keepNames, whose __name(fn, "…") wrapper
 * runs each time a named closure is created: docs/performance.md), the native drivers left to
 * node_modules, and a `require` for the bundled CommonJS packages (Express, pino, Ajv…).
 */
export const SERVER_BUNDLE: BuildOptions = {
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  minifyWhitespace: true,
  minifySyntax: true,
  external: ['better-sqlite3', 'pg-native'],
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  logLevel: 'warning',
};

export interface StartCommand {
  /** The steps before the server, each as argv: `[['npm', 'run', '-s', 'build']]`. */
  build: string[][];
  /** The server's node arguments: `['--max-semi-space-size=8', 'dist/server/server.mjs']`. */
  nodeArgs: string[];
  /** `scripts.start` as written, for messages. */
  script: string;
  /** Whether the server step is `exec node …` (the shell becomes the server: signals reach it). */
  exec: boolean;
}

/**
 * package.json's `start` script, split into its build steps and the final `node … <file>` or
 * `exec node … <file>`. Only plain words joined by `&&` are understood, and `exec` only in front
 * of the last step; anything else (quotes, pipes, variables) is refused rather than run
 * differently from npm.
 */
export function npmStartCommand(): StartCommand {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const script = pkg.scripts?.start ?? '';
  if (/["'`$|;<>()\\]/.test(script)) throw new Error(`package.json scripts.start has shell syntax the tests do not interpret: ${script}`);
  const steps = script.split('&&').map((step) => step.trim().split(/\s+/).filter(Boolean));
  const last = steps.pop() ?? [];
  // `exec node …`: the shell npm runs the script in replaces itself with node, so the SIGTERM npm
  // passes on to its script reaches the server (without it the shell dies and the server is
  // orphaned). For the tests the server's command is the same either way.
  const run = last[0] === 'exec' ? last.slice(1) : last;
  if (run[0] !== 'node' || run.length < 2) throw new Error(`package.json scripts.start does not end with \`[exec] node … <file>\`: ${script}`);
  if (steps.some((step) => step.length === 0 || step[0] === 'exec')) throw new Error(`package.json scripts.start has an empty step, or \`exec\` before its last step: ${script}`);
  return { build: steps, nodeArgs: run.slice(1), script, exec: last[0] === 'exec' };
}

/** The arguments for `process.execPath` that start the bundled server; fails when it is not built. */
export function bundledServerArgs(): string[] {
  const { nodeArgs } = npmStartCommand();
  const entry = nodeArgs.at(-1) ?? '';
  if (!existsSync(join(root, entry))) {
    throw new Error(`${entry} is missing: the robust tests build it in their globalSetup (npm run test:robust, or vitest --config vitest.robust.config.ts); or run \`npm run build\``);
  }
  return nodeArgs;
}

const mtimeMs = (file: string): number | undefined => statSync(file, { throwIfNoEntry: false })?.mtimeMs;

/** Every file under `path` (or `path` itself), for inputs given as folders. */
function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The sources each chunk of the bundle was built from, as its source map lists them. */
function bundledSources(): string[] {
  const sources = new Set<string>();
  for (const name of readdirSync(serverDir).filter((file) => file.endsWith('.map'))) {
    const map = JSON.parse(readFileSync(join(serverDir, name), 'utf8')) as { sources?: unknown };
    if (!Array.isArray(map.sources)) throw new Error(`dist/server/${name} lists no sources`);
    for (const source of map.sources) if (typeof source === 'string') sources.add(resolve(serverDir, source));
  }
  return [...sources];
}

/** Why dist/ must be built (missing, or older than one of its inputs), or undefined when it is current. */
export function bundleStaleness(): string | undefined {
  let oldestOutput = Number.POSITIVE_INFINITY;
  for (const output of OUTPUTS) {
    const time = mtimeMs(output);
    if (time === undefined) return `${relative(root, output)} is missing`;
    oldestOutput = Math.min(oldestOutput, time);
  }
  const inputs = [...bundledSources(), ...buildScripts(), ...FIXED_INPUTS.flatMap((input) => filesUnder(join(root, input)))];
  for (const input of inputs) {
    const time = mtimeMs(input);
    if (time === undefined) {
      // A package's own source map may name sources it does not ship (its .ts files): not ours to
      // judge, the lockfile stands for the packages. One of ours gone means it was moved or deleted.
      if (input.split(sep).includes('node_modules')) continue;
      return `${relative(root, input)}, bundled last time, no longer exists`;
    }
    if (time > oldestOutput) return `${relative(root, input)} changed after the last build`;
  }
  return undefined;
}

/**
 * Holds the build lock while `work` runs. A lock older than `staleMs` is a crashed builder's. A
 * test that runs `npm start` itself (which builds unconditionally) holds it until the server is up.
 */
export async function withBuildLock<T>(work: () => Promise<T>, staleMs = 180_000): Promise<T> {
  mkdirSync(dirname(lockDir), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lockDir);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const since = mtimeMs(lockDir);
      if (since !== undefined && Date.now() - since > staleMs) rmSync(lockDir, { recursive: true, force: true });
      else await sleep(250);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

/**
 * Builds dist/ with the build steps of `npm start` when it is missing or stale. Resolves with one
 * line saying what happened (for the run's output); rejects with the build's output if it fails.
 */
export async function ensureBundle(): Promise<string> {
  return withBuildLock(async () => {
    // Checked under the lock: a concurrent run may just have built it.
    const reason = bundleStaleness();
    if (reason === undefined) return 'dist/ is up to date with its sources: using it as built';
    const { build, script } = npmStartCommand();
    const began = Date.now();
    for (const [command, ...args] of build) {
      if (command === undefined) continue;
      const step = startProcess(command, args, { cwd: root });
      const exit = await step.exited;
      if (exit.code !== 0) throw new Error(`\`${[command, ...args].join(' ')}\` (from scripts.start: ${script}) failed with ${JSON.stringify(exit)}:\n${step.output()}`);
    }
    const after = bundleStaleness();
    if (after !== undefined) throw new Error(`the build ran but dist/ is still not current: ${after}`);
    return `built dist/ (${reason}) with \`${build.map((step) => step.join(' ')).join(' && ')}\` in ${Date.now() - began} ms`;
  });
}
