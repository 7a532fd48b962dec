/**
 * The endpoints events go to, as operators manage them (`npm run webhooks`, scripts/operators/webhooks.ts):
 * add, list, remove, rotate a secret, read the last attempts, replay an event. Stored beside the
 * keys, so every instance on one database delivers to the same endpoints.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.js';
import type { Tables } from './tables.js';

/** How long a rotated secret still signs, beside the new one, so receivers can switch without a gap. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** A new signing secret as Standard Webhooks writes one: `whsec_` and 32 random bytes in base64. */
export const newSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/** An endpoint as `list` shows it: never its secrets. */
export interface EndpointInfo {
  id: number;
  url: string;
  /** The webhooks it hears; undefined: every one. */
  events: string[] | undefined;
  createdAt: number;
  /** When it was disabled, and why; undefined while it receives. */
  disabled: { at: number; reason: string } | undefined;
  /** Since when its deliveries have failed without a success in between. */
  failingSince: number | undefined;
  lastSuccessAt: number | undefined;
  lastFailureAt: number | undefined;
  /** Its deliveries still to make. */
  pending: number;
}

export interface AttemptInfo {
  eventId: string;
  event: string;
  attemptedAt: number;
  /** The receiver's status, or undefined when none came (the error says why). */
  status: number | undefined;
  error: string | undefined;
  durationMs: number;
}

export interface EndpointStore {
  /** Adds an endpoint for `events` (every event when undefined): it and its secret, shown once. */
  add(url: string, events: readonly string[] | undefined): Promise<{ id: number; secret: string }>;
  list(): Promise<EndpointInfo[]>;
  /** Removes it with its deliveries; false when there is none with that id. */
  remove(id: number): Promise<boolean>;
  /** A new secret; the old one signs beside it for ROTATION_OVERLAP_MS. Undefined for an unknown id. */
  rotate(id: number): Promise<string | undefined>;
  /** Its last `limit` attempts, the newest first; undefined for an unknown id. */
  attempts(id: number, limit: number): Promise<AttemptInfo[] | undefined>;
  /**
   * Delivers event `eventId` again to each enabled endpoint it went to, from the first attempt of
   * the schedule: how many deliveries were queued, or undefined when no such event is stored.
   */
  replay(eventId: string): Promise<number | undefined>;
}

const orUndefined = <T>(value: T | null): T | undefined => (value === null ? undefined : value);

export function createEndpointStore(store: Kysely<Database>, now: () => number = Date.now): EndpointStore {
  const db = store.withTables<Tables>();
  return {
    async add(url, events) {
      const secret = newSecret();
      const row = await db
        .insertInto('webhook_endpoints')
        .values({ url, events: events === undefined ? null : events.join(' '), secret, created_at: now() })
        .returning('id')
        .executeTakeFirstOrThrow();
      return { id: Number(row.id), secret };
    },

    async list() {
      const rows = await db
        .selectFrom('webhook_endpoints as e')
        .select((eb) => [
          'e.id',
          'e.url',
          'e.events',
          'e.created_at',
          'e.disabled_at',
          'e.disabled_reason',
          'e.failing_since',
          'e.last_success_at',
          'e.last_failure_at',
          eb.selectFrom('webhook_deliveries as d').select((inner) => inner.fn.countAll<number>().as('n')).whereRef('d.endpoint_id', '=', 'e.id').where('d.state', '=', 'pending').as('pending'),
        ])
        .orderBy('e.id')
        .execute();
      return rows.map((row) => ({
        id: Number(row.id),
        url: row.url,
        events: row.events === null ? undefined : row.events.split(' '),
        createdAt: Number(row.created_at),
        disabled: row.disabled_at === null ? undefined : { at: Number(row.disabled_at), reason: row.disabled_reason ?? '' },
        failingSince: orUndefined(row.failing_since),
        lastSuccessAt: orUndefined(row.last_success_at),
        lastFailureAt: orUndefined(row.last_failure_at),
        pending: Number(row.pending ?? 0),
      }));
    },

    async remove(id) {
      const removed = await db.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst();
      return Number(removed.numDeletedRows) > 0;
    },

    async rotate(id) {
      const current = await db.selectFrom('webhook_endpoints').select('secret').where('id', '=', id).executeTakeFirst();
      if (current === undefined) return undefined;
      const secret = newSecret();
      await db.updateTable('webhook_endpoints').set({ secret, previous_secret: current.secret, previous_until: now() + ROTATION_OVERLAP_MS }).where('id', '=', id).execute();
      return secret;
    },

    async attempts(id, limit) {
      const known = await db.selectFrom('webhook_endpoints').select('id').where('id', '=', id).executeTakeFirst();
      if (known === undefined) return undefined;
      const rows = await db
        .selectFrom('webhook_attempts as a')
        .innerJoin('webhook_events as v', 'v.id', 'a.event_id')
        .select(['a.event_id', 'v.name', 'a.attempted_at', 'a.status', 'a.error', 'a.duration_ms'])
        .where('a.endpoint_id', '=', id)
        .orderBy('a.id', 'desc')
        .limit(limit)
        .execute();
      return rows.map((row) => ({ eventId: row.event_id, event: row.name, attemptedAt: Number(row.attempted_at), status: orUndefined(row.status), error: orUndefined(row.error), durationMs: row.duration_ms }));
    },

    async replay(eventId) {
      const event = await db.selectFrom('webhook_events').select('id').where('id', '=', eventId).executeTakeFirst();
      if (event === undefined) return undefined;
      const enabled = db.selectFrom('webhook_endpoints').select('id').where('disabled_at', 'is', null);
      const queued = await db
        .updateTable('webhook_deliveries')
        .set({ state: 'pending', attempts: 0, next_attempt_at: now(), locked_until: null })
        .where('event_id', '=', eventId)
        .where('endpoint_id', 'in', enabled)
        .executeTakeFirst();
      return Number(queued.numUpdatedRows);
    },
  };
}
