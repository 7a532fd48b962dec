/**
 * The response headers an operation declares, per status, as the typed client reads them: under
 * which property name, what kind of value each carries, and whether every such response has it.
 * `npm run generate` writes the result into client/generated/operations.ts; the client holds one parser
 * per kind (client/headerValues.ts), so the vocabulary of kinds below is the contract between the
 * two, and client/generated/operations.ts repeats it as the `HeaderKind` type the client checks against.
 */
import type { OpenApiDocument } from '../../../src/shared/spec.js';
import { isNode, resolveRef, type Node } from '../operations.js';

/** Every kind of header value the client can parse. A header of no known kind is `string`. */
export const HEADER_KINDS = [
  'string',
  'number',
  'flag',
  'etag',
  'link',
  'nextCursor',
  'rateLimit',
  'rateLimitPolicy',
  'httpDate',
  'structuredDate',
  'dateTime',
  'delaySeconds',
] as const;
export type HeaderKind = (typeof HEADER_KINDS)[number];

/** One header of one response, as the client reads it. */
export interface HeaderFact {
  /** The field name as the spec spells it (what `Headers.get` is asked). */
  header: string;
  kind: HeaderKind;
  /** The spec's `required`: every response of this status carries it. */
  required: boolean;
  /** `string`: the spec's `enum`, when it has one (anything else reads as absent). */
  values?: string[];
  /** `link`: the relation types the spec's pattern and examples name. */
  rels?: string[];
  /** `nextCursor`: the link relation and the query parameter whose value is the cursor. */
  rel?: string;
  parameter?: string;
}

/** Property name (client side) to header, for one status (`"200"`, `"4XX"`, `"default"`). */
export type StatusHeaders = Record<string, HeaderFact>;

/**
 * Headers whose registered meaning fixes their kind, whatever their schema says (a Sunset's schema
 * is a string with a pattern; what it carries is an HTTP-date). Keyed by lower-case field name.
 * A property name is given where camelCase of the field name would read badly.
 */
const WELL_KNOWN: Record<string, { kind: HeaderKind; property?: string }> = {
  etag: { kind: 'etag', property: 'etag' }, // RFC 9110 §8.8.3; opaque, so kept as sent
  link: { kind: 'link' }, // RFC 8288
  ratelimit: { kind: 'rateLimit' }, // IETF draft "RateLimit header fields for HTTP"
  'ratelimit-policy': { kind: 'rateLimitPolicy' },
  sunset: { kind: 'httpDate' }, // RFC 8594
  date: { kind: 'httpDate' },
  expires: { kind: 'httpDate' },
  'last-modified': { kind: 'httpDate' },
  deprecation: { kind: 'structuredDate' }, // RFC 9745: `@<unix seconds>`
  'retry-after': { kind: 'delaySeconds' }, // RFC 9110 §10.2.3: seconds or an HTTP-date
  'idempotent-replayed': { kind: 'flag', property: 'replayed' },
  age: { kind: 'number' },
  'content-length': { kind: 'number' },
};

/** The query parameter a `rel="next"` link carries the next page's position in. */
const CURSOR_PARAMETER = 'cursor';

/** Follows local `$ref`s of the bundled document; one that leads nowhere fails rather than leave its headers out. */
function resolver(document: OpenApiDocument): (value: unknown) => Node | undefined {
  return (value) => {
    const target = resolveRef(document, value);
    if (isNode(value) && typeof value.$ref === 'string' && (!isNode(target) || '$ref' in target)) throw new Error(`Cannot resolve ${value.$ref}: only local, acyclic references to an object are supported`);
    return isNode(target) ? target : undefined;
  };
}

/** `RateLimit-Policy` → `rateLimitPolicy`, `WWW-Authenticate` → `wwwAuthenticate`, `X-Request-ID` → `xRequestId`. */
export function camelCase(field: string): string {
  const words = field.split(/[^A-Za-z0-9]+/).filter(Boolean).map((word) => (word === word.toUpperCase() ? word.toLowerCase() : word));
  return words.map((word, i) => (i === 0 ? word[0]!.toLowerCase() : word[0]!.toUpperCase()) + word.slice(1)).join('');
}

/** The relation types named by `rel="…"` in the header's pattern and examples, in order of appearance. */
function relsOf(header: Node, schema: Node | undefined): string[] | undefined {
  const texts: unknown[] = [schema?.pattern, header.example, schema?.example];
  if (isNode(header.examples)) texts.push(...Object.values(header.examples).map((e) => (isNode(e) ? e.value : undefined)));
  if (Array.isArray(schema?.examples)) texts.push(...schema.examples);
  const rels = new Set<string>();
  for (const text of texts) {
    if (typeof text !== 'string') continue;
    for (const match of text.matchAll(/rel="?([A-Za-z][A-Za-z0-9.-]*)/g)) rels.add(match[1]!.toLowerCase());
  }
  return rels.size > 0 ? [...rels] : undefined;
}

/** What a header carries: by its registered name first, then by its schema; `string` otherwise. */
function kindOf(field: string, schema: Node | undefined): HeaderKind {
  const known = WELL_KNOWN[field.toLowerCase()];
  if (known) return known.kind;
  const types = Array.isArray(schema?.type) ? schema.type : [schema?.type];
  if (types.includes('integer') || types.includes('number')) return 'number';
  if (types.includes('boolean')) return 'flag';
  if (schema?.format === 'date-time') return 'dateTime';
  if (schema?.format === 'http-date') return 'httpDate';
  const values = schema?.enum;
  if (Array.isArray(values) && values.length > 0 && values.every((v) => ['true', 'false', '?1', '?0'].includes(String(v)))) return 'flag';
  return 'string';
}

function headerFact(field: string, header: Node, schema: Node | undefined): HeaderFact {
  const fact: HeaderFact = { header: field, kind: kindOf(field, schema), required: header.required === true };
  if (fact.kind === 'string' && Array.isArray(schema?.enum)) fact.values = schema.enum.map(String);
  if (fact.kind === 'link') {
    const rels = relsOf(header, schema);
    if (rels) fact.rels = rels;
  }
  return fact;
}

/** Per status, the headers the client reads from a response of the operation `method path`. */
export function responseHeadersOf(document: OpenApiDocument, path: string, method: string): Record<string, StatusHeaders> {
  const resolve = resolver(document);
  const item = resolve((document.paths ?? {})[path]);
  const operation = resolve(item?.[method]);
  if (!operation) throw new Error(`${method.toUpperCase()} ${path} is not in the spec`);
  const parameters = [...(Array.isArray(item?.parameters) ? item.parameters : []), ...(Array.isArray(operation.parameters) ? operation.parameters : [])].map((p) => resolve(p));
  const hasCursor = parameters.some((p) => p?.in === 'query' && p.name === CURSOR_PARAMETER);

  const result: Record<string, StatusHeaders> = {};
  for (const [status, ref] of Object.entries(resolve(operation.responses) ?? {})) {
    const headers: StatusHeaders = {};
    const add = (property: string, fact: HeaderFact) => {
      if (headers[property]) throw new Error(`${method.toUpperCase()} ${path} ${status}: ${fact.header} and ${headers[property].header} would both be headers.${property}`);
      headers[property] = fact;
    };
    for (const [field, value] of Object.entries(resolve(resolve(ref)?.headers) ?? {})) {
      // OpenAPI 3.1 §4.8.17.1: a response header named Content-Type is ignored.
      if (field.toLowerCase() === 'content-type') continue;
      const header = resolve(value);
      if (!header) continue;
      const fact = headerFact(field, header, resolve(header.schema));
      add(WELL_KNOWN[field.toLowerCase()]?.property ?? camelCase(field), fact);
      if (fact.kind === 'link' && hasCursor && fact.rels?.includes('next')) {
        add('nextCursor', { header: field, kind: 'nextCursor', required: false, rel: 'next', parameter: CURSOR_PARAMETER });
      }
    }
    result[status] = headers;
  }
  return result;
}
