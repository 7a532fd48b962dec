/**
 * The vocabulary of a change in words (values, fields and where they live), and the words for a
 * change inside a schema: a field added or removed, a value of an enum, a bound, a type, a
 * pattern. ./changeLines.ts places them in an operation.
 */
import type { Diff } from 'api-smart-diff';
import { isoDay } from '../../../src/shared/instant.js';
import { isNode } from '../operations.js';
import { comparePatterns, type PatternRelation } from './patternScope.js';

export type ChangeKind = 'added' | 'changed' | 'deprecated' | 'removed';
export interface Change {
  kind: ChangeKind;
  /** One line, plain words. */
  text: string;
}

export type Path = readonly (string | number)[];
type Action = Diff['action'];

export const KIND_ORDER: readonly ChangeKind[] = ['added', 'changed', 'deprecated', 'removed'];
export const KIND_OF: Record<Action, ChangeKind> = { add: 'added', remove: 'removed', replace: 'changed', rename: 'changed' };
const VERB: Record<Action, string> = { add: 'Added', remove: 'Removed', replace: 'Changed', rename: 'Changed' };
/** Keys that only document: a change to one of them changes no request and no response. */
export const WORDING = new Set(['description', 'summary', 'title', 'example', 'examples', 'externalDocs', '$comment', 'tags']);
export const isWording = (key: unknown): boolean => typeof key === 'string' && WORDING.has(key);
/** Keywords under which a schema holds schemas: a path through them names a field, not a keyword. */
const COMBINERS = new Set(['allOf', 'anyOf', 'oneOf']);

export const at = (root: unknown, path: Path): unknown =>
  path.reduce<unknown>((node, key) => (isNode(node) || Array.isArray(node) ? (node as Record<string | number, unknown>)[key] : undefined), root);
export const code = (text: string | number) => `\`${text}\``;
/** What a change added, or what it removed. */
export const valueOf = (diff: Diff): unknown => (diff.action === 'remove' ? diff.before : diff.after);
/** The document a change's value lives in: the earlier one for a removal, else the later. */
export const documentOf = ({ diff, before, after }: Seen): unknown => (diff.action === 'remove' ? before : after);

/** A value as a changelog shows it: numbers and booleans bare, anything else quoted as code; undefined when too long to be read on one line. */
export function shown(value: unknown): string | undefined {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text === undefined || text.length > 60 || text.includes('\n') || text.includes('`')) return undefined;
  return code(text);
}

/** `2030-12-05` for a midnight UTC instant (sunsets are days), the instant otherwise. */
export function day(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const time = Date.parse(value);
  return Number.isNaN(time) ? value : isoDay(time);
}

/** `a`, `a and b`, `a, b and c`. */
export const listed = (items: readonly string[]): string => (items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`);

// ---------------------------------------------------------------------------------------------
// Where a change is, in words.

/** What a schema belongs to; `field` words are built on it. */
export type SchemaOwner = { kind: 'request' } | { kind: 'response' } | { kind: 'parameter'; where: string } | { kind: 'header'; name: string };

/** `request body field `name``, `the body`, `field `x` of query parameter `filter``... */
function fieldWords(owner: SchemaOwner, field: readonly string[]): string {
  const name = field.reduce((text, part) => (part === '[]' || text === '' ? text + part : `${text}.${part}`), '');
  if (owner.kind === 'request') return name ? `request body field ${code(name)}` : 'the request body';
  if (owner.kind === 'response') return name ? `body field ${code(name)}` : 'the body';
  if (owner.kind === 'parameter') return name ? `field ${code(name)} of ${owner.where}` : owner.where;
  return name ? `field ${code(name)} of header ${code(owner.name)}` : `header ${code(owner.name)}`;
}

/** How the key at `i` of a schema path leads into a field: the field's part (none through `allOf`, `not`…) and how many keys it takes; undefined for a keyword. */
function fieldStep(path: Path, i: number): { part?: string; take: number } | undefined {
  const [key, next, last] = [path[i], path[i + 1], i === path.length - 1];
  if ((key === 'properties' || key === 'patternProperties') && next !== undefined) return { part: key === 'properties' ? String(next) : `<${String(next)}>`, take: 2 };
  if (key === 'items' && !last) return { part: '[]', take: 1 };
  if (key === 'prefixItems' && next !== undefined && i + 2 < path.length) return { part: `[${String(next)}]`, take: 2 };
  if (key === 'additionalProperties' && !last) return { part: '*', take: 1 };
  if (typeof key === 'string' && COMBINERS.has(key) && i + 2 < path.length) return { take: 2 };
  return key === 'not' && !last ? { take: 1 } : undefined;
}

/** A schema path split into the field it reaches (`[]` for array items) and the keyword changed there. */
function schemaSpot(path: Path): { field: string[]; keyword?: string; rest: Path; property: boolean } {
  const field: string[] = [];
  let property = false;
  for (let i = 0; i < path.length; ) {
    const step = fieldStep(path, i);
    if (!step) return { field, keyword: String(path[i]), rest: path.slice(i + 1), property: false };
    if (step.part !== undefined) field.push(step.part);
    property = path[i] === 'properties';
    i += step.take;
  }
  return { field, rest: [], property };
}

/** One change before it is placed in a group, where the same line seen in several responses becomes one. */
export interface Line {
  kind: ChangeKind;
  text: string;
  /** What joins the line to "response `200`" when the change is inside a response: `in` unless said. */
  preposition?: 'to' | 'from';
  /** The response status the change was seen in. */
  status?: string;
  /** Where in an operation: 0 the operation itself, 1 parameters, 2 request body, 3 responses (lines are listed in that order). */
  area?: number;
}
export const WORDING_LINE = 'wording';
export type Described = Line | Line[] | typeof WORDING_LINE | undefined;

/** A change, with both (dereferenced) documents it is read against. */
export interface Seen {
  diff: Diff;
  before: unknown;
  after: unknown;
}

export const capital = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/** `Added …`, `Removed …` or `Changed …`, as `action` says. */
export const actionLine = (action: Action, what: string): Line => ({ kind: KIND_OF[action], text: `${VERB[action]} ${what}` });
/** The same for what is added to or removed from a response: "Added header `ETag` to response `200`". */
export const movedLine = (action: Action, what: string): Line => ({ ...actionLine(action, what), preposition: action === 'add' ? 'to' : action === 'remove' ? 'from' : undefined });

const PATTERN_RELATION: Record<Exclude<PatternRelation, 'other'>, string> = { same: 'accepts the same values', wider: 'accepts more values', narrower: 'accepts fewer values' };

/** A keyword's value changed, was added or removed, on a field: the generic line, with the values when they are short. */
export function keywordLine(action: Action, keyword: string, target: string, was: unknown, is: unknown): Line {
  const [a, b] = [shown(was), shown(is)];
  if (action === 'add') return { kind: 'added', text: b ? `Added ${code(keyword)} ${b} to ${target}` : `Added ${code(keyword)} to ${target}` };
  if (action === 'remove') return { kind: 'removed', text: a ? `Removed ${code(keyword)} ${a} from ${target}` : `Removed ${code(keyword)} from ${target}` };
  return { kind: 'changed', text: a && b ? `Changed ${code(keyword)} of ${target} from ${a} to ${b}` : `Changed ${code(keyword)} of ${target}` };
}

/**
 * A change inside a schema at `schemaPath` (the full document path of the schema's root): a field
 * added or removed, a value of an enum, a bound, a type.
 */
export function schemaChange(seen: Seen, schemaPath: Path, owner: SchemaOwner): Described {
  const { diff } = seen;
  const spot = schemaSpot(diff.path.slice(schemaPath.length));
  const target = fieldWords(owner, spot.field);
  const response = owner.kind === 'response' || owner.kind === 'header';
  if (spot.keyword === undefined) {
    if (spot.property) {
      const parent = at(documentOf(seen), [...diff.path.slice(0, -2), 'required']);
      const required = Array.isArray(parent) && parent.includes(String(diff.path.at(-1)));
      return movedLine(diff.action, `${diff.action !== 'add' || response ? '' : required ? 'required ' : 'optional '}${target}`);
    }
    return actionLine(diff.action, diff.action === 'add' ? `a schema for ${target}` : `the schema of ${target}`);
  }
  const keyword = spot.keyword;
  if (WORDING.has(keyword) && keyword !== 'tags') return WORDING_LINE;
  const keywordPath = diff.path.slice(0, diff.path.length - spot.rest.length);
  const properties = valueOf(diff);
  if (keyword === 'properties' && spot.rest.length === 0 && isNode(properties)) {
    // A whole `properties` added or removed: one line per field.
    const required = at(documentOf(seen), [...keywordPath.slice(0, -1), 'required']);
    return Object.keys(properties).map((name) => {
      const optional = response || diff.action === 'remove' ? '' : Array.isArray(required) && required.includes(name) ? 'required ' : 'optional ';
      return movedLine(diff.action === 'remove' ? 'remove' : 'add', `${optional}${fieldWords(owner, [...spot.field, name])}`);
    });
  }
  if (keyword === 'enum' && spot.rest.length === 1) {
    const value = shown(valueOf(diff)) ?? 'a value';
    if (diff.action === 'add') return { kind: 'added', text: `Added ${value} to the values of ${target}` };
    if (diff.action === 'remove') return { kind: 'removed', text: `Removed ${value} from the values of ${target}` };
    return { kind: 'changed', text: `Changed ${shown(diff.before) ?? 'a value'} to ${value} in the values of ${target}` };
  }
  if (keyword === 'required' && spot.rest.length === 1) {
    const words = fieldWords(owner, [...spot.field, String(valueOf(diff))]);
    if (diff.action === 'add') return { kind: 'changed', text: response ? `Made ${words} always present` : `Made ${words} required` };
    if (diff.action === 'remove') return { kind: 'changed', text: response ? `Made ${words} optional (it may be absent)` : `Made ${words} optional` };
  }
  if (keyword === 'x-extensible-enum') {
    const marked = at(seen.after, keywordPath) === true;
    return { kind: 'changed', text: marked ? `Marked the values of ${target} extensible (${code('x-extensible-enum')}: new ones may come)` : `Removed the extensible mark (${code('x-extensible-enum')}) from the values of ${target}` };
  }
  if (keyword === 'deprecated') return at(seen.after, keywordPath) === true ? { kind: 'deprecated', text: `Deprecated ${target}` } : { kind: 'changed', text: `${capital(target)} is no longer deprecated` };
  if (spot.rest.length > 0) {
    // Inside an array or object keyword (a `type` list, `const`...): the keyword's whole value, once.
    return keywordLine('replace', keyword, target, at(seen.before, keywordPath), at(seen.after, keywordPath));
  }
  if (keyword === 'type' && diff.action === 'replace') return { kind: 'changed', text: `Changed the type of ${target} from ${shown(diff.before) ?? '…'} to ${shown(diff.after) ?? '…'}` };
  if (keyword === 'pattern' && diff.action === 'replace') {
    // What the reader wants to know of a rewritten pattern is whether it still accepts what it did.
    const line = keywordLine(diff.action, keyword, target, diff.before, diff.after);
    const relation = comparePatterns(String(diff.before), String(diff.after));
    return relation === 'other' ? line : { ...line, text: `${line.text} (${PATTERN_RELATION[relation]})` };
  }
  return keywordLine(diff.action, keyword, target, diff.before, diff.after);
}
