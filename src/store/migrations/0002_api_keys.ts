/** API keys (src/store/apiKeys.ts): only a hash of each key is stored. */
import { sql } from 'kysely';
import { idColumn, type MigrationUp } from '../migrationSql.js';

export const up: MigrationUp = async (db, dialect) => {
  await sql`create table api_keys (
    id ${idColumn(dialect)},
    name text not null,
    key_hash text not null unique,
    created_at text not null,
    revoked_at text
  )`.execute(db);
};
