import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import type { PetStatus } from '../shared/schemas.js';

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
  // A cursor is a pure function of its position and the key, and the positions clients ask for
  // most (the end of each filter's first pages) change only when pets are added before them; an
  // HMAC costs more here than the rest of a page's paging. So recent results are kept, bounded.
  const encoded = new BoundedCache<string, string>(CACHED_CURSORS);
  const decoded = new BoundedCache<string, CursorPosition>(CACHED_CURSORS);
  const encodeUncached = ({ afterId, status }: CursorPosition): string => {
    const payload = Buffer.from(JSON.stringify(status ? { a: afterId, s: status } : { a: afterId })).toString('base64url');
    return `${payload}.${sign(payload).toString('base64url')}`;
  };
  return {
    encode(position) {
      const id = `${position.afterId}|${position.status ?? ''}`;
      let cursor = encoded.get(id);
      if (cursor === undefined) {
        cursor = encodeUncached(position);
        encoded.set(id, cursor);
      }
      return cursor;
    },
    decode(cursor) {
      const known = decoded.get(cursor);
      if (known) return known;
      const position = verifiedPosition(cursor);
      // Only cursors this service issued are kept: junk cannot push them out.
      if (position) decoded.set(cursor, position);
      return position;
    },
  };

  /** The position a cursor holds when its signature is ours and its payload well-formed. */
  function verifiedPosition(cursor: string): CursorPosition | undefined {
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
  }
}

const CACHED_CURSORS = 1024;

/** A Map that forgets its oldest entry beyond `limit` (insertion order: enough for hot keys). */
class BoundedCache<K, V> {
  private readonly entries = new Map<K, V>();
  constructor(private readonly limit: number) {}
  get(key: K): V | undefined {
    return this.entries.get(key);
  }
  set(key: K, value: V): void {
    if (this.entries.size >= this.limit) this.entries.delete(this.entries.keys().next().value as K);
    this.entries.set(key, value);
  }
}
