/**
 * The only module that knows the database drivers. Everything else talks to Kysely.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, SqliteDialect, SqliteDriver, sql, type DatabaseConnection, type Driver, type PostgresPool, type PostgresPoolClient, type SqliteDialectConfig, type Transaction } from 'kysely';
import type pg from 'pg';
import { isDatabaseUnavailable } from '../shared/unavailable.js';
import { redactUrl } from './databaseErrors.js';
import { migrateToLatest, PostgresDialectWithTransactionLocks } from './migrate.js';
import { runDirectly } from './queries/prepared.js';
import type { Database, Dialect } from './schema.js';
import { withStatementCache } from './queries/statementCache.js';
import { withUnitsOfWork } from './queries/unitOfWork.js';

export { redactUrl };

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Where the data lives, for humans: a file path or a URL without its password. */
  location: string;
  /**
   * PostgreSQL only: the schema the tables are in (the first of the search_path that exists, as
   * the server saw it at start), so a start says where they went: a pooler that drops a startup
   * option, or a role without its own search_path, puts them in `public`.
   */
  schema?: string;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** PostgreSQL only: the pool's connections (open, idle) and the queries waiting for one, for the metrics. */
  poolCounts?: () => { total: number; idle: number; waiting: number };
  /**
   * Runs `work` in a transaction whose commit does not wait for the disk (PostgreSQL's
   * asynchronous commit; SQLite's synchronous=NORMAL, its WAL flushed by the next durable commit
   * or checkpoint): a power cut or an operating system crash, never a crash of the process, may
   * lose it whole, and the database is then as it was before it. Only for work that is done again
   * when lost: the webhook dispatcher's claims and settles (a lost one is a delivery sent again,
   * which at-least-once allows). Its commit cost a delivery a third of its time.
   */
  transactionWithoutFsync<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
}

const PG_INT8_OID = 20;

/** node-postgres returns BIGINT as a string; ours are ids, so a number, or an error if unsafe. */
function parseInt8(value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new Error(`BIGINT ${value} is beyond 2^53-1`);
  return n;
}

function typesWithInt8(types: typeof pg.types): pg.CustomTypesConfig {
  return {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === PG_INT8_OID && format !== 'binary') return parseInt8;
      return types.getTypeParser(oid, format);
    },
  } as pg.CustomTypesConfig;
}

/** Where the data is (src/config.ts reads it from the environment). */
export interface DatabaseSettings {
  /** postgres://… when set; otherwise the embedded SQLite file at `sqlitePath`. */
  databaseUrl: string | undefined;
  /** Named prepared statements on PostgreSQL (DATABASE_PREPARED_STATEMENTS); undefined: on. */
  databasePreparedStatements?: boolean | undefined;
  sqlitePath: string;
}

/** Opens, and migrates, the database the settings name: PostgreSQL when DATABASE_URL is set, else the SQLite file. */
export function openDatabase(settings: DatabaseSettings): Promise<DatabaseHandle> {
  return settings.databaseUrl ? openPostgres({ connection: settings.databaseUrl, preparedStatements: settings.databasePreparedStatements ?? true }) : openSqlite(settings.sqlitePath);
}

/** Brings the schema up to date; a handle whose migrations failed is closed, not returned. */
async function migrateOrClose(handle: DatabaseHandle): Promise<DatabaseHandle> {
  try {
    await migrateToLatest(handle.db as unknown as Kysely<unknown>, handle.dialect);
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
  return handle;
}

/**
 * SQLite rolls a transaction back by itself on some errors (the disk full, an I/O error: SQLITE_FULL,
 * SQLITE_IOERR, SQLITE_NOMEM). Kysely's ROLLBACK after that fails ("cannot rollback - no
 * transaction is active"), and that failure is what it throws, in place of the cause: a full disk
 * answered 500 instead of 503. So a rollback is sent only while a transaction is open.
 */
class SqliteDialectAfterAutoRollback extends SqliteDialect {
  constructor(
    private readonly config: SqliteDialectConfig,
    private readonly inTransaction: () => boolean,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    const { inTransaction } = this;
    return new (class extends SqliteDriver {
      override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
        if (inTransaction()) await super.rollbackTransaction(connection);
      }
    })(this.config);
  }
}

/** The embedded default: one SQLite file, WAL, and an fsync before a write is acknowledged. */
export async function openSqlite(path: string): Promise<DatabaseHandle> {
  // Each driver is loaded only when it is used: a start on one store never pays for the other.
  const { default: SQLite } = await import('better-sqlite3');
  mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SQLite(path);
  // The wait first: switching a new file to WAL takes its lock too, and another process may hold it.
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  const durable = sqlite.prepare('pragma synchronous = FULL');
  const notFlushed = sqlite.prepare('pragma synchronous = NORMAL');
  /** While a transaction without fsync holds the connection: every other statement waits its turn through Kysely. */
  let withoutFsync = false;
  const statements = withStatementCache(sqlite);
  const db = new Kysely<Database>({ dialect: withUnitsOfWork(new SqliteDialectAfterAutoRollback({ database: statements }, () => sqlite.inTransaction)) });
  // Compiled queries (./queries/prepared.ts) run on the statements directly, as Kysely's SQLite driver
  // would run them, but only while the connection is outside a transaction: during a group
  // commit the connection is the transaction's, and a read must not see its uncommitted rows,
  // so it queues behind it through Kysely's connection lock instead.
  runDirectly(db, function runOnSqliteStatements(text, parameters) {
    if (sqlite.inTransaction || withoutFsync) return undefined;
    try {
      const statement = statements.prepare(text);
      if (statement.reader) return Promise.resolve(statement.all(parameters) as unknown[]);
      statement.run(parameters);
      return Promise.resolve([]);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  });
  return migrateOrClose({
    db,
    dialect: 'sqlite',
    location: path,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
    // The level is the connection's, and cannot change inside a transaction: set around it, with
    // the connection held, so no other statement commits at the lower level.
    transactionWithoutFsync: (work) =>
      db.connection().execute(async (connection) => {
        notFlushed.run();
        withoutFsync = true;
        try {
          return await connection.transaction().execute(work);
        } finally {
          withoutFsync = false;
          durable.run();
        }
      }),
  });
}

export interface PostgresOptions {
  /** A postgres:// URL, or a ready pool config (PGlite in tests). */
  connection: string | pg.PoolConfig;
  maxConnections?: number;
  /**
   * Named prepared statements (default true, DATABASE_PREPARED_STATEMENTS): false behind a pooler
   * in transaction mode, where the server connection under a client changes between
   * transactions, so a statement prepared on one may be missing, or already exist, on the next.
   * Unnamed statements still bind their values; PostgreSQL then parses and plans each query.
   */
  preparedStatements?: boolean;
}

/**
 * The bounds that turn a database outage into a prompt 503 instead of a hung request: a request
 * waits at most CONNECT_TIMEOUT_MS for a connection (a pooled one to free up, or a new one to
 * open) and then at most QUERY_TIMEOUT_MS for its query (each request makes one), so it is
 * answered within 3.5 s however the database fails: refusing, resetting, or silent (a network
 * partition, where no error ever comes and only a timer ends the wait). Our queries take
 * milliseconds; 1.5 s is a broken database, not a slow query. The wait for a connection is the
 * longer one because under a burst it is also the queue for the pool's 10 connections.
 */
export const CONNECT_TIMEOUT_MS = 2_000;
export const QUERY_TIMEOUT_MS = 1_500;
/** TCP keepalive on pooled connections, so an idle one to a vanished host is found dead by the OS. */
const KEEPALIVE_DELAY_MS = 10_000;

type Query = { text: string; values: unknown[]; query_timeout?: number; name?: string };

/**
 * Our SQL texts are few and fixed (queries are compiled once; values are bound), so each is a
 * named prepared statement: PostgreSQL parses and plans it once per connection, not per query.
 * The bound guards the connections' memory against a caller that inlines values into SQL.
 */
const MAX_NAMED_STATEMENTS = 100;

/**
 * The pool as Kysely sees it, with three differences from pg.Pool: once serving, each query
 * carries the query timeout and a statement name; and a connection whose query failed for
 * connection reasons (a timeout included) is destroyed on release instead of going back to the
 * pool. node-postgres leaves a timed-out query active on its connection, so a returned one would
 * make every later query on it wait out the same timeout, and after a partition heals it may
 * still deliver an old reply.
 */
function poolWithTimeoutsNamesAndEviction(pool: pg.Pool, isServing: () => boolean, preparedStatements: boolean): PostgresPool & { connect(): Promise<PostgresPoolClient> } {
  const names = new Map<string, string>();
  const statementNameFor = (text: string): string | undefined => {
    if (!preparedStatements) return undefined;
    let name = names.get(text);
    if (name === undefined && names.size < MAX_NAMED_STATEMENTS) {
      name = `animal_store_${names.size}`;
      names.set(text, name);
    }
    return name;
  };
  // One wrapper per pg client, made on its first checkout and reused: Kysely's PostgresDriver
  // keeps its connection object in a WeakMap keyed by what connect() returns, so a new wrapper
  // per checkout cost a new PostgresConnection and a new WeakMap entry per query, and the
  // garbage collector's work on both (measured: docs/performance.md).
  const wrappers = new WeakMap<pg.PoolClient, { client: PostgresPoolClient; broken: Error | undefined }>();
  const wrap = (client: pg.PoolClient) => {
    const wrapper: { client: PostgresPoolClient; broken: Error | undefined } = {
      broken: undefined,
      client: {
        query: (async (text: unknown, parameters?: ReadonlyArray<unknown>) => {
          if (typeof text !== 'string') throw new Error('cursors are not supported');
          const config: Query = { text, values: parameters === undefined ? [] : (parameters as unknown[]) };
          if (isServing()) {
            config.query_timeout = QUERY_TIMEOUT_MS;
            const name = statementNameFor(text);
            if (name !== undefined) config.name = name;
          }
          try {
            return await client.query(config);
          } catch (error) {
            if (isDatabaseUnavailable(error)) wrapper.broken = error as Error;
            throw error;
          }
        }) as unknown as PostgresPoolClient['query'],
        release: () => client.release(wrapper.broken),
      },
    };
    // node-postgres emits `error` on a client whose connection is lost (a restart, a cut, a
    // terminated backend) even with no query running, and pg-pool listens only while the client is
    // idle: checked out by a unit of work between two queries, nobody did, and the process died.
    // Its next query fails as unavailable; the release destroys it.
    client.on('error', (error) => {
      wrapper.broken = error;
    });
    wrappers.set(client, wrapper);
    return wrapper;
  };
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      const wrapper = wrappers.get(client) ?? wrap(client);
      // A checkout is one user's at a time: what broke during the last one was settled at its release.
      wrapper.broken = undefined;
      return wrapper.client;
    },
    end: () => pool.end(),
  };
}

/** PostgreSQL, the scale-out path: any number of instances share one database. */
export async function openPostgres(options: PostgresOptions): Promise<DatabaseHandle> {
  const { default: pg } = await import('pg');
  const base: pg.PoolConfig = typeof options.connection === 'string' ? { connectionString: options.connection } : options.connection;
  const pool = new pg.Pool({
    max: options.maxConnections ?? 10,
    // Bounds both opening a connection and waiting for a pooled one (pg-pool uses it for both).
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
    idleTimeoutMillis: 30_000,
    ...base,
    types: typesWithInt8(pg.types),
  });
  // An idle client that loses its connection emits here; without a listener the process dies.
  pool.on('error', () => undefined);
  // Migrations may legitimately run long (an index on a big table), so the query bound starts
  // once they are done (until then a query waits as long as it takes), and their one-off
  // statements are not kept as named ones.
  let serving = false;
  const wrapped = poolWithTimeoutsNamesAndEviction(pool, () => serving, options.preparedStatements ?? true);
  const db = new Kysely<Database>({ dialect: withUnitsOfWork(new PostgresDialectWithTransactionLocks({ pool: wrapped })) });
  // Compiled queries (./queries/prepared.ts) check out a client of the same pool, with the same timeout,
  // statement name and eviction, without Kysely's per-query machinery.
  runDirectly(db, async (text, parameters) => {
    const client = await wrapped.connect();
    try {
      const result = (await client.query(text, parameters)) as unknown as { rows: unknown[] };
      return result.rows;
    } finally {
      client.release();
    }
  });
  const handle = await migrateOrClose({
    db,
    dialect: 'postgres',
    location: typeof options.connection === 'string' ? redactUrl(options.connection) : 'postgres (in-process)',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
    poolCounts: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    // Local to the transaction: behind a transaction-mode pooler the next one, on whatever server connection, is durable again.
    transactionWithoutFsync: (work) =>
      db.transaction().execute(async (trx) => {
        await sql`set local synchronous_commit = off`.execute(trx);
        return work(trx);
      }),
  });
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  handle.schema = rows[0]?.schema ?? undefined;
  serving = true;
  return handle;
}
