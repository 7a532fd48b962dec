/** DEPRECATION_BROWNOUTS, read at start (./feature.ts). */
import { Interval } from 'luxon';
import { ConfigError, readInteger, type Env } from '../../shared/env.js';
import { FLUSH_EVERY_MS } from './calls.js';
import { isoInstant } from '../../shared/instant.js';

/** A brownout window, [start, end) in ms since the epoch, and how it was written. */
export interface Brownout {
  start: number;
  end: number;
  /** The ISO 8601 interval as normalised (`start/end`, UTC). */
  text: string;
}

/**
 * DEPRECATION_BROWNOUTS: comma-separated ISO 8601 intervals, `start/end` or `start/duration`
 * (`2030-06-01T10:00:00Z/PT1H`), parsed by luxon; a time without an offset is UTC. Sorted by start.
 */
export function readBrownouts(env: Env): Brownout[] {
  const raw = env.DEPRECATION_BROWNOUTS?.trim();
  if (!raw) return [];
  const brownouts: Brownout[] = [];
  for (const entry of raw.split(',').map((part) => part.trim())) {
    if (entry === '') throw new ConfigError(`DEPRECATION_BROWNOUTS has an empty entry (a stray comma?); got "${raw}"`);
    const interval = Interval.fromISO(entry, { zone: 'utc' });
    if (!interval.isValid || !interval.start || !interval.end) {
      throw new ConfigError(`DEPRECATION_BROWNOUTS: "${entry}" is not an ISO 8601 interval (${interval.invalidExplanation ?? 'invalid'}); write each as start/end or start/duration, e.g. "2030-06-01T10:00:00Z/PT1H"`);
    }
    if (interval.isEmpty()) throw new ConfigError(`DEPRECATION_BROWNOUTS: "${entry}" is an empty interval; give it a duration`);
    const start = interval.start.toMillis();
    const end = interval.end.toMillis();
    brownouts.push({ start, end, text: `${isoInstant(start)}/${isoInstant(end)}` });
  }
  return brownouts.sort((a, b) => a.start - b.start);
}

/**
 * DEPRECATED_CALLS_FLUSH_MS: how often the calls heard are written to the store (5 s by default);
 * a test that reads the store before the first write sets it long.
 */
export function readCallsFlushMs(env: Env): number {
  return readInteger(env, 'DEPRECATED_CALLS_FLUSH_MS', FLUSH_EVERY_MS, 100, 600_000);
}
