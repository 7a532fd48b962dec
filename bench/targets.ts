/**
 * The processes under test, each a child started through the one process helper
 * (scripts/lib/processes.ts): the production server exactly as `npm start` runs it, the bare
 * node:http baseline, the floor servers and the Fastify peer. Each is timed from spawn to its first 200.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, startProcess, stopProcess, waitForHttp, type RunningProcess } from '../scripts/lib/processes.js';
import { projectRoot } from '../src/shared/paths.js';
import { ensureBundle, npmStartCommand } from '../scripts/lib/bundle.js';
import { track } from './cleanup.js';
import type { BenchOptions } from './options.js';
import { log, sleep } from './stats.js';
import type { PreparedStore } from './stores.js';

export const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

export interface ServerCommand {
  /** Node arguments that start the server, after --server-node-args. */
  args: string[];
  /** The command as reported, e.g. `node --max-semi-space-size=8 dist/server/server.mjs`. */
  display: string;
}

const FROM_SOURCE: ServerCommand = { args: ['--import', 'tsx', 'src/main.ts'], display: 'node --import tsx src/main.ts' };

/**
 * What `npm start` runs (package.json's scripts.start: its build steps, then `node … <file>`), so
 * the benchmark measures the production command with its node flags; built first unless
 * --no-build, and from source with --tsx or when the build fails (said in `notes`). The build is
 * the tests' (ensureBundle): it takes turns with concurrent test runs in the same checkout, which
 * a build under them would break, and skips a dist/ that is current with its sources.
 */
export async function serverCommand(opts: BenchOptions, notes: string[]): Promise<ServerCommand> {
  if (opts.tsx) return FROM_SOURCE;
  const start = npmStartCommand();
  if (opts.build) {
    try {
      log(await ensureBundle());
    } catch (error) {
      console.error(error instanceof Error ? error.message : String(error));
      notes.push('`npm run -s build` failed: the server ran from source through tsx.');
      log('build failed: running the server from source through tsx instead');
      return FROM_SOURCE;
    }
  }
  const entry = start.nodeArgs.at(-1) ?? '';
  if (!existsSync(join(projectRoot, entry))) throw new Error(`${entry} is missing: run without --no-build, or with --tsx`);
  return { args: start.nodeArgs, display: ['node', ...start.nodeArgs].join(' ') };
}

/** The first fetch() of a process loads undici (25–35 ms here): paid before any timing starts. */
let fetchLoaded: Promise<unknown> | undefined;
async function loadFetch(): Promise<void> {
  fetchLoaded ??= freePort().then((port) => fetch(`http://127.0.0.1:${port}/`).catch(() => undefined));
  await fetchLoaded;
}

/** Milliseconds from `since` to the first 200 on `url`, polled every 2 ms. */
async function msToFirst200(proc: RunningProcess, label: string, url: string, since: number, headers: Record<string, string> = {}, timeoutMs = 20_000): Promise<number> {
  let timedOut = false;
  // Killing the child is what ends waitForHttp's loop (it fails as soon as the process exits).
  const timer = setTimeout(() => {
    timedOut = true;
    void stopProcess(proc, 'SIGKILL');
  }, timeoutMs);
  try {
    for (;;) {
      const response = await waitForHttp(url, proc, { headers }, 2);
      await response.arrayBuffer();
      if (response.status === 200) return performance.now() - since;
      await sleep(2);
    }
  } catch (error) {
    if (timedOut) throw new Error(`${label} gave no 200 on ${url} within ${timeoutMs} ms:\n${proc.output()}`);
    throw new Error(`${label}: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    clearTimeout(timer);
  }
}

export interface Started {
  proc: RunningProcess;
  pid: number;
  origin: string;
  /** Spawn to the first 200: GET /v1/pets?limit=1 with a key for the server and the peer, /healthz for the others. */
  startMs: number;
}

/** Starts `node <args>` on a free port and waits for a 200 on `path`. */
async function startNode(label: string, args: string[], env: NodeJS.ProcessEnv, path: string, headers: Record<string, string> = {}): Promise<Started> {
  await loadFetch();
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const since = performance.now();
  const proc = track(startProcess(process.execPath, args, { cwd: projectRoot, env: { ...env, PORT: String(port) } }));
  const startMs = await msToFirst200(proc, label, `${origin}${path}`, since, headers);
  const pid = proc.child.pid;
  if (pid === undefined) throw new Error(`${label} answered without a pid`);
  return { proc, pid, origin, startMs };
}

export interface ApiServer extends Started {
  store: PreparedStore;
}

export async function startApi(store: PreparedStore, label: string, command: ServerCommand, opts: BenchOptions, extraNodeArgs: string[] = []): Promise<ApiServer> {
  const env = { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'silent', VALIDATE_RESPONSES: 'false', HOST: '127.0.0.1', ...store.env };
  const args = [...opts.serverNodeArgs, ...extraNodeArgs, ...command.args];
  return { ...(await startNode(label, args, env, '/v1/pets?limit=1', auth(store.key))), store };
}

/** Which layers a floor server (./floorServer.ts) puts between node:http and our handlers. */
export type FloorRouter = 'none' | 'openapi-backend';

/** A server of the bench's own (`file` in bench/, through tsx) on `store`, with npm start's node flags and --server-node-args, as the server; up at a 200 on `path`. */
async function startBenchServer(label: string, file: string, path: string, store: PreparedStore, opts: BenchOptions, env: Record<string, string> = {}): Promise<ApiServer> {
  const startFlags = npmStartCommand().nodeArgs.slice(0, -1);
  const args = [...opts.serverNodeArgs, ...startFlags, '--import', 'tsx', join('bench', file)];
  const childEnv = { ...process.env, NODE_ENV: 'production', LOG_LEVEL: 'silent', ...store.env, ...env, BENCH_PARENT: String(process.pid) };
  return { ...(await startNode(label, args, childEnv, path, auth(store.key))), store };
}

/** A floor server on `store`: our key check, handlers, store and the contract's headers, with `router` in front. */
export const startFloor = (store: PreparedStore, router: FloorRouter, opts: BenchOptions) => startBenchServer(`floor (${router})`, 'floorServer.ts', '/healthz', store, opts, { FLOOR_ROUTER: router });

/** Our server on the contract with an oauth2 scheme beside the key (./oauthServer.ts), its tokens from `issuer` for `audience`. */
export const startOAuthServer = (store: PreparedStore, opts: BenchOptions, issuer: string, audience: string) =>
  startBenchServer('server (OAuth2 spec)', 'oauthServer.ts', '/v1/pets?limit=1', store, opts, { OAUTH_ISSUER: issuer, OAUTH_AUDIENCE: audience });

/** The Fastify peer (./peer.ts) on `store`, a copy of the SQLite store of its own. */
export const startPeer = (store: PreparedStore, opts: BenchOptions) => startBenchServer('Fastify peer', 'peer.ts', '/v1/pets?limit=1', store, opts);

/** Stops a server, SIGKILL after `graceMs` (a profiled one needs longer to write its profile). */
export async function stop(target: Started, graceMs = 5000): Promise<void> {
  await stopProcess(target.proc, 'SIGTERM', graceMs);
}

const BASELINE_SOURCE = String.raw`
const http = require('node:http');
const body = Buffer.from(process.env.BENCH_BODY, 'utf8');
const expected = 'Bearer ' + process.env.BENCH_KEY;
const denied = Buffer.from('{"status":401,"code":"unauthorized","message":"A valid API key is required."}');
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"ok"}');
  } else if (req.method !== 'GET' || req.url !== '/v1/pets?limit=20') {
    res.writeHead(404, { 'content-length': '0' });
    res.end();
  } else if (req.headers.authorization !== expected) {
    // Like the server: a bad key closes the connection, so no body is ever read after it.
    res.writeHead(401, { 'content-type': 'application/json', 'content-length': denied.length, connection: 'close' });
    res.end(denied);
  } else {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length });
    res.end(body);
  }
});
server.keepAliveTimeout = 5000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => { server.close(() => process.exit(0)); server.closeAllConnections(); });
// Never outlive the benchmark, even if it is killed without a chance to clean up.
const parent = Number(process.env.BENCH_PARENT);
setInterval(() => { if (process.ppid !== parent) process.exit(0); }, 1000).unref();
`;

/** The ceiling: a bare node:http server answering `body` (the server's own first page) after a bearer check on `key`. */
export function startBaseline(body: string, key: string): Promise<Started> {
  return startNode('baseline', ['-e', BASELINE_SOURCE], { ...process.env, BENCH_BODY: body, BENCH_KEY: key, BENCH_PARENT: String(process.pid) }, '/healthz');
}
