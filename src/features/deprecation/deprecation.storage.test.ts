/**
 * The deprecation lifecycle as a caller and an operator meet it, on the real server over HTTP:
 * every answer of a deprecated operation says so (Deprecation, Sunset, Link rel="deprecation"),
 * its calls are counted per API key in the store (batched, written at shutdown at the latest) and
 * in the metrics, brownout windows and the sunset date answer 410 with the replacement, and a bad
 * DEPRECATION_BROWNOUTS stops the start. Everything is derived from the spec's markers: the
 * sunset test moves getPet's x-sunset in a copy of the contract, and no code names getPet.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/env.js';
import { loadConfig } from '../../config.js';
import type { Env } from '../../shared/env.js';
import { readBrownouts } from './config.js';
import { createLogger } from '../../shared/logger.js';
import { projectRoot } from '../../shared/paths.js';
import { startServer, type RunningServer } from '../../server.js';
import { loadBundledSpec, operationsOf, type OpenApiDocument } from '../../shared/spec.js';
import { openSqlite, type DatabaseHandle } from '../../store/database.js';
import { createDeprecatedCallLog, deprecatedUsage } from './calls.js';
import { openTestStorage, targets, testConfig, type Target } from '../../../test/support/server.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'animal-store-deprecation-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const document = loadBundledSpec();
const deprecated = operationsOf(document).filter((op) => op.deprecated);
const current = operationsOf(document).filter((op) => !op.deprecated && op.method === 'get');
/** The deprecated GET the tests call (getPet today), at a concrete path. */
const target = deprecated.find((op) => op.method === 'get');
if (!target?.sunset || !target.replacement) throw new Error('the contract has no deprecated GET with x-sunset and x-replacement to test');
const targetPath = (id: number) => target.path.replace(/\{[^}]+\}/, String(id));
const currentPath = current[0]?.path ?? '/pets';

interface Running {
  server: RunningServer;
  database: DatabaseHandle;
  /** Closes the store (and removes a scratch PostgreSQL database). */
  dispose(): Promise<void>;
  file: string;
  api: string;
  keys: { a: string; b: string };
  get(path: string, key?: string, headers?: Record<string, string>): Promise<Response>;
}

let count = 0;
async function start(env: Env = {}, spec: OpenApiDocument = document, storage: Target = 'sqlite'): Promise<Running> {
  const file = join(dir, `store-${++count}.sqlite`);
  const { database, dispose } = storage === 'sqlite' ? { database: await openSqlite(file), dispose: undefined } : await openTestStorage(storage);
  // The calls are written at close (checked below), never by the timer while a slow machine runs the test.
  const config = testConfig({ sqlitePath: file, env: { DEPRECATED_CALLS_FLUSH_MS: String(10 * 60_000), ...env } });
  const server = await startServer({ config, logger: createLogger('silent'), database, document: spec, bootstrapKey: false });
  const a = (await server.keys.create('frontend')).key;
  const b = (await server.keys.create('batch job')).key;
  await server.keyCache.refresh();
  const api = `${server.origin}${server.basePath}`;
  return {
    server,
    database,
    dispose: dispose ?? (() => database.close()),
    file,
    api,
    keys: { a, b },
    get: (path, key = a, headers = {}) => fetch(`${api}${path}`, { headers: { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...headers } }),
  };
}

async function stop(running: Running): Promise<void> {
  await running.server.close();
  expect(running.server.violations).toEqual([]);
  await running.dispose();
}

async function aPet(running: Running): Promise<number> {
  const response = await fetch(`${running.api}/pets`, { method: 'POST', headers: { Authorization: `Bearer ${running.keys.a}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Biscuit', categoryId: 2 }) });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: number }).id;
}

describe('every answer of a deprecated operation says so', () => {
  it('Deprecation, Sunset and Link rel="deprecation" on its 200, 304, 404, 400 and 401 (no key, bad key); none on an operation that is not deprecated', async () => {
    const s = await start();
    try {
      const id = await aPet(s);
      const ok = await s.get(targetPath(id));
      const etag = ok.headers.get('etag') ?? '';
      const answers = {
        200: ok,
        304: await s.get(targetPath(id), s.keys.a, { 'If-None-Match': etag }),
        404: await s.get(targetPath(9_999_999)),
        400: await s.get(targetPath(0)),
        '401 (no key)': await s.get(targetPath(id), ''),
        '401 (bad key)': await s.get(targetPath(id), 'ask_not-a-key'),
      };
      const deprecatedAt = Math.floor(Date.parse(target.deprecatedAt ?? '') / 1000);
      for (const [what, response] of Object.entries(answers)) {
        expect(response.status, what).toBe(Number(what.slice(0, 3)));
        expect(response.headers.get('deprecation'), what).toBe(`@${deprecatedAt}`);
        expect(response.headers.get('sunset'), what).toBe(new Date(target.sunset ?? '').toUTCString());
        expect(response.headers.get('link'), what).toBe(`</docs#tag/${target.tag}/operation/${target.operationId}>; rel="deprecation"; type="text/html"`);
      }
      const other = await s.get(`${currentPath}?limit=1`);
      expect(other.status).toBe(200);
      expect(other.headers.get('deprecation')).toBeNull();
      expect(other.headers.get('sunset')).toBeNull();
      expect(other.headers.get('link') ?? '').not.toContain('rel="deprecation"');
    } finally {
      await stop(s);
    }
  });
});

describe('who still calls it', () => {
  it.each(targets)('%s: calls are counted per key and operation in the store, not per request (nothing before the flush), with first and last call; other operations are not counted', async (storage) => {
    const s = await start({ METRICS_PORT: '0' }, document, storage);
    let stopped = false;
    try {
      const id = await aPet(s);
      const before = Date.now();
      for (let i = 0; i < 3; i++) expect((await s.get(targetPath(id), s.keys.a)).status).toBe(200);
      expect((await s.get(targetPath(id), s.keys.b)).status).toBe(200);
      expect((await s.get(targetPath(id), '')).status).toBe(401);
      expect((await s.get(`${currentPath}?limit=1`, s.keys.b)).status).toBe(200);
      // Batched: the calls are in memory until the next write (by the timer, or at shutdown).
      expect(await deprecatedUsage(s.database.db)).toEqual([]);

      const metrics = await (await fetch(`${s.server.featureOrigins.metrics}/metrics`)).text();
      // Every call, the 401 included; never a key label.
      expect(metrics).toContain(`animal_store_deprecated_requests_total{operation="${target.operationId}"} 5`);

      await s.server.close();
      stopped = true;
      const usage = await deprecatedUsage(s.database.db);
      expect(usage.map(({ keyName, operationId, calls }) => ({ keyName, operationId, calls })).sort((x, y) => (x.keyName ?? '').localeCompare(y.keyName ?? ''))).toEqual([
        { keyName: 'batch job', operationId: target.operationId, calls: 1 },
        { keyName: 'frontend', operationId: target.operationId, calls: 3 },
      ]);
      for (const row of usage) {
        expect(Date.parse(row.firstCall)).toBeGreaterThanOrEqual(before - 1);
        expect(Date.parse(row.lastCall)).toBeGreaterThanOrEqual(Date.parse(row.firstCall));
        expect(Date.parse(row.lastCall)).toBeLessThanOrEqual(Date.now());
      }
    } finally {
      if (!stopped) await s.server.close();
      await s.dispose();
    }
  });

  it.each(targets)('%s: each write adds to the rows already there (calls summed, first kept, last moved on); a failed write keeps its counts for the next', async (storage) => {
    const { database, dispose } = await openTestStorage(storage);
    const errors: unknown[] = [];
    const log = createDeprecatedCallLog(database.db, (error) => errors.push(error));
    try {
      const t0 = Date.parse('2030-01-01T00:00:00Z');
      log.record('getPet', 'hash-a', t0);
      log.record('getPet', 'hash-a', t0 + 1_000);
      log.record('getPet', undefined, t0 + 2_000);
      await log.flush();
      log.record('getPet', 'hash-a', t0 + 5_000);
      await log.flush();
      const rows = (await deprecatedUsage(database.db)).map(({ operationId, calls, firstCall, lastCall }) => ({ operationId, calls, firstCall, lastCall }));
      expect(rows).toEqual([
        { operationId: 'getPet', calls: 3, firstCall: '2030-01-01T00:00:00.000Z', lastCall: '2030-01-01T00:00:05.000Z' },
        { operationId: 'getPet', calls: 1, firstCall: '2030-01-01T00:00:02.000Z', lastCall: '2030-01-01T00:00:02.000Z' },
      ]);
      expect(errors).toEqual([]);
    } finally {
      await log.close();
      await dispose();
    }
    // With the store gone, a write fails, is reported, and its counts wait for the next one.
    const closed = await openTestStorage('sqlite');
    const failing = createDeprecatedCallLog(closed.database.db, (error) => errors.push(error));
    await closed.dispose();
    failing.record('getPet', 'hash-b', Date.now());
    await failing.flush();
    expect(errors).toHaveLength(1);
    await failing.close();
    expect(errors).toHaveLength(2);
  });

  it('a second server on the same store adds to the same rows; `npm run keys -- usage` prints them per key with the sunset', async () => {
    const s = await start();
    const id = await aPet(s);
    await s.get(targetPath(id), s.keys.a);
    await stop(s);
    // The same SQLite file, a new server: its calls add up with the first one's.
    const database = await openSqlite(s.file);
    const again = await startServer({ config: testConfig({ sqlitePath: s.file }), logger: createLogger('silent'), database, bootstrapKey: false });
    await fetch(`${again.origin}${again.basePath}${targetPath(id)}`, { headers: { Authorization: `Bearer ${s.keys.a}` } });
    await again.close();
    await database.close();

    const { stdout } = await run(join(projectRoot, 'node_modules/.bin/tsx'), ['scripts/operators/keys.ts', 'usage'], { cwd: projectRoot, env: { ...process.env, SQLITE_PATH: s.file, DATABASE_URL: '' } });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^key id\s+key name\s+operation\s+sunset\s+calls\s+first call\s+last call$/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(new RegExp(`^1\\s+frontend\\s+${target.operationId}\\s+${target.sunset}\\s+2\\s+\\S+Z\\s+\\S+Z$`));
  });
});

describe('brownouts and the sunset: 410 Gone with the replacement', () => {
  const window = (fromMs: number, toMs: number) => `${new Date(Date.now() + fromMs).toISOString()}/${new Date(Date.now() + toMs).toISOString()}`;

  it('inside a DEPRECATION_BROWNOUTS window every deprecated operation answers 410 operation_brownout (its headers too); others answer as usual', async () => {
    const s = await start({ DEPRECATION_BROWNOUTS: `${window(-60_000, 60 * 60_000)}` });
    try {
      const id = await aPet(s);
      const response = await s.get(targetPath(id));
      expect(response.status).toBe(410);
      const body = (await response.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ code: 'operation_brownout', status: 410, sunset: target.sunset, replacement: target.replacement });
      expect(String(body.message)).toContain(target.replacement);
      expect(String(body.message)).toContain(target.sunset?.slice(0, 10));
      expect(response.headers.get('sunset')).toBe(new Date(target.sunset ?? '').toUTCString());
      expect(response.headers.get('link')).toContain('rel="deprecation"');
      expect((await s.get(`${currentPath}?limit=1`)).status).toBe(200);
      // A bad key still gets its 401: the brownout answers callers, not strangers.
      expect((await s.get(targetPath(id), '')).status).toBe(401);
    } finally {
      await stop(s);
    }
  });

  it('outside every window (one past, one to come, written start/duration) it answers as usual', async () => {
    const past = `${new Date(Date.now() - 2 * 3_600_000).toISOString()}/PT1H`;
    const s = await start({ DEPRECATION_BROWNOUTS: `${past}, ${window(3_600_000, 7_200_000)}` });
    try {
      const id = await aPet(s);
      expect((await s.get(targetPath(id))).status).toBe(200);
    } finally {
      await stop(s);
    }
  });

  it('from its x-sunset instant on, it answers 410 operation_sunset for good (a copy of the contract whose sunset has passed)', async () => {
    const spec = structuredClone(document);
    const operation: Record<string, unknown> | undefined = spec.paths?.[target.path]?.[target.method];
    if (!operation) throw new Error('deprecated operation not found in the copy');
    operation['x-sunset'] = '2026-01-01T00:00:00Z';
    const s = await start({}, spec);
    try {
      const id = await aPet(s);
      const response = await s.get(targetPath(id));
      expect(response.status).toBe(410);
      expect(await response.json()).toMatchObject({ code: 'operation_sunset', sunset: '2026-01-01T00:00:00Z', replacement: target.replacement });
      expect(response.headers.get('sunset')).toBe('Thu, 01 Jan 2026 00:00:00 GMT');
    } finally {
      await stop(s);
    }
  });

  it('DEPRECATION_BROWNOUTS: start/end and start/duration, sorted; a bad value is a ConfigError naming the variable and the form', () => {
    expect(readBrownouts({ DEPRECATION_BROWNOUTS: '2030-06-02T10:00:00Z/PT30M, 2030-06-01T10:00:00+02:00/2030-06-01T09:00:00Z' })).toEqual([
      { start: Date.parse('2030-06-01T08:00:00Z'), end: Date.parse('2030-06-01T09:00:00Z'), text: '2030-06-01T08:00:00Z/2030-06-01T09:00:00Z' },
      { start: Date.parse('2030-06-02T10:00:00Z'), end: Date.parse('2030-06-02T10:30:00Z'), text: '2030-06-02T10:00:00Z/2030-06-02T10:30:00Z' },
    ]);
    expect(readBrownouts({})).toEqual([]);
    for (const bad of ['tomorrow', '2030-06-01T10:00:00Z', '2030-06-01T12:00:00Z/2030-06-01T10:00:00Z', '2030-06-01T10:00:00Z/PT0S', '2030-06-01T10:00:00Z/PT1H,']) {
      expect(() => loadConfig({ DEPRECATION_BROWNOUTS: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ DEPRECATION_BROWNOUTS: bad }), bad).toThrow(/DEPRECATION_BROWNOUTS/);
    }
  });

  it('npm start with a bad DEPRECATION_BROWNOUTS stops before listening, with the message', async () => {
    const failure = await run(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: projectRoot,
      env: { ...process.env, DEPRECATION_BROWNOUTS: '2030-06-01/yesterday', PORT: '0', SQLITE_PATH: join(dir, 'never.sqlite'), DATABASE_URL: '' },
    }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toMatch(/^Configuration error: DEPRECATION_BROWNOUTS: "2030-06-01\/yesterday" is not an ISO 8601 interval/);
  });
});
