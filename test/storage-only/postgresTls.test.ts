/**
 * TLS to the database, as managed PostgreSQL asks for it, against a cluster started here with TLS
 * required (test/support/tlsPostgres.ts: a self-signed CA, a certificate for `localhost`):
 *
 *   - `sslmode=verify-full&sslrootcert=<CA>` by a name the certificate holds: the server starts,
 *     migrates and answers over TLS (pg_stat_ssl says so);
 *   - `sslmode=require&uselibpqcompat=true` (libpq's `require`: encrypted, not verified) connects
 *     without the CA; plain `sslmode=require` is node-postgres 8's alias for verify-full and is
 *     refused without the CA, with a line saying to give it;
 *   - verify-full by an address the certificate does not hold (127.0.0.1) is refused, and
 *     `npm run keys` says so in one line;
 *   - no sslmode at all: the server's pg_hba.conf rejects it, and the line says to add one.
 *
 * Storage suite only; skipped, saying why, without PostgreSQL 15's initdb or openssl.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/shared/logger.js';
import { startServer } from '../../src/server.js';
import { createApiKeyStore } from '../../src/store/apiKeys.js';
import { openPostgres } from '../../src/store/database.js';
import { explainDatabaseError } from '../../src/store/databaseErrors.js';
import { sql } from 'kysely';
import { testConfig } from '../support/server.js';
import { startTlsCluster, tlsClusterMissing, type TlsCluster } from '../support/tlsPostgres.js';

const missing = tlsClusterMissing();
if (missing !== undefined) console.warn(`test/storage-only/postgresTls.test.ts is skipped: ${missing}.`);

/** Opens the store on `url` and gives the line a failure would print (undefined: it opened, and closed again). */
async function failureLine(url: string): Promise<string | undefined> {
  try {
    const handle = await openPostgres({ connection: url });
    await handle.close();
    return undefined;
  } catch (error) {
    return explainDatabaseError(error, url) ?? `unexplained: ${String(error)}`;
  }
}

describe.skipIf(missing !== undefined)('TLS to PostgreSQL (a cluster of its own, TLS required)', () => {
  let cluster: TlsCluster;
  beforeAll(async () => {
    cluster = await startTlsCluster();
  });
  afterAll(() => {
    cluster?.stop();
  });

  it('verify-full with sslrootcert, by the certificate\'s name: the server migrates and serves over TLS', async () => {
    const url = cluster.url('localhost', `sslmode=verify-full&sslrootcert=${encodeURIComponent(cluster.caFile)}`);
    const database = await openPostgres({ connection: url });
    const server = await startServer({ config: testConfig(), logger: createLogger('silent'), database, bootstrapKey: false });
    try {
      const { key } = await server.keys.create('tls');
      await server.keyCache.refresh();
      const created = await fetch(`${server.origin}${server.basePath}/pets`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Over TLS', categoryId: 1 }) });
      expect(created.status).toBe(201);
      const listed = await fetch(`${server.origin}${server.basePath}/pets`, { headers: { Authorization: `Bearer ${key}` } });
      expect(((await listed.json()) as Array<{ name: string }>).map((pet) => pet.name)).toEqual(['Over TLS']);
      const { rows } = await sql<{ ssl: boolean; version: string }>`select ssl, version from pg_stat_ssl where pid = pg_backend_pid()`.execute(database.db);
      expect(rows[0]?.ssl).toBe(true);
      expect(rows[0]?.version).toMatch(/^TLSv1\.[23]$/);
    } finally {
      await server.close();
      await database.close();
    }
  });

  it('require with libpq semantics (uselibpqcompat=true) encrypts without checking the certificate', async () => {
    const url = cluster.url('127.0.0.1', 'sslmode=require&uselibpqcompat=true');
    const database = await openPostgres({ connection: url });
    try {
      const { rows } = await sql<{ ssl: boolean }>`select ssl from pg_stat_ssl where pid = pg_backend_pid()`.execute(database.db);
      expect(rows[0]?.ssl).toBe(true);
      expect(await createApiKeyStore(database.db).list()).toEqual(expect.any(Array));
    } finally {
      await database.close();
    }
  });

  it('plain require is verify-full in node-postgres 8: without the CA it is refused, and the line says to give sslrootcert', async () => {
    expect(await failureLine(cluster.url('localhost', 'sslmode=require'))).toMatch(/TLS: the server's certificate is not signed by a CA this process trusts .*sslrootcert=<file>/);
  });

  it('a certificate that does not name the host is refused, with a clear line', async () => {
    const url = cluster.url('127.0.0.1', `sslmode=verify-full&sslrootcert=${encodeURIComponent(cluster.caFile)}`);
    expect(await failureLine(url)).toMatch(/^Cannot use the database at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres\?sslmode=verify-full&sslrootcert=\S+: TLS: the server's certificate does not name 127\.0\.0\.1:\d+ \(Hostname\/IP does not match certificate's altnames/);
    // The same as `npm run keys` prints it: one line, exit 1.
    const tsx = join(process.cwd(), 'node_modules', '.bin', 'tsx');
    const keys = await promisify(execFile)(tsx, ['scripts/operators/keys.ts', 'list'], { env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: '' } }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
    );
    expect(keys.code).toBe(1);
    expect(keys.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Cannot use the database at .*: TLS: the server's certificate does not name 127\.0\.0\.1/)]);
  });

  it('no sslmode where the server requires TLS: rejected by pg_hba.conf, and the line says to add sslmode', async () => {
    expect(await failureLine(cluster.url('127.0.0.1', ''))).toMatch(/the server accepts this user only over TLS .*no encryption.*: add sslmode=verify-full/);
  });
});
