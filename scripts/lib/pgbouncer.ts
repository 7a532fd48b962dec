/**
 * Debian's PgBouncer in transaction pooling mode in front of a PostgreSQL (the tests', the
 * bench's), as production runs one: each transaction (or statement outside one) borrows a server
 * connection, and the next may get another, so whatever a client leaves on a connection (a
 * prepared statement, a session lock, a SET) shows up under someone else. `pgbouncerVersion()`
 * says whether it is installed; `startPgbouncer` writes a configuration in a temp folder, starts
 * it on a free port and resolves once it accepts connections. Run as root, it drops to the
 * `postgres` user (it refuses to run as root).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, isListening, startProcess, stopProcess, type RunningProcess } from './processes.js';

const BINARY = '/usr/sbin/pgbouncer';

/** `PgBouncer 1.18.0`, or undefined when it is not installed. */
export function pgbouncerVersion(): string | undefined {
  const probe = spawnSync(BINARY, ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) return undefined;
  return probe.stdout.split('\n')[0]?.trim();
}

/** Why the PgBouncer tests cannot run here, or undefined when they can. */
export function pgbouncerMissing(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!env.DATABASE_URL) return 'DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)';
  if (pgbouncerVersion() === undefined) return `PgBouncer is not installed at ${BINARY} (apt-get install pgbouncer)`;
  return undefined;
}

export interface Pgbouncer {
  /** `url` with its host and port replaced by the pooler's: the same user and database, through PgBouncer. */
  through(url: string): string;
  port: number;
  /** The configuration it runs, for failures and printed figures. */
  config: string;
  proc: RunningProcess;
  stop(): Promise<void>;
}

/** PgBouncer's quoting of a userlist entry: a double quote doubled. */
const quoted = (text: string) => `"${text.replaceAll('"', '""')}"`;

export interface PgbouncerOptions {
  /** Server connections per database and user (`default_pool_size`): a handful, so clients share them. */
  poolSize?: number;
  /** Clients must log in with this password (`auth_type = md5`); unset: `trust`. */
  clientPassword?: string;
  /** More users it lets in (with `trust`), besides the upstream URL's. */
  users?: readonly string[];
}

/**
 * PgBouncer forwarding every database name to `upstreamUrl`'s server (`* =` fallback), with
 * `auth_type = trust` for the URL's user (a password in the URL is kept in the userlist and used
 * towards the server), or `md5` with `clientPassword`. Transaction mode, Debian's defaults otherwise: no server reset between
 * clients in that mode, so state left on a connection is seen by the next.
 */
export async function startPgbouncer(upstreamUrl: string, options: PgbouncerOptions = {}): Promise<Pgbouncer> {
  const upstream = new URL(upstreamUrl);
  const user = decodeURIComponent(upstream.username || 'postgres');
  const password = options.clientPassword ?? decodeURIComponent(upstream.password);
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-pgbouncer-'));
  // Readable by the postgres user it drops to when started as root.
  chmodSync(dir, 0o755);
  const port = await freePort();
  const config = [
    '[databases]',
    `* = host=${upstream.hostname || '127.0.0.1'} port=${upstream.port || '5432'}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    `auth_type = ${options.clientPassword === undefined ? 'trust' : 'md5'}`,
    `auth_file = ${join(dir, 'userlist.txt')}`,
    'pool_mode = transaction',
    `default_pool_size = ${options.poolSize ?? 5}`,
    'max_client_conn = 500',
    '',
  ].join('\n');
  const file = join(dir, 'pgbouncer.ini');
  writeFileSync(file, config, { mode: 0o644 });
  const userlist = [`${quoted(user)} ${quoted(password)}`, ...(options.users ?? []).map((other) => `${quoted(other)} ""`)];
  writeFileSync(join(dir, 'userlist.txt'), `${userlist.join('\n')}\n`, { mode: 0o644 });
  const asRoot = process.getuid?.() === 0;
  const proc = startProcess(BINARY, asRoot ? ['-u', 'postgres', file] : [file]);
  const dispose = () => rmSync(dir, { recursive: true, force: true });
  // However it ends (stopped, or killed by a caller's cleanup, as the bench's), its folder goes with it.
  void proc.exited.then(dispose);
  for (let waited = 0; !(await isListening('127.0.0.1', port)); waited += 50) {
    if (!proc.running() || waited > 10_000) {
      await stopProcess(proc, 'SIGKILL');
      dispose();
      throw new Error(`PgBouncer did not listen on 127.0.0.1:${port}:\n${proc.output()}`);
    }
    await sleep(50);
  }
  return {
    port,
    config,
    proc,
    through(url) {
      const via = new URL(url);
      via.hostname = '127.0.0.1';
      via.port = String(port);
      return via.toString();
    },
    async stop() {
      // SIGINT: PgBouncer's "safe shutdown" waits for clients; SIGTERM closes at once.
      await stopProcess(proc, 'SIGTERM', 5_000);
      dispose();
    },
  };
}
