/**
 * RFC 7396 JSON Merge Patch (src/domain/mergePatch.ts), the helper handlers of an
 * application/merge-patch+json body apply to a stored value: the RFC's own examples (its
 * appendix A), and neither argument changed.
 */
import { describe, expect, it } from 'vitest';
import { applyMergePatch } from '../../src/domain/contract.js';

describe('applyMergePatch (RFC 7396)', () => {
  it('null removes a member; a member left out stays; a new one is added', () => {
    expect(applyMergePatch({ name: 'Ada', nickname: 'A', city: 'London' }, { nickname: null, email: 'ada@example.org' })).toEqual({ name: 'Ada', city: 'London', email: 'ada@example.org' });
    expect(applyMergePatch({ a: 'b' }, { c: null })).toEqual({ a: 'b' });
  });

  it('objects merge recursively, member by member; a null inside removes there', () => {
    const stored = { title: 'Goodbye!', author: { givenName: 'John', familyName: 'Doe' }, tags: ['example', 'sample'], content: 'This will be unchanged' };
    const patch = { title: 'Hello!', phoneNumber: '+01-123-456-7890', author: { familyName: null }, tags: ['example'] };
    expect(applyMergePatch(stored, patch)).toEqual({ title: 'Hello!', author: { givenName: 'John' }, tags: ['example'], content: 'This will be unchanged', phoneNumber: '+01-123-456-7890' });
    expect(applyMergePatch({ a: { b: 'c' } }, { a: { b: 'd', c: null } })).toEqual({ a: { b: 'd' } });
    expect(applyMergePatch({ e: null }, { a: 1 })).toEqual({ e: null, a: 1 });
    expect(applyMergePatch({}, { a: { bb: { ccc: null } } })).toEqual({ a: { bb: {} } });
  });

  it('arrays and scalars replace whole, never merge', () => {
    expect(applyMergePatch({ a: [{ b: 'c' }] }, { a: [1] })).toEqual({ a: [1] });
    expect(applyMergePatch({ a: ['a', 'b'] }, { a: ['c', 'd'] })).toEqual({ a: ['c', 'd'] });
    expect(applyMergePatch({ a: { b: 'c' } }, { a: 'text' })).toEqual({ a: 'text' });
    expect(applyMergePatch({ a: 'b' }, { a: { c: 1 } })).toEqual({ a: { c: 1 } });
    expect(applyMergePatch(['a', 'b'], ['c', 'd'])).toEqual(['c', 'd']);
    expect(applyMergePatch({ a: 'b' }, ['c'])).toEqual(['c']);
    expect(applyMergePatch({ a: 'foo' }, null)).toBeNull();
    expect(applyMergePatch({ a: 'foo' }, 'bar')).toBe('bar');
    expect(applyMergePatch(['a'], { a: 'b' })).toEqual({ a: 'b' });
  });

  it('changes neither the stored value nor the patch', () => {
    const stored = { name: 'Ada', author: { givenName: 'John' } };
    const patch = { author: { givenName: null }, name: null };
    const before = structuredClone({ stored, patch });
    applyMergePatch(stored, patch);
    expect({ stored, patch }).toEqual(before);
  });

  it('a member named __proto__ (JSON.parse keeps it as a member) stays a member, never the prototype', () => {
    const result = applyMergePatch({}, JSON.parse('{"__proto__":{"polluted":true}}') as object);
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.keys(result)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
