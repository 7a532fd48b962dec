/**
 * The fan-out, which the database does (an insert from a select per endpoint): each event goes to
 * the endpoints enabled and subscribed to it when it happened, once per pair however often it
 * runs. On SQLite here; test/storage/webhooks.test.ts runs the whole path on PostgreSQL too.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTempSqlite, type StorageHandle } from '../../../test/support/server.js';
import type { DatabaseHandle } from '../../store/database.js';
import { createDeliveryQueries } from './deliveries.js';
import { createEndpointStore } from './endpoints.js';
import type { Tables } from './tables.js';

const URL_A = 'https://a.example/hooks';
const URL_B = 'https://b.example/hooks';
const URL_LATE = 'https://late.example/hooks';

describe('webhook fan-out', () => {
  let storage: StorageHandle;
  let handle: DatabaseHandle;

  beforeEach(async () => {
    storage = await openTempSqlite();
    handle = storage.database;
  });

  afterEach(() => storage.dispose());

  it('sends each event to the endpoints subscribed when it happened, once per pair, even when run again', async () => {
    let clock = 1_000;
    const endpoints = createEndpointStore(handle.db, () => clock);
    const all = await endpoints.add(URL_A, undefined);
    const created = await endpoints.add(URL_B, ['petCreated']);
    const db = handle.db.withTables<Tables>();
    const event = (seq: number, name: string, at: number) => ({ id: `msg_example${seq}`, name, body: '{}', created_at: at });
    await db.insertInto('webhook_events').values([event(1, 'petCreated', 2_000), event(2, 'petDeleted', 2_000)]).execute();
    clock = 3_000;
    await endpoints.add(URL_LATE, undefined);
    await db.insertInto('webhook_events').values(event(3, 'petCreated', 4_000)).execute();
    const queries = createDeliveryQueries(handle, () => clock);
    // Two at a time: the second claim fans out the rest.
    expect((await queries.claim(0, 1_000, 2)).more).toBe(true);
    expect((await queries.claim(0, 1_000, 2)).more).toBe(false);
    // Run again (another instance, a restart): the unique pair keeps one row each.
    await db.updateTable('webhook_events').set({ fanned_out: 0 }).execute();
    await queries.claim(0, 1_000, 500);
    const rows = await db.selectFrom('webhook_deliveries').select(['event_id', 'endpoint_id', 'state', 'next_attempt_at']).orderBy('event_id').orderBy('endpoint_id').execute();
    const late = (await endpoints.list()).find((endpoint) => endpoint.url === URL_LATE)?.id;
    expect(rows.map((row) => [row.event_id, Number(row.endpoint_id)])).toEqual([
      ['msg_example1', all.id],
      ['msg_example1', created.id],
      ['msg_example2', all.id],
      ['msg_example3', all.id],
      ['msg_example3', created.id],
      ['msg_example3', late],
    ]);
    expect(rows.every((row) => row.state === 'pending' && Number(row.next_attempt_at) === 3_000)).toBe(true);
    const { claimed } = await queries.claim(10, 1_000, 500);
    expect(claimed.map((delivery) => [delivery.eventId, delivery.event, delivery.endpoint.url]).sort()).toEqual([
      ['msg_example1', 'petCreated', URL_A],
      ['msg_example1', 'petCreated', URL_B],
      ['msg_example2', 'petDeleted', URL_A],
      ['msg_example3', 'petCreated', URL_A],
      ['msg_example3', 'petCreated', URL_B],
      ['msg_example3', 'petCreated', URL_LATE],
    ]);
  });
});
