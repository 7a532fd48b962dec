/**
 * Keys written twice in one YAML mapping: what a paste into spec/openapi.yaml most often does
 * (the Swagger Petstore's `Pet` schema under a `components.schemas` that has a `Pet` already).
 * Every tool then stops at a parse error ("duplicated mapping key (1025:5)", "Duplicate key: Pet")
 * that says neither which mapping nor what to do; `npm run lint` and `npm run generate` say both.
 */
import { isPair, isScalar, LineCounter, parseDocument, visit, type Node } from 'yaml';

export interface DuplicatedKey {
  key: string;
  /** Where it sits, dotted (`components.schemas`); empty at the top level. */
  under: string;
  /** 1-based lines of its first and its second spelling. */
  firstLine: number;
  line: number;
}

/** Every key that a mapping of `text` has twice, in the order of the second spellings. */
export function duplicatedKeys(text: string): DuplicatedKey[] {
  const lines = new LineCounter();
  const doc = parseDocument(text, { uniqueKeys: false, lineCounter: lines });
  const found: DuplicatedKey[] = [];
  const lineOf = (node: Node | null | undefined) => (node?.range ? lines.linePos(node.range[0]).line : 0);
  visit(doc, {
    Map(_key, map, path) {
      const seen = new Map<string, Node>();
      const under = path
        .flatMap((step) => (isPair(step) && isScalar(step.key) ? [String(step.key.value)] : []))
        .join('.');
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        const name = String(pair.key.value);
        const first = seen.get(name);
        if (first === undefined) seen.set(name, pair.key);
        else found.push({ key: name, under, firstLine: lineOf(first), line: lineOf(pair.key) });
      }
    },
  });
  return found.sort((a, b) => a.line - b.line);
}

/** What to do about each, one line each, naming the file. */
export function duplicatedKeyAdvice(file: string, duplicates: readonly DuplicatedKey[]): string[] {
  return duplicates.map(({ key, under, firstLine, line }) => {
    const place = under === '' ? 'at the top level' : `in ${under}`;
    const ref = /^components\.(schemas|responses|parameters|headers|requestBodies|securitySchemes|examples)$/.test(under) ? ` (and every \`$ref: '#/${under.replace('.', '/')}/${key}'\` meant for it)` : '';
    return `${file}:${line}: \`${key}\` is declared twice ${place} (first at line ${firstLine}), so every tool stops at a parse error. If you pasted one, the spec had its own: rename the pasted \`${key}\`${ref}, or drop it.`;
  });
}
