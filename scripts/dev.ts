/**
 * `npm run dev`: the live dev loop. Save a file and the server you are talking to is running it,
 * without stopping to run `npm run generate` or restart anything by hand.
 *
 *   spec/                        an edit runs scripts/generate.ts (bundle, types, handler stubs), then restarts
 *   src/, handlers/, generated/  an edit restarts the server (generated/ also catches a generate run by hand)
 *
 * The server is src/main.ts under `node --import tsx`, a child process, with NODE_ENV=development
 * (every response is checked against the contract) and the rest of the environment passed
 * through: PORT (default 8080), HOST, SQLITE_PATH, DATABASE_URL, LOG_LEVEL... Its console and logs
 * go straight to this terminal.
 *
 * Why it is built this way:
 * - Editors write a file several times per save, so events are debounced: a reload starts once the
 *   watched folders have been quiet for DEBOUNCE_MS.
 * - What changed is decided by comparing snapshots (inode, size, mtime) of the watched files, not
 *   by trusting events: what generate writes is in the snapshot the restart takes, so it causes no
 *   second restart, and a save that arrives during a restart causes exactly one more.
 * - Generation takes seconds, so the old server keeps serving until it has finished; if it fails
 *   (an invalid spec), the error is printed and the old server keeps running. Only then is the old
 *   server stopped (SIGTERM: it finishes in-flight requests) and, once it has exited, the new one
 *   started on the same port, so the first 200 from GET /healthz is the new process's. One line per
 *   restart gives the time from the save (the file event) to that 200.
 * - Most of the time a TypeScript process takes to start is spent before it does anything of its
 *   own: node, the tsx loader, and the packages it imports, each file through tsx's hooks (kysely
 *   alone is hundreds of files; typescript, which openapi-typescript loads, is the biggest). So
 *   the next server and the next generate are started ahead of time as spares (see `Child`):
 *   they load their packages from node_modules, which this loop does not watch, then wait. A
 *   restart tells the spare to go, and only then does it import src/main.ts (or run
 *   scripts/generate.ts, unchanged), so every project file is read as it is after the save.
 *   `--no-spares` starts each process only when it is needed.
 * - A server that crashes is not restarted in a loop: the next save restarts it.
 * - SIGINT (Ctrl-C), SIGTERM or SIGHUP stop the server cleanly; the loop then exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { get } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError, loadConfig } from '../src/config.js';
import { projectRoot } from '../src/paths.js';

const DEBOUNCE_MS = 100;
const POLL_MS = 25;
/** Longer than the server's own shutdown grace (10 s), so a clean stop is never cut short. */
const STOP_GRACE_MS = 12_000;

const HELP = `Usage: npm run dev [-- --no-spares]

Runs the server (src/main.ts with tsx, NODE_ENV=development) and keeps it up to date as you
save files:

  spec/                        regenerate (scripts/generate.ts), then restart; if generation
                               fails, the error is shown and the old server keeps running
  src/, handlers/, generated/  restart

It generates once at start, so the server runs the spec on disk. Configuration is the server's
own, from the environment (PORT, HOST, SQLITE_PATH, DATABASE_URL, LOG_LEVEL, ...); NODE_ENV is
always development, so every response is checked against the contract. PORT=0 picks a free
port once and keeps it across restarts.

Each restart prints one line: the time from the save to the new server answering GET /healthz,
and its pid. Stop with Ctrl-C (or SIGTERM): the server shuts down cleanly and this exits 0.

To restart fast, the next server and the next generate run are started ahead of time and wait,
their packages loaded (two idle node processes). After \`npm install\`, restart \`npm run dev\`.

  --no-spares   start each process only when it is needed: slower restarts, less memory
  --help        show this text`;

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(HELP);
  process.exit(0);
}
const unknown = args.filter((a) => a !== '--no-spares');
if (unknown.length > 0) {
  console.error(`Unknown argument: ${unknown.join(' ')}\n\n${HELP}`);
  process.exit(2);
}
const useSpares = !args.includes('--no-spares');

const root = projectRoot;
const mainScript = join(root, 'src', 'main.ts');
const generateScript = join(root, 'scripts', 'generate.ts');

interface Watched {
  dir: string;
  /** Which files in it count; editors' swap, backup and temp files do not. */
  relevant: RegExp;
}
const SPEC: readonly Watched[] = [{ dir: 'spec', relevant: /\.(ya?ml|json)$/ }];
const CODE: readonly Watched[] = ['src', 'handlers', 'generated'].map((dir) => ({ dir, relevant: /\.([cm]?[jt]s|json)$/ }));

const say = (line: string) => process.stdout.write(`[dev] ${line}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const indent = (text: string) => text.replace(/^/gm, '      ');

// ---------------------------------------------------------------------------------------------
// Configuration: the server's own checks, so a bad variable fails here, once, with its message.

const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: 'development' };
let config;
try {
  config = loadConfig(env);
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(`Configuration error: ${error.message}`);
    process.exit(2);
  }
  throw error;
}
const host = config.host;
const pollHost = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
const shownHost = pollHost === '127.0.0.1' || pollHost === '::1' ? 'localhost' : pollHost.includes(':') ? `[${pollHost}]` : pollHost;

/** The port host:port listens on (the OS's choice for port 0), or why it cannot (EADDRINUSE...). */
function probe(port: number): Promise<{ port: number } | { error: string }> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    server.listen({ host, port, exclusive: true }, () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? { port: address.port } : { error: 'no port assigned' }));
    });
  });
}
const probed = await probe(config.port);
if ('error' in probed) {
  console.error(`Cannot listen on ${host}:${config.port} (${probed.error}).${probed.error === 'EADDRINUSE' ? ' Is the server already running? Or choose another PORT.' : ''}`);
  process.exit(1);
}
// PORT=0: the port is chosen once, here, and kept, so the address stays the same across restarts.
const port = probed.port;
env.PORT = String(port);

// ---------------------------------------------------------------------------------------------
// Child processes, started ahead of time.

/** The packages a script imports at run time (bare specifiers, not `import type`). */
function packagesImportedBy(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const names = [...source.matchAll(/^import\s+(?!type\s)[^'"]*?['"]([^'"]+)['"]/gm)].map((m) => m[1] ?? '');
  return names.filter((name) => name !== '' && !name.startsWith('.') && !name.startsWith('/') && !name.startsWith('node:'));
}

const serverPackages = Object.keys((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {});
const generatePackages = packagesImportedBy(generateScript);

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * A child process running `entry` with tsx. As a spare (the default) it is `node --import tsx` on a
 * short program that imports `packages`, then waits for a line on stdin before importing `entry`;
 * `go()` sends that line. Its stdin is a pipe from this loop, so when the loop is gone (even
 * killed) the child sees stdin end and stops itself with SIGTERM: it never outlives the loop.
 * With --no-spares it is plainly `node --import tsx <entry>`, and `go()` does nothing.
 */
class Child {
  readonly proc: ChildProcess;
  readonly exited: Promise<Exit>;
  running = true;
  /** It has answered GET /healthz with 200 (servers). */
  answered = false;
  /** This loop stopped it, so its exit is no news. */
  stopped = false;
  /** What it printed, when started with `capture`. */
  output = '';

  constructor(entry: string, packages: readonly string[], options: { capture: boolean; exitWhenDone: boolean }) {
    const stdout = options.capture ? 'pipe' : 'inherit';
    if (useSpares) {
      const program = `
for (const name of ${JSON.stringify(packages)}) await import(name).catch(() => undefined);
let started = false;
process.stdin.on('data', () => {
  if (started) return;
  started = true;
  import(${JSON.stringify(pathToFileURL(entry).href)}).then(
    () => { ${options.exitWhenDone ? 'process.exit();' : ''} },
    (error) => { console.error(error); process.exit(1); },
  );
});
process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM'));
`;
      this.proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', program], { cwd: root, env, stdio: ['pipe', stdout, stdout] });
    } else {
      this.proc = spawn(process.execPath, ['--import', 'tsx', entry], { cwd: root, env, stdio: ['ignore', stdout, stdout] });
    }
    const collect = (chunk: Buffer) => {
      this.output += chunk.toString();
    };
    this.proc.stdout?.on('data', collect);
    this.proc.stderr?.on('data', collect);
    this.proc.stdin?.on('error', () => undefined); // it exited before reading: its exit tells the rest
    this.exited = new Promise((resolve) => {
      const done = (exit: Exit) => {
        this.running = false;
        resolve(exit);
      };
      this.proc.once('error', (error) => {
        this.output += `${error.message}\n`;
        done({ code: null, signal: null });
      });
      this.proc.once('close', (code, signal) => done({ code, signal }));
    });
  }

  get pid(): number {
    return this.proc.pid ?? 0;
  }

  go(): void {
    this.proc.stdin?.write('go\n');
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.running) this.proc.kill(signal);
  }
}

let server: Child | undefined;
let spareServer: Child | undefined;
let spareGenerate: Child | undefined;
let generating: Child | undefined;
let stopping = false;

function newServer(): Child {
  const child = new Child(mainScript, serverPackages, { capture: false, exitWhenDone: false });
  void child.exited.then(({ code, signal }) => {
    // An exit before answering is reported by whoever waits for the answer.
    if (child.stopped || stopping || !child.answered) return;
    say(`the server (pid ${child.pid}) exited (${signal ?? `code ${code}`}); save a file to start it again.`);
  });
  return child;
}

const newGenerate = () => new Child(generateScript, generatePackages, { capture: true, exitWhenDone: true });

/** Boots the next server and the next generate while nothing else needs the CPU. */
function prepareSpares(): void {
  if (!useSpares || stopping) return;
  if (!spareServer?.running) spareServer = newServer();
  if (!spareGenerate?.running) spareGenerate = newGenerate();
}

// ---------------------------------------------------------------------------------------------
// Generation: scripts/generate.ts, exactly what `npm run generate` runs, in its own process.

interface Generated {
  ok: boolean;
  ms: number;
  output: string;
}

async function generate(): Promise<Generated> {
  const started = performance.now();
  const child = spareGenerate?.running ? spareGenerate : newGenerate();
  spareGenerate = undefined;
  generating = child;
  child.go();
  const { code } = await child.exited;
  generating = undefined;
  return { ok: code === 0, ms: performance.now() - started, output: child.output.trimEnd() };
}

/** What generate printed, up to the stack trace of an uncaught error: the message is what helps. */
function withoutStack(output: string): string {
  const frame = /^\s+at \S/m.exec(output);
  return frame ? `${output.slice(0, frame.index).trimEnd()}\n(stack trace left out; \`npm run generate\` shows all of it)` : output;
}

// ---------------------------------------------------------------------------------------------
// The server: one at a time on the port.

/** Starts the server: the spare if there is one, otherwise a new process. */
function startServer(): Child {
  const next = spareServer?.running ? spareServer : newServer();
  spareServer = undefined;
  next.go();
  return next;
}

/** SIGTERM, then SIGKILL if it has not exited after STOP_GRACE_MS. Resolves true on a clean exit. */
async function stopServer(target: Child): Promise<boolean> {
  target.stopped = true;
  target.kill('SIGTERM');
  const timer = setTimeout(() => {
    say(`the server (pid ${target.pid}) did not stop within ${seconds(STOP_GRACE_MS)}; killing it.`);
    target.kill('SIGKILL');
  }, STOP_GRACE_MS);
  try {
    return (await target.exited).code === 0;
  } finally {
    clearTimeout(timer);
  }
}

function healthz(): Promise<number | undefined> {
  return new Promise((resolve) => {
    const request = get({ host: pollHost, port, path: '/healthz', agent: false, timeout: 2000 }, (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    request.once('timeout', () => request.destroy());
    request.once('error', () => resolve(undefined));
  });
}

/**
 * Polls GET /healthz until it answers 200, while `target` runs. The previous server had exited
 * before `target` was told to go, so a 200 can only come from `target`.
 */
async function answering(target: Child): Promise<boolean> {
  const started = performance.now();
  let warned = false;
  while (target.running && !stopping) {
    if ((await healthz()) === 200) {
      target.answered = target.running;
      return target.answered;
    }
    if (!warned && performance.now() - started > 30_000) {
      warned = true;
      say(`the server (pid ${target.pid}) has not answered GET /healthz for 30 s; still waiting.`);
    }
    await sleep(POLL_MS);
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Snapshots of the watched files: what changed is what differs from the last snapshot acted on.

type Snapshot = Map<string, string>;

function snapshot(watched: readonly Watched[]): Snapshot {
  const result: Snapshot = new Map();
  for (const { dir, relevant } of watched) {
    let names: string[];
    try {
      names = readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' });
    } catch {
      continue; // the folder does not exist (yet)
    }
    for (const name of names) {
      const rel = join(dir, name);
      if (!relevant.test(rel) || rel.split('/').some((part) => part.startsWith('.'))) continue;
      try {
        const stat = statSync(join(root, rel), { bigint: true });
        if (stat.isFile()) result.set(rel, `${stat.ino}:${stat.size}:${stat.mtimeNs}`);
      } catch {
        // removed between readdir and stat: it is simply not in this snapshot
      }
    }
  }
  return result;
}

/** Files added, removed or rewritten between two snapshots. */
function differences(before: Snapshot, after: Snapshot): string[] {
  const changed = [...after].filter(([file, stamp]) => before.get(file) !== stamp).map(([file]) => file);
  const removed = [...before.keys()].filter((file) => !after.has(file));
  return [...changed, ...removed].sort();
}

const list = (files: string[]) => (files.length <= 4 ? files.join(', ') : `${files.slice(0, 3).join(', ')} and ${files.length - 3} more`);

// ---------------------------------------------------------------------------------------------
// The loop.

let specSeen: Snapshot = new Map();
let codeSeen: Snapshot = new Map();
let firstEventAt: number | undefined;
let debounce: NodeJS.Timeout | undefined;
let busy = false;

/** Regenerates if the spec changed; restarts if the code, or what generation wrote, changed. */
async function reload(since: number): Promise<void> {
  const specNow = snapshot(SPEC);
  const specChanged = differences(specSeen, specNow);
  let generated: Generated | undefined;
  if (specChanged.length > 0) {
    specSeen = specNow;
    generated = await generate();
    if (stopping) return;
    if (!generated.ok) {
      say(`${list(specChanged)} changed, but generate failed (${seconds(generated.ms)}); the server keeps running the previous contract:`);
      process.stdout.write(`${indent(withoutStack(generated.output))}\n`);
    }
  }
  const codeNow = snapshot(CODE);
  const codeChanged = differences(codeSeen, codeNow);
  if (codeChanged.length === 0) {
    if (generated?.ok) say(`${list(specChanged)} changed; the generated files did not (generate ${seconds(generated.ms)}), so the server keeps running.`);
    prepareSpares();
    return;
  }
  codeSeen = codeNow;
  const stopAt = performance.now();
  if (server) await stopServer(server);
  if (stopping) return;
  const current = (server = startServer());
  const up = await answering(current);
  if (stopping) return;
  const now = performance.now();
  prepareSpares();
  const changed = list([...(generated?.ok ? specChanged : []), ...codeChanged]);
  if (!up) {
    say(`the new server (pid ${current.pid}) exited before answering; fix the error above and save again. Changed: ${changed}`);
    return;
  }
  const detail = generated?.ok ? `; generate ${seconds(generated.ms)}, then down ${seconds(now - stopAt)}` : '';
  say(`restarted in ${seconds(now - since)} (save → answering${detail}), pid ${current.pid}: ${changed}`);
}

function schedule(): void {
  clearTimeout(debounce);
  debounce = setTimeout(() => void cycle(), DEBOUNCE_MS);
}

async function cycle(): Promise<void> {
  if (busy || stopping || firstEventAt === undefined) return;
  busy = true;
  const since = firstEventAt;
  firstEventAt = undefined;
  try {
    await reload(since);
  } catch (error) {
    say(`reload failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    busy = false;
    // Saves made meanwhile: the snapshots decide whether they need another round.
    if (firstEventAt !== undefined && !stopping) schedule();
  }
}

function onEvent(watched: Watched, filename: string | null): void {
  if (stopping) return;
  // A folder event, or one without a name, could be about anything in it: the snapshots decide.
  if (filename !== null && /\.[^/]+$/.test(filename) && !watched.relevant.test(filename)) return;
  firstEventAt ??= performance.now();
  if (!busy) schedule();
}

const watchers: FSWatcher[] = [];
for (const watched of [...SPEC, ...CODE]) {
  try {
    const watcher = watch(join(root, watched.dir), { recursive: true }, (_event, filename) => onEvent(watched, filename));
    watcher.on('error', (error) => say(`watching ${watched.dir}/ failed: ${error.message}`));
    watchers.push(watcher);
  } catch (error) {
    console.error(`Cannot watch ${watched.dir}/: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}

// ---------------------------------------------------------------------------------------------
// Stop: SIGINT (Ctrl-C), SIGTERM or SIGHUP. A second signal kills the server outright.

async function shutdown(signal: NodeJS.Signals): Promise<void> {
  if (stopping) {
    server?.kill('SIGKILL');
    return;
  }
  stopping = true;
  clearTimeout(debounce);
  for (const watcher of watchers) watcher.close();
  const others = [generating, spareServer, spareGenerate].filter((child) => child !== undefined);
  for (const child of others) child.kill('SIGTERM');
  say(`${signal}: stopping the server...`);
  const [clean] = await Promise.all([server ? stopServer(server) : true, ...others.map((child) => child.exited)]);
  say(clean ? 'stopped.' : 'the server did not stop cleanly.');
  process.exit(clean ? 0 : 1);
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, (s: NodeJS.Signals) => void shutdown(s));
// If this process dies of an error, do not leave the server holding the port.
process.on('exit', () => {
  for (const child of [server, generating, spareServer, spareGenerate]) child?.kill('SIGTERM');
});

// ---------------------------------------------------------------------------------------------
// Start: generate once (so the server runs the spec on disk) while the server boots, then go.

busy = true;
const startedAt = performance.now();
if (useSpares) spareServer = newServer();
specSeen = snapshot(SPEC);
say('generating from spec/ ...');
const initial = await generate();
if (!stopping) {
  if (initial.ok) say(`generate: ${initial.output.replace(/\n\s*/g, ' ')} (${seconds(initial.ms)})`);
  else say(`generate failed (${seconds(initial.ms)}); starting on the generated files as they are:\n${indent(withoutStack(initial.output))}`);
  codeSeen = snapshot(CODE);
  const first = (server = startServer());
  const up = await answering(first);
  prepareSpares();
  if (up) {
    say(`server answering on http://${shownHost}:${port} in ${seconds(performance.now() - startedAt)}, pid ${first.pid}; watching spec/, src/, handlers/, generated/. Ctrl-C stops.`);
  } else if (!stopping) {
    say(`the server (pid ${first.pid}) exited before answering; fix the error above and save a file to start it again.`);
  }
}
busy = false;
if (firstEventAt !== undefined && !stopping) schedule();
