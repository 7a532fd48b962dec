import type { KeyVerdict } from './keyCache.js';

/**
 * The sandbox's key check (scripts/sandbox.ts passes it to startServer; nothing else does): any
 * credential that was sent at all is valid. The security handlers (../http/security.ts) still
 * answer a missing or malformed Authorization header (not `Bearer <one word>`) with the real 401
 * before this is asked, so a frontend can test that path against the sandbox too.
 */
export const anyToken = {
  check(token: string | undefined): KeyVerdict {
    return token ? 'valid' : 'invalid';
  },
};
