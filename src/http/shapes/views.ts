/**
 * Read and write views of one schema, as OpenAPI 3.1 means `readOnly` and `writeOnly`: a
 * read-only property (an `id`, a `status` the server sets) is the server's to say, and a
 * write-only one (a card's number) the client's to send, never to be answered. One schema serves
 * both directions:
 *
 * - requests see the write view: a `required` read-only property is not required, and a value a
 *   client sends for one (sending back what it read) is dropped before validation and the handler;
 * - answers see the read view: a `required` write-only property is not required, and a value a
 *   handler answers for one is dropped before it is sent (the response check, in tests and dev,
 *   reports it as a broken contract instead).
 *
 * openapi-backend validates against the views (validationViews); the values are stripped by the
 * body stage and the handle stage (stripMarked). A spec without either marker pays nothing.
 */
import { BinaryBody, JsonText } from '../../shared/schemas.js';
import { kindOf } from '../bodies/mediaType.js';
import { declaredResponse, type DeclaredResponses } from './declared.js';
import type { OpenApiDocument } from '../../shared/spec.js';

export type Marker = 'readOnly' | 'writeOnly';
type Node = Record<string, unknown>;

const REF = '#/components/schemas/';
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);
const LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'] as const;
const SINGLES = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains'] as const;
const MAPS = ['properties', 'patternProperties'] as const;

/** The schemas directly under `schema`. */
function children(schema: Node): unknown[] {
  const found: unknown[] = [];
  for (const key of MAPS) if (isNode(schema[key])) found.push(...Object.values(schema[key]));
  for (const key of LISTS) if (Array.isArray(schema[key])) found.push(...schema[key]);
  for (const key of SINGLES) if (isNode(schema[key])) found.push(schema[key]);
  return found;
}

/** The document's schemas twinned for each direction where a marker is used; see validationViews. */
function viewer(document: OpenApiDocument) {
  const schemas = (document.components?.schemas ?? {}) as Record<string, unknown>;
  const twins: Record<string, unknown> = {};
  const memo = new Map<string, boolean>();

  const target = (schema: Node): string | undefined => (typeof schema.$ref === 'string' && schema.$ref.startsWith(REF) ? schema.$ref.slice(REF.length) : undefined);

  /** Whether `schema`, or any schema under it, marks a property with `marker`. */
  function uses(schema: unknown, marker: Marker, seen = new Set<string>()): boolean {
    if (!isNode(schema)) return false;
    const name = target(schema);
    if (name !== undefined) {
      const key = `${marker} ${name}`;
      const known = memo.get(key);
      if (known !== undefined) return known;
      if (seen.has(name)) return false;
      seen.add(name);
      const found = uses(schemas[name], marker, seen);
      memo.set(key, found);
      return found;
    }
    return schema[marker] === true || children(schema).some((child) => uses(child, marker, seen));
  }

  /** Whether a property's schema is marked itself (directly, through its `$ref`, or an `allOf` wrapper). */
  function marked(schema: unknown, marker: Marker, depth = 0): boolean {
    if (!isNode(schema) || depth > 8) return false;
    if (schema[marker] === true) return true;
    const name = target(schema);
    if (name !== undefined) return marked(schemas[name], marker, depth + 1);
    return Array.isArray(schema.allOf) && schema.allOf.some((part) => marked(part, marker, depth + 1));
  }

  /** `schema` as the direction sees it: a property marked with `marker` never required. */
  function view(schema: unknown, marker: Marker): unknown {
    if (!isNode(schema) || !uses(schema, marker)) return schema;
    const name = target(schema);
    if (name !== undefined) {
      const twin = `${name}.${marker === 'readOnly' ? 'write' : 'read'}`;
      if (!(twin in twins)) {
        twins[twin] = {};
        twins[twin] = view(schemas[name], marker);
      }
      return { ...schema, $ref: `${REF}${twin}` };
    }
    const out: Node = { ...schema };
    for (const key of MAPS) if (isNode(schema[key])) out[key] = Object.fromEntries(Object.entries(schema[key]).map(([k, v]) => [k, view(v, marker)]));
    for (const key of LISTS) if (Array.isArray(schema[key])) out[key] = schema[key].map((v: unknown) => view(v, marker));
    for (const key of SINGLES) if (isNode(schema[key])) out[key] = view(schema[key], marker);
    const properties = isNode(schema.properties) ? schema.properties : {};
    if (Array.isArray(schema.required)) out.required = schema.required.filter((property) => !marked(properties[String(property)], marker));
    return out;
  }

  return { view, uses, twins };
}

type Content = Record<string, { schema?: unknown } & Node>;
const withSchemas = (content: unknown, map: (schema: unknown) => unknown): Content | undefined =>
  isNode(content) ? Object.fromEntries(Object.entries(content).map(([type, media]) => [type, isNode(media) && 'schema' in media ? { ...media, schema: map(media.schema) } : media])) as Content : undefined;

/**
 * The document openapi-backend validates with: each request body's schema as its write view, each
 * answer's (and each webhook's body: the server sends it) as its read view, a marked schema twinned under `components.schemas` (`Booking.write`,
 * `Booking.read`) and referenced where that direction uses it. Without a marker, the document itself.
 */
export function validationViews(document: OpenApiDocument): OpenApiDocument {
  const { view, uses, twins } = viewer(document);
  const components = (document.components ?? {}) as Node;
  const resolve = (node: unknown, section: string): unknown => {
    if (!isNode(node) || typeof node.$ref !== 'string' || !node.$ref.startsWith(`#/components/${section}/`)) return node;
    return (components[section] as Node | undefined)?.[node.$ref.slice(`#/components/${section}/`.length)];
  };
  const anyUses = (content: unknown, marker: Marker) => isNode(content) && Object.values(content).some((media) => isNode(media) && uses(media.schema, marker));
  let changed = false;
  const paths: Node = {};
  for (const [path, rawItem] of Object.entries(document.paths ?? {})) {
    const item = { ...(rawItem as Node) };
    for (const [method, rawOperation] of Object.entries(item)) {
      if (!isNode(rawOperation) || !('responses' in rawOperation || 'requestBody' in rawOperation)) continue;
      const operation: Node = { ...rawOperation };
      const body = resolve(operation.requestBody, 'requestBodies');
      if (isNode(body) && anyUses(body.content, 'readOnly')) {
        operation.requestBody = { ...body, content: withSchemas(body.content, (schema) => view(schema, 'readOnly')) };
        changed = true;
      }
      if (isNode(operation.responses)) {
        const responses: Node = {};
        for (const [status, rawResponse] of Object.entries(operation.responses)) {
          const response = resolve(rawResponse, 'responses');
          if (isNode(response) && anyUses(response.content, 'writeOnly')) {
            responses[status] = { ...response, content: withSchemas(response.content, (schema) => view(schema, 'writeOnly')) };
            changed = true;
          } else responses[status] = rawResponse;
        }
        operation.responses = responses;
      }
      item[method] = operation;
    }
    paths[path] = item;
  }
  // A webhook's body is what the server sends: its read view, as an answer's.
  const webhooks: Node = {};
  for (const [name, rawItem] of Object.entries((document as { webhooks?: Record<string, unknown> }).webhooks ?? {})) {
    const item = { ...(rawItem as Node) };
    for (const [method, operation] of Object.entries(item)) {
      if (!isNode(operation)) continue;
      const body = resolve(operation.requestBody, 'requestBodies');
      if (isNode(body) && anyUses(body.content, 'writeOnly')) {
        item[method] = { ...operation, requestBody: { ...body, content: withSchemas(body.content, (schema) => view(schema, 'writeOnly')) } };
        changed = true;
      }
    }
    webhooks[name] = item;
  }
  if (!changed) return document;
  if ('webhooks' in document) (document = { ...document, webhooks } as OpenApiDocument);
  // Written out and read back: the views share unchanged parts with the schemas they come from,
  // and openapi-backend's dereferencing leaves a `$ref` it meets a second time as it is.
  return JSON.parse(JSON.stringify({ ...document, paths, components: { ...components, schemas: { ...(components.schemas as Node), ...twins } } })) as OpenApiDocument;
}

const usesMemo: Record<Marker, WeakMap<object, boolean>> = { readOnly: new WeakMap(), writeOnly: new WeakMap() };

/** Whether a dereferenced schema marks any property with `marker`; cached per schema object, so the common case costs one lookup. */
export function marks(schema: unknown, marker: Marker): boolean {
  if (!isNode(schema)) return false;
  const known = usesMemo[marker].get(schema);
  if (known !== undefined) return known;
  usesMemo[marker].set(schema, false); // a schema that contains itself
  const found = schema[marker] === true || children(schema).some((child) => marks(child, marker));
  usesMemo[marker].set(schema, found);
  return found;
}

/**
 * Removes from `value`, in place, every property its dereferenced `schema` marks with `marker`
 * (in every branch of an allOf, anyOf or oneOf: a property marked in any is removed); returns the
 * JSON pointers of what it removed.
 */
export function stripMarked(schema: unknown, marker: Marker, value: unknown, at = '', removed: string[] = []): string[] {
  if (!isNode(schema) || typeof value !== 'object' || value === null) return removed;
  if (Array.isArray(value)) {
    const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
    value.forEach((item, index) => stripMarked(index < prefix.length ? prefix[index] : schema.items, marker, item, `${at}/${index}`, removed));
  } else if (isNode(schema.properties)) {
    const object = value as Node;
    for (const [name, property] of Object.entries(schema.properties)) {
      if (!Object.hasOwn(object, name)) continue;
      if (isNode(property) && property[marker] === true) {
        delete object[name];
        removed.push(`${at}/${name}`);
      } else stripMarked(property, marker, object[name], `${at}/${name}`, removed);
    }
  }
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) if (Array.isArray(schema[key])) for (const branch of schema[key]) stripMarked(branch, marker, value, at, removed);
  return removed;
}

type Responses = DeclaredResponses<{ content?: Record<string, { schema?: unknown }> }>;

/** The JSON schema an operation declares for an answer of `status`. */
function answerSchema(responses: Responses | undefined, status: number): unknown {
  const content = declaredResponse(responses, status)?.content ?? {};
  const type = Object.keys(content).find((name) => kindOf(name.toLowerCase()) === 'json');
  return type === undefined ? undefined : content[type]?.schema;
}

/** Whether an operation answers anything its spec marks writeOnly: only those pay for answerView. */
export function answersWriteOnly(responses: Responses | undefined): boolean {
  return Object.values(responses ?? {}).some((response) => Object.values(response?.content ?? {}).some((media) => marks(media.schema, 'writeOnly')));
}

/**
 * An answer's body without what its schema marks write-only, and where those were. The
 * handler's own value is never changed (it may be shared): a copy is stripped. Bytes are left as
 * they are; JSON text (the store's pre-serialised rows) is read and written again.
 */
export function answerView(responses: Responses | undefined, status: number, body: unknown): { body: unknown; removed: string[] } {
  const schema = answerSchema(responses, status);
  if (body === undefined || body instanceof BinaryBody || !marks(schema, 'writeOnly')) return { body, removed: [] };
  const value: unknown = body instanceof JsonText ? JSON.parse(body.text) : structuredClone(body);
  const removed = stripMarked(schema, 'writeOnly', value);
  return { body: removed.length === 0 ? body : value, removed };
}
