import { hash, randomBytes } from 'node:crypto';

/** Keys look like `ask_` + 43 base64url characters: 256 random bits, easy to spot in a leak scan. */
export const API_KEY_PREFIX = 'ask_';
const KEY_PATTERN = /^ask_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function isWellFormedApiKey(candidate: string): boolean {
  return KEY_PATTERN.test(candidate);
}

/**
 * A fast hash is enough: the key has 256 random bits, so there is nothing to brute-force, and
 * a fast hash keeps the per-request check cheap.
 */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

const KEY_ANYWHERE = /ask_[A-Za-z0-9_-]{43}/g;

/** Text that is safe to log or echo: every key-shaped token masked (a client may put one anywhere). */
export function redactApiKeys(text: string): string {
  return text.includes(API_KEY_PREFIX) ? text.replace(KEY_ANYWHERE, `${API_KEY_PREFIX}[redacted]`) : text;
}
