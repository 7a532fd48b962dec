/**
 * Two contracts read and compared the one way the breaking-change gate, the sunset calendar and
 * the computed changes (changelog, docs) all use: every $ref resolved first, then api-smart-diff
 * with the gate's rules (./breakingRules.ts).
 */
import $RefParser from '@apidevtools/json-schema-ref-parser';
import { apiCompare, type Diff } from 'api-smart-diff';
import { breakingChangeRules } from './breakingRules.js';

/**
 * The document at `file` (YAML or JSON) with every $ref replaced by what it points to: other
 * files too, never URLs (the tools run offline). A recursive schema keeps its $ref, which
 * api-smart-diff follows itself.
 */
export async function loadContract(file: string): Promise<object> {
  return $RefParser.dereference(file, { resolve: { http: false }, dereference: { circular: 'ignore' } });
}

/**
 * Every change from `before` to `after` (both loaded by loadContract), judged. Components are
 * judged where they are used (a shared schema in a request and in a response), so their own diffs
 * are dropped; only security schemes matter on their own.
 */
export function contractDiffs(before: object, after: object): Diff[] {
  return apiCompare(before, after, { rules: breakingChangeRules() }).diffs.filter((d) => d.path[0] !== 'components' || d.path[1] === 'securitySchemes');
}
