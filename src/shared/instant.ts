/**
 * Instants as the contract writes them (`x-sunset`, the Sunset policy, brownout windows): RFC 3339
 * in UTC, without milliseconds when they are zero, as the spec's own dates are spelled.
 */

/** `2030-12-05T00:00:00Z` for the instant `at` (ms since the epoch). */
export const isoInstant = (at: number): string => new Date(at).toISOString().replace('.000Z', 'Z');

/** `2030-12-05` for a midnight UTC instant (a sunset is a day), the full instant otherwise. */
export function isoDay(at: number): string {
  const instant = isoInstant(at);
  return instant.endsWith('T00:00:00Z') ? instant.slice(0, 10) : instant;
}
