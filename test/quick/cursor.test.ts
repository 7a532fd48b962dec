/**
 * Paging cursors (decision: opaque, signed, bound to their status filter). The codec keeps recent
 * results (an HMAC costs more than the rest of a page's paging); the cache must never change an
 * answer: a cursor decodes to the position it was issued for, and nothing else decodes at all.
 */
import { describe, expect, it } from 'vitest';
import { createCursorCodec } from '../../src/domain/cursor.js';

const codec = createCursorCodec('a-secret-of-this-database-only-for-tests-xx');

describe('cursor codec', () => {
  it('a cursor decodes to the position it was issued for, the first time and from the cache', () => {
    const cursor = codec.encode({ afterId: 20, status: 'sold' });
    expect(codec.encode({ afterId: 20, status: 'sold' })).toBe(cursor);
    expect(codec.decode(cursor)).toEqual({ afterId: 20, status: 'sold' });
    expect(codec.decode(cursor)).toEqual({ afterId: 20, status: 'sold' });
    expect(codec.encode({ afterId: 20 })).not.toBe(cursor);
  });

  it('a tampered or foreign cursor is refused, even when a genuine one is cached', () => {
    const cursor = codec.encode({ afterId: 40 });
    codec.decode(cursor);
    const [payload, signature] = cursor.split('.') as [string, string];
    const forged = `${Buffer.from(JSON.stringify({ a: 41 })).toString('base64url')}.${signature}`;
    expect(codec.decode(forged)).toBeUndefined();
    expect(codec.decode(`${payload}.${signature.slice(1)}A`)).toBeUndefined();
    expect(createCursorCodec('another-secret-of-another-database-xxxxxxxx').decode(cursor)).toBeUndefined();
  });

  it('past the cache bound, old positions are computed again and still right', () => {
    const first = codec.encode({ afterId: 1 });
    for (let i = 2; i < 3000; i++) codec.decode(codec.encode({ afterId: i, status: 'available' }));
    expect(codec.encode({ afterId: 1 })).toBe(first);
    expect(codec.decode(first)).toEqual({ afterId: 1 });
  });
});
