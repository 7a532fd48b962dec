/**
 * Reading the environment at start: each setting checked, and a bad value refused with a
 * ConfigError that names the variable and the fix (src/main.ts prints it and exits), so a typo
 * stops the start instead of failing later. The server's settings are read by src/config.ts, each
 * feature's by the config.ts of its folder.
 */
export class ConfigError extends Error {}

export type Env = Record<string, string | undefined>;

export function readInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}; got "${raw}"`);
  }
  return Number(raw);
}

export function readOneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}; got "${raw}"`);
  return raw as T;
}

/**
 * A URL setting (DATABASE_URL, REDIS_URL) of one of `protocols`: checked at start, so a typo stops
 * the start instead of failing later (for ever, where the feature fails open). `hostRequired`:
 * whether a URL without a host is refused (REDIS_URL) or means a local socket (DATABASE_URL).
 */
export function readUrl(env: Env, name: string, protocols: readonly string[], example: string, hostRequired: boolean): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const [first, ...others] = protocols.map((p) => `${p}//`);
  const kinds = others.length > 0 ? `${first} (or ${others.join(', ')})` : `${first}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a ${kinds} URL, e.g. "${example}"`);
  }
  if (!protocols.includes(url.protocol)) throw new ConfigError(`${name} must be a ${kinds} URL; got a ${url.protocol} URL`);
  if (hostRequired && url.hostname === '') throw new ConfigError(`${name} names no host; write it as ${protocols[0]}//host:port, e.g. "${example}"`);
  return raw;
}

/** A host name or IP address to bind (HOST, METRICS_HOST). */
export function readHost(env: Env, name: string): string {
  const raw = env[name];
  const host = raw === undefined || raw === '' ? '127.0.0.1' : raw;
  if (!/^[A-Za-z0-9.:-]+$/.test(host)) throw new ConfigError(`${name} must be a host name or IP address; got "${host}"`);
  return host;
}
