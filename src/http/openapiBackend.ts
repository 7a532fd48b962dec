/**
 * openapi-backend behind one module: it dereferences the bundled spec, lists its operations and
 * compiles the request validators the API lane calls (and, in test and dev, the response
 * validators), with Ajv 2020-12 instances; and Ajv's errors become the contract's `details`.
 */
import { hash } from 'node:crypto';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { newAjv } from '../shared/ajv.js';
import { validationViews } from './shapes/views.js';
import { OpenAPIBackend, ValidationContext, type Document } from 'openapi-backend';
import type { ErrorBody } from '../shared/schemas.js';
import type { OpenApiDocument } from '../shared/spec.js';
import { isBinary, type DeclaredBody, type Schema } from './bodies/declared.js';
import { useCanonicalNumerals } from './numerals.js';

type Detail = NonNullable<ErrorBody['details']>[number];

/**
 * A fresh Ajv for each validation context openapi-backend asks for. Parameters are text on the
 * wire, so Ajv converts them (a query `limit=5` becomes 5), but only from plain decimal
 * (./numerals.ts); a JSON body is never coerced, so `"categoryId": "3"` stays a 400. Defaults
 * from the spec are applied to parameters and bodies.
 */
function ajvFor(options: Record<string, unknown>, context: ValidationContext): Ajv2020 {
  const isParams = context === ValidationContext.Params;
  const isBody = context === ValidationContext.RequestBody;
  const ajv = newAjv({ ...options, coerceTypes: isParams, useDefaults: isParams || isBody });
  if (isParams) useCanonicalNumerals(ajv);
  return ajv;
}

export function createOpenApiBackend(document: OpenApiDocument, apiRoot: string): OpenAPIBackend {
  // openapi-backend asks for an Ajv per operation and context; one per context serves them all
  // (building one, with its formats, costs milliseconds of start-up each time).
  const instances = new Map<ValidationContext, Ajv2020>();
  return new OpenAPIBackend({
    // openapi-backend deep-copies and dereferences this; a copy keeps our document untouched. It
    // validates requests against the schemas' write views and answers against their read views.
    definition: structuredClone(validationViews(document)) as unknown as Document,
    apiRoot,
    strict: true,
    quick: true, // skips its own definition check, which applies the 3.0 meta-schema (redocly lint is our gate)
    // Validators are compiled (a function, not false); the request path never calls handleRequest,
    // and its validate stage calls them once the body is read (src/pipeline/validate.ts).
    validate: () => false,
    // Keeps the converted parameters for the handlers (patches/ makes that hold for path,
    // header and cookie parameters too, not only the query).
    coerceTypes: true,
    customizeAjv: (_original, ajvOptions, context) => {
      let ajv = instances.get(context);
      if (!ajv) {
        ajv = ajvFor(ajvOptions as Record<string, unknown>, context);
        instances.set(context, ajv);
      }
      return ajv as never;
    },
  });
}

/**
 * A document's router and validators, compiled once per process: every app made from the same
 * document (the same text, the same base path) shares one openapi-backend, which the request path
 * only reads (it never registers handlers; validators it compiles lazily are caches). A server
 * has one app; a test process starts dozens, and compiling the response validators of the whole
 * spec is most of a start's CPU. A few documents are kept, the least recently made dropped.
 */
const compiled = new Map<string, OpenAPIBackend>();
const KEPT_DOCUMENTS = 4;

export function compiledBackend(document: OpenApiDocument, apiRoot: string, responses: boolean): OpenAPIBackend {
  // By content, not identity: a document changed in place after an app was made is another document.
  const key = hash('sha256', `${apiRoot}\u0000${String(responses)}\u0000${JSON.stringify(document)}`, 'base64url');
  const known = compiled.get(key);
  if (known) {
    compiled.delete(key);
    compiled.set(key, known);
    return known;
  }
  const backend = createOpenApiBackend(document, apiRoot);
  backend.init();
  // Request validators compile on each operation's first request (openapi-backend's quick mode):
  // start-up stays short. Response validators are only for test and dev.
  if (responses) {
    backend.validator.preCompileResponseValidators();
    backend.validator.preCompileResponseHeaderValidators();
  }
  compiled.set(key, backend);
  if (compiled.size > KEPT_DOCUMENTS) compiled.delete(compiled.keys().next().value ?? key);
  return backend;
}

/**
 * The schemas a multipart body is checked against, in two parts: its text fields (coerced, as
 * text on the wire is), with its file parts (Uploads by then, whose bytes and media type the
 * reader checked) and its JSON fields left out; and its JSON fields (`encoding.contentType:
 * application/json`), parsed by the reader and never coerced. `required` stays in the first: a
 * file or JSON field must be there.
 */
function splitMultipart(declared: DeclaredBody, schema: Schema): { fields: Schema; json: Schema | undefined } {
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (properties === undefined) return { fields: schema, json: undefined };
  const fields: Record<string, unknown> = {};
  const json: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    const items = property.type === 'array' ? property.items : undefined;
    if (declared.parts.get(name)?.json) {
      fields[name] = {};
      json[name] = property;
    } else fields[name] = isBinary(property) ? {} : isBinary(items) ? { ...property, items: {} } : property;
  }
  return { fields: { ...schema, properties: fields }, json: Object.keys(json).length === 0 ? undefined : { type: 'object', properties: json } };
}

let jsonBodies: Ajv2020 | undefined;
let textFields: Ajv2020 | undefined;

function fieldsAjv(): Ajv2020 {
  const ajv = newAjv({ useDefaults: true, coerceTypes: true });
  useCanonicalNumerals(ajv);
  return ajv;
}

/** Validates `{ requestBody }` in place (coerced, defaulted), as openapi-backend's does, so the errors read the same (detailsOf). */
type BodyCheck = (wrapped: { requestBody: unknown }) => ErrorObject[];
const bodyChecks = new WeakMap<DeclaredBody, BodyCheck | null>();

const wrap = (schema: Schema) => ({ type: 'object', required: ['requestBody'], properties: { requestBody: schema } });
const checkWith = (validate: ValidateFunction): BodyCheck => (wrapped) => (validate(wrapped) ? [] : [...(validate.errors ?? [])]);

/**
 * The check of a body other than `application/json` (openapi-backend validates that one, as it
 * compiles one body schema per operation): a `+json` body as JSON is, never coerced; a form's, an XML
 * or a multipart body's text fields coerced by their schema, as parameters are (they are text on the
 * wire), its JSON fields as JSON. Undefined for a raw body: its bytes were bounded as they were read.
 */
export function bodyCheck(declared: DeclaredBody): BodyCheck | undefined {
  let check = bodyChecks.get(declared);
  if (check === undefined) {
    const { kind, schema } = declared;
    if (kind === 'raw' || schema === undefined) check = null;
    else if (kind === 'json') check = checkWith((jsonBodies ??= newAjv({ useDefaults: true })).compile(wrap(schema)));
    else if (kind === 'form' || kind === 'xml') check = checkWith((textFields ??= fieldsAjv()).compile(wrap(schema)));
    else {
      const parts = splitMultipart(declared, schema);
      const fields = checkWith((textFields ??= fieldsAjv()).compile(wrap(parts.fields)));
      const json = parts.json && checkWith((jsonBodies ??= newAjv({ useDefaults: true })).compile(wrap(parts.json)));
      check = json === undefined ? fields : (wrapped) => [...fields(wrapped), ...json(wrapped)];
    }
    bodyChecks.set(declared, check);
  }
  return check ?? undefined;
}

/** A required body that did not come, whoever finds it missing (the validators, or the body stage for an empty one). */
export const BODY_REQUIRED = 'is required: send a body of a media type the operation declares (Content-Type)';

// The contract's ErrorDetail has no `cookie`: a cookie is a request header, and its field says which.
const LOCATIONS: Record<string, Detail['in']> = { requestBody: 'body', query: 'query', path: 'path', header: 'header', cookie: 'header' };

/** Turns Ajv's errors into the contract's `details`: where, which field, what is wrong. */
export function detailsOf(errors: readonly ErrorObject[]): Detail[] {
  const details: Detail[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const [, where = '', ...rest] = error.instancePath.split('/');
    let location = LOCATIONS[where];
    let segments = rest.map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    let message = error.message ?? 'is invalid';
    const params = error.params as Record<string, unknown>;
    if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
      if (!location) {
        location = LOCATIONS[params.missingProperty] ?? 'body';
        segments = [];
        message = location === 'body' ? BODY_REQUIRED : 'is required';
      } else {
        segments = [...segments, params.missingProperty];
        message = 'is required';
      }
    } else if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
      segments = [...segments, params.additionalProperty];
      message = location === 'body' ? 'is not a field of this request body' : 'is not a parameter of this operation';
    } else if (error.keyword === 'enum' && Array.isArray(params.allowedValues)) {
      message = `must be one of ${params.allowedValues.join(', ')}`;
    }
    if (error.keyword === 'if' || error.keyword === 'anyOf' || error.keyword === 'oneOf') continue;
    const detail: Detail = { in: location ?? 'body', field: segments.join('.'), message };
    const key = `${detail.in}|${detail.field}|${detail.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    details.push(detail);
  }
  return details;
}
