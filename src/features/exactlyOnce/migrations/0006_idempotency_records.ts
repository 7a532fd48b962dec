/**
 * Idempotency-Key records of any operation that declares the header (src/features/exactlyOnce/):
 * keyed by caller, operation and key, holding the whole first answer (status, headers, body),
 * where 0004's table was createPet's alone (a pet id and a JSON body). Its rows move here, each
 * as the 201 it replayed, with the fingerprint src/features/exactlyOnce/fingerprint.ts derives.
 */
import { hash } from 'node:crypto';
import { sql } from 'kysely';
import type { MigrationUp } from '../../../store/migrationSql.js';

/** What 1.2.0 served: createPet under /v1, its 201 with the animal and its address. */
const CREATE_PET = { operationId: 'createPet', status: 201, basePath: '/v1', mediaType: 'application/json' };

/**
 * The fingerprint of a 1.2.0 createPet request whose body digest (0004's fingerprint) is
 * `bodyDigest`: the same canonical JSON that src/features/exactlyOnce/fingerprint.ts hashes, spelled
 * out here because a migration never changes once shipped, whatever that module becomes.
 */
const fingerprintOf = (bodyDigest: string): string => hash('sha256', `{"body":${JSON.stringify(bodyDigest)},"mediaType":"application/json","path":{},"query":{}}`, 'hex');

const ROWS_PER_STATEMENT = 500;

type OldRow = { caller: string; idempotency_key: string; fingerprint: string; pet_id: number | string; response_body: string; created_at: string };

export const up: MigrationUp = async (db, dialect) => {
  const bytes = dialect === 'postgres' ? sql`bytea` : sql`blob`;
  // The primary key is the backstop of exactly-once: two requests with one key can never both record it.
  await sql`create table idempotency_records (
    caller text not null,
    operation_id text not null,
    idempotency_key text not null,
    fingerprint text not null,
    status integer not null,
    headers text not null,
    media_type text,
    body ${bytes},
    created_at text not null,
    primary key (caller, operation_id, idempotency_key)
  )`.execute(db);
  // The purge deletes by age.
  await sql`create index idempotency_records_created_at on idempotency_records (created_at)`.execute(db);

  // In the migration's transaction: every key recorded before it replays after it, or none moved.
  const { rows } = await sql<OldRow>`select caller, idempotency_key, fingerprint, pet_id, response_body, created_at from idempotency_keys order by created_at`.execute(db);
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
    const values = rows.slice(start, start + ROWS_PER_STATEMENT).map(
      (row) =>
        sql`(${row.caller}, ${CREATE_PET.operationId}, ${row.idempotency_key}, ${fingerprintOf(row.fingerprint)}, ${CREATE_PET.status},
          ${JSON.stringify({ Location: `${CREATE_PET.basePath}/pets/${String(row.pet_id)}` })}, ${CREATE_PET.mediaType}, ${Buffer.from(row.response_body, 'utf8')}, ${row.created_at})`,
    );
    await sql`insert into idempotency_records (caller, operation_id, idempotency_key, fingerprint, status, headers, media_type, body, created_at) values ${sql.join(values)}`.execute(db);
  }
  await sql`drop table idempotency_keys`.execute(db);
};
