/**
 * The only module that knows the database drivers. Everything else talks to Kysely.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { migrateToLatest } from './migrations.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Where the data lives, for humans: a file path or a URL without its password. */
  location: string;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

const PG_INT8_OID = 20;

/** node-postgres returns BIGINT as a string; ours are ids, so a number, or an error if unsafe. */
function parseInt8(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`BIGINT ${value} is beyond 2^53-1`);
  return n;
}

const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === PG_INT8_OID && format !== 'binary') return parseInt8;
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

async function finish(handle: DatabaseHandle): Promise<DatabaseHandle> {
  try {
    await migrateToLatest(handle.db as unknown as Kysely<unknown>, handle.dialect);
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
  return handle;
}

/** The embedded default: one SQLite file, WAL, and an fsync before a write is acknowledged. */
export async function openSqlite(path: string): Promise<DatabaseHandle> {
  mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SQLite(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return finish({
    db,
    dialect: 'sqlite',
    location: path,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  });
}

export interface PostgresOptions {
  /** A postgres:// URL, or a ready pool config (PGlite in tests). */
  connection: string | pg.PoolConfig;
  maxConnections?: number;
}

/** PostgreSQL, the scale-out path: any number of instances share one database. */
export async function openPostgres(options: PostgresOptions): Promise<DatabaseHandle> {
  const base: pg.PoolConfig = typeof options.connection === 'string' ? { connectionString: options.connection } : options.connection;
  const pool = new pg.Pool({
    max: options.maxConnections ?? 10,
    // Fail fast instead of hanging when the database is unreachable: the request gets a 503.
    connectionTimeoutMillis: 3000,
    query_timeout: 10_000,
    idleTimeoutMillis: 30_000,
    ...base,
    types: pgTypes,
  });
  // An idle client that loses its connection emits here; without a listener the process dies.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return finish({
    db,
    dialect: 'postgres',
    location: typeof options.connection === 'string' ? redactUrl(options.connection) : 'postgres (in-process)',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  });
}

export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres (unparseable URL)';
  }
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'SQLITE_BUSY', 'SQLITE_CANTOPEN', 'SQLITE_FULL', 'SQLITE_IOERR']);

/**
 * True when an error means the database cannot serve us right now (the client should retry),
 * as opposed to a bug. PostgreSQL class 08 is connection exceptions, 57P0x is shutdown, 53 is
 * insufficient resources.
 */
export function isUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNAVAILABLE_CODES.has(code) || code.startsWith('SQLITE_IOERR')) return true;
    if (/^(08|53|57P0)/.test(code)) return true;
  }
  return /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|Query read timeout/i.test(error.message);
}
