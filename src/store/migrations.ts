import { randomBytes } from 'node:crypto';
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import type { Dialect } from './schema.js';

/**
 * Versioned schema migrations, run at every start. Kysely's Migrator records what ran in its own
 * table and takes a lock on PostgreSQL, so several instances starting at once apply each once.
 * Identity columns differ between the dialects; everything else is shared. Never edit a
 * migration that has shipped: add a new one.
 */
function migrationsFor(dialect: Dialect): Record<string, Migration> {
  const idColumn = dialect === 'postgres' ? sql`bigint generated always as identity primary key` : sql`integer primary key autoincrement`;
  const bigint = dialect === 'postgres' ? sql`bigint` : sql`integer`;
  return {
    '0001_pets': {
      async up(db: Kysely<unknown>) {
        await sql`create table pets (
          id ${idColumn},
          name text not null,
          category_id ${bigint} not null check (category_id >= 1),
          status text not null check (status in ('available', 'pending', 'sold')),
          created_at text not null
        )`.execute(db);
        await sql`create index pets_status_id on pets (status, id)`.execute(db);
      },
    },
    '0002_api_keys': {
      async up(db: Kysely<unknown>) {
        await sql`create table api_keys (
          id ${idColumn},
          name text not null,
          key_hash text not null unique,
          created_at text not null,
          revoked_at text
        )`.execute(db);
      },
    },
    '0003_server_secrets': {
      async up(db: Kysely<unknown>) {
        await sql`create table server_secrets (name text primary key, value text not null)`.execute(db);
        // Signs paging cursors; one per database so every instance accepts every instance's cursors.
        const secret = randomBytes(32).toString('base64url');
        await sql`insert into server_secrets (name, value) values ('cursor', ${secret})`.execute(db);
      },
    },
    '0004_idempotency_keys': {
      async up(db: Kysely<unknown>) {
        // The primary key is the backstop of exactly-once: two requests with one key can never both record it.
        await sql`create table idempotency_keys (
          caller text not null,
          idempotency_key text not null,
          fingerprint text not null,
          pet_id ${bigint} not null,
          response_body text not null,
          created_at text not null,
          primary key (caller, idempotency_key)
        )`.execute(db);
        // The purge deletes by age.
        await sql`create index idempotency_keys_created_at on idempotency_keys (created_at)`.execute(db);
      },
    },
    '0005_deprecated_calls': {
      async up(db: Kysely<unknown>) {
        // Calls of deprecated operations per API key (caller: the key's hash, as api_keys.key_hash).
        await sql`create table deprecated_calls (
          caller text not null,
          operation_id text not null,
          calls ${bigint} not null,
          first_call text not null,
          last_call text not null,
          primary key (caller, operation_id)
        )`.execute(db);
      },
    },
  };
}

export async function migrateToLatest(db: Kysely<unknown>, dialect: Dialect): Promise<string[]> {
  const provider: MigrationProvider = { getMigrations: async () => migrationsFor(dialect) };
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(`Migration failed: ${String(error)}`);
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
