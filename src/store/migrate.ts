import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { migrations } from '../../generated/migrations.js';
import type { Dialect } from './schema.js';

/**
 * Runs the versioned schema migrations at every start: one file each in src/store/migrations/,
 * named `NNNN_what.ts` and run in that order (`npm run generate` lists them in
 * generated/migrations.ts, so adding one edits no list). Kysely's Migrator records what ran in its
 * own table and takes a lock on PostgreSQL, so several instances starting at once apply each once.
 * A migration's name is its file name: never rename or edit one that has shipped; add a new one.
 */
export async function migrateToLatest(db: Kysely<unknown>, dialect: Dialect): Promise<string[]> {
  const forDialect = Object.fromEntries(Object.entries(migrations).map(([name, { up }]): [string, Migration] => [name, { up: (on) => up(on, dialect) }]));
  const provider: MigrationProvider = { getMigrations: async () => forDialect };
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(`Migration failed: ${String(error)}`);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
