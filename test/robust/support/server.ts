/**
 * The server as `npm start` runs it (the esbuild bundle dist/server/server.mjs with the node flags
 * of package.json's `start` script, scripts/lib/bundle.ts; the robust config's globalSetup builds
 * it) as a child process for the robust tests: start it on a given store, read its banner (base
 * URL, bootstrap key), and stop or kill it. Every start is registered so `killAll()` can clean up
 * whatever a failed test left running.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundledServerArgs, root } from '../../../scripts/lib/bundle.js';
import { createScratchDatabase } from '../../../scripts/lib/scratchDatabase.js';
import { startProcess, stopProcess, type Exit, type RunningProcess } from '../../../scripts/lib/processes.js';
import { startPgbouncer } from '../../../scripts/lib/pgbouncer.js';

export interface ServerProcess {
  proc: RunningProcess;
  pid: number;
  /** `http://127.0.0.1:<port>/v1` */
  base: string;
  host: string;
  port: number;
  /** The key the banner showed (first start on an empty store only). */
  bootstrapKey: string | undefined;
}

const started = new Set<RunningProcess>();

/** What the child needs to find its store: a SQLite file or a PostgreSQL URL. */
export interface Store {
  kind: 'sqlite' | 'postgres';
  env: Record<string, string>;
  /** Human description for the printed figures. */
  label: string;
  dispose(): Promise<void>;
}

/** A fresh SQLite store in a temp folder; dispose removes the folder. */
export function sqliteStore(prefix: string): Store {
  const dir = mkdtempSync(join(tmpdir(), `animal-store-${prefix}-`));
  return {
    kind: 'sqlite',
    env: { SQLITE_PATH: join(dir, 'store.sqlite') },
    label: 'sqlite',
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A fresh PostgreSQL database on the server `adminUrl` points at (the same approach as
 * test/support/server.ts); dispose drops it, closing whatever connections a killed server left.
 */
export async function postgresStore(adminUrl: string, prefix: string): Promise<Store> {
  const scratch = await createScratchDatabase(adminUrl, prefix);
  return {
    kind: 'postgres',
    env: { DATABASE_URL: scratch.url },
    label: `postgres (${scratch.name})`,
    dispose: scratch.drop,
  };
}

/**
 * The same, reached through a PgBouncer in transaction mode started for it (scripts/lib/pgbouncer.ts),
 * with named statements off as behind any transaction pooler: every server started on this store
 * shares the pooler, as instances behind one do. dispose stops the pooler, then drops the database.
 */
export async function pgbouncerStore(adminUrl: string, prefix: string): Promise<Store> {
  const scratch = await createScratchDatabase(adminUrl, prefix);
  const pooler = await startPgbouncer(adminUrl).catch(async (error: unknown) => {
    await scratch.drop();
    throw error;
  });
  return {
    kind: 'postgres',
    env: { DATABASE_URL: pooler.through(scratch.url), DATABASE_PREPARED_STATEMENTS: 'off' },
    label: `postgres through PgBouncer (${scratch.name})`,
    dispose: async () => {
      await pooler.stop();
      await scratch.drop();
    },
  };
}

const BANNER = /listening on http:\/\/[^/\s]+:(\d+)\/v1/;
const KEY = /^\s+(ask_[A-Za-z0-9_-]{43})$/m;

/**
 * Starts the server on `store` (port 0, production mode) and resolves once the banner is out.
 * Fails with the child's output if it exits first or prints nothing within `withinMs`.
 * `openFiles` starts it under that open-file limit (soft and hard), through util-linux's prlimit,
 * which sets it and then executes node in its place (same pid), as `ulimit -n` would.
 */
export async function startServerProcess(store: Store, extraEnv: Record<string, string> = {}, withinMs = 30_000, openFiles?: number): Promise<ServerProcess> {
  // `node` of the start script is the Node running the tests (the one npm would find first on PATH).
  const [command, args] = openFiles === undefined ? [process.execPath, bundledServerArgs()] : ['prlimit', [`--nofile=${openFiles}:${openFiles}`, process.execPath, ...bundledServerArgs()]];
  return startBannerProcess(command, args, store, extraEnv, withinMs);
}

/**
 * The same for any command that ends in a server printing the banner of src/main.ts: a bundle of
 * the server with a fixture contract (./fixtureServer.ts), or the server run through a wrapper that
 * executes it in its place (same pid: `unshare`, `prlimit`, `sh -c 'exec …'`), so `pid` is the
 * server's own.
 */
export async function startBannerProcess(command: string, args: readonly string[], store: Store, extraEnv: Record<string, string> = {}, withinMs = 30_000): Promise<ServerProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: '', NODE_ENV: 'production', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...store.env, ...extraEnv };
  const proc = startProcess(command, args, { env, cwd: root });
  started.add(proc);
  void proc.exited.then(() => started.delete(proc));
  const deadline = Date.now() + withinMs;
  // Bounded: polls the captured output every 25 ms until the deadline.
  while (Date.now() < deadline) {
    const output = proc.output();
    const match = BANNER.exec(output);
    // The banner is one write; the key line, when there is one, comes in the same chunk.
    if (match?.[1]) {
      const port = Number(match[1]);
      const pid = proc.child.pid;
      if (pid === undefined) throw new Error('the server process has no pid');
      return { proc, pid, base: `http://127.0.0.1:${port}/v1`, host: '127.0.0.1', port, bootstrapKey: KEY.exec(output)?.[1] };
    }
    if (!proc.running()) throw new Error(`the server exited before printing its banner (${JSON.stringify(await proc.exited)}):\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await stopProcess(proc, 'SIGKILL');
  throw new Error(`the server printed no banner within ${withinMs} ms:\n${proc.output()}`);
}

/** SIGKILL, then wait (bounded) for the exit to be reported. */
export async function killServer(server: ServerProcess): Promise<Exit> {
  return stopProcess(server.proc, 'SIGKILL', 5_000);
}

/** Kills every server process still running (afterAll / finally). */
export async function killAll(): Promise<void> {
  await Promise.all([...started].map((proc) => stopProcess(proc, 'SIGKILL', 5_000)));
}

/** Resolves with the exit, or undefined if it has not exited within `ms`. */
export function exitWithin(server: ServerProcess, ms: number): Promise<Exit | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    void server.proc.exited.then((exit) => {
      clearTimeout(timer);
      resolve(exit);
    });
  });
}

/** SIGTERM, then wait up to `withinMs` for the exit (SIGKILL after that, so the run cannot hang). */
export async function stopServer(server: ServerProcess, withinMs = 15_000): Promise<Exit> {
  return stopProcess(server.proc, 'SIGTERM', withinMs);
}
