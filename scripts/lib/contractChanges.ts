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
import $RefParser from '@apidevtools/json-schema-ref-parser';
import { apiCompare, type Diff } from 'api-smart-diff';
import { breakingChangeRules } from './breakingRules.js';
import { comparePatterns, type PatternRelation } from './patternScope.js';

export type ChangeKind = 'added' | 'changed' | 'deprecated' | 'removed';
export interface Change {
  kind: ChangeKind;
  /** One line, plain words. */
  text: string;
}
export interface ChangeGroup {
  subject: string;
  operationId?: string;
  changes: Change[];
}

/** The subject of the group for what lies outside the operations. */
export const WHOLE_CONTRACT = 'Whole contract';
/** The one line standing for every description, summary or example that changed in a group. */
export const WORDING_CHANGED = 'Descriptions or examples changed';

type Path = readonly (string | number)[];
type Node = Record<string, unknown>;
type Action = Diff['action'];

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const KIND_ORDER: readonly ChangeKind[] = ['added', 'changed', 'deprecated', 'removed'];
const KIND_OF: Record<Action, ChangeKind> = { add: 'added', remove: 'removed', replace: 'changed', rename: 'changed' };
/** Keys that only document: a change to one of them changes no request and no response. */
const WORDING = new Set(['description', 'summary', 'title', 'example', 'examples', 'externalDocs', '$comment', 'tags']);
/** Keywords under which a schema holds schemas: a path through them names a field, not a keyword. */
const COMBINERS = new Set(['allOf', 'anyOf', 'oneOf']);

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);
const at = (root: unknown, path: Path): unknown =>
  path.reduce<unknown>((node, key) => (isNode(node) || Array.isArray(node) ? (node as Record<string | number, unknown>)[key] : undefined), root);
const code = (text: string | number) => `\`${text}\``;

/** A value as a changelog shows it: numbers and booleans bare, anything else quoted as code; undefined when too long to be read on one line. */
function shown(value: unknown): string | undefined {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text === undefined || text.length > 60 || text.includes('\n') || text.includes('`')) return undefined;
  return code(text);
}

/** `2030-12-05` for a midnight UTC instant (sunsets are days), the value as written otherwise. */
function day(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const time = Date.parse(value);
  if (Number.isNaN(time)) return value;
  const iso = new Date(time).toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : value;
}

/** `a`, `a and b`, `a, b and c`. */
function listed(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

// ---------------------------------------------------------------------------------------------
// Where a change is, in words.

/** What a schema belongs to; `field` words are built on it. */
type SchemaOwner = { kind: 'request' } | { kind: 'response' } | { kind: 'parameter'; where: string } | { kind: 'header'; name: string };

/** `request body field `name``, `the body`, `field `x` of query parameter `filter``... */
function fieldWords(owner: SchemaOwner, field: readonly string[]): string {
  const name = field.reduce((text, part) => (part === '[]' || text === '' ? text + part : `${text}.${part}`), '');
  switch (owner.kind) {
    case 'request':
      return name ? `request body field ${code(name)}` : 'the request body';
    case 'response':
      return name ? `body field ${code(name)}` : 'the body';
    case 'parameter':
      return name ? `field ${code(name)} of ${owner.where}` : owner.where;
    case 'header':
      return name ? `field ${code(name)} of header ${code(owner.name)}` : `header ${code(owner.name)}`;
  }
}

/** A schema path split into the field it reaches (`[]` for array items) and the keyword changed there. */
function schemaSpot(path: Path): { field: string[]; keyword?: string; rest: Path; property: boolean } {
  const field: string[] = [];
  let i = 0;
  let property = false;
  while (i < path.length) {
    const [key, next] = [path[i], path[i + 1]];
    const last = i === path.length - 1;
    property = false;
    if ((key === 'properties' || key === 'patternProperties') && next !== undefined) {
      field.push(key === 'properties' ? String(next) : `<${String(next)}>`);
      property = key === 'properties';
      i += 2;
    } else if (key === 'items' && !last) {
      field.push('[]');
      i += 1;
    } else if (key === 'prefixItems' && next !== undefined && i + 2 < path.length) {
      field.push(`[${String(next)}]`);
      i += 2;
    } else if (key === 'additionalProperties' && !last) {
      field.push('*');
      i += 1;
    } else if (typeof key === 'string' && COMBINERS.has(key) && i + 2 < path.length) {
      i += 2;
    } else if (key === 'not' && !last) {
      i += 1;
    } else {
      return { field, keyword: String(key), rest: path.slice(i + 1), property: false };
    }
  }
  return { field, rest: [], property };
}

/** One change before it is placed in a group, where the same line seen in several responses becomes one. */
interface Line {
  kind: ChangeKind;
  text: string;
  /** What joins the line to "response `200`" when the change is inside a response: `in` unless said. */
  preposition?: 'to' | 'from';
  /** The response status the change was seen in. */
  status?: string;
  /** Where in an operation: 0 the operation itself, 1 parameters, 2 request body, 3 responses (lines are listed in that order). */
  area?: number;
}
const WORDING_LINE = 'wording';
type Described = Line | Line[] | typeof WORDING_LINE | undefined;

/** A change, with both (dereferenced) documents it is read against. */
interface Seen {
  diff: Diff;
  before: unknown;
  after: unknown;
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

const PATTERN_RELATION: Record<Exclude<PatternRelation, 'other'>, string> = { same: 'accepts the same values', wider: 'accepts more values', narrower: 'accepts fewer values' };

/** A keyword's value changed, was added or removed, on a field: the generic line, with the values when they are short. */
function keywordLine(action: Action, keyword: string, target: string, was: unknown, is: unknown): Line {
  const [a, b] = [shown(was), shown(is)];
  if (action === 'add') return { kind: 'added', text: b ? `Added ${code(keyword)} ${b} to ${target}` : `Added ${code(keyword)} to ${target}` };
  if (action === 'remove') return { kind: 'removed', text: a ? `Removed ${code(keyword)} ${a} from ${target}` : `Removed ${code(keyword)} from ${target}` };
  return { kind: 'changed', text: a && b ? `Changed ${code(keyword)} of ${target} from ${a} to ${b}` : `Changed ${code(keyword)} of ${target}` };
}

/**
 * A change inside a schema at `schemaPath` (the full document path of the schema's root): a field
 * added or removed, a value of an enum, a bound, a type.
 */
function schemaChange(seen: Seen, schemaPath: Path, owner: SchemaOwner): Described {
  const { diff } = seen;
  const inner = diff.path.slice(schemaPath.length);
  const spot = schemaSpot(inner);
  const target = fieldWords(owner, spot.field);
  const response = owner.kind === 'response' || owner.kind === 'header';
  if (spot.keyword === undefined) {
    if (spot.property) {
      const parent = at(diff.action === 'remove' ? seen.before : seen.after, [...diff.path.slice(0, -2), 'required']);
      const name = String(diff.path.at(-1));
      const required = Array.isArray(parent) && parent.includes(name);
      if (diff.action === 'add') return { kind: 'added', text: `Added ${response ? '' : required ? 'required ' : 'optional '}${target}`, preposition: 'to' };
      if (diff.action === 'remove') return { kind: 'removed', text: `Removed ${target}`, preposition: 'from' };
      return { kind: 'changed', text: `Changed ${target}` };
    }
    if (diff.action === 'add') return { kind: 'added', text: `Added a schema for ${target}` };
    if (diff.action === 'remove') return { kind: 'removed', text: `Removed the schema of ${target}` };
    return { kind: 'changed', text: `Changed the schema of ${target}` };
  }
  const keyword = spot.keyword;
  if (WORDING.has(keyword) && keyword !== 'tags') return WORDING_LINE;
  const keywordPath = diff.path.slice(0, diff.path.length - spot.rest.length);
  if (keyword === 'properties' && spot.rest.length === 0 && isNode(diff.action === 'remove' ? diff.before : diff.after)) {
    // A whole `properties` added or removed: one line per field.
    const fields = Object.keys((diff.action === 'remove' ? diff.before : diff.after) as Node);
    const required = at(diff.action === 'remove' ? seen.before : seen.after, [...keywordPath.slice(0, -1), 'required']);
    return fields.map((name) => {
      const words = fieldWords(owner, [...spot.field, name]);
      const optional = response ? '' : Array.isArray(required) && required.includes(name) ? 'required ' : 'optional ';
      return diff.action === 'remove' ? { kind: 'removed', text: `Removed ${words}`, preposition: 'from' } : { kind: 'added', text: `Added ${optional}${words}`, preposition: 'to' };
    });
  }
  if (keyword === 'enum' && spot.rest.length === 1) {
    const value = shown(diff.action === 'remove' ? diff.before : diff.after) ?? 'a value';
    if (diff.action === 'add') return { kind: 'added', text: `Added ${value} to the values of ${target}` };
    if (diff.action === 'remove') return { kind: 'removed', text: `Removed ${value} from the values of ${target}` };
    return { kind: 'changed', text: `Changed ${shown(diff.before) ?? 'a value'} to ${value} in the values of ${target}` };
  }
  if (keyword === 'required' && spot.rest.length === 1) {
    const name = String(diff.action === 'remove' ? diff.before : diff.after);
    const words = fieldWords(owner, [...spot.field, name]);
    if (diff.action === 'add') return { kind: 'changed', text: response ? `Made ${words} always present` : `Made ${words} required` };
    if (diff.action === 'remove') return { kind: 'changed', text: response ? `Made ${words} optional (it may be absent)` : `Made ${words} optional` };
  }
  if (keyword === 'x-extensible-enum') {
    const marked = at(seen.after, keywordPath) === true;
    return { kind: 'changed', text: marked ? `Marked the values of ${target} extensible (${code('x-extensible-enum')}: new ones may come)` : `Removed the extensible mark (${code('x-extensible-enum')}) from the values of ${target}` };
  }
  if (keyword === 'deprecated') {
    return at(seen.after, keywordPath) === true ? { kind: 'deprecated', text: `Deprecated ${target}` } : { kind: 'changed', text: `${capital(target)} is no longer deprecated` };
  }
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

// ---------------------------------------------------------------------------------------------
// Operations.

interface Operation {
  key: string;
  method: string;
  template: string;
  operationId?: string;
  before?: Node;
  after?: Node;
  /** The path item's own parameters, which apply to the operation too. */
  itemParameters: { before: unknown; after: unknown };
}

function operationsOf(before: unknown, after: unknown): Map<string, Operation> {
  const operations = new Map<string, Operation>();
  for (const [side, document] of [['after', after], ['before', before]] as const) {
    const paths = at(document, ['paths']);
    if (!isNode(paths)) continue;
    for (const [template, item] of Object.entries(paths)) {
      if (!isNode(item)) continue;
      for (const method of METHODS) {
        const op = item[method];
        if (!isNode(op)) continue;
        const key = `${method} ${template}`;
        const entry = operations.get(key) ?? { key, method, template, itemParameters: { before: undefined, after: undefined } };
        entry[side] = op;
        entry.itemParameters[side] = item.parameters;
        if (typeof op.operationId === 'string') entry.operationId ??= op.operationId;
        operations.set(key, entry);
      }
    }
  }
  return operations;
}

const subjectOf = (op: Operation) => `${op.operationId ? `${op.operationId} ` : ''}(${op.method.toUpperCase()} ${op.template})`.replace(/^\((.*)\)$/, '$1');

/** Who may call: `public (no API key)`, or the schemes by name. */
function securityWords(requirements: unknown): string {
  if (!Array.isArray(requirements)) return 'none declared';
  if (requirements.length === 0 || requirements.some((r) => isNode(r) && Object.keys(r).length === 0)) {
    const named = requirements.filter((r) => isNode(r) && Object.keys(r).length > 0);
    return named.length === 0 ? 'public (no API key)' : `${listed(named.map((r) => Object.keys(r as Node).map(code).join(' and ')))} or none`;
  }
  return requirements.map((r) => (isNode(r) ? Object.keys(r).map(code).join(' and ') : '?')).join(' or ');
}

function effectiveSecurity(op: Node | undefined, document: unknown): unknown {
  return op && 'security' in op ? op.security : at(document, ['security']);
}

/** `sunset 2030-12-05, use GET /pets…`: what a deprecated operation's markers say, or nothing. */
function deprecationDetails(op: Node | undefined): string {
  const sunset = day(op?.['x-sunset']);
  const replacement = typeof op?.['x-replacement'] === 'string' ? op['x-replacement'] : undefined;
  return [sunset ? `sunset ${sunset}` : undefined, replacement ? `use ${replacement}` : undefined].filter(Boolean).join(', ');
}

function deprecationText(op: Node | undefined): string {
  const details = deprecationDetails(op);
  return details ? `Deprecated (${details})` : 'Deprecated';
}

/** The parameter a change path names: the whole value for an added or removed one, else by its index in the earlier document. */
function parameterAt(seen: Seen, listPath: Path, index: number, whole: boolean): Node | undefined {
  if (whole) {
    const value: unknown = seen.diff.action === 'remove' ? seen.diff.before : seen.diff.after;
    if (isNode(value)) return value;
  }
  const earlier = at(seen.before, [...listPath, index]);
  return isNode(earlier) ? earlier : (at(seen.after, [...listPath, index]) as Node | undefined);
}

const parameterWhere = (parameter: Node | undefined) => `${String(parameter?.in ?? '')} parameter ${code(String(parameter?.name ?? '?'))}`.trim();

function addedParameter(parameter: Node): Line {
  return { kind: 'added', text: `Added ${parameter.required === true ? 'required' : 'optional'} ${parameterWhere(parameter)}` };
}

/** A change under `parameters` of an operation or a path item; `listPath` is the document path of that list. */
function parameterChange(seen: Seen, listPath: Path): Described {
  const { diff } = seen;
  const rest = diff.path.slice(listPath.length);
  if (rest.length === 0) {
    const list: unknown = diff.action === 'remove' ? diff.before : diff.after;
    if (!Array.isArray(list)) return undefined;
    return list.filter(isNode).map((p) => (diff.action === 'remove' ? { kind: 'removed', text: `Removed ${parameterWhere(p)}` } : addedParameter(p)));
  }
  const [index, key, ...more] = rest;
  const parameter = parameterAt(seen, listPath, Number(index), key === undefined);
  if (!parameter) return undefined;
  const where = parameterWhere(parameter);
  if (key === undefined) {
    if (diff.action === 'add') return addedParameter(parameter);
    if (diff.action === 'remove') return { kind: 'removed', text: `Removed ${where}` };
    return { kind: 'changed', text: `Changed ${where}` };
  }
  const now = findParameter(at(seen.after, listPath), parameter);
  if (key === 'required') return { kind: 'changed', text: now?.required === true ? `Made ${where} required` : `Made ${where} optional` };
  if (key === 'deprecated') return now?.deprecated === true ? { kind: 'deprecated', text: `Deprecated ${where}` } : { kind: 'changed', text: `${capital(where)} is no longer deprecated` };
  if (typeof key === 'string' && WORDING.has(key)) return WORDING_LINE;
  const owner: SchemaOwner = { kind: 'parameter', where };
  if (key === 'schema') return schemaChange(seen, [...listPath, index!, 'schema'], owner);
  if (key === 'content' && more.length >= 2 && more[1] === 'schema') return schemaChange(seen, [...listPath, index!, 'content', more[0]!, 'schema'], owner);
  if (key === 'content' && more.length >= 2 && typeof more[1] === 'string' && WORDING.has(more[1])) return WORDING_LINE;
  if (more.length === 0) return keywordLine(diff.action, String(key), where, diff.before, diff.after);
  return keywordLine('replace', String(key), where, at(seen.before, [...listPath, index!, key]), at(seen.after, [...listPath, index!, key]));
}

function findParameter(list: unknown, like: Node): Node | undefined {
  return Array.isArray(list) ? list.find((p): p is Node => isNode(p) && p.name === like.name && p.in === like.in) : undefined;
}

function requestBodyChange(seen: Seen, bodyPath: Path): Described {
  const { diff } = seen;
  const [key, type, inner] = diff.path.slice(bodyPath.length);
  if (key === undefined) {
    if (diff.action === 'add') return { kind: 'added', text: `Added ${at(diff.after, ['required']) === true ? 'a required' : 'an optional'} request body` };
    if (diff.action === 'remove') return { kind: 'removed', text: 'Removed the request body' };
    return { kind: 'changed', text: 'Changed the request body' };
  }
  if (key === 'required') return { kind: 'changed', text: at(seen.after, [...bodyPath, 'required']) === true ? 'Made the request body required' : 'Made the request body optional' };
  if (typeof key === 'string' && WORDING.has(key)) return WORDING_LINE;
  if (key === 'content' && type !== undefined && inner === undefined) {
    if (diff.action === 'add') return { kind: 'added', text: `Added media type ${code(type)} to the request body` };
    if (diff.action === 'remove') return { kind: 'removed', text: `Removed media type ${code(type)} from the request body` };
  }
  if (key === 'content' && type !== undefined && inner === 'schema') return schemaChange(seen, [...bodyPath, 'content', type, 'schema'], { kind: 'request' });
  if (key === 'content' && typeof inner === 'string' && WORDING.has(inner)) return WORDING_LINE;
  return keywordLine(diff.action, diff.path.slice(bodyPath.length).join('.'), 'the request body', diff.before, diff.after);
}

/** Lines seen inside the response `status`, to be merged with the same line of other statuses. */
function inResponse(described: Described, status: string): Described {
  const place = (line: Line): Line => ({ ...line, status });
  if (described === undefined || described === WORDING_LINE) return described;
  return Array.isArray(described) ? described.map(place) : place(described);
}

function responseChange(seen: Seen, responsesPath: Path): Described {
  const { diff } = seen;
  const [status, key, name, inner] = diff.path.slice(responsesPath.length).map(String);
  if (status === undefined) return keywordLine(diff.action, 'responses', 'the operation', undefined, undefined);
  if (key === undefined) {
    if (diff.action === 'add') return { kind: 'added', text: `Added response ${code(status)}` };
    if (diff.action === 'remove') return { kind: 'removed', text: `Removed response ${code(status)}` };
    return { kind: 'changed', text: `Changed response ${code(status)}` };
  }
  if (WORDING.has(key)) return WORDING_LINE;
  const responsePath = [...responsesPath, status];
  if (key === 'headers') {
    if (name === undefined) {
      const headers: unknown = diff.action === 'remove' ? diff.before : diff.after;
      if (!isNode(headers)) return undefined;
      return inResponse(
        Object.keys(headers).map((h): Line => (diff.action === 'remove' ? { kind: 'removed', text: `Removed header ${code(h)}`, preposition: 'from' } : { kind: 'added', text: `Added header ${code(h)}`, preposition: 'to' })),
        status,
      );
    }
    if (inner === undefined) {
      if (diff.action === 'add') return inResponse({ kind: 'added', text: `Added header ${code(name)}`, preposition: 'to' }, status);
      if (diff.action === 'remove') return inResponse({ kind: 'removed', text: `Removed header ${code(name)}`, preposition: 'from' }, status);
    }
    if (inner === 'required') {
      const required = at(seen.after, [...responsePath, 'headers', name, 'required']) === true;
      return inResponse({ kind: 'changed', text: required ? `Made header ${code(name)} always present` : `Made header ${code(name)} optional (it may be absent)` }, status);
    }
    if (inner === 'deprecated') return inResponse({ kind: 'deprecated', text: `Deprecated header ${code(name)}` }, status);
    if (inner !== undefined && WORDING.has(inner)) return WORDING_LINE;
    if (inner === 'schema') return inResponse(schemaChange(seen, [...responsePath, 'headers', name, 'schema'], { kind: 'header', name }), status);
    return inResponse(keywordLine(diff.action, diff.path.slice(responsePath.length + 2).join('.'), `header ${code(name)}`, diff.before, diff.after), status);
  }
  if (key === 'content') {
    if (name === undefined) {
      if (diff.action === 'add') return inResponse({ kind: 'added', text: 'Added a body', preposition: 'to' }, status);
      if (diff.action === 'remove') return inResponse({ kind: 'removed', text: 'Removed the body', preposition: 'from' }, status);
    } else if (inner === undefined) {
      if (diff.action === 'add') return inResponse({ kind: 'added', text: `Added media type ${code(name)}`, preposition: 'to' }, status);
      if (diff.action === 'remove') return inResponse({ kind: 'removed', text: `Removed media type ${code(name)}`, preposition: 'from' }, status);
    } else if (inner === 'schema') {
      return inResponse(schemaChange(seen, [...responsePath, 'content', name, 'schema'], { kind: 'response' }), status);
    } else if (WORDING.has(inner)) {
      return WORDING_LINE;
    }
  }
  return inResponse(keywordLine(diff.action, diff.path.slice(responsePath.length).join('.'), 'the response', diff.before, diff.after), status);
}

function inArea(described: Described, area: number): Described {
  if (described === undefined || described === WORDING_LINE) return described;
  return Array.isArray(described) ? described.map((line) => ({ ...line, area })) : { ...described, area };
}

/** A change inside one operation (its path is `paths.<template>.<method>...`). */
function operationChange(seen: Seen, op: Operation): Described {
  const { diff } = seen;
  const opPath = diff.path.slice(0, 3);
  const [key] = diff.path.slice(3);
  if (key === undefined) {
    if (diff.action === 'add') {
      const summary = typeof op.after?.summary === 'string' ? `: ${op.after.summary}` : '';
      const details = deprecationDetails(op.after);
      const deprecated = op.after?.deprecated === true ? ` (deprecated${details ? `: ${details}` : ''})` : '';
      return { kind: 'added', text: `Added operation${summary}${deprecated}` };
    }
    if (diff.action === 'remove') {
      const sunset = day(op.before?.['x-sunset']);
      return { kind: 'removed', text: `Removed operation${sunset ? ` (sunset ${sunset})` : ''}` };
    }
    return { kind: 'changed', text: 'Changed operation' };
  }
  if (typeof key !== 'string') return undefined;
  if (WORDING.has(key)) return WORDING_LINE;
  if (key === 'operationId') return { kind: 'changed', text: `Changed operationId from ${shown(diff.before) ?? '(none)'} to ${shown(diff.after) ?? '(none)'}` };
  if (key === 'deprecated') return op.after?.deprecated === true ? { kind: 'deprecated', text: deprecationText(op.after) } : { kind: 'changed', text: 'No longer deprecated' };
  if (key === 'x-sunset' || key === 'x-replacement' || key === 'x-deprecated-at') {
    // Said by the "Deprecated (…)" line when the operation became deprecated in the same change.
    if (op.before?.deprecated !== true && op.after?.deprecated === true) return undefined;
    const what = { 'x-sunset': 'the sunset', 'x-replacement': 'the replacement', 'x-deprecated-at': 'the deprecation date' }[key];
    const [was, is] = key === 'x-replacement' ? [shown(diff.before), shown(diff.after)] : [day(diff.before), day(diff.after)];
    if (diff.action === 'add') return { kind: 'changed', text: `Set ${what} to ${is ?? 'a new value'}` };
    if (diff.action === 'remove') return { kind: 'changed', text: `Removed ${what} (was ${was ?? 'set'})` };
    return { kind: 'changed', text: `Changed ${what} from ${was ?? '…'} to ${is ?? '…'}` };
  }
  if (key === 'security') {
    const [was, is] = [securityWords(effectiveSecurity(op.before, seen.before)), securityWords(effectiveSecurity(op.after, seen.after))];
    return was === is ? undefined : { kind: 'changed', text: `Changed who may call it from ${was} to ${is}` };
  }
  if (key === 'parameters') return inArea(parameterChange(seen, [...opPath, 'parameters']), 1);
  if (key === 'requestBody') return inArea(requestBodyChange(seen, [...opPath, 'requestBody']), 2);
  if (key === 'responses') return inArea(responseChange(seen, [...opPath, 'responses']), 3);
  return keywordLine(diff.action, diff.path.slice(3).join('.'), 'the operation', diff.before, diff.after);
}

// ---------------------------------------------------------------------------------------------
// Outside the operations.

function wholeContractChange(seen: Seen): Described {
  const { diff } = seen;
  const [top, second, third] = diff.path.map(String);
  const dotted = diff.path.join('.');
  if (top === 'info') {
    if (second === 'version') return undefined; // the release names its version itself
    if (second === undefined || WORDING.has(second) || second === 'termsOfService') return WORDING_LINE;
    return keywordLine(diff.action, dotted, 'the contract', diff.before, diff.after);
  }
  if (top === 'tags' || top === 'externalDocs') return WORDING_LINE;
  if (top === 'servers') {
    const serverWords = (server: unknown) => (isNode(server) && typeof server.url === 'string' ? `server ${code(server.url)}` : 'a server');
    if (second === undefined) {
      const list: unknown = diff.action === 'remove' ? diff.before : diff.after;
      if (Array.isArray(list)) return list.map((s) => ({ kind: KIND_OF[diff.action], text: `${diff.action === 'remove' ? 'Removed' : 'Added'} ${serverWords(s)}` }));
    } else if (third === undefined) {
      if (diff.action === 'add') return { kind: 'added', text: `Added ${serverWords(diff.after)}` };
      if (diff.action === 'remove') return { kind: 'removed', text: `Removed ${serverWords(diff.before)}` };
    } else if (third === 'url') {
      return { kind: 'changed', text: `Changed server URL from ${shown(diff.before) ?? '…'} to ${shown(diff.after) ?? '…'}` };
    } else if (WORDING.has(third)) {
      return WORDING_LINE;
    }
    const server = at(seen.before, ['servers', Number(second)]) ?? at(seen.after, ['servers', Number(second)]);
    return keywordLine(diff.action, diff.path.slice(2).join('.'), serverWords(server), diff.before, diff.after);
  }
  if (top === 'security') {
    const [was, is] = [securityWords(at(seen.before, ['security'])), securityWords(at(seen.after, ['security']))];
    return was === is ? undefined : { kind: 'changed', text: `Changed the default security (operations without their own) from ${was} to ${is}` };
  }
  if (top === 'components' && second === 'securitySchemes' && third !== undefined) {
    const rest = diff.path.slice(3).map(String);
    const scheme = `security scheme ${code(third)}`;
    if (rest.length === 0) {
      const value: unknown = diff.action === 'remove' ? diff.before : diff.after;
      const how = isNode(value) ? [value.type, value.scheme, value.in, value.name].filter((v) => typeof v === 'string').join(' ') : '';
      if (diff.action === 'add') return { kind: 'added', text: `Added ${scheme}${how ? ` (${how})` : ''}` };
      if (diff.action === 'remove') return { kind: 'removed', text: `Removed ${scheme}` };
    }
    if (rest[0] !== undefined && WORDING.has(rest[0])) return WORDING_LINE;
    return keywordLine(diff.action, rest.join('.'), scheme, diff.before, diff.after);
  }
  if (top === 'openapi') return { kind: 'changed', text: `Changed the OpenAPI version from ${shown(diff.before) ?? '…'} to ${shown(diff.after) ?? '…'}` };
  return keywordLine(diff.action, dotted, 'the contract', diff.before, diff.after);
}

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
    const lists = new Map<string, { names: string[] }>();
    const merged: { line: Line; statuses: string[]; noun?: string; names?: string[] }[] = [];
    for (const entry of entries) {
      const [, noun, name] = /^(?:Added|Removed) (header|response) (`[^`]+`)$/.exec(entry.line.text) ?? [];
      if (noun === undefined || name === undefined) {
        merged.push(entry);
        continue;
      }
      const key = `${entry.line.kind}\0${noun}\0${entry.statuses.join(',')}`;
      const same = lists.get(key);
      if (same) same.names.push(name);
      else {
        const first = { ...entry, noun, names: [name] };
        lists.set(key, first);
        merged.push(first);
      }
    }
    const changes = merged.map(({ line, statuses, noun, names }): Change => {
      const text = names && names.length > 1 ? `${line.kind === 'added' ? 'Added' : 'Removed'} ${noun}s ${listed(names)}` : line.text;
      return {
        kind: line.kind,
        text: statuses.length > 0 ? `${text} ${line.preposition ?? 'in'} ${statuses.length === 1 ? 'response' : 'responses'} ${listed(statuses.map(code))}` : text,
      };
    });
    const unique = [...new Map(changes.map((c) => [`${c.kind}\0${c.text}`, c])).values()];
    if (this.wording.size > 0) unique.push({ kind: 'changed', text: wordingText });
    return unique;
  }
}

/**
 * The document at `file` with every $ref replaced by what it points to: other files too, never
 * URLs. A recursive schema keeps its $ref. (scripts/breaking.ts loads the same way.)
 */
async function load(file: string): Promise<object> {
  return $RefParser.dereference(file, { resolve: { http: false }, dereference: { circular: 'ignore' } });
}

/** Changes from `before` to `after` (file paths, YAML or JSON; $refs resolved), grouped by operation
 *  (subject like "getPet (GET /pets/{petId})"), then one group for what is outside operations
 *  (subject "Whole contract": security schemes, servers, info...). Empty array: no change. */
export async function contractChanges(before: string, after: string): Promise<ChangeGroup[]> {
  const [earlier, later] = await Promise.all([load(before), load(after)]);
  return changesBetween(earlier, later);
}

/** contractChanges on two documents already dereferenced. */
export function changesBetween(before: object, after: object): ChangeGroup[] {
  // Components are judged where they are used; only security schemes matter on their own.
  const diffs = apiCompare(before, after, { rules: breakingChangeRules() }).diffs.filter((d) => d.path[0] !== 'components' || d.path[1] === 'securitySchemes');
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
    if (top !== 'paths' || template === undefined) {
      record(whole, wholeContractChange(seen), top === 'info' ? diff.path.slice(0, 2).join('.') : String(top));
      continue;
    }
    const op = method === undefined ? undefined : operations.get(`${method} ${template}`);
    if (op) {
      record(builder(op.key), operationChange(seen, op), '');
      continue;
    }
    // A whole path item, or what it holds for all its operations (its parameters, its wording).
    const inItem = [...operations.values()].filter((o) => o.template === template);
    for (const each of inItem) {
      const present = diff.action === 'remove' ? each.before : each.after;
      if (method === undefined) {
        // A whole path item added or removed: each operation in it, as if added or removed alone.
        if (diff.action === 'add' || diff.action === 'remove') {
          if (present) record(builder(each.key), operationChange({ ...seen, diff: { ...diff, path: [...diff.path, each.method] } }, each), '');
        } else {
          record(builder(each.key), { kind: 'changed', text: `Changed path from ${shown(diff.before) ?? '…'} to ${shown(diff.after) ?? '…'}` }, '');
        }
      } else if (method === 'parameters') {
        record(builder(each.key), inArea(parameterChange(seen, ['paths', template, 'parameters']), 1), '');
      } else if (WORDING.has(method)) {
        record(builder(each.key), WORDING_LINE, '');
      } else {
        record(builder(each.key), keywordLine(diff.action, diff.path.slice(2).join('.'), `path ${code(template)}`, diff.before, diff.after), '');
      }
    }
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
