import type { KeyVerdict } from '../../auth/keyCache.js';

/** The sandbox's one key, printed in its banner and --help: the mock accepts it too (any token). */
export const SANDBOX_TOKEN = 'sandbox';

/**
 * The sandbox's key check (scripts/sandbox.ts passes it to startServer; nothing else does): the
 * one documented token is valid, and any other is a key the server never issued, so a frontend
 * sees the real 401 `invalid_token` for it as it would against the server. The security handlers
 * (src/pipeline/authenticate.ts) answer a missing or malformed Authorization header before this is asked.
 */
export const sandboxToken = {
  check(token: string | undefined): KeyVerdict {
    return token === SANDBOX_TOKEN ? { caller: SANDBOX_TOKEN } : 'invalid';
  },
};
