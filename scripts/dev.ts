/**
 * `npm run dev`: the server, kept up to date as you save.
 *
 *   src/, handlers/, generated/  `tsx watch` restarts the server (SIGTERM, so in-flight requests
 *                                finish, then a new process). It debounces saves, and a crashed
 *                                server waits for the next save: no crash loop.
 *   spec/                        scripts/generate.ts runs, here; what it writes to generated/
 *                                restarts the server. An invalid spec writes nothing: the error
 *                                is printed and the old server keeps running.
 *
 * What is ours, and why:
 * - Generate runs in this process (tsx's `tsImport`, which loads the project's files afresh on
 *   every call and its packages once). A fresh `tsx scripts/generate.ts` per save (a second
 *   `tsx watch`, as nodemon or chokidar-cli would run it) spends 1-2 s loading TypeScript, which
 *   openapi-typescript needs: a spec edit took 3.0-4.0 s from save to answering (median of 5, four
 *   runs on 2 shared cores), over the 3 s budget; warm, 1.8-2.7 s. Watching spec/ for it is
 *   fs.watch of each folder plus a debounce, the one watcher of ours (watchFolders says why not
 *   a recursive one).
 * - NODE_ENV=development for the server: an npm script cannot set it the same way in every shell.
 *   CORS_ORIGINS=* unless set: a frontend on its own dev server's origin can call the API.
 * - The server's watcher runs in its own process group, so a Ctrl-C (SIGINT to the terminal's
 *   whole group) reaches it once, from here: tsx watch SIGKILLs a server that is still stopping
 *   when a second signal arrives. A stop by signal exits 0 when the server stopped cleanly.
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { tsImport } from 'tsx/esm/api';
import { projectRoot } from '../src/shared/paths.js';
import { commandLine, fail } from './lib/commandLine.js';

const HELP = `Usage: npm run dev

Runs the server (src/main.ts, NODE_ENV=development: every response is checked against the
contract) and keeps it up to date as you save:

  src/, handlers/, generated/  the server restarts
  spec/                        generate runs (as \`npm run generate\`), and what it writes to
                               generated/ restarts the server. If the spec is invalid, the error
                               is shown and the old server keeps running.
  src/store/resources/, src/store/migrations/
                               a file added or removed: generate runs, to list it

Generate also runs once at start (if that changes anything, the server restarts once).
Configuration is the server's own, from the environment: PORT (default 8080), HOST, SQLITE_PATH,
DATABASE_URL, LOG_LEVEL, ... except CORS_ORIGINS, which defaults to * here (a browser app on any
origin, e.g. a dev server on http://localhost:5173, may call the API; \`npm start\` sends no CORS
headers unless it is set). Set it to a list of origins to try your production setting, or to ""
for none. A server that crashes is started again by the next save.
Ctrl-C (or SIGTERM) stops everything; the exit code is 0 when the server stopped cleanly.`;

commandLine(HELP);

const tsxCli = createRequire(import.meta.url).resolve('tsx/cli');
const watchFlags = ['--clear-screen=false', '--include', 'src/**/*.ts', '--include', 'handlers/**/*.ts', '--include', 'generated/*'];
const server = spawn(process.execPath, [tsxCli, 'watch', ...watchFlags, 'src/main.ts'], {
  cwd: projectRoot,
  // CORS open in development (frontends run on their own dev server's origin); an explicit CORS_ORIGINS, even "", wins.
  env: { ...process.env, NODE_ENV: 'development', CORS_ORIGINS: process.env.CORS_ORIGINS ?? '*' },
  stdio: ['ignore', 'inherit', 'inherit'],
  detached: true,
});

// ---- spec/ → generate, one run at a time; saves during a run cause one more run after it.
let runs = Promise.resolve();
let queued = false;
let debounce: NodeJS.Timeout | undefined;

function generate(): void {
  if (queued) return;
  queued = true;
  runs = runs.then(async () => {
    queued = false;
    await tsImport('./generate.ts', import.meta.url).catch((error: unknown) => {
      console.error(`[dev] generate failed; the server keeps running the previous contract:\n${error instanceof Error ? error.message : String(error)}`);
    });
  });
}

const regenerateSoon = () => {
  clearTimeout(debounce);
  debounce = setTimeout(generate, 100);
};
/**
 * fs.watch on a folder and on each folder under it, one level each. Not `recursive: true`: on
 * Linux, Node 20 builds that from a watch per file, which follows the file's inode, so after one
 * save that replaced a file by rename (sed -i, editors' atomic saves) every later save written in
 * place went unseen. A folder's own watch reports its entries by name, however they are written.
 */
function watchFolders(root: string, onEvent: () => void): { close(): void } {
  const watchers = new Map<string, FSWatcher>();
  const add = (dir: string): void => {
    if (watchers.has(dir)) return;
    const watcher = watch(dir, (event, name) => {
      if (event === 'rename' && name !== null && statSync(join(dir, name), { throwIfNoEntry: false })?.isDirectory()) add(join(dir, name));
      onEvent();
    });
    // A folder removed while watched.
    watcher.on('error', () => {
      watcher.close();
      watchers.delete(dir);
    });
    watchers.set(dir, watcher);
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) add(join(dir, entry.name));
  };
  add(root);
  return { close: () => watchers.forEach((watcher) => watcher.close()) };
}

const specWatcher = watchFolders(join(projectRoot, 'spec'), regenerateSoon);
// A resource or migration file added or removed changes generate's lists (generated/stores.ts,
// generated/migrations.ts): 'rename' is how fs.watch reports both; an edit inside one is tsx's.
const listWatchers = ['src/store/resources', 'src/store/migrations'].map((folder) =>
  watch(join(projectRoot, folder), (event) => {
    if (event === 'rename') regenerateSoon();
  }),
);
generate();

// ---- Stopping.
let stopSignal: NodeJS.Signals | undefined;
function stop(signal: NodeJS.Signals): void {
  stopSignal ??= signal;
  specWatcher.close();
  for (const watcher of listWatchers) watcher.close();
  clearTimeout(debounce);
  // tsx watch relays only SIGINT and SIGTERM to the server; SIGHUP (terminal closed) would kill it alone.
  if (server.exitCode === null && server.signalCode === null) server.kill(signal === 'SIGINT' ? 'SIGINT' : 'SIGTERM');
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop(signal));
// However this process ends, the watcher (in its own group) must not outlive it.
process.on('exit', () => stop('SIGTERM'));

server.once('exit', (code) => {
  if (stopSignal === undefined) fail(`[dev] the server's watcher exited (code ${code}); stopping.`);
  // tsx watch exits with the server's code (0 after a clean stop), or 128 + the signal when no server was running.
  process.exit(code === 0 || (code ?? 0) > 128 ? 0 : 1);
});
