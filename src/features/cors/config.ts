/** CORS_ORIGINS, read at start (./feature.ts). */
import { ConfigError, type Env } from '../../shared/env.js';

/** `*` (any origin) or the exact origins allowed. */
export type CorsOrigins = '*' | readonly string[];

/**
 * CORS_ORIGINS: `*` alone, or a comma-separated list of origins written exactly as a browser sends
 * them (`Origin` is compared byte for byte): http or https, lower-case host, no default port, no
 * path, no trailing slash. Anything else would never match and is refused, naming the fix.
 */
export function readCorsOrigins(env: Env): CorsOrigins | undefined {
  const raw = env.CORS_ORIGINS?.trim();
  if (raw === undefined || raw === '') return undefined;
  const entries = raw.split(',').map((entry) => entry.trim());
  if (entries.includes('*')) {
    if (entries.length > 1) throw new ConfigError(`CORS_ORIGINS must be "*" alone or a list of origins, not both; got "${raw}"`);
    return '*';
  }
  const origins: string[] = [];
  for (const entry of entries) {
    if (entry === '') throw new ConfigError(`CORS_ORIGINS has an empty entry (a stray comma?); got "${raw}"`);
    let url: URL | undefined;
    try {
      url = new URL(entry);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new ConfigError(`CORS_ORIGINS: "${entry}" is not an http(s) origin; write each as scheme://host[:port], e.g. "https://app.example.com"`);
    }
    if (url.origin !== entry) {
      throw new ConfigError(`CORS_ORIGINS: "${entry}" never matches a browser's Origin header; write it as "${url.origin}" (no path, no trailing slash, lower-case host, no default port)`);
    }
    if (!origins.includes(entry)) origins.push(entry);
  }
  return origins;
}
