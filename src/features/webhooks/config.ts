/** The webhooks feature's settings (WEBHOOKS_*), read at start (./feature.ts). */
import { ConfigError, readInteger, readOneOf, type Env } from '../../shared/env.js';

/**
 * When a delivery that failed is tried again, after each failed attempt in turn (ms): Standard
 * Webhooks' example schedule, about three days in all. Jitter of ±10 % is added to each.
 */
export const RETRY_SCHEDULE_MS = [5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400].map((s) => s * 1000);

export interface WebhookSettings {
  /** Whether this instance delivers (off: it only writes events; another instance delivers). */
  deliver: boolean;
  /** Endpoints on http, loopback, private or link-local addresses (development, tests). */
  allowPrivate: boolean;
  retryScheduleMs: number[];
  /** How often the outbox is read for work another instance committed. */
  pollMs: number;
  /** Deliveries in flight at once on this instance. */
  concurrency: number;
  /** An endpoint whose every delivery failed for this long is disabled. */
  disableAfterMs: number;
  /** The receiver's answer must come within this. */
  timeoutMs: number;
  /** How long a settled event is kept (for `deliveries` and `replay`) before it is deleted with its attempts. */
  retentionMs: number;
}

/** WEBHOOKS_RETRY_SCHEDULE: seconds, comma-separated (`5,300,1800`): one retry per entry. */
function readSchedule(env: Env): number[] {
  const raw = env.WEBHOOKS_RETRY_SCHEDULE?.trim();
  if (!raw) return RETRY_SCHEDULE_MS;
  const entries = raw.split(',').map((part) => part.trim());
  const seconds = entries.map(Number);
  if (entries.some((e) => !/^\d+(\.\d+)?$/.test(e)) || seconds.some((s) => s > 604_800) || seconds.length > 30) {
    throw new ConfigError(`WEBHOOKS_RETRY_SCHEDULE must be up to 30 delays in seconds (each at most 604800), comma-separated, e.g. "5,300,1800"; got "${raw}"`);
  }
  return seconds.map((s) => Math.round(s * 1000));
}

export function readWebhookSettings(env: Env): WebhookSettings {
  return {
    deliver: readOneOf(env, 'WEBHOOKS_DELIVERY', ['on', 'off'], 'on') === 'on',
    allowPrivate: readOneOf(env, 'WEBHOOKS_ALLOW_PRIVATE', ['true', 'false'], 'false') === 'true',
    retryScheduleMs: readSchedule(env),
    pollMs: readInteger(env, 'WEBHOOKS_POLL_MS', 1_000, 10, 60_000),
    concurrency: readInteger(env, 'WEBHOOKS_CONCURRENCY', 16, 1, 256),
    disableAfterMs: readInteger(env, 'WEBHOOKS_DISABLE_AFTER_S', 3 * 86_400, 1, 30 * 86_400) * 1000,
    timeoutMs: readInteger(env, 'WEBHOOKS_TIMEOUT_MS', 15_000, 100, 60_000),
    retentionMs: readInteger(env, 'WEBHOOKS_RETENTION_DAYS', 30, 1, 3_650) * 86_400_000,
  };
}

/**
 * When to try again after failed attempt number `attempt` (1 for the first): the schedule's delay
 * with jitter, or later when the receiver asked so (Retry-After, up to the schedule's longest
 * delay); undefined once the schedule is spent.
 */
export function nextAttemptAt(schedule: readonly number[], attempt: number, at: number, retryAfterMs: number | undefined, random: () => number = Math.random): number | undefined {
  const delay = schedule[attempt - 1];
  if (delay === undefined) return undefined;
  const jittered = delay * (0.9 + 0.2 * random());
  const longest = Math.max(...schedule);
  return at + Math.round(Math.max(jittered, Math.min(retryAfterMs ?? 0, longest)));
}
