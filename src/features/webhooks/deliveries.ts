/**
 * The dispatcher's queries (./dispatcher.ts): fan each new event of the outbox out to the endpoints
 * subscribed when it happened, claim deliveries that are due, and settle each attempt. One code
 * path for both dialects; on PostgreSQL the claim skips rows another instance is claiming (`FOR
 * UPDATE SKIP LOCKED`, one statement, so it holds behind a transaction-mode pooler too).
 */
import { sql } from 'kysely';
import { isDatabaseUnavailable } from '../../shared/unavailable.js';
import { createBatcher } from '../../store/queries/batcher.js';
import type { DatabaseHandle } from '../../store/database.js';
import { prepare } from '../../store/queries/prepared.js';
import type { Tables } from './tables.js';

/** A delivery claimed by this instance until `lockedUntil`: what is needed to send it. */
export interface ClaimedDelivery {
  id: number;
  /** The claim's attempt number (1 for the first): it fences the settle, so a claim that expired and was taken over writes nothing. */
  attempt: number;
  eventId: string;
  event: string;
  body: string;
  /** When the event was committed (ms). */
  createdAt: number;
  endpoint: { id: number; url: string; secrets: string[] };
}

/** What happened to one attempt. */
export type Settlement =
  | { kind: 'delivered'; status: number }
  /** Tried again at `nextAt`, or given up (`nextAt` undefined). */
  | { kind: 'failed'; status: number | undefined; error: string | undefined; nextAt: number | undefined }
  /** The receiver answered 410: its endpoint is disabled. */
  | { kind: 'gone'; status: number };

export interface DeliveryQueries {
  /**
   * In one transaction (one commit, one fsync on SQLite): fans out up to `fanOutLimit` events not
   * fanned out yet, then claims up to `limit` due deliveries for `leaseMs`. `more`: events were
   * left to fan out.
   */
  claim(limit: number, leaseMs: number, fanOutLimit: number): Promise<{ claimed: ClaimedDelivery[]; more: boolean }>;
  /**
   * Records the attempt and its outcome; `disableAfterMs`: an endpoint failing that long without a
   * success is disabled. Settles that arrive together share one transaction (a group commit, as
   * creates do), so delivering costs the store one commit per batch, not one per event.
   */
  settle(delivery: ClaimedDelivery, outcome: Settlement, attempt: { at: number; durationMs: number }, disableAfterMs: number): Promise<void>;
  /** Deletes up to `limit` events committed before `before` whose deliveries are all settled, with those deliveries and their attempts: how many. */
  purge(before: number, limit: number): Promise<number>;
}

/** One attempt to record. */
interface Settle {
  delivery: ClaimedDelivery;
  outcome: Settlement;
  attempt: { at: number; durationMs: number };
  disableAfterMs: number;
}

export function createDeliveryQueries(database: Pick<DatabaseHandle, 'db' | 'dialect' | 'transactionWithoutFsync'>, now: () => number = Date.now): DeliveryQueries {
  const { dialect } = database;
  const db = database.db.withTables<Tables>();
  type Db = typeof db;
  /**
   * Every write of the dispatcher commits without waiting for the disk: one lost to a power cut is
   * done again (an event fanned out again, on conflict nothing; a delivery claimed or settled again:
   * sent again, which at-least-once allows). Events themselves are written durably, by the
   * handler's unit of work.
   */
  const transaction = <T>(work: (trx: Db) => Promise<T>): Promise<T> => database.transactionWithoutFsync((trx) => work(trx.withTables<Tables>()));

  /** Disables an endpoint: nothing more is sent to it, and what it had pending fails. */
  const disable = async (trx: Db, endpointId: number, at: number, reason: string) => {
    await trx.updateTable('webhook_endpoints').set({ disabled_at: at, disabled_reason: reason }).where('id', '=', endpointId).where('disabled_at', 'is', null).execute();
    await trx.updateTable('webhook_deliveries').set({ state: 'failed', last_error: `endpoint disabled: ${reason}`, locked_until: null }).where('endpoint_id', '=', endpointId).where('state', '=', 'pending').execute();
  };

  /** Records one attempt and its outcome in `trx`. */
  const settleIn = async (trx: Db, { delivery, outcome, attempt: { at, durationMs }, disableAfterMs }: Settle): Promise<void> => {
    const status = outcome.status ?? null;
    const error = outcome.kind === 'failed' ? (outcome.error ?? null) : null;
    const mine = trx.updateTable('webhook_deliveries').where('id', '=', delivery.id).where('attempts', '=', delivery.attempt).where('state', '=', 'pending');
    const settled =
      outcome.kind === 'delivered'
        ? await mine.set({ state: 'delivered', delivered_at: at, locked_until: null, last_status: status, last_error: null }).executeTakeFirst()
        : await mine
            .set({ state: outcome.kind === 'failed' && outcome.nextAt !== undefined ? 'pending' : 'failed', next_attempt_at: outcome.kind === 'failed' ? (outcome.nextAt ?? at) : at, locked_until: null, last_status: status, last_error: error ?? (outcome.kind === 'gone' ? 'the receiver answered 410 Gone' : null) })
            .executeTakeFirst();
    // Taken over after this claim expired (or replayed, or its endpoint removed): the attempt is not this claim's to record.
    if (Number(settled.numUpdatedRows) === 0) return;
    await trx.insertInto('webhook_attempts').values({ delivery_id: delivery.id, endpoint_id: delivery.endpoint.id, event_id: delivery.eventId, attempted_at: at, status, error, duration_ms: Math.round(durationMs) }).execute();
    const endpoint = trx.updateTable('webhook_endpoints').where('id', '=', delivery.endpoint.id);
    if (outcome.kind === 'delivered') {
      await endpoint.set({ last_success_at: at, failing_since: null }).execute();
      return;
    }
    await endpoint.set((eb) => ({ last_failure_at: at, failing_since: eb.fn.coalesce('failing_since', eb.val(at)) })).execute();
    if (outcome.kind === 'gone') return disable(trx, delivery.endpoint.id, at, 'the receiver answered 410 Gone');
    const row = await trx.selectFrom('webhook_endpoints').select('failing_since').where('id', '=', delivery.endpoint.id).executeTakeFirst();
    if (row?.failing_since != null && at - Number(row.failing_since) >= disableAfterMs) {
      await disable(trx, delivery.endpoint.id, at, `every delivery failed since ${new Date(Number(row.failing_since)).toISOString()}`);
    }
  };
  // A delivered attempt, the common case, in statements compiled once (building each query per
  // attempt cost more than running it); the endpoint's success is written once per batch.
  const markDelivered = prepare<{ id: number; attempt: number; at: number; status: number }, { id: number }>(db, (bind) =>
    db
      .updateTable('webhook_deliveries')
      .set({ state: 'delivered', delivered_at: bind('at'), locked_until: null, last_status: bind('status'), last_error: null })
      .where('id', '=', bind('id'))
      .where('attempts', '=', bind('attempt'))
      .where('state', '=', 'pending')
      .returning('id'),
  );
  type Attempt = { deliveryId: number; endpointId: number; eventId: string; at: number; status: number | null; error: string | null; durationMs: number };
  const recordAttempt = prepare<Attempt, never>(db, (bind) =>
    db.insertInto('webhook_attempts').values({ delivery_id: bind('deliveryId'), endpoint_id: bind('endpointId'), event_id: bind('eventId'), attempted_at: bind('at'), status: bind('status'), error: bind('error'), duration_ms: bind('durationMs') }),
  );
  const endpointSucceeded = prepare<{ id: number; at: number }, never>(db, (bind) => db.updateTable('webhook_endpoints').set({ last_success_at: bind('at'), failing_since: null }).where('id', '=', bind('id')));

  /** Settles the batch in `trx`: delivered attempts by the compiled statements, the others one by one. */
  const settleAll = async (trx: Db, items: readonly Settle[]): Promise<void> => {
    const succeeded = new Map<number, number>();
    for (const item of items) {
      const { delivery, outcome, attempt } = item;
      if (outcome.kind !== 'delivered') {
        await settleIn(trx, item);
        continue;
      }
      // Taken over after this claim expired (or replayed, or its endpoint removed): not this claim's to record.
      if ((await markDelivered({ id: delivery.id, attempt: delivery.attempt, at: attempt.at, status: outcome.status }, trx)).length === 0) continue;
      await recordAttempt({ deliveryId: delivery.id, endpointId: delivery.endpoint.id, eventId: delivery.eventId, at: attempt.at, status: outcome.status, error: null, durationMs: Math.round(attempt.durationMs) }, trx);
      succeeded.set(delivery.endpoint.id, Math.max(succeeded.get(delivery.endpoint.id) ?? 0, attempt.at));
    }
    for (const [id, at] of succeeded) await endpointSucceeded({ id, at }, trx);
  };
  const settles = createBatcher<Settle, void>({
    maxBatch: 256,
    writeBatch: (items) =>
      transaction(async (trx) => {
        await settleAll(trx, items);
        return items.map(() => undefined);
      }),
    writeOne: (item) => transaction((trx) => settleAll(trx, [item])),
    retryOneByOne: (error) => !isDatabaseUnavailable(error),
  });

  /**
   * Fans out up to `limit` events not fanned out yet, in `trx`: how many. The rows are made by the
   * database (an insert from a select per endpoint), so no event travels to this process and back:
   * building and binding a row per delivery cost more than the store's insert of it.
   */
  const fanOut = async (trx: Db, limit: number): Promise<number> => {
    const events = await trx
      .selectFrom('webhook_events')
      .select('seq')
      // Literals, not bound values: a partial index (`where fanned_out = 0`, `where state = 'pending'`)
      // serves only a query whose text says so. PostgreSQL plans a prepared statement once for any
      // value, and then scanned every event (and every delivery) ever kept, at every fan-out and claim.
      .where('fanned_out', '=', sql.lit(0))
      .orderBy('seq')
      .limit(limit)
      .$if(dialect === 'postgres', (q) => q.forUpdate().skipLocked())
      .execute();
    if (events.length === 0) return 0;
    const seqs = events.map((event) => event.seq);
    const endpoints = await trx.selectFrom('webhook_endpoints').select(['id', 'events', 'created_at']).where('disabled_at', 'is', null).execute();
    const due = now();
    for (const endpoint of endpoints) {
      const names = endpoint.events?.split(' ');
      await trx
        .insertInto('webhook_deliveries')
        .columns(['event_id', 'endpoint_id', 'state', 'next_attempt_at'])
        .expression((eb) =>
          eb
            .selectFrom('webhook_events')
            .select((s) => ['id', s.cast<number>(s.val(Number(endpoint.id)), 'bigint').as('endpoint_id'), s.cast<'pending'>(s.val('pending'), 'text').as('state'), s.cast<number>(s.val(due), 'bigint').as('next_attempt_at')])
            .where('seq', 'in', seqs)
            // Those subscribed when it happened: an endpoint added later does not get the past.
            .where('created_at', '>=', endpoint.created_at)
            .$if(names !== undefined, (q) => q.where('name', 'in', names ?? [])),
        )
        // Another instance, or this one before a crash, may have fanned some out already: the pair is unique.
        .onConflict((oc) => oc.columns(['event_id', 'endpoint_id']).doNothing())
        .execute();
    }
    await trx.updateTable('webhook_events').set({ fanned_out: 1 }).where('seq', 'in', seqs).execute();
    return events.length;
  };

  return {
    claim: (limit, leaseMs, fanOutLimit) => transaction(async (trx) => {
      const fannedOut = await fanOut(trx, fanOutLimit);
      const more = fannedOut === fanOutLimit;
      if (limit === 0) return { claimed: [], more };
      const at = now();
      const due = trx
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('state', '=', sql.lit('pending'))
        .where('next_attempt_at', '<=', at)
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', at)]))
        .orderBy('next_attempt_at')
        .limit(limit)
        .$if(dialect === 'postgres', (q) => q.forUpdate().skipLocked());
      const claimed = await trx
        .updateTable('webhook_deliveries')
        .set((eb) => ({ locked_until: at + leaseMs, attempts: eb('attempts', '+', 1) }))
        .where('id', 'in', due)
        .returning(['id', 'event_id', 'endpoint_id', 'attempts'])
        .execute();
      if (claimed.length === 0) return { claimed: [], more };
      const events = await trx.selectFrom('webhook_events').select(['id', 'name', 'body', 'created_at']).where('id', 'in', [...new Set(claimed.map((c) => c.event_id))]).execute();
      const endpoints = await trx
        .selectFrom('webhook_endpoints')
        .select(['id', 'url', 'secret', 'previous_secret', 'previous_until'])
        .where('id', 'in', [...new Set(claimed.map((c) => Number(c.endpoint_id)))])
        .execute();
      const eventById = new Map(events.map((event) => [event.id, event]));
      const endpointById = new Map(endpoints.map((endpoint) => [Number(endpoint.id), endpoint]));
      const ready = claimed.flatMap((c) => {
        const event = eventById.get(c.event_id);
        const endpoint = endpointById.get(Number(c.endpoint_id));
        // Removed between the claim and this read: nothing to send.
        if (event === undefined || endpoint === undefined) return [];
        const secrets = [endpoint.secret, ...(endpoint.previous_secret !== null && Number(endpoint.previous_until) > at ? [endpoint.previous_secret] : [])];
        return [{ id: Number(c.id), attempt: Number(c.attempts), eventId: event.id, event: event.name, body: event.body, createdAt: Number(event.created_at), endpoint: { id: Number(endpoint.id), url: endpoint.url, secrets } }];
      });
      return { claimed: ready, more };
    }),

    async purge(before, limit) {
      return transaction(async (trx) => {
        const old = await trx
          .selectFrom('webhook_events as e')
          .select('e.id')
          .where('e.created_at', '<', before)
          .where('e.fanned_out', '=', 1)
          .where((eb) => eb.not(eb.exists(eb.selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'e.id').where('d.state', '=', 'pending'))))
          .orderBy('e.seq')
          .limit(limit)
          .execute();
        if (old.length === 0) return 0;
        const ids = old.map((event) => event.id);
        // Attempts go with their deliveries (on delete cascade).
        await trx.deleteFrom('webhook_deliveries').where('event_id', 'in', ids).execute();
        await trx.deleteFrom('webhook_events').where('id', 'in', ids).execute();
        return ids.length;
      });
    },

    settle: (delivery, outcome, attempt, disableAfterMs) => settles.add({ delivery, outcome, attempt, disableAfterMs }),
  };
}
