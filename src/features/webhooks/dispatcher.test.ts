/**
 * How often the dispatcher asks the store for work. Its queries are the seam here (the store's own
 * are proven in test/storage/webhooks.test.ts): deliveries go to a real receiver, and the test counts
 * the claims. Each claim is a transaction (a commit, an fsync on SQLite), so one per delivery that
 * ends, most of them with no room to fill, cost a third of what a delivery costs the server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../../../test/support/receiver.js';
import { createLogger } from '../../shared/logger.js';
import type { WebhookSettings } from './config.js';
import type { ClaimedDelivery, DeliveryQueries } from './deliveries.js';
import { startDispatcher, type Dispatcher } from './dispatcher.js';

const CONCURRENCY = 16;
const DUE = 400;

function settings(): WebhookSettings {
  return { deliver: true, allowPrivate: true, retryScheduleMs: [1_000], pollMs: 60_000, concurrency: CONCURRENCY, disableAfterMs: 86_400_000, timeoutMs: 5_000, retentionMs: 86_400_000 };
}

/** DUE deliveries waiting, handed out as claims ask; every claim and settle counted. */
function queue(url: string, due = DUE) {
  const waiting: ClaimedDelivery[] = Array.from({ length: due }, (_, i) => ({
    id: i + 1,
    attempt: 1,
    eventId: `msg_example${String(i).padStart(15, '0')}`,
    event: 'petCreated',
    body: JSON.stringify({ type: 'pet.created', timestamp: new Date(0).toISOString(), data: { id: i + 1 } }),
    createdAt: 0,
    endpoint: { id: 1, url, secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] },
  }));
  const counts = { claims: 0, emptyClaims: 0, mostAsked: 0, settled: new Map<number, number>() };
  const queries: DeliveryQueries = {
    async claim(limit) {
      counts.claims += 1;
      counts.mostAsked = Math.max(counts.mostAsked, limit);
      const claimed = waiting.splice(0, limit);
      if (claimed.length === 0) counts.emptyClaims += 1;
      return { claimed, more: false };
    },
    async settle(delivery) {
      counts.settled.set(delivery.id, (counts.settled.get(delivery.id) ?? 0) + 1);
    },
    async purge() {
      return 0;
    },
  };
  return { queries, counts };
}

describe('the dispatcher asks the store for work once per batch, not once per delivery', () => {
  let receiver: Receiver | undefined;
  let dispatcher: Dispatcher | undefined;
  afterEach(async () => {
    await dispatcher?.close(1_000);
    await receiver?.close();
  });

  it(`${DUE} due deliveries, ${CONCURRENCY} at a time: each settled once, in about one claim per ${CONCURRENCY / 2} deliveries`, async () => {
    receiver = await startReceiver();
    const { queries, counts } = queue(`${receiver.url}/hook`);
    dispatcher = startDispatcher(queries, settings(), createLogger('silent'));
    await receiver.until((deliveries) => deliveries.length >= DUE, 20_000);
    await expect.poll(() => counts.settled.size, { timeout: 5_000 }).toBe(DUE);
    expect([...counts.settled.values()].every((times) => times === 1)).toBe(true);
    // Claims of half the room (8) at least, and a last few once the queue runs dry.
    expect(counts.claims, `claims: ${counts.claims}, of them empty: ${counts.emptyClaims}`).toBeLessThanOrEqual(DUE / (CONCURRENCY / 2) + 10);
  });

  it("sends the headers the event's webhook fixes beside Standard Webhooks' own, which a declaration never replaces", async () => {
    receiver = await startReceiver();
    const { queries } = queue(`${receiver.url}/hook`, 1);
    const headers = new Map([['petCreated', { 'x-example-event': 'pet.created', 'webhook-id': 'msg_declared' }]]);
    dispatcher = startDispatcher(queries, settings(), createLogger('silent'), { headers });
    await receiver.until((deliveries) => deliveries.length === 1, 10_000);
    const [delivery] = receiver.deliveries;
    expect(delivery?.headers['x-example-event']).toBe('pet.created');
    expect(delivery?.id).toMatch(/^msg_example/);
  });

  it('keeps no more in flight than its limit says while it gives way, and fills the room when the limit rises', async () => {
    receiver = await startReceiver(() => ({ status: 204, delayMs: 5 }));
    const { queries, counts } = queue(`${receiver.url}/hook`, 60);
    let limit = 2;
    dispatcher = startDispatcher(queries, settings(), createLogger('silent'), { limit: () => limit });
    await receiver.until((deliveries) => deliveries.length >= 20, 10_000);
    expect(counts.mostAsked).toBeLessThanOrEqual(2);
    limit = CONCURRENCY;
    dispatcher.wake();
    await receiver.until((deliveries) => deliveries.length >= 60, 10_000);
    expect(counts.mostAsked).toBeGreaterThan(2);
  });
});
