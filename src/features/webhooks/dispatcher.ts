/**
 * Delivers what the outbox holds: fans new events out to their endpoints, claims the deliveries
 * that are due, and sends each as Standard Webhooks says (signed with every secret the endpoint
 * has, the same `webhook-id` on every attempt). Woken at once by this instance's commits, and
 * every poll for those of others. At least once: a claim that was never settled (a crash, a
 * close that could not wait) is taken again once its lease ends.
 */
import { Webhook } from 'standardwebhooks';
import type { Observers } from '../feature.js';
import type { Logger } from '../../shared/logger.js';
import { checkEndpointUrl, resolveDeliveryAddress } from './address.js';
import { nextAttemptAt, type WebhookSettings } from './config.js';
import type { ClaimedDelivery, DeliveryQueries, Settlement } from './deliveries.js';
import { postEvent } from './send.js';

/**
 * How long a claim keeps a delivery from every other claimer, in receiver timeouts: longer than an
 * attempt can take (the timeout, a DNS lookup before it), short enough that one left by a crash
 * resumes within a minute (45 s with the 15 s timeout).
 */
const LEASE_TIMEOUTS = 3;
/** Events fanned out per query. */
const FAN_OUT_BATCH = 500;
/**
 * A fan-out with no claim waits this long after the last one: under a stream of commits (a group
 * commit each) it covers many events in one transaction, not one each (on PostgreSQL, seven round
 * trips), at the cost of this much more time before a delivery starts.
 */
const FAN_OUT_EVERY_MS = 20;
/** How often old events are deleted, and how many per transaction. */
const PURGE_EVERY_MS = 3_600_000;
const PURGE_BATCH = 1_000;

export interface Dispatcher {
  /** Looks for work now (this instance committed events). */
  wake(): void;
  /** Stops claiming; waits up to `waitMs` for the attempts in flight (those still running are left to their lease). */
  close(waitMs: number): Promise<void>;
}

export interface DispatcherOptions {
  observers?: Observers;
  now?: () => number;
  /** Each event's headers fixed by its webhook in the spec (./headers.ts), sent beside Standard Webhooks' own. */
  headers?: ReadonlyMap<string, Readonly<Record<string, string>>>;
  /** Deliveries to keep in flight now (./giveWay.ts: fewer while requests keep the loop busy); WEBHOOKS_CONCURRENCY when unset. */
  limit?: () => number;
}

export function startDispatcher(queries: DeliveryQueries, settings: WebhookSettings, logger: Logger, { observers = {}, now = Date.now, headers: declared = new Map(), limit = () => settings.concurrency }: DispatcherOptions = {}): Dispatcher {
  const inFlight = new Set<Promise<void>>();
  let running = false;
  let again = false;
  let closed = false;
  /** Events may wait to be fanned out: set by a commit, a poll or the start, and while a fan-out leaves more. */
  let fanOutDue = true;
  /** When the store was last asked (performance.now()), and the timer of a fan-out put off until FAN_OUT_EVERY_MS after it. */
  let askedAt = -Infinity;
  let putOff: NodeJS.Timeout | undefined;

  const settlementOf = async (delivery: ClaimedDelivery, at: number): Promise<Settlement> => {
    const retry = (status: number | undefined, error: string, retryAfterMs?: number): Settlement => ({ kind: 'failed', status, error, nextAt: nextAttemptAt(settings.retryScheduleMs, delivery.attempt, now(), retryAfterMs) });
    try {
      const url = checkEndpointUrl(delivery.endpoint.url, { allowPrivate: settings.allowPrivate });
      // Resolved and checked at each attempt, and the connection pinned to what was checked: a
      // name that later resolves into the network is refused then.
      const target = { url, ...(await resolveDeliveryAddress(url, { allowPrivate: settings.allowPrivate })) };
      const timestamp = new Date(at);
      // During a rotation both secrets sign; a receiver accepts the one it knows (space-separated, as the specification allows).
      const signature = delivery.endpoint.secrets.map((secret) => new Webhook(secret).sign(delivery.eventId, timestamp, delivery.body)).join(' ');
      const headers = { ...declared.get(delivery.event), 'webhook-id': delivery.eventId, 'webhook-timestamp': String(Math.floor(at / 1000)), 'webhook-signature': signature };
      const answer = await postEvent(target, { body: delivery.body, headers }, { timeoutMs: settings.timeoutMs });
      if (answer.error !== undefined) return retry(undefined, answer.error);
      if (answer.status >= 200 && answer.status < 300) return { kind: 'delivered', status: answer.status };
      if (answer.status === 410) return { kind: 'gone', status: 410 };
      return retry(answer.status, `the receiver answered ${answer.status}`, answer.retryAfterMs);
    } catch (error) {
      // A refused address (it may resolve elsewhere later) or a secret that is not one: tried again, recorded.
      return retry(undefined, error instanceof Error ? error.message : String(error));
    }
  };

  const attempt = async (delivery: ClaimedDelivery): Promise<void> => {
    const at = now();
    const outcome = await settlementOf(delivery, at);
    const fields = { endpoint: delivery.endpoint.id, eventId: delivery.eventId, event: delivery.event, attempt: delivery.attempt };
    if (outcome.kind === 'delivered') logger.debug({ ...fields, status: outcome.status }, 'webhook delivered');
    else logger.warn({ ...fields, status: outcome.status, error: outcome.kind === 'failed' ? outcome.error : undefined, retryAt: outcome.kind === 'failed' && outcome.nextAt !== undefined ? new Date(outcome.nextAt).toISOString() : undefined }, outcome.kind === 'gone' ? 'webhook endpoint answered 410: disabled' : 'webhook delivery failed');
    const ended = now();
    observers.webhookAttempt?.(delivery.event, outcome.kind, outcome.kind === 'delivered' ? ended - delivery.createdAt : undefined);
    await queries.settle(delivery, outcome, { at, durationMs: ended - at }, settings.disableAfterMs);
  };

  const track = (delivery: ClaimedDelivery) => {
    const done: Promise<void> = attempt(delivery)
      .catch((error: unknown) => logger.warn({ err: error, endpoint: delivery.endpoint.id, eventId: delivery.eventId }, 'could not record a webhook attempt: it is tried again when its claim ends'))
      .finally(() => {
        inFlight.delete(done);
        schedule();
      });
    inFlight.add(done);
  };

  /**
   * Fans out and claims while there is room and work. Under load it claims once half the room is
   * free (one write for several deliveries, not one per delivery that ends); below that it only
   * fans out, and only when there may be events to fan out: a delivery that ends with no room to
   * fill asks the store nothing (it did, once per delivery, and those empty transactions were a
   * third of a delivery's cost). While it gives way to requests (a limit below the concurrency)
   * it fans out only with a claim: one transaction per claim, of up to FAN_OUT_BATCH events, not
   * one per group commit of the requests.
   */
  async function run(): Promise<void> {
    while (!closed) {
      const most = limit();
      const free = Math.max(0, most - inFlight.size);
      const room = inFlight.size === 0 || free >= Math.ceil(most / 2) ? free : 0;
      if (room === 0) {
        if (!fanOutDue || most < settings.concurrency) return;
        const wait = askedAt + FAN_OUT_EVERY_MS - performance.now();
        if (wait > 0) {
          putOff ??= setTimeout(() => {
            putOff = undefined;
            schedule();
          }, wait);
          return;
        }
      }
      fanOutDue = false;
      askedAt = performance.now();
      const { claimed, more } = await queries.claim(room, settings.timeoutMs * LEASE_TIMEOUTS, FAN_OUT_BATCH);
      if (more) fanOutDue = true;
      for (const delivery of claimed) track(delivery);
      if (!more && (room === 0 || claimed.length < room)) return;
    }
  }

  /** Looks for work: events committed (here or, found by the poll, elsewhere) may wait to be fanned out. */
  function wake(): void {
    fanOutDue = true;
    schedule();
  }

  /** Runs the loop, or once more after the one running. */
  function schedule(): void {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    again = false;
    run()
      .catch((error: unknown) => logger.warn({ err: error }, 'could not read the webhook outbox: trying again at the next poll'))
      .finally(() => {
        running = false;
        if (again) schedule();
      });
  }

  const poll = setInterval(wake, settings.pollMs);
  poll.unref();
  // Every instance purges; the deletes are idempotent, so two at once only repeat work.
  const purge = async () => {
    while (!closed && (await queries.purge(now() - settings.retentionMs, PURGE_BATCH)) === PURGE_BATCH);
  };
  const purging = setInterval(() => void purge().catch((error: unknown) => logger.warn({ err: error }, 'could not delete old webhook events: trying again in an hour')), PURGE_EVERY_MS);
  purging.unref();
  wake();

  return {
    wake,
    async close(waitMs) {
      closed = true;
      clearInterval(poll);
      clearTimeout(putOff);
      clearInterval(purging);
      if (inFlight.size === 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...inFlight]), new Promise((resolve) => (timer = setTimeout(resolve, waitMs)))]);
      clearTimeout(timer);
    },
  };
}
