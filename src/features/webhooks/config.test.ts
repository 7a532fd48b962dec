/** The webhooks' settings and retry schedule (./config.ts): what a delivery that keeps failing goes through. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/env.js';
import { nextAttemptAt, readWebhookSettings, RETRY_SCHEDULE_MS } from './config.js';

const HOUR = 3_600_000;

describe('the retry schedule', () => {
  it("is Standard Webhooks' example: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h after each failure, about three days in all", () => {
    expect(RETRY_SCHEDULE_MS.map((ms) => ms / 1000)).toEqual([5, 300, 1_800, 7_200, 18_000, 36_000, 50_400, 72_000, 86_400]);
    const total = RETRY_SCHEDULE_MS.reduce((sum, ms) => sum + ms, 0);
    expect(total / (24 * HOUR)).toBeGreaterThan(3);
    expect(total / (24 * HOUR)).toBeLessThan(3.3);
  });

  it('adds ±10 % of jitter, so receivers that failed together are not retried together', () => {
    expect(nextAttemptAt(RETRY_SCHEDULE_MS, 1, 0, undefined, () => 0)).toBe(4_500);
    expect(nextAttemptAt(RETRY_SCHEDULE_MS, 1, 0, undefined, () => 1)).toBe(5_500);
    expect(nextAttemptAt(RETRY_SCHEDULE_MS, 4, 1_000, undefined, () => 0.5)).toBe(1_000 + 2 * HOUR);
  });

  it("waits as long as the receiver's Retry-After asks when that is longer, up to the schedule's longest delay", () => {
    expect(nextAttemptAt(RETRY_SCHEDULE_MS, 1, 0, 60_000, () => 0.5)).toBe(60_000);
    expect(nextAttemptAt(RETRY_SCHEDULE_MS, 1, 0, 1_000, () => 0.5)).toBe(5_000);
    expect(nextAttemptAt(RETRY_SCHEDULE_MS, 1, 0, 30 * 24 * HOUR, () => 0.5)).toBe(24 * HOUR);
  });

  it('gives up once the schedule is spent: the tenth failed attempt has no next', () => {
    expect(nextAttemptAt(RETRY_SCHEDULE_MS, 9, 0, undefined, () => 0.5)).toBe(24 * HOUR);
    expect(nextAttemptAt(RETRY_SCHEDULE_MS, 10, 0, undefined)).toBeUndefined();
  });
});

describe('WEBHOOKS_* settings', () => {
  it('default to delivering, https and public addresses only, the example schedule, a 15 s timeout and 3 days before disabling', () => {
    expect(readWebhookSettings({})).toEqual({ deliver: true, allowPrivate: false, retryScheduleMs: RETRY_SCHEDULE_MS, pollMs: 1_000, concurrency: 16, disableAfterMs: 3 * 24 * HOUR, timeoutMs: 15_000, retentionMs: 30 * 24 * HOUR });
  });

  it('read each variable, and refuse a bad value naming it', () => {
    const settings = readWebhookSettings({ WEBHOOKS_DELIVERY: 'off', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_RETRY_SCHEDULE: '0.5, 2,60', WEBHOOKS_POLL_MS: '250', WEBHOOKS_CONCURRENCY: '4', WEBHOOKS_DISABLE_AFTER_S: '60', WEBHOOKS_TIMEOUT_MS: '500', WEBHOOKS_RETENTION_DAYS: '7' });
    expect(settings).toEqual({ deliver: false, allowPrivate: true, retryScheduleMs: [500, 2_000, 60_000], pollMs: 250, concurrency: 4, disableAfterMs: 60_000, timeoutMs: 500, retentionMs: 7 * 24 * HOUR });
    for (const [name, value] of [
      ['WEBHOOKS_ALLOW_PRIVATE', 'yes'],
      ['WEBHOOKS_RETRY_SCHEDULE', '5,,10'],
      ['WEBHOOKS_RETRY_SCHEDULE', '-1'],
      ['WEBHOOKS_RETRY_SCHEDULE', '1e3'],
      ['WEBHOOKS_TIMEOUT_MS', '0'],
      ['WEBHOOKS_DELIVERY', 'maybe'],
    ] as const) {
      expect(() => readWebhookSettings({ [name]: value }), `${name}=${value}`).toThrow(ConfigError);
      expect(() => readWebhookSettings({ [name]: value })).toThrow(name);
    }
  });
});
