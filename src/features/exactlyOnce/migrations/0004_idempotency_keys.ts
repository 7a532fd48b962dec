/** Idempotency-Key records of createPet, as 1.2.0 kept them (./0006_idempotency_records.ts moved their rows). */
import { sql } from 'kysely';
import { bigint, type MigrationUp } from '../../../store/migrationSql.js';

export const up: MigrationUp = async (db, dialect) => {
  // The primary key is the backstop of exactly-once: two requests with one key can never both record it.
  await sql`create table idempotency_keys (
    caller text not null,
    idempotency_key text not null,
    fingerprint text not null,
    pet_id ${bigint(dialect)} not null,
    response_body text not null,
    created_at text not null,
    primary key (caller, idempotency_key)
  )`.execute(db);
  // The purge deletes by age.
  await sql`create index idempotency_keys_created_at on idempotency_keys (created_at)`.execute(db);
};
