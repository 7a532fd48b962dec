/** Calls of deprecated operations per API key (src/features/deprecation/calls.ts). */
import { sql } from 'kysely';
import { bigint, type MigrationUp } from '../../../store/migrationSql.js';

export const up: MigrationUp = async (db, dialect) => {
  // Calls of deprecated operations per API key (caller: the key's hash, as api_keys.key_hash).
  await sql`create table deprecated_calls (
    caller text not null,
    operation_id text not null,
    calls ${bigint(dialect)} not null,
    first_call text not null,
    last_call text not null,
    primary key (caller, operation_id)
  )`.execute(db);
};
