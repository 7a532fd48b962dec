/**
 * What changed from one contract to another, in plain words, grouped by operation: the lines of a
 * changelog entry (`npm run release` writes them under the new version in spec/CHANGELOG.md) and
 * of the docs' changes page.
 *
 * api-smart-diff finds the changes, with the same rules and the same dereferencing as the
 * breaking-change gate (scripts/breaking.ts), so a shared schema is reported where it is used, in
 * each operation, never as a component. Its own descriptions name JSON paths; these lines name
 * what a client sees: an operation, a parameter and where it goes, a body field, a response status
 * and its headers. The same change seen under several statuses of one operation is one line, and
 * wording or examples that changed are one line per operation, not one per text.
 */
import { operationChange, operationKey, operationsOf, parameterChange, placed, subjectOf, wholeContractChange, type Operation } from './changeLines.js';
import { code, isWording, keywordLine, KIND_ORDER, listed, shown, WORDING_LINE, type Change, type Described, type Line, type Seen } from './changeWords.js';
import { contractDiffs, loadContract } from './contractDiff.js';

export type { Change, ChangeKind } from './changeWords.js';

export interface ChangeGroup {
  subject: string;
  operationId?: string;
  changes: Change[];
}

/** The subject of the group for what lies outside the operations. */
export const WHOLE_CONTRACT = 'Whole contract';
/** The one line standing for every description, summary or example that changed in a group. */
export const WORDING_CHANGED = 'Descriptions or examples changed';

// ---------------------------------------------------------------------------------------------
// Grouping.

/** The lines of one group as they come, merged by text; statuses of the same response line gathered. */
class GroupBuilder {
  private readonly lines = new Map<string, { line: Line; statuses: string[] }>();
  readonly wording = new Set<string>();
  add(line: Line): void {
    const key = `${line.kind}\0${line.text}\0${line.status === undefined ? '' : (line.preposition ?? 'in')}`;
    const entry = this.lines.get(key) ?? { line, statuses: [] };
    if (line.status !== undefined && !entry.statuses.includes(line.status)) entry.statuses.push(line.status);
    this.lines.set(key, entry);
  }
  changes(wordingText: string): Change[] {
    const entries = [...this.lines.values()].sort(
      (a, b) => KIND_ORDER.indexOf(a.line.kind) - KIND_ORDER.indexOf(b.line.kind) || (a.line.area ?? 0) - (b.line.area ?? 0),
    );
    // Responses added or removed, and headers added to or removed from the very same responses,
    // read as one line: "Added responses `409` and `422`", "Added headers `A` and `B` to response `401`".
    const merged = new Map<string, { line: Line; statuses: string[]; noun?: string; names: string[] }>();
    for (const [index, entry] of entries.entries()) {
      const [, noun, name] = /^(?:Added|Removed) (header|response) (`[^`]+`)$/.exec(entry.line.text) ?? [];
      const key = name === undefined ? String(index) : `${entry.line.kind}\0${noun}\0${entry.statuses.join(',')}`;
      const same = merged.get(key);
      if (same && name !== undefined) same.names.push(name);
      else merged.set(key, { ...entry, noun, names: name === undefined ? [] : [name] });
    }
    const changes = [...merged.values()].map(({ line, statuses, noun, names }): Change => {
      const text = names.length > 1 ? `${line.kind === 'added' ? 'Added' : 'Removed'} ${noun}s ${listed(names)}` : line.text;
      const responses = statuses.length > 0 ? ` ${line.preposition ?? 'in'} ${statuses.length === 1 ? 'response' : 'responses'} ${listed(statuses.map(code))}` : '';
      return { kind: line.kind, text: `${text}${responses}` };
    });
    const unique = [...new Map(changes.map((c) => [`${c.kind}\0${c.text}`, c])).values()];
    if (this.wording.size > 0) unique.push({ kind: 'changed', text: wordingText });
    return unique;
  }
}

/** Changes from `beforeFile` to `afterFile` (YAML or JSON; $refs resolved), grouped by operation
 *  (subject like "getPet (GET /pets/{petId})"), then one group for what is outside operations
 *  (subject "Whole contract": security schemes, servers, info...). Empty array: no change. */
export async function contractChanges(beforeFile: string, afterFile: string): Promise<ChangeGroup[]> {
  const [before, after] = await Promise.all([loadContract(beforeFile), loadContract(afterFile)]);
  const diffs = contractDiffs(before, after);
  const operations = operationsOf(before, after);
  const groups = new Map<string, GroupBuilder>();
  const whole = new GroupBuilder();
  const builder = (key: string) => groups.get(key) ?? groups.set(key, new GroupBuilder()).get(key)!;
  const record = (target: GroupBuilder, described: Described, where: string) => {
    if (described === WORDING_LINE) target.wording.add(where);
    else if (Array.isArray(described)) for (const line of described) target.add(line);
    else if (described) target.add(described);
  };
  for (const diff of diffs) {
    const seen: Seen = { diff, before, after };
    const [top, template, method] = diff.path.map(String);
    const root = top === 'paths' || top === 'webhooks' ? top : undefined;
    const op = root === undefined || template === undefined || method === undefined ? undefined : operations.get(operationKey(root, method, template));
    if (root === undefined) record(whole, wholeContractChange(seen), top === 'info' ? diff.path.slice(0, 2).join('.') : String(top));
    else if (op) record(builder(op.key), operationChange(seen, op), '');
    // All the webhooks at once (a contract's first): each one, as if added or removed alone.
    else if (template === undefined) for (const each of [...operations.values()].filter((o) => o.root === root)) record(builder(each.key), pathItemChange({ ...seen, diff: { ...diff, path: [root, each.template] } }, each, undefined), '');
    // A whole path item, or what it holds for all its operations (its parameters, its wording).
    else for (const each of [...operations.values()].filter((o) => o.root === root && o.template === template)) record(builder(each.key), pathItemChange(seen, each, method), '');
  }
  const result: ChangeGroup[] = [];
  for (const op of operations.values()) {
    const changes = groups.get(op.key)?.changes(WORDING_CHANGED) ?? [];
    if (changes.length === 0) continue;
    result.push({ subject: subjectOf(op), ...(op.operationId ? { operationId: op.operationId } : {}), changes });
  }
  const outside = whole.changes(`${WORDING_CHANGED} (${listed([...whole.wording].map(code))})`);
  if (outside.length > 0) result.push({ subject: WHOLE_CONTRACT, changes: outside });
  return result;
}

/** A change to the path item `op` is in (`key`: what in it; undefined, the item itself), as it concerns `op`. */
function pathItemChange(seen: Seen, op: Operation, key: string | undefined): Described {
  const { diff } = seen;
  if (key === 'parameters') return placed(parameterChange(seen, [op.root, op.template, 'parameters']), { area: 1 });
  if (isWording(key)) return WORDING_LINE;
  if (key !== undefined) return keywordLine(diff.action, diff.path.slice(2).join('.'), `${op.root === 'webhooks' ? 'webhook' : 'path'} ${code(op.template)}`, diff.before, diff.after);
  if (diff.action !== 'add' && diff.action !== 'remove') return { kind: 'changed', text: `Changed path from ${shown(diff.before) ?? '…'} to ${shown(diff.after) ?? '…'}` };
  // A whole path item added or removed: each operation in it, as if added or removed alone.
  return (diff.action === 'remove' ? op.before : op.after) ? operationChange({ ...seen, diff: { ...diff, path: [...diff.path, op.method] } }, op) : undefined;
}

/**
 * The groups as Markdown: "### getPet (GET /pets/{petId})", a blank line, then "- Added …", one
 * line each. Each text starts with its kind's verb (Added, Changed, Deprecated, Removed), so the
 * kind is not repeated as a label. `level` sets the headings' depth (3: `###`), for a page that
 * nests them under a heading of its own.
 */
export function changesMarkdown(groups: ChangeGroup[], level = 3): string {
  const heading = '#'.repeat(level);
  return groups.map((group) => `${heading} ${group.subject}\n\n${group.changes.map((change) => `- ${change.text}`).join('\n')}\n`).join('\n');
}
