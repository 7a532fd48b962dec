import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import type { PetStatus } from './store/types.js';

/** Where a page ends, and the filter it was issued for. */
export interface CursorPosition {
  afterId: number;
  status?: PetStatus;
}

export interface CursorCodec {
  encode(position: CursorPosition): string;
  /** The position, or undefined for anything this service did not issue. */
  decode(cursor: string): CursorPosition | undefined;
}

const STATUSES: ReadonlySet<string> = new Set(['available', 'pending', 'sold']);

/**
 * Opaque, signed paging cursors: `<base64url JSON>.<base64url HMAC>`. The signature makes a
 * cursor the service never issued detectable (a 400), so clients cannot craft positions, and
 * the format can change later without breaking anyone who treats it as opaque.
 */
export function createCursorCodec(secret: string): CursorCodec {
  // A KeyObject, made once: an HMAC keyed with a string re-imports the key on every call.
  const key = createSecretKey(Buffer.from(secret, 'utf8'));
  const sign = (payload: string) => createHmac('sha256', key).update(payload).digest().subarray(0, 16);
  return {
    encode({ afterId, status }) {
      const payload = Buffer.from(JSON.stringify(status ? { a: afterId, s: status } : { a: afterId })).toString('base64url');
      return `${payload}.${sign(payload).toString('base64url')}`;
    },
    decode(cursor) {
      const [payload, signature, extra] = cursor.split('.');
      if (!payload || !signature || extra !== undefined) return undefined;
      const given = Buffer.from(signature, 'base64url');
      const expected = sign(payload);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      let parsed: unknown;
      try {
        parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        return undefined;
      }
      if (typeof parsed !== 'object' || parsed === null) return undefined;
      const { a, s } = parsed as { a?: unknown; s?: unknown };
      if (typeof a !== 'number' || !Number.isSafeInteger(a) || a < 0) return undefined;
      if (s === undefined) return { afterId: a };
      if (typeof s !== 'string' || !STATUSES.has(s)) return undefined;
      return { afterId: a, status: s as PetStatus };
    },
  };
}
