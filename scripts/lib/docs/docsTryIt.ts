/**
 * What the docs' "Try it" panel knows about a contract: for each operation its method, path,
 * parameters (with an example to start from), the credentials it takes (each security scheme a
 * page can send), and its request body's first example. Derived from the bundled contract when the docs are built, so a new
 * operation gets its form without code; the panel itself (./docsTryItPanel.ts) only reads this.
 */
import { isNode, operationsOf, resolveRef, type Node } from '../operations.js';

/** One parameter as the panel's form shows it. */
export interface TryItParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  /** What the field starts with or suggests: the parameter's example, else its schema's default. */
  example?: string;
  /** Allowed values, when the schema is an enum (the field becomes a choice). */
  values?: string[];
  /** An array query parameter sent as one `name=value` per item (form, explode). */
  repeated?: boolean;
  description?: string;
}

/** One field of a form body (`multipart/form-data`, `application/x-www-form-urlencoded`). */
export interface TryItFormField {
  name: string;
  required: boolean;
  /** A file part (a binary string), with the media types its encoding takes (an input's `accept`). */
  file?: { accept: string };
  example?: string;
}

/** One media type the request body may be sent as, and what the panel shows for it. */
export interface TryItBody {
  mediaType: string;
  /** `json`: a text area holding the example; `file`: a file picker, sent as the raw body; `form`: one field per property. */
  kind: 'json' | 'file' | 'form';
  /** `json`: the first example, pretty-printed ('' when none). */
  example?: string;
  /** `form`: its fields. */
  fields?: TryItFormField[];
}

/** A credential the panel can send: one security scheme an operation's requirements name. */
export interface TryItCredential {
  /** The scheme's name in the contract. */
  scheme: string;
  /** `Authorization: Bearer <value>`, `Authorization: Basic` with the value as the user name and no password, or a header of its own. */
  as: 'bearer' | 'basic' | 'header';
  /** `header`: the header's name. */
  header?: string;
  /** An API key of this server, or an access token of the contract's issuer (oauth2, openIdConnect). */
  holds: 'key' | 'token';
  /** What the field asks for: "API key (bearer)", "Access token (oauth2, scopes pets:write)". */
  label: string;
}

export interface TryItOperation {
  operationId: string;
  method: string;
  path: string;
  summary: string;
  deprecated: boolean;
  /** The schemes a call may carry, in the contract's order; none for `security: []`. */
  credentials: TryItCredential[];
  parameters: TryItParameter[];
  /** The request body's first JSON example, pretty-printed; undefined when the operation takes no JSON body. */
  body?: string;
  /** Every media type the request body may be sent as, in the contract's order; undefined when the operation takes no body. */
  bodies?: TryItBody[];
  /** Cookies (parameters, and `apiKey` schemes in a cookie) cannot be set from a page's fetch: named so the panel can say so. */
  cookies: string[];
}

export interface TryItConfig {
  /** The API's base path on a server that serves both docs and API (`/v1`), from the contract's first server. */
  basePath: string;
  /** Whether the page is served by the API's own server, which the panel then offers first. */
  sameOrigin: boolean;
  /** Where `npm run sandbox` listens by default. */
  sandbox: string;
  operations: TryItOperation[];
}

export const SANDBOX_BASE_URL = 'http://localhost:4011/v1';

/** A value as the form's text field holds it. */
function asText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function firstExample(media: Node, document: unknown): unknown {
  if ('example' in media) return media.example;
  const examples = resolveRef(document, media.examples);
  if (!isNode(examples)) return undefined;
  for (const example of Object.values(examples)) {
    const resolved = resolveRef(document, example);
    if (isNode(resolved) && 'value' in resolved) return resolved.value;
  }
  return undefined;
}

function parameterOf(raw: unknown, document: unknown): (TryItParameter & { cookie?: true }) | undefined {
  const parameter = resolveRef(document, raw);
  if (!isNode(parameter) || typeof parameter.name !== 'string' || typeof parameter.in !== 'string') return undefined;
  if (parameter.in === 'cookie') return { name: parameter.name, in: 'header', required: false, cookie: true };
  if (parameter.in !== 'path' && parameter.in !== 'query' && parameter.in !== 'header') return undefined;
  const schema = resolveRef(document, parameter.schema);
  const item = isNode(schema) && schema.type === 'array' ? resolveRef(document, schema.items) : schema;
  const values = isNode(item) && Array.isArray(item.enum) ? item.enum.map((value) => asText(value) ?? '') : undefined;
  const example = asText(parameter.example) ?? (isNode(schema) ? asText(schema.default) : undefined);
  return {
    name: parameter.name,
    in: parameter.in,
    required: parameter.required === true,
    ...(example !== undefined ? { example } : {}),
    ...(values ? { values } : {}),
    ...(isNode(schema) && schema.type === 'array' && parameter.explode !== false ? { repeated: true } : {}),
    // The first paragraph: a hint under the field, not the whole text (Redoc shows that).
    ...(typeof parameter.description === 'string' ? { description: (parameter.description.trim().split(/\n\s*\n/)[0] ?? '').replace(/\s+/g, ' ') } : {}),
  };
}

const isBinary = (schema: unknown): boolean => isNode(schema) && (schema.format === 'binary' || (schema.contentMediaType !== undefined && schema.contentEncoding === undefined));

/** The bodies a request body's content declares, as the panel offers them. */
function bodiesOf(content: Node, document: unknown): TryItBody[] {
  const bodies: TryItBody[] = [];
  for (const [mediaType, raw] of Object.entries(content)) {
    const media = resolveRef(document, raw);
    if (!isNode(media)) continue;
    const type = mediaType.toLowerCase();
    const schema = resolveRef(document, media.schema);
    if (type === 'application/json' || type.endsWith('+json')) {
      const example = firstExample(media, document);
      bodies.push({ mediaType, kind: 'json', example: example === undefined ? '' : JSON.stringify(example, null, 2) });
    } else if (type === 'multipart/form-data' || type === 'application/x-www-form-urlencoded') {
      const properties = isNode(schema) && isNode(schema.properties) ? schema.properties : {};
      const required = isNode(schema) && Array.isArray(schema.required) ? schema.required : [];
      const encoding = isNode(media.encoding) ? media.encoding : {};
      const example = firstExample(media, document);
      const fields = Object.entries(properties).map(([name, rawProperty]): TryItFormField => {
        const property = resolveRef(document, rawProperty);
        const declared = isNode(encoding[name]) ? (encoding[name] as Node).contentType : undefined;
        if (isBinary(property)) return { name, required: required.includes(name), file: { accept: typeof declared === 'string' ? declared.replace(/\s+/g, '') : '' } };
        const value = isNode(example) ? asText(example[name]) : undefined;
        return { name, required: required.includes(name), ...(value !== undefined ? { example: value } : {}) };
      });
      bodies.push({ mediaType, kind: 'form', fields });
    } else if (isBinary(schema)) {
      bodies.push({ mediaType, kind: 'file' });
    }
  }
  return bodies;
}

/**
 * The credentials of a security requirement list: each scheme it names, once (a page sends one
 * credential per call, so schemes a requirement combines are offered one by one); a cookie's name
 * where the scheme is an `apiKey` in a cookie.
 */
function credentialsOf(security: unknown[], document: unknown): { credentials: TryItCredential[]; cookies: string[] } {
  const schemes = isNode(document) && isNode(document.components) && isNode(document.components.securitySchemes) ? document.components.securitySchemes : {};
  const credentials: TryItCredential[] = [];
  const cookies: string[] = [];
  const seen = new Set<string>();
  for (const requirement of security) {
    if (!isNode(requirement)) continue;
    for (const [scheme, scopes] of Object.entries(requirement)) {
      if (seen.has(scheme)) continue;
      seen.add(scheme);
      const declared = resolveRef(document, schemes[scheme]);
      if (!isNode(declared)) continue;
      const held = Array.isArray(scopes) && scopes.length > 0 ? `, scopes ${scopes.join(' ')}` : '';
      const httpScheme = typeof declared.scheme === 'string' ? declared.scheme.toLowerCase() : '';
      const name = typeof declared.name === 'string' ? declared.name : '';
      if (declared.type === 'oauth2' || declared.type === 'openIdConnect') credentials.push({ scheme, as: 'bearer', holds: 'token', label: `Access token (${scheme}${held})` });
      else if (declared.type === 'http' && httpScheme === 'bearer') credentials.push({ scheme, as: 'bearer', holds: 'key', label: `API key (bearer${held})` });
      else if (declared.type === 'http' && httpScheme === 'basic') credentials.push({ scheme, as: 'basic', holds: 'key', label: `API key (basic's user name${held})` });
      else if (declared.type === 'apiKey' && declared.in === 'header' && name !== '') credentials.push({ scheme, as: 'header', header: name, holds: 'key', label: `API key (header ${name}${held})` });
      else if (declared.type === 'apiKey' && declared.in === 'cookie' && name !== '') cookies.push(name);
    }
  }
  return { credentials, cookies };
}

/** The panel's view of every operation of `document` (a bundled OpenAPI 3 document), in the contract's order. */
export function tryItOperations(document: unknown): TryItOperation[] {
  const topSecurity = isNode(document) && Array.isArray(document.security) ? document.security : [];
  const operations: TryItOperation[] = [];
  for (const { path, method, item, operation, operationId } of operationsOf(document)) {
    if (operationId === undefined) continue;
    // An operation's own parameter replaces a path-level one of the same name and place.
    const byKey = new Map<string, TryItParameter & { cookie?: true }>();
    for (const raw of [...(Array.isArray(item.parameters) ? item.parameters : []), ...(Array.isArray(operation.parameters) ? operation.parameters : [])]) {
      const parameter = parameterOf(raw, document);
      if (parameter) byKey.set(`${parameter.cookie ? 'cookie' : parameter.in}:${parameter.name}`, parameter);
    }
    const all = [...byKey.values()];
    const security = Array.isArray(operation.security) ? operation.security : topSecurity;
    const { credentials, cookies } = credentialsOf(security, document);
    const requestBody = resolveRef(document, operation.requestBody);
    const media = isNode(requestBody) && isNode(requestBody.content) ? resolveRef(document, requestBody.content['application/json']) : undefined;
    const example = isNode(media) ? firstExample(media, document) : undefined;
    operations.push({
      operationId,
      method: method.toUpperCase(),
      path,
      summary: typeof operation.summary === 'string' ? operation.summary : operationId,
      deprecated: operation.deprecated === true,
      credentials,
      parameters: all.filter((parameter) => !parameter.cookie),
      ...(isNode(media) ? { body: example === undefined ? '' : JSON.stringify(example, null, 2) } : {}),
      ...(isNode(requestBody) && isNode(requestBody.content) ? { bodies: bodiesOf(requestBody.content, document) } : {}),
      cookies: [...all.filter((parameter) => parameter.cookie).map((parameter) => parameter.name), ...cookies],
    });
  }
  return operations;
}

/** The API's base path from the contract's first server URL (`https://api.example/v1` → `/v1`). */
export function basePathOf(document: unknown): string {
  const servers = isNode(document) && Array.isArray(document.servers) ? document.servers : [];
  const first = servers[0];
  const url = isNode(first) && typeof first.url === 'string' ? first.url : '';
  try {
    return new URL(url, 'http://base.invalid').pathname.replace(/\/$/, '');
  } catch {
    return '';
  }
}
