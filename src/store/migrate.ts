import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { migrations } from '../../generated/migrations.js';
import type { Dialect } from './schema.js';

/**
 * Where the migration files are, when the server runs from its sources (dev, tests, `tsx`); the
 * built bundle has no such folder next to it, and runs what it was built with.
 */
const MIGRATIONS_FOLDER = fileURLToPath(new URL('./migrations/', import.meta.url));

/**
 * A migration file that generated/migrations.ts does not list would never run: its table or
 * column missing, every request that needs it a 500. Said at start, with the fix.
 */
function unlistedMigrations(): string[] {
  if (!existsSync(MIGRATIONS_FOLDER)) return [];
  return readdirSync(MIGRATIONS_FOLDER)
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => file.slice(0, -3))
    .filter((name) => !(name in migrations));
}

/**
 * Runs the versioned schema migrations at every start: one file each in src/store/migrations/,
 * named `NNNN_what.ts` and run in that order (`npm run generate` lists them in
 * generated/migrations.ts, so adding one edits no list). Kysely's Migrator records what ran in its
 * own table and takes a lock on PostgreSQL, so several instances starting at once apply each once.
 * A migration's name is its file name: never rename or edit one that has shipped; add a new one.
 */
export async function migrateToLatest(db: Kysely<unknown>, dialect: Dialect): Promise<string[]> {
  const unlisted = unlistedMigrations();
  if (unlisted.length > 0) throw new Error(`src/store/migrations/${unlisted.join('.ts, src/store/migrations/')}.ts: not in generated/migrations.ts, so never run: run \`npm run generate\``);
  const forDialect = Object.fromEntries(Object.entries(migrations).map(([name, { up }]): [string, Migration] => [name, { up: (on) => up(on, dialect) }]));
  const provider: MigrationProvider = { getMigrations: async () => forDialect };
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(`Migration failed: ${String(error)}`);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
