/**
 * Where events go (./../endpoints.ts): the endpoints operators add with `npm run webhooks`, one
 * delivery per event and endpoint (the outbox's event fanned out), and each attempt at one.
 * Times are ms since the epoch.
 */
import { sql } from 'kysely';
import { bigint, idColumn, type MigrationUp } from '../../../store/migrationSql.js';

export const up: MigrationUp = async (db, dialect) => {
  // `events`: the webhook names it hears, space-separated; null for every event, those the
  // contract gains later included. The secrets sign (they must be read to sign, so they are kept
  // as they are); `previous_secret` signs too until `previous_until`, after a rotation.
  await sql`create table webhook_endpoints (
    id ${idColumn(dialect)},
    url text not null,
    events text,
    secret text not null,
    previous_secret text,
    previous_until ${bigint(dialect)},
    created_at ${bigint(dialect)} not null,
    disabled_at ${bigint(dialect)},
    disabled_reason text,
    failing_since ${bigint(dialect)},
    last_success_at ${bigint(dialect)},
    last_failure_at ${bigint(dialect)}
  )`.execute(db);
  // One row per event and endpoint: the unique pair makes the fan-out safe to run twice (two
  // instances, or one after a crash). `locked_until`: the instance that claimed it is delivering
  // until then; past it (that instance died), another may.
  await sql`create table webhook_deliveries (
    id ${idColumn(dialect)},
    event_id text not null references webhook_events (id),
    endpoint_id ${bigint(dialect)} not null references webhook_endpoints (id) on delete cascade,
    state text not null check (state in ('pending', 'delivered', 'failed')),
    attempts integer not null default 0,
    next_attempt_at ${bigint(dialect)} not null,
    locked_until ${bigint(dialect)},
    last_status integer,
    last_error text,
    delivered_at ${bigint(dialect)},
    unique (event_id, endpoint_id)
  )`.execute(db);
  await sql`create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where state = 'pending'`.execute(db);
  await sql`create table webhook_attempts (
    id ${idColumn(dialect)},
    delivery_id ${bigint(dialect)} not null references webhook_deliveries (id) on delete cascade,
    endpoint_id ${bigint(dialect)} not null,
    event_id text not null,
    attempted_at ${bigint(dialect)} not null,
    status integer,
    error text,
    duration_ms integer not null
  )`.execute(db);
  await sql`create index webhook_attempts_by_endpoint on webhook_attempts (endpoint_id, id)`.execute(db);
};
