/**
 * The outbox of the spec's webhooks (src/store/resources/webhooks.ts): an event is a row written in
 * the same transaction as the change it tells of, so it exists exactly when the change committed.
 * The webhooks feature (src/features/webhooks/) fans each out to its endpoints and delivers it.
 */
import { sql } from 'kysely';
import { bigint, idColumn, type MigrationUp } from '../migrationSql.js';

export const up: MigrationUp = async (db, dialect) => {
  // `seq` orders the fan-out; `id` is the `webhook-id` receivers dedupe by (msg_ and a ULID).
  // Times are ms since the epoch. `fanned_out` is 0 until the event's deliveries exist.
  await sql`create table webhook_events (
    seq ${idColumn(dialect)},
    id text not null unique,
    name text not null,
    body text not null,
    created_at ${bigint(dialect)} not null,
    fanned_out integer not null default 0
  )`.execute(db);
  // The fan-out reads the events not yet fanned out, oldest first: a short list, however long the table.
  await sql`create index webhook_events_pending on webhook_events (seq) where fanned_out = 0`.execute(db);
};
