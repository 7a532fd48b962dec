/**
 * A key written twice in spec/openapi.yaml (the Swagger Petstore's `Pet` pasted beside ours) stops
 * every tool at a parse error naming only a line; scripts/lib/duplicateKeys.ts finds each one,
 * where it sits and what to do, for `npm run lint` and `npm run generate`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { duplicatedKeyAdvice, duplicatedKeys } from '../../scripts/lib/duplicateKeys.js';
import { projectRoot } from '../../src/shared/paths.js';

describe('duplicatedKeys', () => {
  it('finds a schema pasted under a name the spec has, with both lines and the mapping, and says to rename it and its $refs', () => {
    const spec = readFileSync(join(projectRoot, 'spec', 'openapi.yaml'), 'utf8');
    expect(duplicatedKeys(spec)).toEqual([]);
    const pasted = spec.replace('\n  schemas:\n', '\n  schemas:\n    Pet:\n      type: object\n      xml:\n        name: pet\n');
    const [found, ...more] = duplicatedKeys(pasted);
    expect(more).toEqual([]);
    expect(found).toMatchObject({ key: 'Pet', under: 'components.schemas' });
    expect(pasted.split('\n')[(found?.firstLine ?? 0) - 1]).toBe('    Pet:');
    expect(pasted.split('\n')[(found?.line ?? 0) - 1]).toBe('    Pet:');
    expect(found?.firstLine).toBeLessThan(found?.line ?? 0);
    expect(duplicatedKeyAdvice('spec/openapi.yaml', [found!])).toEqual([
      expect.stringMatching(/^spec\/openapi\.yaml:\d+: `Pet` is declared twice in components\.schemas \(first at line \d+\).*rename the pasted `Pet` \(and every `\$ref: '#\/components\/schemas\/Pet'` meant for it\), or drop it\.$/),
    ]);
  });

  it('inside lists and at the top level too', () => {
    expect(duplicatedKeys('a: 1\nb:\n  - c: 1\n    c: 2\na: 3\n')).toEqual([
      { key: 'c', under: 'b', firstLine: 3, line: 4 },
      { key: 'a', under: '', firstLine: 1, line: 5 },
    ]);
  });
});
