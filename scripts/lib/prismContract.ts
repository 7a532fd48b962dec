/**
 * The copies of the contract that Prism is given. Prism ignores the path of the server URL and
 * would serve (or proxy) `/pets` where the real server answers `/v1/pets`, so every copy carries
 * the base path in its paths. Kept apart from scripts/mock.ts so the Prism proxy tests can derive
 * the same copy without starting the mock.
 */
import { basePathOf, type OpenApiDocument } from '../../src/shared/spec.js';
import { useExampleFiles } from './mockFiles.js';
import { isNode, operationsOf, resolveRef } from './operations.js';

/**
 * The contract with every path prefixed by the base path of the first server URL (`/v1/pets`,
 * `/v1/pets/{petId}`), and nothing else changed: what `prism proxy` validates traffic against.
 */
export function withBasePathInPaths(document: OpenApiDocument): OpenApiDocument {
  const base = basePathOf(document);
  const copy = structuredClone(document);
  const paths: NonNullable<OpenApiDocument['paths']> = {};
  for (const [path, item] of Object.entries(copy.paths ?? {})) paths[`${base}${path}`] = item;
  return { ...copy, paths };
}

/** What the real server accepts for a numeric parameter (src/http/numerals.ts): plain decimal only. */
const PLAIN_DECIMAL = { integer: '^-?(0|[1-9][0-9]*)$', number: '^-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?$' } as const;

/**
 * Prism's Ajv coerces any text that `Number()` reads (`01`, `+1`, `1.0`, `1e1`, `0x1`), which the
 * real server refuses with a 400. A `pattern` checked before the declared schema, in one `allOf`,
 * sees the text before Ajv coerces it for the second part, so the mock refuses the same values.
 */
function requirePlainDecimal(document: OpenApiDocument): void {
  const parameters: unknown[] = Object.values(document.components?.parameters ?? {});
  for (const item of Object.values(document.paths ?? {})) parameters.push(...(item?.parameters ?? []));
  for (const { operation } of operationsOf(document)) parameters.push(...(Array.isArray(operation.parameters) ? operation.parameters : []));
  for (const param of parameters) {
    if (!isNode(param) || param.$ref !== undefined || !isNode(param.schema)) continue;
    const schema = resolveRef(document, param.schema);
    const type = isNode(schema) ? schema.type : undefined;
    if (type !== 'integer' && type !== 'number') continue;
    param.schema = { allOf: [{ pattern: PLAIN_DECIMAL[type] }, param.schema] };
  }
}

/** A multipart part whose encoding is JSON, as the mock reads it: text, at most the server's limit of one text field. */
const JSON_PART_AS_TEXT = { type: 'string', maxLength: 64 * 1024 } as const;

/**
 * Prism 5 reads a form (and a multipart body) as `name=value` pairs, one value per name: a repeated
 * field keeps its last value, so an array property (`tags=a&tags=b`) is a 400 "must be array"
 * unless its encoding names a style, which makes Prism wrap the value in an array
 * (prism-http's deserializeFormBody; http-spec drops an encoding without a style). And it never
 * parses a multipart part as JSON: a part whose encoding is `application/json` is text, and an
 * object schema refuses it, so every valid upload was a 400. In the mock's copy each array
 * property gets `style: form, explode: true` (what OpenAPI defaults to, and how the server reads
 * it; `allowReserved`, or Prism refuses a raw `!` in a value, which the server takes), and a JSON
 * part's schema becomes text (MOCK_BODY_DIFFERENCES says what is then unchecked).
 */
function readableForms(document: OpenApiDocument): void {
  for (const { operation } of operationsOf(document)) {
    const body = resolveRef(document, operation.requestBody);
    if (!isNode(body) || !isNode(body.content)) continue;
    for (const [mediaType, media] of Object.entries(body.content)) {
      const type = mediaType.toLowerCase();
      if (!isNode(media) || (type !== 'application/x-www-form-urlencoded' && type !== 'multipart/form-data')) continue;
      const schema = resolveRef(document, media.schema);
      if (!isNode(schema) || !isNode(schema.properties)) continue;
      const encoding: Record<string, unknown> = isNode(media.encoding) ? media.encoding : {};
      // A copy of the schema: a shared component may serve elsewhere as JSON, where Prism reads it right.
      const properties: Record<string, unknown> = { ...schema.properties };
      for (const [name, raw] of Object.entries(properties)) {
        const property = resolveRef(document, raw);
        const declared = isNode(encoding[name]) ? encoding[name] : {};
        const contentType = typeof declared.contentType === 'string' ? declared.contentType.toLowerCase() : '';
        const item = isNode(property) && property.type === 'array' ? resolveRef(document, property.items) : property;
        // JSON as the encoding says, or by OpenAPI's default for an object part (the server reads both as JSON).
        const json = contentType === '' ? isNode(item) && (item.type === 'object' || (item.type === undefined && isNode(item.properties))) : contentType.split(',').some((each) => /^application\/(.+\+)?json$/.test(each.trim()));
        if (type === 'multipart/form-data' && json) properties[name] = JSON_PART_AS_TEXT;
        else if (isNode(property) && property.type === 'array' && declared.style === undefined) encoding[name] = { ...declared, style: 'form', explode: true, allowReserved: true };
      }
      media.schema = { ...schema, properties };
      media.encoding = encoding;
    }
  }
}

/**
 * The contract as `prism mock` serves it: base path in the paths, plus eight changes that keep
 * the mock's answers inside the contract and, for numerals, like the real server's.
 *
 * - No paging `Link` header: Prism would send the example `Link` on every page, so a client
 *   following `rel="next"` until it disappears would loop forever; without it the mock has one
 *   page. A deprecated operation's `Link` (rel="deprecation") stays, as on the server.
 * - A `head` beside every `get` (a copy of it): the server answers HEAD wherever GET is.
 * - No `deprecated` flag: for a deprecated operation Prism overwrites the declared `Deprecation`
 *   header with its own `deprecation: true` (prism-http mocker, negotiateDeprecation), which breaks
 *   the declared pattern `^@-?[0-9]{1,15}$`. Without the flag it sends the contract's example
 *   (`@1795219200`), as the real server does.
 * - Numeric parameters in plain decimal only (requirePlainDecimal): `?limit=05`, `/pets/01`,
 *   `+1`, `1.0`, `1e1`, `0x1` are 400s, as on the real server, not read as numbers.
 * - No `Idempotent-Replayed` header: Prism would send its example (`true`) on every 201, marking
 *   each create a replay; without it every create looks like a first one, as it is on the mock.
 * - No `RateLimit`/`RateLimit-Policy` but on the 429: Prism would send their examples on every
 *   answer, as if limits were on; the server, by default, sends none (`Prefer: code=429` still
 *   shows them).
 * - No 422: Prism answers every invalid request with the operation's 422 when it declares one
 *   (prism-http's mocker prefers 422 over 400), so createPet's 422 (an Idempotency-Key reused
 *   with another body, which a mock that stores nothing can never detect) would replace each 400.
 * - A binary example that names its file (`x-example-file`) answers a marker of that file, which
 *   the mock's front replaces with the file's bytes (./mockFiles.ts): Prism would send the
 *   example's text instead of an image.
 * - Forms and multipart bodies Prism can read (readableForms): an array field taken when
 *   repeated, a multipart part whose encoding is JSON taken as text.
 */
export function forMock(document: OpenApiDocument): OpenApiDocument {
  const copy = withBasePathInPaths(document);
  requirePlainDecimal(copy);
  useExampleFiles(copy);
  readableForms(copy);
  const withoutHeaders = (response: unknown, status: string, deprecated: boolean) => {
    const headers = isNode(response) && isNode(response.headers) ? response.headers : undefined;
    if (!headers) return;
    // A deprecated operation's Link is its deprecation link (src/domain/contract.ts reads it so too).
    if (!deprecated) delete headers.Link;
    delete headers['Idempotent-Replayed'];
    if (status !== '429') {
      delete headers.RateLimit;
      delete headers['RateLimit-Policy'];
    }
  };
  for (const item of Object.values(copy.paths ?? {})) {
    // HEAD wherever GET is, as on the server: Prism answers only declared methods, and its HTTP
    // server drops the body of an answer to HEAD.
    if (item?.get !== undefined && item.head === undefined) item.head = { ...structuredClone(item.get), operationId: `${item.get.operationId ?? 'get'}Head` };
  }
  for (const { operation } of operationsOf(copy)) {
    const deprecated = operation.deprecated === true;
    delete operation.deprecated;
    if (!isNode(operation.responses)) continue;
    delete operation.responses['422'];
    // A shared response is edited where it is used, under the status it is used for.
    for (const [status, response] of Object.entries(operation.responses)) withoutHeaders(resolveRef(copy, response), status, deprecated);
  }
  return copy;
}

/**
 * Every way `npm run mock` answers differently from the real server, one line each: what the mock
 * does, then what the server does. The one list both `npm run mock -- --help` prints and the
 * contract suite asserts on the mock target (test/contract/target.ts takes it as the mock's known
 * differences; test/contract/suite.ts observes each exactly), so the two cannot drift. What an
 * example could fix is fixed instead: each operation's first 400 example names its own field and
 * place, and listPets has an example page per status for `Prefer: example=`. None of Prism's
 * options removes any of these (`--dynamic --seed` answers schema-generated pets: it echoes
 * nothing, applies no filter or limit, and keeps Location /v1/pets/3 with a random id).
 */
export const MOCK_DIFFERENCES = {
  'prism-example-page':
    'GET /v1/pets answers its example page (pets 1 and 2) whatever status and limit ask for (?status=sold lists an available and a pending pet, ?limit=1 two pets); "Prefer: example=sold" (or available, pending, empty) picks another example. The server filters and caps.',
  'prism-one-page':
    'GET /v1/pets never sends a Link header, so the mock has one page. The server sends Link rel="next" while more pets follow.',
  'prism-head-no-content-type':
    'HEAD answers the GET\'s status and headers without a body, but with no Content-Type (and a sl-violations header saying so). The server sends the GET\'s Content-Type and Content-Length.',
  'prism-cursor-not-checked':
    'A cursor that fits its pattern (?cursor=abc.def) gets the same page, 200. The server answers 400 to a cursor it did not issue.',
  'prism-unknown-query-parameter':
    'A query parameter the operation does not have (?foo=1) is ignored, 200. The server answers 400 naming it.',
  'prism-empty-query-value': 'An empty query value (?limit=, ?cursor=) counts as absent, 200. The server answers 400.',
  'prism-create-example':
    'POST /v1/pets stores nothing and answers its example pet (id 3, "Biscuit", Location: /v1/pets/3) whatever was sent, and GET /v1/pets/3 then answers pet 1. The server stores the pet and answers what was sent, with a new id.',
  'prism-get-example':
    'GET /v1/pets/{petId} answers its example pet (id 1) for any valid id, never 404 ("Prefer: code=404" gets the 404 example). The server answers the pet with that id, or 404.',
  'prism-400-example':
    'Every 400 carries the first 400 example of its operation, whatever the fault: details name limit (listPets), categoryId (createPet) or petId (getPet); the actual fault is in the sl-violations header. The server names each offending field.',
  'prism-malformed-json-body':
    'A malformed JSON body gets Prism\'s own 400 {"error":{"code":"invalid_json",...}}, not an Error body. The server answers an Error with code invalid_json.',
  'prism-json-media-type':
    'A JSON body labelled with another +json type (application/vnd.api+json) or another charset (charset=iso-8859-1) is taken, 201. The server answers 415.',
  'prism-no-size-limit': 'A body over 64 KiB is read (Prism takes up to 10 MB): 201 when valid, 400 when not. The server answers 413.',
  'prism-lone-surrogate':
    'A JSON body whose string holds a lone surrogate escape ("a\\ud800b") is taken, 201, when it fits the schema otherwise: the spec\'s patterns leave surrogates out. The server answers 400 validation_failed naming the field (strings must be well-formed Unicode).',
  'prism-any-token':
    'Any bearer token is accepted ("Bearer nope", "Bearer a b"). The server answers 401 with error="invalid_token" to a key it did not issue.',
  'prism-bearer-scheme-case': 'The scheme must be spelled "Bearer": "bearer <token>" gets a 401. The server accepts any case.',
  'prism-route-errors':
    'An unknown path (404) or a method the path lacks (405) gets Prism\'s problem+json body, and a 405 no Allow header. The server answers an Error body, and Allow on a 405.',
  'prism-accept-not-json':
    'An Accept header that excludes application/json (Accept: text/html) gets 406 with a problem+json body. The server answers 406 too, with an Error (not_acceptable).',
  'prism-conditional-ignored':
    'If-None-Match is ignored: GET /v1/pets and /v1/pets/{petId} answer 200 with their example and the example ETag, even when If-None-Match is that ETag or *, and the ETag never changes. The server computes the ETag from each answer and answers 304 with no body when If-None-Match matches it.',
  'prism-if-match-ignored':
    'If-Match is not checked, and nothing is changed or removed: PATCH /v1/pets/{petId} answers its example 200 and DELETE its 204 whatever the tag, and GET answers the example animal after either. The server changes or removes the animal only while If-Match names its current ETag, else 412 precondition_failed.',
  'prism-idempotency-ignored':
    'Idempotency-Key is not remembered: every create answers the example 201 without Idempotent-Replayed, whatever the key and body, never a 422 ("Prefer: code=409" gets the 409 example). The server adds the animal once per key and answers a retry with the first 201 and Idempotent-Replayed: true, and the same key with another body with 422.',
} as const;

export type MockDifference = keyof typeof MOCK_DIFFERENCES;

/**
 * How the mock differs from the server on operations that declare bodies beyond JSON (forms,
 * multipart, raw bytes, merge patches) and answers in bytes, after readableForms' changes: what
 * Prism 5.14 (prism-http's body validator and prism-http-server's reader) still does its own
 * way. The contract's own operations take none of these today, so the contract suite cannot
 * observe them: test/loop/spec-loop.test.ts asserts each on the mock of its copy, whose made-up
 * operations have every kind (a check names it `bodyDifference: '<id>'`).
 */
export const MOCK_BODY_DIFFERENCES = {
  'prism-repeated-field':
    'A form or multipart field sent more than once is read as its last value alone: a repeated array field has only its last item checked (tags=NOT-OK&tags=ok is taken), a field that takes one value may repeat (name=A&name=B is taken). The server checks every item, and answers 400 to a repeated single field.',
  'prism-unknown-field': 'A form field the schema does not have (extra=1) is ignored, and the request taken. The server answers 400 naming it.',
  'prism-json-part-unchecked':
    'A multipart part whose encoding is application/json is taken as text, unchecked: a part that is not JSON, or JSON its schema refuses, is taken. The server parses the part as JSON and validates it, 400 naming the field.',
  'prism-part-media-type': "A file part is taken whatever its media type (a GIF where the encoding says image/png). The server answers 415 naming the part and the types its encoding lists.",
  'prism-byte-limit':
    'A raw body or a file part over its maxLength gets a 400, the limit counted in characters of the body read as UTF-8 text (up to 10 MB). The server answers 413 once the bytes cross the limit, before reading further.',
  'prism-multipart-no-boundary': 'A multipart/form-data body without a boundary parameter gets a 415. The server answers 400, the body being malformed.',
  'prism-plain-json-for-json-type':
    'A body labelled application/json is taken where the operation declares only another JSON type (application/merge-patch+json): Prism matches by the +json suffix. The server answers 415 naming the declared type.',
  'prism-binary-answer':
    'An answer in bytes (a binary schema: image/png) is the six characters "string" under the declared Content-Type, which no YAML example can replace. The server sends the bytes the handler answers, with their length.',
  'prism-xml-answer':
    "An answer in XML is the example under a root element named xml, every field an element: the schema's xml objects (name, attribute, namespace, prefix, wrapped) are ignored. The server writes the XML they describe.",
  'prism-xml-body': 'An XML request body is refused with 400, read as text where the schema wants an object. The server reads it into the schema\'s fields and answers as for JSON.',
  'prism-problem-xml':
    'An error is answered in the first media type its response declares (application/problem+json) whatever Accept prefers (application/problem+xml). The server answers the one Accept prefers.',
} as const;

export type MockBodyDifference = keyof typeof MOCK_BODY_DIFFERENCES;

/** The differences as `npm run mock -- --help` lists them: `- <text>`, one line each, the contract's first, then those of bodies beyond JSON. */
export function mockDifferencesHelp(): string {
  const lines = (texts: readonly string[]) => texts.map((text) => `- ${text}`).join('\n');
  return `${lines(Object.values(MOCK_DIFFERENCES))}\n\nOn operations with a form, a multipart, a raw or an XML body, or an answer in bytes, XML or\nProblem Details (forms' array fields and multipart JSON parts are read as the server reads them;\nthe rest differs):\n${lines(Object.values(MOCK_BODY_DIFFERENCES))}`;
}
