/**
 * Starts the real server on an ephemeral port over one of the storage targets, with response
 * validation on: every response is checked against the spec, and `violations` must stay empty.
 *
 *   sqlite    a temp SQLite file
 *   pglite    PGlite: PostgreSQL in-process, so the PostgreSQL dialect is tested on every machine
 *   postgres  a real PostgreSQL (DATABASE_URL), in a database created for this run and dropped after
 *   pgbouncer the same, reached through a PgBouncer in transaction mode started for the run, with
 *             named prepared statements off (DATABASE_PREPARED_STATEMENTS=off), as behind a pooler
 */
import type { RequestListener } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { afterAll, afterEach, beforeAll, describe, expect } from 'vitest';
import { createAnimalStoreClient, nextLink, type AnimalStoreClient, type NewPet, type Pet } from '../../client/index.js';
import type { Config } from '../../src/config.js';
import { configureFeatures } from '../../src/features/index.js';
import type { Env } from '../../src/shared/env.js';
import { createLogger, type Logger } from '../../src/shared/logger.js';
import { startServer, type RunningServer } from '../../src/server.js';
import type { OpenApiDocument } from '../../src/shared/spec.js';
import { openPostgres, openSqlite, type DatabaseHandle } from '../../src/store/database.js';
import { createScratchDatabase } from '../../scripts/lib/scratchDatabase.js';
import { pgbouncerMissing, startPgbouncer } from '../../scripts/lib/pgbouncer.js';
import { inProcessFetch, TEST_OAUTH } from './inject.js';
import { startPglite } from './pglite.js';

export type Target = 'sqlite' | 'pglite' | 'postgres' | 'pgbouncer';

const realPostgresUrl = process.env.DATABASE_URL;
const ALL_TARGETS: readonly Target[] = ['sqlite', 'pglite', 'postgres', 'pgbouncer'];

/**
 * The stores this run covers: TEST_STORAGE, set per suite by vitest.config.ts (`npm test` runs
 * SQLite, `npm run test:storage` PGlite, PostgreSQL and PostgreSQL through PgBouncer), else all
 * four; PostgreSQL only when DATABASE_URL is set, PgBouncer only when it is installed too.
 */
export function selectStorage(env: NodeJS.ProcessEnv = process.env, pgbouncerProblem: () => string | undefined = () => pgbouncerMissing(env)): Target[] {
  const asked = env.TEST_STORAGE?.trim() ? env.TEST_STORAGE.split(',').map((s) => s.trim()) : [...ALL_TARGETS];
  const unknown = asked.filter((name) => !(ALL_TARGETS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`TEST_STORAGE: unknown store(s) ${unknown.join(', ')}; use a comma-separated list of ${ALL_TARGETS.join(', ')}`);
  return ALL_TARGETS.filter((target) => asked.includes(target) && (target !== 'postgres' || env.DATABASE_URL) && (target !== 'pgbouncer' || pgbouncerProblem() === undefined));
}

export const targets: Target[] = selectStorage();
const askedFor = (target: Target) => !process.env.TEST_STORAGE || process.env.TEST_STORAGE.includes(target);
if (!realPostgresUrl && askedFor('postgres')) {
  console.warn('DATABASE_URL is not set: the real-PostgreSQL target is skipped (SQLite and PGlite still run).');
}
const pgbouncerProblem = askedFor('pgbouncer') ? pgbouncerMissing() : undefined;
if (pgbouncerProblem !== undefined) console.warn(`The PgBouncer target is skipped: ${pgbouncerProblem}.`);

export interface TestServer {
  server: RunningServer;
  /** Base URL of the API, with /v1. */
  api: string;
  origin: string;
  key: string;
  /** The typed client, with the test key: over the socket, or in process when the server was started `inProcess`. */
  client: AnimalStoreClient;
  /**
   * A raw request to a path under the API base, with the test key unless headers say otherwise:
   * over the socket, or in process (./inject.ts) when the server was started `inProcess`. A test
   * about what only a socket shows calls `fetch(t.api + path)` itself.
   */
  request(path: string, init?: RequestInit & { auth?: boolean }): Promise<Response>;
  close(): Promise<void>;
}

export interface StorageHandle {
  database: DatabaseHandle;
  /** Removes what the handle created (temp files, the test database). */
  dispose(): Promise<void>;
}

/**
 * PGlite's start takes seconds when the machine is idle and a minute when other test runs share
 * it; an instance not ready well past that is taken as stuck and replaced once. Both attempts fit
 * in vitest's hookTimeout, so a start that never comes fails with our message, not the hook's.
 */
const PGLITE_READY_LIMIT_MS = 120_000;
const PGLITE_ATTEMPTS = 2;

/** A fresh, empty SQLite file in a directory of its own, which dispose removes. */
export async function openTempSqlite(): Promise<StorageHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-test-'));
  const database = await openSqlite(join(dir, 'test.sqlite'));
  return {
    database,
    dispose: async () => {
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Opens a fresh, empty store of the given kind. */
export async function openTestStorage(target: Target): Promise<StorageHandle> {
  if (target === 'sqlite') return openTempSqlite();
  if (target === 'pglite') {
    // pg sees the instance only once it is ready. PGlite's node-postgres adapter answers a connect
    // when the start (initdb in WebAssembly) is done, and on a loaded machine that comes after the
    // pool's connect bound (CONNECT_TIMEOUT_MS). The bound then ends the connection, and the
    // adapter's end() drops every listener before announcing the end: pg heard neither the end nor
    // the later readiness, so the connect, and the migrations behind it, waited forever, idle.
    const pglite = await startPglite({ create: () => new PGlite(), readyLimitMs: PGLITE_READY_LIMIT_MS, attempts: PGLITE_ATTEMPTS });
    const database = await openPostgres({ connection: { ...createPgConfig(pglite) }, maxConnections: 1 }).catch(async (error: unknown) => {
      await pglite.close().catch(() => undefined);
      throw error;
    });
    return {
      database,
      dispose: async () => {
        await database.close();
        await pglite.close();
      },
    };
  }
  if (!realPostgresUrl) throw new Error('DATABASE_URL is not set');
  const scratch = await createScratchDatabase(realPostgresUrl, 'test');
  if (target === 'pgbouncer') {
    const pooler = await startPgbouncer(realPostgresUrl);
    const database = await openPostgres({ connection: pooler.through(scratch.url), preparedStatements: false }).catch(async (error: unknown) => {
      await pooler.stop();
      await scratch.drop();
      throw error;
    });
    return {
      database,
      dispose: async () => {
        await database.close();
        await pooler.stop();
        await scratch.drop();
      },
    };
  }
  const database = await openPostgres({ connection: scratch.url });
  return {
    database,
    dispose: async () => {
      await database.close();
      await scratch.drop();
    },
  };
}

/** A test's configuration: the server's own settings, and `env`, the variables the features read (none: only those on without a setting). */
export type TestConfig = Partial<Config> & { env?: Env };

export function testConfig({ env = {}, ...overrides }: TestConfig = {}): Config {
  return {
    port: 0,
    host: '127.0.0.1',
    databaseUrl: undefined,
    sqlitePath: '/nonexistent',
    logLevel: 'silent',
    validateResponses: true,
    keyRefreshMs: 200,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    maxConnections: 10_000,
    oauth: TEST_OAUTH,
    features: configureFeatures(env),
    ...overrides,
  };
}

/**
 * `logger`: where the server logs (a test reading its lines); by default stdout at the config's
 * level. `inProcess`: `request` and `client` hand each request to the server's listener without a
 * socket (light-my-request, ./inject.ts); the server still listens, for a test that needs one.
 */
export async function startTestServer(target: Target, overrides: TestConfig = {}, options: { logger?: Logger; document?: OpenApiDocument; inProcess?: boolean } = {}): Promise<TestServer> {
  const storage = await openTestStorage(target);
  const config = testConfig(overrides);
  const server = await startServer({ config, logger: options.logger ?? createLogger(config.logLevel), database: storage.database, bootstrapKey: false, document: options.document });
  const { key } = await server.keys.create('test');
  await server.keyCache.refresh();
  const api = `${server.origin}${server.basePath}`;
  const send = options.inProcess ? inProcessFetch(listenerOf(server)) : fetch;
  return {
    server,
    api,
    origin: server.origin,
    key,
    client: createAnimalStoreClient({ baseUrl: api, apiKey: key, fetch: send }),
    request(path, init = {}) {
      const headers = new Headers(init.headers);
      if (init.auth !== false && !headers.has('authorization')) headers.set('Authorization', `Bearer ${key}`);
      return send(`${api}${path}`, { ...init, headers });
    },
    async close() {
      await server.close();
      await storage.dispose();
    },
  };
}

/**
 * What node:http does with each request of the server: emits `request` to its listeners, in
 * order (the connection bookkeeping of src/transport/connections.ts, then the request path).
 */
function listenerOf(server: RunningServer): RequestListener {
  const { http } = server;
  if (http.listenerCount('request') === 0) throw new Error('the server has no request listener');
  return (req, res) => void http.emit('request', req, res);
}

/**
 * Runs `body` once per storage target against its own server, its requests in process (`request`
 * and `client`; `api` still reaches it over a socket), and checks after every test that no
 * response broke the contract. `socket: true` sends them over the socket instead, for a suite of
 * what only a connection shows: uploads refused before their body is read, which the server
 * drains from the connection or cuts it (src/http/bodies/unread.ts).
 */
export function describeEachTarget(title: string, body: (ctx: () => TestServer) => void, { socket = false }: { socket?: boolean } = {}): void {
  describe.each(targets)(`${title} [%s]`, (target) => {
    let current: TestServer | undefined;
    beforeAll(async () => {
      current = await startTestServer(target, {}, { inProcess: !socket });
      console.info(`[${target}] ${title}: ${socket ? 'requests over a socket to' : 'requests in process, the server also at'} ${current.api}`);
    });
    afterAll(async () => {
      await current?.close();
    });
    afterEach(() => {
      const violations = current?.server.violations.splice(0) ?? [];
      expect(violations, 'responses that broke the contract').toEqual([]);
    });
    body(() => {
      if (!current) throw new Error('server not started');
      return current;
    });
  });
}

/** Adds pets through the API, a few at a time, and returns them in id order. */
export async function addPets(t: TestServer, count: number, make: (i: number) => NewPet = (i) => ({ name: `Pet ${i}`, categoryId: 1 + (i % 5) })): Promise<Pet[]> {
  const created: Pet[] = [];
  for (let start = 0; start < count; start += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, count - start) }, async (_, j) => {
        const { data, response } = await t.client.POST('/pets', { body: make(start + j) });
        if (response.status !== 201 || !data) throw new Error(`create failed: ${response.status}`);
        return data;
      }),
    );
    created.push(...batch);
  }
  return created.sort((a, b) => a.id - b.id);
}

/**
 * Every pet the server lists: all pages, following `Link: rel="next"` (the client's `nextLink`).
 * Anything but a 200 with an array throws, so "the count did not change" cannot hold because both
 * listings failed; a chain of more than `maxPages` pages throws too.
 */
export async function listAllPets(t: TestServer, maxPages = 1_000): Promise<Pet[]> {
  const pets: Pet[] = [];
  let url: string | undefined = `${t.api}/pets?limit=100`;
  for (let page = 0; url !== undefined; page++) {
    if (page >= maxPages) throw new Error(`listPets: more than ${maxPages} pages, the Link chain does not end`);
    const response = await fetch(url, { headers: { Authorization: `Bearer ${t.key}` } });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${text.slice(0, 500)}`);
    const body = JSON.parse(text) as unknown;
    if (!Array.isArray(body)) throw new Error(`GET ${url} did not answer an array: ${text.slice(0, 500)}`);
    pets.push(...(body as Pet[]));
    const next = nextLink(response.headers.get('link'));
    url = next === undefined ? undefined : new URL(next, t.origin).toString();
  }
  return pets;
}

/** How many pets the server lists over every page (see listAllPets: a failed listing throws). */
export async function countPets(t: TestServer): Promise<number> {
  return (await listAllPets(t)).length;
}
