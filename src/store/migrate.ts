import { fileURLToPath } from 'node:url';
import { DEFAULT_MIGRATION_LOCK_TABLE, DEFAULT_MIGRATION_TABLE, Migrator, PostgresAdapter, PostgresDialect, sql, type DialectAdapter, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { migrations } from '../../generated/migrations.js';
import { migrationFiles } from './migrationFiles.js';
import type { Dialect } from './schema.js';

/**
 * The project's src/, when the server runs from its sources (dev, tests, `tsx`); the built bundle
 * has no migration folders beside it, and runs what it was built with.
 */
const SOURCES = fileURLToPath(new URL('../', import.meta.url));

/**
 * A migration file that generated/migrations.ts does not list would never run: its table or
 * column missing, every request that needs it a 500. Said at start, with the fix.
 */
function unlistedMigrations(): string[] {
  return migrationFiles(SOURCES)
    .filter(({ name }) => !(name in migrations))
    .map(({ name, folder }) => `src/${folder}/${name}.ts`);
}

/**
 * The advisory lock that keeps instances starting at once from migrating together (any fixed
 * number; Kysely's own is a different one, so an older release never shares it by accident).
 */
const MIGRATION_LOCK = '4107152663170410041';

/**
 * Kysely's PostgreSQL adapter takes a session-level advisory lock before its migration
 * transaction and releases it after, each in a statement of its own. Behind a pooler in
 * transaction mode those three may land on three server connections: the unlock then fails on
 * one, and the lock stays held on another for as long as the pooler keeps it open, so the next
 * instance's start waits for it. Here the lock is taken by migrateToLatest as the first statement
 * of the one transaction that also holds the migrations (pg_advisory_xact_lock, released by the
 * commit or rollback, on whatever connection that is), and the adapter's own steps do nothing.
 */
class AdapterWithTransactionLock extends PostgresAdapter {
  override async acquireMigrationLock(): Promise<void> {}
  override async releaseMigrationLock(): Promise<void> {}
}

/** PostgresDialect whose migration lock is migrateToLatest's, transaction-scoped (above). */
export class PostgresDialectWithTransactionLocks extends PostgresDialect {
  override createAdapter(): DialectAdapter {
    return new AdapterWithTransactionLock();
  }
}

/**
 * The Migrator's own two tables, made as it makes them (kysely 0.28), before it looks for them.
 * Left to the Migrator inside this transaction, a failed create (no CREATE permission on the
 * schema) is followed by its own check whether the table exists, which the aborted transaction
 * refuses, so the error shown would be "current transaction is aborted" instead of the cause.
 * Instances are kept apart by the lock taken before this, so `if not exists` suffices.
 */
async function createMigratorTables(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable(DEFAULT_MIGRATION_TABLE)
    .ifNotExists()
    .addColumn('name', 'varchar(255)', (col) => col.notNull().primaryKey())
    .addColumn('timestamp', 'varchar(255)', (col) => col.notNull())
    .execute();
  await db.schema
    .createTable(DEFAULT_MIGRATION_LOCK_TABLE)
    .ifNotExists()
    .addColumn('id', 'varchar(255)', (col) => col.notNull().primaryKey())
    .addColumn('is_locked', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
}

/** What Kysely's Migrator applied, or its error thrown. */
async function applyAll(migrator: Migrator): Promise<string[]> {
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(`Migration failed: ${String(error)}`);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Runs the versioned schema migrations at every start: one file each in src/store/migrations/
 * or a feature's migrations/ folder (./migrationFiles.ts), named `NNNN_what.ts` and run in that order (`npm run generate` lists them in
 * generated/migrations.ts, so adding one edits no list). Kysely's Migrator records what ran in its
 * own table. Everything, the Migrator's own tables included, happens in one transaction that
 * first takes the database's lock against other starts: on PostgreSQL MIGRATION_LOCK, on SQLite
 * the file's write lock (`begin immediate`; the others wait on busy_timeout). So several
 * instances or scripts starting at once on a new store apply each migration once, directly or
 * through a transaction pooler, and a failed migration leaves nothing.
 * A migration's name is its file name: never rename or edit one that has shipped; add a new one.
 */
export async function migrateToLatest(db: Kysely<unknown>, dialect: Dialect): Promise<string[]> {
  const unlisted = unlistedMigrations();
  if (unlisted.length > 0) throw new Error(`${unlisted.join(', ')}: not in generated/migrations.ts, so never run: run \`npm run generate\``);
  const forDialect = Object.fromEntries(Object.entries(migrations).map(([name, { up }]): [string, Migration] => [name, { up: (on) => up(on, dialect) }]));
  const provider: MigrationProvider = { getMigrations: async () => forDialect };
  // Kysely's Transaction refuses connection(), which the Migrator calls: so the transaction is
  // begun by hand on one connection, and the Migrator told not to open its own.
  return db.connection().execute(async (connection) => {
    await (dialect === 'sqlite' ? sql`begin immediate` : sql`begin`).execute(connection);
    try {
      if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK)})`.execute(connection);
      await createMigratorTables(connection);
      const applied = await applyAll(new Migrator({ db: connection, provider, disableTransactions: true }));
      await sql`commit`.execute(connection);
      return applied;
    } catch (error) {
      await sql`rollback`.execute(connection).catch(() => undefined);
      throw error;
    }
  });
}
