/**
 * `tsx scripts/breaking.ts` (part of `npm run lint`): the breaking-change gate. The contract may
 * grow, never break: this fails with one `BREAKING:` line per break when spec/openapi.yaml would
 * break a client written against the newest released contract in spec/released/.
 *
 *   spec/openapi.yaml            bundled fresh with `redocly bundle`, so an edit is judged before
 *                                `npm run generate` (generated/ staleness is checked separately)
 *   spec/released/<x.y.z>.json   the released contracts, frozen; the newest version is the reference
 *
 * Freezing a release, when a version of the contract is published:
 *
 *   1. set info.version in spec/openapi.yaml, run `npm run generate`, and commit;
 *   2. cp generated/openapi.json spec/released/<info.version>.json   (never edit it afterwards);
 *   3. in spec/CHANGELOG.md, move the Unreleased notes under a heading for that version.
 *
 * From then on the gate compares against the new file. A deliberate break needs a new major
 * version of the API (a /v2 contract); this gate has no switch to let one through.
 *
 * Who decides what. api-smart-diff finds every change between the two documents (with $refs
 * resolved, parameters matched by name and location, paths matched by template) and its
 * classification is kept for operations, parameters, request bodies, responses and security.
 * Run on mutated copies of our spec (test/breaking.test.ts), it misses or misjudges the following,
 * which this script decides itself:
 *
 *   - a changed operationId: the tool calls it an annotation, but generated clients call it by name;
 *   - a removed property, of a request or a response body: the tool calls both non-breaking;
 *   - schema keywords (type, format, enum, bounds, pattern, required, ...): the tool's verdicts for
 *     responses contradict each other (a value added to the enum of Pet.status breaks, one added to
 *     ErrorCode does not; a type change in a response passes), so one rule decides both directions:
 *     in a request, a change that accepts fewer values breaks; in a response, a change that can
 *     send a value an old client never saw breaks (a new enum value, another type, a bound
 *     widened or dropped). int32/int64 count as ranges, so `format: int32` on a parameter bounded
 *     to 1..100 changes nothing;
 *   - a request body added to an operation as required (the tool lets it pass);
 *   - `required` of a response header, which the tool judges as if it were a request.
 *
 * Exit status: 0 no breaking change, 1 breaking changes (listed), 2 usage or tool error.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { apiCompare, type Diff } from 'api-smart-diff';
import { projectRoot } from '../src/paths.js';
import { operationsOf, type OpenApiDocument } from '../src/spec.js';
import { bundleSpec } from './lib/redocly.js';

const HELP = `Usage: tsx scripts/breaking.ts [--spec <file>] [--against <file>] [--verbose]

Fails (exit 1) with one BREAKING line per change of the contract that would break an existing
client: compares the working spec with the newest released contract in spec/released/.

  --spec <file>      the working spec (default: spec/openapi.yaml)
  --against <file>   the contract to stay compatible with (default: the newest
                     spec/released/<x.y.z>.json, by version)
  --verbose          also list the compatible changes
  --help             show this text

A .json file is read as a bundled contract; any other file is bundled with redocly first.

Exit status: 0 compatible, 1 breaking changes, 2 usage or tool error.`;

const root = projectRoot;
const releasedDir = join(root, 'spec', 'released');

type Json = unknown;
type JsonObject = Record<string, Json>;
type Direction = 'request' | 'response';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** Components that are reported where they are used (under paths), with their context. */
const REPORTED_UNDER_PATHS = new Set(['schemas', 'parameters', 'responses', 'requestBodies', 'headers', 'examples', 'links', 'callbacks', 'pathItems']);

/** One change as a reviewer reads it: `GET /pets: query parameter "limit" maximum lowered from 100 to 50`. */
interface Finding {
  /** `GET /pets`, or the document path for changes outside operations. */
  where: string;
  subject: string;
  change: string;
  breaking: boolean;
  /** The response status, for changes inside one response (grouped into one line). */
  status?: string;
}

// ---------------------------------------------------------------------------------------------
// Command line

function fail(message: string, code = 2): never {
  console.error(message);
  process.exit(code);
}

function parseArgs(argv: string[]): { spec: string; against?: string; verbose: boolean } {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(HELP);
    process.exit(0);
  }
  let spec = join(root, 'spec', 'openapi.yaml');
  let against: string | undefined;
  let verbose = false;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--verbose') {
      verbose = true;
      continue;
    }
    const value = argv[i + 1];
    if ((arg === '--spec' || arg === '--against') && value !== undefined && !value.startsWith('--')) {
      if (arg === '--spec') spec = resolve(value);
      else against = resolve(value);
      i += 1;
    } else {
      fail(`Unknown or incomplete argument: ${arg}\n\n${HELP}`);
    }
  }
  return against === undefined ? { spec, verbose } : { spec, against, verbose };
}

const rel = (file: string) => {
  const r = relative(root, file);
  return r.startsWith('..') || isAbsolute(r) ? file : r;
};

// ---------------------------------------------------------------------------------------------
// Loading the two documents

function load(file: string, bundled: boolean): JsonObject {
  if (!existsSync(file)) throw new Error(`${rel(file)} does not exist`);
  return JSON.parse(bundled ? readFileSync(file, 'utf8') : bundleSpec(file)) as JsonObject;
}

const versionOf = (name: string) => /^(\d+)\.(\d+)\.(\d+)\.json$/.exec(name)?.slice(1).map(Number);

/** The newest spec/released/<major>.<minor>.<patch>.json, by version (not by name or date). */
function newestRelease(): string {
  const files = existsSync(releasedDir) ? readdirSync(releasedDir).filter((f) => versionOf(f)) : [];
  const newest = files.sort((a, b) => {
    const [x, y] = [versionOf(a) ?? [], versionOf(b) ?? []];
    return (x[0]! - y[0]!) || (x[1]! - y[1]!) || (x[2]! - y[2]!);
  }).at(-1);
  if (!newest) throw new Error(`No released contract in ${rel(releasedDir)}/ (expected <x.y.z>.json files)`);
  return join(releasedDir, newest);
}

// ---------------------------------------------------------------------------------------------
// Small JSON helpers

const isObject = (value: Json): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
const sameJson = (a: Json, b: Json) => JSON.stringify(a) === JSON.stringify(b);
const show = (value: Json) => (typeof value === 'string' ? `"${value}"` : JSON.stringify(value));

/** Follows local `$ref`s (`#/components/...`) until a node that is not a reference. */
function deref(doc: JsonObject, node: Json): Json {
  for (let hops = 0; isObject(node) && typeof node.$ref === 'string' && node.$ref.startsWith('#/') && hops < 32; hops += 1) {
    const pointer = node.$ref.slice(2).split('/').map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    node = pointer.reduce<Json>((at, key) => (isObject(at) ? at[key] : undefined), doc);
  }
  return node;
}

/** The node at `path`, following $refs on the way (undefined when the path does not exist). */
function nodeAt(doc: JsonObject, path: readonly (string | number)[]): Json {
  let node: Json = doc;
  for (const key of path) {
    node = deref(doc, node);
    if (Array.isArray(node) && typeof key === 'number') node = node[key];
    else if (isObject(node)) node = node[String(key)];
    else return undefined;
  }
  return deref(doc, node);
}

interface Parameter {
  name: string;
  in: string;
}

function parameterAt(doc: JsonObject, path: readonly (string | number)[]): Parameter | undefined {
  const node = nodeAt(doc, path);
  return isObject(node) && typeof node.name === 'string' && typeof node.in === 'string' ? { name: node.name, in: node.in } : undefined;
}

/** The same parameter (by name and location) in the other document, whatever its index there. */
function matchingParameterPath(doc: JsonObject, operationPath: readonly (string | number)[], parameter: Parameter): (string | number)[] | undefined {
  const list = nodeAt(doc, [...operationPath, 'parameters']);
  if (!Array.isArray(list)) return undefined;
  const index = list.findIndex((p) => {
    const resolved = deref(doc, p);
    return isObject(resolved) && resolved.name === parameter.name && resolved.in === parameter.in;
  });
  return index < 0 ? undefined : [...operationPath, 'parameters', index];
}

// ---------------------------------------------------------------------------------------------
// Our rule for schema keywords: does the change narrow (accept fewer values) or widen (allow
// values that were not allowed)? A request breaks when it narrows, a response when it widens.

interface Verdict {
  change: string;
  narrows: boolean;
  widens: boolean;
  /** Set when the verdict is about a property of the schema (`required`): its name. */
  property?: string;
}

const LOWER_BOUNDS = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties', 'minContains']);
const UPPER_BOUNDS = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties', 'maxContains']);
const ANNOTATIONS = new Set(['description', 'title', 'examples', 'example', 'deprecated', '$comment', 'externalDocs', 'xml']);
const INTEGER_FORMATS: Record<string, [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [-(2 ** 63), 2 ** 63 - 1],
};

const PAST: Record<Diff['action'], string> = { add: 'added', remove: 'removed', replace: 'changed', rename: 'renamed' };

const asTypes = (value: Json): string[] => (Array.isArray(value) ? value.map(String) : typeof value === 'string' ? [value] : []);
/** `integer` values are also `number` values. */
const covers = (types: string[], type: string) => types.includes(type) || (type === 'integer' && types.includes('number'));

function boundVerdict(keyword: string, action: Diff['action'], before: Json, after: Json): Verdict {
  const lower = LOWER_BOUNDS.has(keyword);
  if (action === 'add') return { change: `${keyword} ${show(after)} added`, narrows: true, widens: false };
  if (action === 'remove') return { change: `${keyword} ${show(before)} removed`, narrows: false, widens: true };
  if (typeof before !== 'number' || typeof after !== 'number') {
    return { change: `${keyword} changed from ${show(before)} to ${show(after)}`, narrows: true, widens: true };
  }
  const raised = after > before;
  return {
    change: `${keyword} ${raised ? 'raised' : 'lowered'} from ${before} to ${after}`,
    narrows: lower ? raised : !raised,
    widens: lower ? !raised : raised,
  };
}

/** The values an integer schema accepts, as [min, max], taking int32/int64 as bounds. */
function integerRange(schema: Json): [number, number] | undefined {
  if (!isObject(schema) || !asTypes(schema.type).includes('integer')) return undefined;
  if (schema.format !== undefined && !(typeof schema.format === 'string' && schema.format in INTEGER_FORMATS)) return undefined;
  const [formatMin, formatMax] = typeof schema.format === 'string' ? (INTEGER_FORMATS[schema.format] ?? [-Infinity, Infinity]) : [-Infinity, Infinity];
  const min = typeof schema.minimum === 'number' ? schema.minimum : -Infinity;
  const max = typeof schema.maximum === 'number' ? schema.maximum : Infinity;
  return [Math.max(min, formatMin), Math.min(max, formatMax)];
}

function formatVerdict(action: Diff['action'], before: Json, after: Json, schemas: { before: Json; after: Json }): Verdict {
  const change =
    action === 'add' ? `format ${show(after)} added` : action === 'remove' ? `format ${show(before)} removed` : `format changed from ${show(before)} to ${show(after)}`;
  const [was, is] = [integerRange(schemas.before), integerRange(schemas.after)];
  if (was && is) return { change, narrows: is[0] > was[0] || is[1] < was[1], widens: is[0] < was[0] || is[1] > was[1] };
  return { change, narrows: action !== 'remove', widens: action !== 'add' };
}

function typeVerdict(before: Json, after: Json, schemas: { before: Json; after: Json }): Verdict {
  // A diff inside a type array (`type: [string, 'null']`) compares the whole arrays.
  const was = asTypes(isObject(schemas.before) ? schemas.before.type : before);
  const is = asTypes(isObject(schemas.after) ? schemas.after.type : after);
  const text = (types: string[]) => (types.length ? types.join(' | ') : 'any');
  return {
    change: `type changed from ${text(was)} to ${text(is)}`,
    narrows: was.length === 0 ? is.length > 0 : is.length > 0 && was.some((t) => !covers(is, t)),
    widens: is.length === 0 ? was.length > 0 : was.length > 0 && is.some((t) => !covers(was, t)),
  };
}

/** Values of an enum (or `const`, or `required`) added and removed, one verdict each. */
function setVerdicts(keyword: string, { action, before, after, index }: KeywordChange): Verdict[] {
  const list = (value: Json) => (Array.isArray(value) ? value : value === undefined ? [] : [value]);
  // `enum.2` added/removed is one value; `enum` added/removed/replaced is the whole list.
  const [was, is] = index === undefined ? [list(before), list(after)] : [action === 'add' ? [] : [before], action === 'remove' ? [] : [after]];
  const gone = was.filter((v) => !is.some((w) => sameJson(w, v)));
  const come = is.filter((v) => !was.some((w) => sameJson(w, v)));
  if (keyword === 'required') {
    return [
      ...come.map((v) => ({ change: 'is now required', narrows: true, widens: false, property: String(v) })),
      ...gone.map((v) => ({ change: 'is no longer required', narrows: false, widens: true, property: String(v) })),
    ];
  }
  // A whole enum (or const) that appears restricts every other value; one that goes allows them.
  if (index === undefined && action === 'add') return [{ change: `${keyword} ${show(after)} added`, narrows: true, widens: false }];
  if (index === undefined && action === 'remove') return [{ change: `${keyword} ${show(before)} removed`, narrows: false, widens: true }];
  const name = keyword === 'enum' ? 'enum value' : keyword;
  return [
    ...gone.map((v) => ({ change: `${name} ${show(v)} removed`, narrows: true, widens: false })),
    ...come.map((v) => ({ change: `${name} ${show(v)} added`, narrows: false, widens: true })),
  ];
}

/** A keyword's value before and after; `index` when only one item of its array changed. */
interface KeywordChange {
  action: Diff['action'];
  before: Json;
  after: Json;
  index?: string | number;
}

/** Our verdicts for one change of a schema keyword, or undefined for keywords we leave to the tool. */
function keywordVerdicts(keyword: string, kc: KeywordChange, schemas: { before: Json; after: Json }): Verdict[] | undefined {
  const { action, before, after } = kc;
  if (ANNOTATIONS.has(keyword)) return [];
  if (LOWER_BOUNDS.has(keyword) || UPPER_BOUNDS.has(keyword)) return [boundVerdict(keyword, action, before, after)];
  switch (keyword) {
    case 'type':
      return [typeVerdict(before, after, schemas)];
    case 'format':
      return [formatVerdict(action, before, after, schemas)];
    case 'enum':
    case 'const':
    case 'required':
      return setVerdicts(keyword, kc);
    case 'pattern':
      if (action === 'add') return [{ change: `pattern '${String(after)}' added`, narrows: true, widens: false }];
      if (action === 'remove') return [{ change: `pattern '${String(before)}' removed`, narrows: false, widens: true }];
      return [{ change: `pattern changed from '${String(before)}' to '${String(after)}'`, narrows: true, widens: true }];
    case 'multipleOf': {
      const [b, a] = [Number(before), Number(after)];
      if (action === 'add') return [{ change: `multipleOf ${a} added`, narrows: true, widens: false }];
      if (action === 'remove') return [{ change: `multipleOf ${b} removed`, narrows: false, widens: true }];
      // Multiples of 10 are all multiples of 5: 5 -> 10 narrows, 10 -> 5 widens, 4 -> 6 does both.
      return [{ change: `multipleOf changed from ${b} to ${a}`, narrows: b % a !== 0, widens: a % b !== 0 }];
    }
    case 'uniqueItems':
      return [{ change: `uniqueItems ${after === true ? 'required' : 'no longer required'}`, narrows: after === true, widens: after !== true }];
    case 'additionalProperties':
      // Extra properties in a response are additive, like any new property: only requests can break.
      if (typeof before === 'object' || typeof after === 'object') return undefined;
      return [{ change: after === false ? 'no longer accepts other properties' : 'accepts other properties', narrows: after === false, widens: false }];
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// From the tool's diffs to findings

/** Where a schema diff is: the property path (`details[].in`), and the keyword and what follows it. */
function splitSchemaPath(path: readonly (string | number)[]): { field: string[]; keyword?: string; rest: (string | number)[] } {
  const field: string[] = [];
  let i = 0;
  while (i < path.length) {
    const key = path[i];
    if (key === 'properties' && i + 1 < path.length) {
      field.push(String(path[i + 1]));
      i += 2;
    } else if (key === 'items' && i + 1 < path.length) {
      field.push('[]');
      i += 1;
    } else if ((key === 'allOf' || key === 'anyOf' || key === 'oneOf') && typeof path[i + 1] === 'number' && i + 2 < path.length) {
      i += 2;
    } else {
      break;
    }
  }
  const keyword = path[i];
  return { field, rest: path.slice(i + 1), ...(keyword === undefined ? {} : { keyword: String(keyword) }) };
}

const fieldName = (field: string[]) => field.reduce((name, part) => (part === '[]' ? `${name}[]` : name ? `${name}.${part}` : part), '');

interface SchemaContext {
  where: string;
  /** `request body`, `query parameter "limit"`, `response body`, `response header "Link"`. */
  subject: string;
  direction: Direction;
  /** The path of the schema in each document. */
  schemaPath: { before: (string | number)[]; after: (string | number)[] | undefined };
  status?: string;
}

function schemaFindings(context: SchemaContext, inner: (string | number)[], diff: Diff, docs: { before: JsonObject; after: JsonObject }): Finding[] {
  const { field, keyword, rest } = splitSchemaPath(inner);
  const subjectOf = (f: string[]) => (f.length ? `${context.subject} property "${fieldName(f)}"` : context.subject);
  const base = { where: context.where, ...(context.status === undefined ? {} : { status: context.status }) };
  const toolSays = diff.type === 'breaking';

  if (keyword === undefined) {
    // A property (or items) added or removed as a whole. Removing one breaks, in either direction:
    // a request that sends it is refused (additionalProperties: false), a response reader misses it.
    if (diff.action === 'remove' && field.length) return [{ ...base, subject: subjectOf(field), change: 'removed', breaking: true }];
    if (diff.action === 'add' && field.length) return [{ ...base, subject: subjectOf(field), change: 'added', breaking: false }];
    return [{ ...base, subject: subjectOf(field), change: diff.action === 'replace' ? 'replaced' : diff.action, breaking: toolSays }];
  }
  // The schema that holds the keyword, in each document, for verdicts that need its siblings.
  const owner = inner.slice(0, inner.length - rest.length - 1);
  const schemas = {
    before: nodeAt(docs.before, [...context.schemaPath.before, ...owner]),
    after: context.schemaPath.after ? nodeAt(docs.after, [...context.schemaPath.after, ...owner]) : undefined,
  };
  // Judge the keyword on the two schemas themselves when both resolve: the tool compares a $ref
  // with an inline schema as if the $ref were empty (an enum narrowed that way looks "added").
  let kc: KeywordChange = { action: diff.action, before: diff.before, after: diff.after, ...(rest[0] === undefined ? {} : { index: rest[0] }) };
  if (isObject(schemas.before) && isObject(schemas.after)) {
    const [was, is] = [schemas.before[keyword], schemas.after[keyword]];
    if (sameJson(was, is)) return [];
    kc = { action: was === undefined ? 'add' : is === undefined ? 'remove' : 'replace', before: was, after: is };
  }
  const verdicts = keywordVerdicts(keyword, kc, schemas);
  if (!verdicts) {
    return [{ ...base, subject: subjectOf(field), change: `${keyword} ${PAST[diff.action]}`, breaking: toolSays }];
  }
  return verdicts.map((v) => ({
    ...base,
    subject: subjectOf(v.property === undefined ? field : [...field, v.property]),
    change: v.change,
    breaking: context.direction === 'request' ? v.narrows : v.widens,
  }));
}

const parameterSubject = (p: Parameter) => `${p.in} parameter "${p.name}"`;

/** A media type of a request body or a response, added or removed as a whole (the tool decides). */
function mediaTypeFindings(where: string, owner: string, diff: Diff, media: string): Finding[] {
  return [{ where, subject: `${owner} media type "${media}"`, change: PAST[diff.action], breaking: diff.type === 'breaking' }];
}

/** Response headers added or removed (one, or the whole `headers` map): a reader may rely on any of them. */
function headerFindings(where: string, status: string, diff: Diff, header: string | number | undefined): Finding[] {
  const value = diff.action === 'add' ? diff.after : diff.before;
  const names = header === undefined ? (isObject(value) ? Object.keys(value) : []) : [String(header)];
  if (diff.action !== 'add' && diff.action !== 'remove') return [];
  return names.map((name) => ({ where, status, subject: `response header "${name}"`, change: PAST[diff.action], breaking: diff.action === 'remove' }));
}

/** Changes of one operation (`paths./pets.get.…`). */
function operationFindings(diff: Diff, docs: { before: JsonObject; after: JsonObject }): Finding[] {
  const [, path, method, ...rest] = diff.path.map((k) => (typeof k === 'number' ? k : String(k)));
  const where = `${String(method).toUpperCase()} ${String(path)}`;
  const operationPath = ['paths', String(path), String(method)];
  const toolSays = diff.type === 'breaking';
  const generic = (subject: string, breaking = toolSays): Finding[] => [
    { where, subject, change: diff.description?.replace(/^\[(\w+)\]\s*/, '').trim() || `${diff.action} ${rest.join('.')}`, breaking },
  ];
  const [area, key, ...inner] = rest;

  if (area === undefined) {
    const op = diff.action === 'remove' ? diff.before : diff.after;
    const id = isObject(op) && typeof op.operationId === 'string' ? ` "${op.operationId}"` : '';
    if (diff.action === 'remove') return [{ where, subject: `operation${id}`, change: 'removed', breaking: true }];
    if (diff.action === 'add') return [{ where, subject: `operation${id}`, change: 'added', breaking: false }];
    return generic('operation');
  }
  if (area === 'operationId') return []; // decided by operationIdFindings, on the documents themselves

  if (area === 'parameters' && typeof key === 'number') {
    if (inner.length === 0) {
      const added = diff.action === 'add';
      const param = deref(added ? docs.after : docs.before, added ? diff.after : diff.before);
      const p = isObject(param) && typeof param.name === 'string' && typeof param.in === 'string' ? { name: param.name, in: param.in } : undefined;
      const subject = p ? parameterSubject(p) : `parameter #${key}`;
      if (diff.action === 'remove') return [{ where, subject, change: 'removed', breaking: true }];
      if (added) {
        const required = isObject(param) && param.required === true;
        return [{ where, subject, change: required ? 'added as required' : 'added', breaking: required }];
      }
      return generic(subject);
    }
    const p = parameterAt(docs.before, [...operationPath, 'parameters', key]);
    const subject = p ? parameterSubject(p) : `parameter #${key}`;
    const [what, ...schemaInner] = inner;
    if (what === 'required') {
      const now = diff.action !== 'remove' && diff.after === true;
      return [{ where, subject, change: now ? 'is now required' : 'is no longer required', breaking: now }];
    }
    if (what === 'schema') {
      const matched = p ? matchingParameterPath(docs.after, operationPath, p) : undefined;
      const schemaPath = { before: [...operationPath, 'parameters', key, 'schema'], after: matched ? [...matched, 'schema'] : undefined };
      return schemaFindings({ where, subject, direction: 'request', schemaPath }, schemaInner, diff, docs);
    }
    return generic(subject);
  }

  if (area === 'requestBody') {
    if (key === undefined) {
      // A new body that must be sent breaks every existing call; the tool lets it pass.
      const required = diff.action === 'add' && isObject(diff.after) && diff.after.required === true;
      if (diff.action === 'add') return [{ where, subject: 'request body', change: required ? 'added as required' : 'added', breaking: required }];
      return generic('request body');
    }
    if (key === 'required') {
      const now = diff.action !== 'remove' && diff.after === true;
      return [{ where, subject: 'request body', change: now ? 'is now required' : 'is no longer required', breaking: now }];
    }
    if (key === 'content' && inner.length === 1) return mediaTypeFindings(where, 'request body', diff, String(inner[0]));
    if (key === 'content' && inner.length > 1 && inner[1] === 'schema') {
      const media = String(inner[0]);
      const schemaPath = [...operationPath, 'requestBody', 'content', media, 'schema'];
      return schemaFindings({ where, subject: 'request body', direction: 'request', schemaPath: { before: schemaPath, after: schemaPath } }, inner.slice(2), diff, docs);
    }
    return generic('request body');
  }

  if (area === 'responses' && key !== undefined) {
    const status = String(key);
    if (inner.length === 0) {
      if (diff.action === 'remove') return [{ where, subject: `response ${status}`, change: 'removed', breaking: true }];
      if (diff.action === 'add') return [{ where, subject: `response ${status}`, change: 'added', breaking: false }];
      return generic(`response ${status}`);
    }
    const responsePath = [...operationPath, 'responses', status];
    if (inner[0] === 'content' && inner.length === 2) return mediaTypeFindings(where, 'response', diff, String(inner[1])).map((f) => ({ ...f, status }));
    if (inner[0] === 'headers' && inner.length <= 2) return headerFindings(where, status, diff, inner[1]);
    if (inner[0] === 'content' && inner.length > 2 && inner[2] === 'schema') {
      const schemaPath = [...responsePath, 'content', String(inner[1]), 'schema'];
      return schemaFindings({ where, subject: 'response body', direction: 'response', status, schemaPath: { before: schemaPath, after: schemaPath } }, inner.slice(3), diff, docs);
    }
    if (inner[0] === 'headers' && inner.length > 1) {
      const header = String(inner[1]);
      const subject = `response header "${header}"`;
      const headerPath = [...responsePath, 'headers', header];
      if (inner[2] === 'required' && inner.length === 3) {
        // A response header that may now be absent breaks readers; one that is now always sent does not.
        const now = diff.action !== 'remove' && diff.after === true;
        return [{ where, status, subject, change: now ? 'is now always sent' : 'is no longer always sent', breaking: !now }];
      }
      if (inner[2] === 'schema') {
        const schemaPath = [...headerPath, 'schema'];
        return schemaFindings({ where, subject, direction: 'response', status, schemaPath: { before: schemaPath, after: schemaPath } }, inner.slice(3), diff, docs);
      }
      return generic(subject).map((f) => ({ ...f, status }));
    }
    return generic(`response ${status}`).map((f) => ({ ...f, status }));
  }
  return generic(rest.join('.'));
}

const DOCUMENTATION = new Set(['description', 'summary', 'title', 'example', 'examples', 'externalDocs', '$comment', 'tags']);
/** Keys whose children are names chosen by the author (a property or header may be called `title`). */
const NAMED_CHILDREN = new Set(['paths', 'properties', 'patternProperties', '$defs', 'headers', 'content', 'responses', 'encoding', 'schemas', 'parameters', 'requestBodies', 'securitySchemes', 'links', 'callbacks']);

/** Text for readers only (descriptions, examples, x- extensions): never a break, not worth a line. */
function isDocumentation(path: readonly (string | number)[]): boolean {
  return path.some((key, i) => {
    if (typeof key !== 'string') return false;
    const parent = path[i - 1];
    return !(typeof parent === 'string' && NAMED_CHILDREN.has(parent)) && (DOCUMENTATION.has(key) || key.startsWith('x-'));
  });
}

function findingsOf(diff: Diff, docs: { before: JsonObject; after: JsonObject }): Finding[] {
  if (isDocumentation(diff.path)) return [];
  const [top, second, third] = diff.path;
  if (top === 'paths' && typeof third === 'string' && METHODS.includes(third)) return operationFindings(diff, docs);
  if (top === 'paths' && third === undefined && diff.action === 'remove' && isObject(diff.before)) {
    // A whole path item went away: each of its operations did.
    return Object.keys(diff.before)
      .filter((m) => METHODS.includes(m))
      .flatMap((m) => operationFindings({ ...diff, path: ['paths', String(second), m], before: (diff.before as JsonObject)[m] }, docs));
  }
  if (top === 'components' && typeof second === 'string' && REPORTED_UNDER_PATHS.has(second)) return [];
  // A new scheme breaks no client by itself; an operation that starts to require it is judged
  // with that operation's security (the tool calls every added scheme breaking).
  if (top === 'components' && second === 'securitySchemes' && diff.path.length === 3 && diff.action === 'add') {
    return [{ where: diff.path.join('.'), subject: '', change: 'added', breaking: false }];
  }
  if (diff.type === 'annotation' || diff.type === 'deprecated') return [];
  return [{ where: diff.path.join('.'), subject: '', change: diff.description || diff.action, breaking: diff.type === 'breaking' }];
}

/** Our own check: an operation that keeps its path and method but changes its operationId. */
function operationIdFindings(before: OpenApiDocument, after: OpenApiDocument): Finding[] {
  const now = new Map(operationsOf(after).map((op) => [`${op.method} ${op.path}`, op.operationId]));
  return operationsOf(before).flatMap((op) => {
    const id = now.get(`${op.method} ${op.path}`);
    if (id === undefined || id === op.operationId) return [];
    return [{ where: `${op.method.toUpperCase()} ${op.path}`, subject: 'operationId', change: `changed from "${op.operationId}" to "${id}"`, breaking: true }];
  });
}

/** A removed operation whose operationId lives on elsewhere was moved: say where to. */
function explainMoves(findings: Finding[], after: OpenApiDocument): Finding[] {
  const where = new Map(operationsOf(after).map((op) => [op.operationId, `${op.method.toUpperCase()} ${op.path}`]));
  return findings.map((f) => {
    const id = /^operation "(.+)"$/.exec(f.subject)?.[1];
    const to = id === undefined ? undefined : where.get(id);
    return f.change === 'removed' && to && to !== f.where ? { ...f, change: `removed (it is now ${to})` } : f;
  });
}

/** A parameter removed where one of the same kind was added is perhaps a rename: say so. */
function explainRenames(findings: Finding[]): Finding[] {
  const added = findings.filter((f) => f.change === 'added' || f.change === 'added as required');
  return findings.map((f) => {
    const kind = /^(\w+) parameter "/.exec(f.subject)?.[1];
    if (f.change !== 'removed' || kind === undefined) return f;
    const candidates = added.filter((a) => a.where === f.where && a.subject.startsWith(`${kind} parameter "`));
    return candidates.length === 1 ? { ...f, change: `removed (or renamed: ${candidates[0]!.subject} is new)` } : f;
  });
}

/**
 * Drops lines a reviewer does not need: "no longer required" next to the removal of the same
 * property, and the bounds and format of a value whose type changed.
 */
function dropConsequences(findings: Finding[]): Finding[] {
  const key = (f: Finding, change: string) => `${f.where}\0${f.status ?? ''}\0${f.subject}\0${change}`;
  const removed = new Set(findings.filter((f) => f.change === 'removed').map((f) => key(f, 'removed')));
  const retyped = new Set(findings.filter((f) => f.breaking && f.change.startsWith('type changed')).map((f) => key(f, 'type')));
  return findings.filter(
    (f) =>
      !(f.change === 'is no longer required' && removed.has(key(f, 'removed'))) &&
      !(retyped.has(key(f, 'type')) && !f.change.startsWith('type changed')),
  );
}

/** One line per change; the same change in several responses of one operation is one line. */
function linesOf(findings: Finding[], prefix: string): string[] {
  const lines = new Map<string, string[]>();
  for (const f of findings) {
    const line = `${prefix}${f.where}: ${f.subject ? `${f.subject} ` : ''}${f.change}`;
    const statuses = lines.get(line) ?? [];
    if (f.status !== undefined && !statuses.includes(f.status)) statuses.push(f.status);
    lines.set(line, statuses);
  }
  return [...lines].map(([line, statuses]) =>
    statuses.length === 0 ? line : `${line} (${statuses.length === 1 ? 'response' : 'responses'} ${statuses.join(', ')})`,
  );
}

// ---------------------------------------------------------------------------------------------

const args = parseArgs(process.argv.slice(2));
let before: JsonObject;
let after: JsonObject;
let againstFile: string;
try {
  againstFile = args.against ?? newestRelease();
  before = load(againstFile, againstFile.endsWith('.json'));
  after = load(args.spec, args.spec.endsWith('.json'));
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}

let findings: Finding[];
try {
  const { diffs } = apiCompare(before, after);
  const docs = { before, after };
  findings = [...diffs.flatMap((d) => findingsOf(d, docs)), ...operationIdFindings(before as OpenApiDocument, after as OpenApiDocument)];
  findings = dropConsequences(explainRenames(explainMoves(findings, after as OpenApiDocument)));
} catch (error) {
  fail(`Comparing ${rel(args.spec)} with ${rel(againstFile)} failed: ${error instanceof Error ? error.stack : String(error)}`);
}

const lines = linesOf(findings.filter((f) => f.breaking), 'BREAKING: ');
const compatible = linesOf(findings.filter((f) => !f.breaking), 'compatible: ');
if (args.verbose && compatible.length > 0) console.log(compatible.join('\n'));
if (lines.length > 0) {
  console.error(lines.join('\n'));
  console.error(
    `\n${lines.length} breaking change${lines.length === 1 ? '' : 's'} in ${rel(args.spec)} against the released contract ${rel(againstFile)}.` +
      '\nMake the change additive (optional, new, wider), or keep the old form next to the new one.',
  );
  process.exit(1);
}
const others = compatible.length;
console.log(`No breaking change in ${rel(args.spec)} against ${rel(againstFile)}${others ? ` (${others} compatible change${others === 1 ? '' : 's'})` : ''}.`);
