/**
 * A database that cannot be used gets one line, not a stack trace: `npm run keys` and the
 * server's start (src/main.ts) name the address, never its password, and the likely cause, and
 * exit 1 (src/store/databaseErrors.ts). Each failure here is real: a port nobody listens on, a
 * name that cannot resolve, a database that does not exist, a user without CREATE, a wrong
 * password (at a PgBouncer that checks it), TLS asked of a server without it. In the processes
 * suite; the cases that need PostgreSQL or PgBouncer skip without them, saying so.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server, type Socket } from 'node:net';
import { once } from 'node:events';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, type ScratchDatabase } from '../../scripts/lib/scratchDatabase.js';
import { freePort } from '../../scripts/lib/processes.js';
import { pgbouncerMissing, startPgbouncer, type Pgbouncer } from '../../scripts/lib/pgbouncer.js';

const run = promisify(execFile);
const tsx = join(process.cwd(), 'node_modules', '.bin', 'tsx');
const adminUrl = process.env.DATABASE_URL;
if (!adminUrl) console.warn('test/processes/databaseErrors.test.ts: the cases on a real PostgreSQL are skipped: DATABASE_URL is not set.');
const poolerMissing = pgbouncerMissing();
if (poolerMissing !== undefined) console.warn(`test/processes/databaseErrors.test.ts: the wrong-password case is skipped: ${poolerMissing}.`);

interface Outcome {
  code: number;
  output: string;
}

/** Runs a command of the project with `env` on top of a clean database environment; never throws. */
async function outcome(args: string[], env: Record<string, string>): Promise<Outcome> {
  const scrubbed: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: '', LOG_LEVEL: '', PORT: '0', ...env };
  try {
    const { stdout, stderr } = await run(tsx, args, { env: scrubbed, timeout: 60_000 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, output: (failed.stdout ?? '') + (failed.stderr ?? '') };
  }
}

/** `npm run keys -- list` and the server's start, each on `env`: exit 1, the one line, no stack, no password. */
async function expectOneLine(env: Record<string, string>, location: string, cause: RegExp): Promise<void> {
  const [keys, start] = await Promise.all([outcome(['scripts/operators/keys.ts', 'list'], env), outcome(['src/main.ts'], env)]);
  for (const [what, result] of [['npm run keys', keys], ['the start', start]] as const) {
    expect(result.code, `${what}: ${result.output}`).toBe(1);
    expect(result.output, what).not.toMatch(/\n\s+at /);
    expect(result.output, what).not.toContain('s3cret');
  }
  const keysLines = keys.output.trim().split('\n');
  expect(keysLines).toHaveLength(1);
  expect(keysLines[0]).toContain(`Cannot use the database at ${location}: `);
  expect(keysLines[0]).toMatch(cause);
  // The server logs JSON: one fatal line whose message is the same sentence.
  const logLines = start.output.trim().split('\n');
  expect(logLines).toHaveLength(1);
  const logged = JSON.parse(logLines[0] ?? '{}') as { level: number; msg: string; database: string; err?: unknown };
  expect(logged).toMatchObject({ level: 60, msg: keysLines[0], database: location });
  expect(logged.err).toBeUndefined();
}

describe('a database that cannot be used gets one line', () => {
  it('refused: nothing listens on the port (the password in the URL is masked)', async () => {
    const port = await freePort();
    await expectOneLine({ DATABASE_URL: `postgres://app:s3cret@127.0.0.1:${port}/animals` }, `postgres://app:***@127.0.0.1:${port}/animals`, /connection refused: nothing accepts connections at 127\.0\.0\.1:\d+/);
  });

  it('unknown host: the name does not resolve', async () => {
    await expectOneLine({ DATABASE_URL: 'postgres://app@db.invalid:5432/animals' }, 'postgres://app@db.invalid:5432/animals', /unknown host db\.invalid/);
  });

  it('silent or closing: something on the port that never speaks PostgreSQL', async () => {
    // One listener that holds every connection without a word (the pool's 2 s connect bound ends
    // it), one that closes each at once, one that resets each (the client sees ECONNRESET, which
    // a close can also give, depending on timing): a firewall, a half-dead host, another service.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket)).listen(0, '127.0.0.1');
    const closing = createServer((socket) => socket.destroy()).listen(0, '127.0.0.1');
    const resetting = createServer((socket) => socket.resetAndDestroy()).listen(0, '127.0.0.1');
    await Promise.all([once(silent, 'listening'), once(closing, 'listening'), once(resetting, 'listening')]);
    const portOf = (server: Server) => (server.address() as { port: number }).port;
    try {
      for (const server of [silent, closing, resetting]) {
        const url = `postgres://app@127.0.0.1:${portOf(server)}/animals`;
        await expectOneLine({ DATABASE_URL: url }, url, /no answer from 127\.0\.0\.1:\d+ in time|the connection to 127\.0\.0\.1:\d+ closed before PostgreSQL answered/);
      }
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
      closing.close();
      resetting.close();
    }
  });

  it('SQLite: a path that cannot be a database file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-errors-'));
    try {
      await expectOneLine({ SQLITE_PATH: dir }, dir, /the file cannot be opened/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('LOG_LEVEL=debug adds the stack', async () => {
    const port = await freePort();
    const keys = await outcome(['scripts/operators/keys.ts', 'list'], { DATABASE_URL: `postgres://app@127.0.0.1:${port}/animals`, LOG_LEVEL: 'debug' });
    expect(keys.code).toBe(1);
    expect(keys.output).toMatch(/ECONNREFUSED[\s\S]*\n\s+at /);
    expect(keys.output).toContain('Cannot use the database at');
  });

  describe.skipIf(!adminUrl)('on the real PostgreSQL', () => {
    const role = `animal_store_nocreate_${randomBytes(4).toString('hex')}`;
    let scratch: ScratchDatabase;
    beforeAll(async () => {
      scratch = await createScratchDatabase(adminUrl ?? '', 'errors');
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`create role ${role} login password 'pw'`);
      await client.end();
    });
    afterAll(async () => {
      await scratch?.drop();
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`drop role if exists ${role}`);
      await client.end();
    });

    it('database missing: names it and says to create it', async () => {
      const url = new URL(adminUrl ?? '');
      url.pathname = `/animal_store_missing_${randomBytes(4).toString('hex')}`;
      await expectOneLine({ DATABASE_URL: url.toString() }, url.toString(), /database "animal_store_missing_\w+" does not exist: create it/);
    });

    it('no CREATE permission: PostgreSQL 15 gives none on public to other users; says what to grant', async () => {
      const url = new URL(scratch.url);
      url.username = role;
      url.password = 'pw';
      const shown = new URL(url);
      shown.password = '***';
      await expectOneLine({ DATABASE_URL: url.toString() }, shown.toString(), /permission denied for schema public: the user needs CREATE/);
    });

    it('TLS asked of a server that has none', async () => {
      const url = `${scratch.url}?sslmode=verify-full`;
      await expectOneLine({ DATABASE_URL: url }, url, /TLS: DATABASE_URL asks for TLS \(sslmode\) but the server at [\d.:]+ does not offer it/);
    });

    describe.skipIf(poolerMissing !== undefined)('through a PgBouncer that checks passwords', () => {
      let pooler: Pgbouncer;
      beforeAll(async () => {
        pooler = await startPgbouncer(adminUrl ?? '', { clientPassword: 'the-right-one' });
      });
      afterAll(async () => {
        await pooler?.stop();
      });

      it('password: authentication failed, check the user and password', async () => {
        const url = new URL(pooler.through(scratch.url));
        url.password = 's3cret';
        const shown = new URL(url);
        shown.password = '***';
        await expectOneLine({ DATABASE_URL: url.toString() }, shown.toString(), /password authentication failed .*check the user and password in DATABASE_URL/);
      });
    });
  });
});
