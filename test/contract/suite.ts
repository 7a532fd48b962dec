/**
 * The contract suite: one set of checks that any implementation of the Animal Store API must
 * pass, written against raw HTTP so it can run on the real server (SQLite, PostgreSQL), the Prism
 * mock and the real server behind a validating Prism proxy alike. Every response it receives is
 * checked against the contract (status declared, body and headers by schema) besides what each
 * check asserts.
 *
 * Checks that only a real implementation can pass are titled "[stateful]" and skipped on targets
 * without that capability, unless the target documents how it departs. On a target with a
 * documented difference (KNOWN_DIFFERENCES), the check it defeats is replaced by one that asserts
 * the difference itself, exactly as documented: it fails when the target behaves like the
 * contract (the difference is gone: drop it), when it departs in another way, and when it
 * crashes, where `it.fails` passed on any failure. A known difference no check names fails too.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { nextLink } from '../../client/index.js';
import { createConformance, type ObservedResponse, type OperationId } from './conformance.js';
import type { Capabilities, ContractTarget, KnownDifference } from './target.js';

export type TargetProfile = Pick<ContractTarget, 'name' | 'capabilities' | 'knownDifferences'>;
export type Connection = Pick<ContractTarget, 'baseUrl' | 'key' | 'fetch'>;

interface Exchange extends ObservedResponse {
  /** `GET /v1/pets?limit=0`, for failure messages. */
  request: string;
  json: unknown;
}

interface RequestOptions {
  method?: string;
  body?: string;
  contentType?: string;
  /** The Authorization header: `Bearer <key>` when undefined, none when null. */
  authorization?: string | null;
  /** Further request headers (Accept, Prefer). */
  headers?: Record<string, string>;
}

interface CheckOptions {
  stateful?: boolean;
  /** The documented difference(s) that defeat this check on a target that has one. */
  difference?: KnownDifference | readonly KnownDifference[];
}

const conformance = await createConformance();
const MAX_SAFE = 9007199254740991;
const STATUSES = ['available', 'pending', 'sold'] as const;
const MALFORMED_JSON = ['{"name":', '{name: "x"}', '{"a":1}}'] as const;

/** `Deprecation` and `Sunset` as the spec's x-deprecated-at and x-sunset of getPet define them. */
function expectedDeprecationHeaders(): { deprecation: string; sunset: string } {
  const op = conformance.document.paths?.['/pets/{petId}']?.get as Record<string, unknown> | undefined;
  const deprecatedAt = op?.['x-deprecated-at'];
  const sunset = op?.['x-sunset'];
  if (typeof deprecatedAt !== 'string' || typeof sunset !== 'string') throw new Error('getPet has no x-deprecated-at / x-sunset');
  return { deprecation: `@${Math.floor(Date.parse(deprecatedAt) / 1000)}`, sunset: new Date(sunset).toUTCString() };
}

/** The example of a header the contract declares under components.headers (the value Prism sends). */
function headerExample(name: string): string {
  const example = (conformance.document.components?.headers?.[name] as { example?: unknown } | undefined)?.example;
  if (typeof example !== 'string') throw new Error(`the contract has no example for the header ${name}`);
  return example;
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

/**
 * The value of a response example of the contract: the named one, or the first (the one Prism
 * answers with), the response's `$ref` followed.
 */
function exampleOf(operationId: OperationId, status: string, name?: string): unknown {
  const document = conformance.document as unknown as Record<string, unknown>;
  const pointer = (ref: string): unknown => ref.replace(/^#\//, '').split('/').reduce<unknown>((node, key) => field(node, key.replace(/~1/g, '/').replace(/~0/g, '~')), document);
  for (const item of Object.values((field(document, 'paths') ?? {}) as Record<string, unknown>)) {
    for (const op of Object.values((item ?? {}) as Record<string, unknown>)) {
      if (field(op, 'operationId') !== operationId) continue;
      let response = field(field(op, 'responses'), status);
      const ref = field(response, '$ref');
      if (typeof ref === 'string') response = pointer(ref);
      const examples = (field(field(field(response, 'content'), 'application/json'), 'examples') ?? {}) as Record<string, unknown>;
      const example = name === undefined ? Object.values(examples)[0] : examples[name];
      if (example === undefined) break;
      return field(example, 'value');
    }
  }
  throw new Error(`the contract has no example ${name ?? '(first)'} for ${operationId} ${status}`);
}

export function defineContractSuite(profile: TargetProfile, connection: () => Connection): void {
  const { capabilities, knownDifferences } = profile;

  /**
   * Registers a check, skipped where the target lacks a capability, and replaced by the check of
   * the difference itself where the target has the documented difference it names.
   */
  function check(title: string, options: CheckOptions, body: () => Promise<void>): void {
    const needs = (capability: keyof Capabilities) => options[capability] === true && !capabilities[capability];
    const shown = `${options.stateful ? '[stateful] ' : ''}${title}`;
    const named = options.difference === undefined ? [] : typeof options.difference === 'string' ? [options.difference] : options.difference;
    for (const d of named) referenced.add(d);
    const difference = named.find((d) => knownDifferences.has(d));
    if (difference) {
      // Before the capability: a documented difference is asserted, not skipped.
      it(`${shown} [known difference ${difference}: the difference itself is asserted]`, () => observeDifference[difference]());
    } else if (needs('stateful')) {
      it.skip(shown, body);
    } else {
      it(shown, body);
    }
  }

  /** The differences some check names; every known difference of the target must be one. */
  const referenced = new Set<KnownDifference>();

  async function send(path: string, options: RequestOptions = {}): Promise<Exchange> {
    const { baseUrl, key, fetch } = connection();
    const headers = new Headers();
    const authorization = options.authorization === undefined ? `Bearer ${key}` : options.authorization;
    if (authorization !== null) headers.set('Authorization', authorization);
    if (options.body !== undefined || options.contentType) headers.set('Content-Type', options.contentType ?? 'application/json');
    for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
    const method = options.method ?? 'GET';
    // Location and Link values are absolute paths (`/v1/pets/3`); anything else is under the base.
    const base = new URL(baseUrl);
    const url = path.startsWith(`${base.pathname.replace(/\/$/, '')}/`) ? new URL(path, base.origin) : new URL(`${baseUrl}${path}`);
    const response = await fetch(url, { method, headers, body: options.body });
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { request: `${method} ${url.pathname}${url.search}`, status: response.status, headers: response.headers, text, json };
  }

  /** The response is one the contract allows for `operationId`; an error repeats its status. */
  function expectConforms(operationId: OperationId, exchange: Exchange): void {
    const what = `${exchange.request} -> ${exchange.status} ${exchange.text.slice(0, 300)}`;
    expect(conformance.check(operationId, exchange), what).toEqual([]);
    if (exchange.status >= 400) expect(field(exchange.json, 'status'), what).toBe(exchange.status);
  }

  async function expectStatus(operationId: OperationId, status: number, path: string, options: RequestOptions = {}): Promise<Exchange> {
    const exchange = await send(path, options);
    expect(exchange.status, `${exchange.request}: ${exchange.text.slice(0, 300)}`).toBe(status);
    expectConforms(operationId, exchange);
    return exchange;
  }

  async function createPet(body: Record<string, unknown>): Promise<Exchange> {
    return expectStatus('createPet', 201, '/pets', { method: 'POST', body: JSON.stringify(body) });
  }

  /** 401 with an Error of code `unauthorized` and the challenge the contract declares. */
  async function expectUnauthorized(operationId: OperationId, path: string, options: RequestOptions): Promise<Exchange> {
    const exchange = await expectStatus(operationId, 401, path, options);
    expect(field(exchange.json, 'code')).toBe('unauthorized');
    expect(exchange.headers.get('www-authenticate')).toMatch(/^Bearer realm="animal-store"/);
    return exchange;
  }

  /** An Error body with this code, its status repeated, as application/json: for answers no operation declares. */
  function expectErrorBody(exchange: Exchange, status: number, code: string): void {
    const what = `${exchange.request} -> ${exchange.status} ${exchange.text.slice(0, 300)}`;
    expect(exchange.status, what).toBe(status);
    expect(exchange.headers.get('content-type'), what).toMatch(/^application\/json/);
    expect(conformance.schemaProblems('Error', exchange.json), what).toEqual([]);
    expect(field(exchange.json, 'code'), what).toBe(code);
    expect(field(exchange.json, 'status'), what).toBe(status);
  }

  /** The methods of an Allow header, sorted. */
  /**
   * For each of the contract's paths the suite calls, a method the contract does not declare on
   * it, and the methods it does (sorted, as `allowed` reads an Allow header): read from the
   * contract, so a spec that adds an operation (a DELETE on /pets/{petId}, say) moves the probe to
   * another method instead of failing here.
   */
  const undeclaredMethods = (['/pets', '/pets/1'] as const).map((path) => {
    const item = (conformance.document.paths?.[path === '/pets' ? '/pets' : '/pets/{petId}'] ?? {}) as Record<string, unknown>;
    const declared = ['get', 'put', 'post', 'delete', 'patch'].filter((method) => item[method] !== undefined).map((method) => method.toUpperCase());
    const method = ['PATCH', 'PUT', 'DELETE', 'POST'].find((candidate) => !declared.includes(candidate));
    if (method === undefined) throw new Error(`every method is declared on ${path}: the suite has no method to refuse there`);
    // HEAD is answered wherever GET is (RFC 9110 §9.3.2), so Allow names it too.
    return { method, path, declared: (declared.includes('GET') ? [...declared, 'HEAD'] : declared).sort() };
  });
  const allowed = (exchange: Exchange) => (exchange.headers.get('allow') ?? '').split(',').map((m) => m.trim()).filter(Boolean).sort();

  /** Prism's problem+json answer (its own, not an Error), which the contract check flags. */
  function expectPrismProblem(exchange: Exchange, status: number, type: string): void {
    const what = `${exchange.request} -> ${exchange.status} ${exchange.text.slice(0, 300)}`;
    expect(exchange.status, what).toBe(status);
    expect(exchange.headers.get('content-type'), what).toMatch(/^application\/problem\+json/);
    expect(field(exchange.json, 'type'), what).toBe(`https://stoplight.io/prism/errors#${type}`);
    expect(field(exchange.json, 'status'), what).toBe(status);
    expect(conformance.schemaProblems('Error', exchange.json).length, what).toBeGreaterThan(0);
  }

  /**
   * What a target with each documented difference must answer instead (target.ts lists them, and
   * `npm run mock -- --help` prints the same list). Each pins the departure exactly, against the
   * contract's own examples, and shows what the check it replaces would have flagged.
   */
  const observeDifference: Record<KnownDifference, () => Promise<void>> = {
    'prism-example-page': async () => {
      const page = exampleOf('listPets', '200') as Array<{ status: string }>;
      for (let i = 0; i < 3; i++) await createPet({ name: `Sold ${i}`, categoryId: 4, status: 'sold' });
      for (const query of ['status=sold&limit=2', 'status=sold', 'limit=1', 'status=available&limit=1']) {
        const exchange = await expectStatus('listPets', 200, `/pets?${query}`);
        expect(exchange.json, exchange.request).toEqual(page);
      }
      // The example page has more than one pet, and not only sold ones: neither rule is applied.
      expect(page.length).toBeGreaterThan(1);
      expect(page.some((pet) => pet.status !== 'sold')).toBe(true);
      // A Prefer header picks the page of one status.
      for (const status of STATUSES) {
        const exchange = await expectStatus('listPets', 200, `/pets?status=${status}`, { headers: { Prefer: `example=${status}` } });
        expect(exchange.json, exchange.request).toEqual(exampleOf('listPets', '200', status));
        expect((exchange.json as Array<{ status: string }>).every((pet) => pet.status === status), exchange.request).toBe(true);
      }
    },
    'prism-one-page': async () => {
      for (const query of ['limit=2&status=pending', 'limit=1']) {
        const exchange = await expectStatus('listPets', 200, `/pets?${query}`);
        expect(exchange.headers.get('link'), exchange.request).toBeNull();
        expect(exchange.json, exchange.request).toEqual(exampleOf('listPets', '200'));
      }
    },
    'prism-cursor-not-checked': async () => {
      const exchange = await expectStatus('listPets', 200, '/pets?cursor=abc.def');
      expect(exchange.json).toEqual(exampleOf('listPets', '200'));
    },
    'prism-unknown-query-parameter': async () => {
      for (const query of ['offset=10', 'foo=1']) {
        const exchange = await expectStatus('listPets', 200, `/pets?${query}`);
        expect(exchange.json, exchange.request).toEqual(exampleOf('listPets', '200'));
      }
    },
    'prism-empty-query-value': async () => {
      // Treated as absent: the same conforming 200 as without the parameter.
      const absent = await expectStatus('listPets', 200, '/pets');
      for (const query of ['limit=', 'cursor=']) {
        const exchange = await expectStatus('listPets', 200, `/pets?${query}`);
        expect(exchange.json, exchange.request).toEqual(absent.json);
      }
    },
    'prism-create-example': async () => {
      const example = exampleOf('createPet', '201') as { id: number; name: string };
      for (const body of [{ name: 'Nibbles', categoryId: 4, status: 'sold' }, { name: 'Zoë 🐕‍🦺', categoryId: MAX_SAFE }]) {
        const created = await createPet(body);
        expect(created.json, created.request).toEqual(example);
        expect(field(created.json, 'name')).not.toBe(body.name);
        expect(created.headers.get('location')).toBe(`/v1/pets/${example.id}`);
        // Its address answers getPet's example, another pet.
        const fetched = await expectStatus('getPet', 200, created.headers.get('location') ?? '');
        expect(fetched.json).toEqual(exampleOf('getPet', '200'));
        expect(field(fetched.json, 'id')).not.toBe(example.id);
      }
    },
    'prism-get-example': async () => {
      for (const id of ['987654321', String(MAX_SAFE)]) {
        const exchange = await expectStatus('getPet', 200, `/pets/${id}`);
        expect(exchange.json, exchange.request).toEqual(exampleOf('getPet', '200'));
      }
      // The 404 example is there for the asking.
      const notFound = await expectStatus('getPet', 404, '/pets/987654321', { headers: { Prefer: 'code=404' } });
      expect(notFound.json).toEqual(exampleOf('getPet', '404'));
    },
    'prism-400-example': async () => {
      // Each operation's first 400 example names its own field and place (the spec's examples)...
      expect(field(exampleOf('listPets', '400'), 'details')).toEqual([expect.objectContaining({ in: 'query', field: 'limit' })]);
      expect(field(exampleOf('createPet', '400'), 'details')).toEqual([expect.objectContaining({ in: 'body', field: 'categoryId' })]);
      expect(field(exampleOf('getPet', '400'), 'details')).toEqual([expect.objectContaining({ in: 'path', field: 'petId' })]);
      // ...and is the answer to every fault; the actual one is only in sl-violations.
      const cases: Array<[OperationId, string, RequestOptions, string]> = [
        ['listPets', '/pets?status=lost', {}, 'status'],
        ['listPets', '/pets?cursor=%21', {}, 'cursor'],
        ['listPets', '/pets?limit=0', {}, 'limit'],
        ['createPet', '/pets', { method: 'POST', body: '{"categoryId":3}' }, 'name'],
        ['createPet', '/pets', { method: 'POST', body: '{"name":"Rex","categoryId":3,"id":7}' }, 'id'],
        ['createPet', '/pets', { method: 'POST', body: '{"name":"Rex","categoryId":"3"}' }, 'categoryId'],
        ['getPet', '/pets/99999999999999999999', {}, 'petid'],
      ];
      for (const [operationId, path, options, name] of cases) {
        const exchange = await expectStatus(operationId, 400, path, options);
        expect(exchange.json, exchange.request).toEqual(exampleOf(operationId, '400'));
        // Prism's own report of the fault: the field at the end of its location, or quoted in its message.
        const violations = JSON.parse(exchange.headers.get('sl-violations') ?? '[]') as Array<{ location: string[]; message: string }>;
        const namesIt = violations.some((v) => v.location.at(-1) === name || v.message.includes(`'${name}'`));
        expect(namesIt, `${exchange.request}: ${JSON.stringify(violations)}`).toBe(true);
      }
    },
    'prism-malformed-json-body': async () => {
      // Prism parses a JSON body before routing (micri's json()), outside anything the spec controls.
      for (const body of MALFORMED_JSON) {
        const exchange = await send('/pets', { method: 'POST', body });
        const what = `${exchange.request} ${body} -> ${exchange.status} ${exchange.text.slice(0, 300)}`;
        expect(exchange.status, what).toBe(400);
        expect(exchange.headers.get('content-type'), what).toMatch(/^application\/json/);
        // micri's own body, not an Error: the documented difference.
        expect(exchange.json, what).toEqual({ error: { code: 'invalid_json', message: 'Invalid JSON' } });
        // The 400 itself is declared; what breaks the contract is the body alone.
        const problems = conformance.check('createPet', exchange);
        expect(problems.length, what).toBeGreaterThan(0);
        expect(problems.filter((problem) => !problem.startsWith('body ')), what).toEqual([]);
      }
    },
    'prism-json-media-type': async () => {
      // Prism matches a +json type to application/json by its suffix and ignores the charset.
      for (const contentType of ['application/vnd.api+json', 'application/json; charset=iso-8859-1']) {
        const exchange = await expectStatus('createPet', 201, '/pets', { method: 'POST', body: '{"name":"Rex","categoryId":3}', contentType });
        expect(exchange.json, contentType).toEqual(exampleOf('createPet', '201'));
      }
    },
    'prism-no-size-limit': async () => {
      // Over 64 KiB and invalid (a 70,000-character name): the 400 example, not a 413.
      const tooLong = await expectStatus('createPet', 400, '/pets', { method: 'POST', body: JSON.stringify({ name: 'x'.repeat(70_000), categoryId: 1 }) });
      expect(tooLong.json).toEqual(exampleOf('createPet', '400'));
      // Over 64 KiB and valid (whitespace): created.
      const padded = `{"name":"Padded",${' '.repeat(70_000)}"categoryId":1}`;
      expect(padded.length).toBeGreaterThan(65_536);
      await expectStatus('createPet', 201, '/pets', { method: 'POST', body: padded });
    },
    'prism-lone-surrogate': async () => {
      // The pattern leaves surrogates to the body reader, which Prism does not have: created.
      await expectStatus('createPet', 201, '/pets', { method: 'POST', body: '{"name":"a\\ud800b","categoryId":3}' });
    },
    'prism-any-token': async () => {
      for (const authorization of ['Bearer nope', `Bearer ask_${'A'.repeat(43)}`, 'Bearer a b']) {
        const exchange = await expectStatus('listPets', 200, '/pets', { authorization });
        expect(exchange.json, authorization).toEqual(exampleOf('listPets', '200'));
      }
    },
    'prism-bearer-scheme-case': async () => {
      // Prism matches the scheme case-sensitively; only the scheme's case differs between the two.
      await expectStatus('listPets', 200, '/pets', { authorization: `Bearer ${connection().key}` });
      await expectUnauthorized('listPets', '/pets', { authorization: `bearer ${connection().key}` });
    },
    'prism-route-errors': async () => {
      expectPrismProblem(await send('/nope'), 404, 'NO_PATH_MATCHED_ERROR');
      for (const { method, path } of undeclaredMethods) {
        const exchange = await send(path, { method });
        expectPrismProblem(exchange, 405, 'NO_METHOD_MATCHED_ERROR');
        expect(exchange.headers.get('allow'), exchange.request).toBeNull();
      }
    },
    'prism-head-no-content-type': async () => {
      for (const path of ['/pets?limit=1', '/pets/1']) {
        const get = await send(path);
        const head = await send(path, { method: 'HEAD' });
        expect(head.status, head.request).toBe(200);
        expect(head.text, head.request).toBe('');
        expect(head.headers.get('etag'), head.request).toBe(get.headers.get('etag'));
        // The one departure: no media type (and Prism's own sl-violations header saying so).
        expect(get.headers.get('content-type'), get.request).toMatch(/^application\/json/);
        expect(head.headers.get('content-type'), head.request).toBeNull();
        expect(head.headers.get('sl-violations'), head.request).toContain('media type');
      }
    },
    'prism-conditional-ignored': async () => {
      const etag = headerExample('ETag');
      for (const [operationId, path] of [['listPets', '/pets'], ['getPet', '/pets/1']] as const) {
        for (const condition of [undefined, etag, '*']) {
          const exchange = await expectStatus(operationId, 200, path, condition === undefined ? {} : { headers: { 'If-None-Match': condition } });
          expect(exchange.headers.get('etag'), `${exchange.request} If-None-Match: ${condition ?? '(none)'}`).toBe(etag);
          expect(exchange.json, exchange.request).toEqual(exampleOf(operationId, '200'));
        }
      }
      // A create changes nothing the mock answers, the tag included.
      await createPet({ name: 'Tagged', categoryId: 2 });
      expect((await expectStatus('listPets', 200, '/pets')).headers.get('etag')).toBe(etag);
    },
    'prism-idempotency-ignored': async () => {
      // Two creates with one key and different bodies: both the example 201, neither marked a replay, no 422.
      const key = randomUUID();
      for (const categoryId of [2, 3]) {
        const exchange = await expectStatus('createPet', 201, '/pets', { method: 'POST', body: JSON.stringify({ name: 'Once', categoryId }), headers: { 'Idempotency-Key': key } });
        expect(exchange.json, exchange.request).toEqual(exampleOf('createPet', '201'));
        expect(exchange.headers.get('idempotent-replayed'), exchange.request).toBeNull();
      }
    },
    'prism-if-match-ignored': async () => {
      // Any If-Match, however stale: the change answers its example 200, the removal its 204, and the example animal is unchanged.
      const stale = { 'If-Match': '"AAAAAAAAAAAAAAAAAAAAAA"' };
      const changed = await expectStatus('updatePet', 200, '/pets/1', { method: 'PATCH', contentType: 'application/merge-patch+json', body: JSON.stringify({ status: 'sold' }), headers: stale });
      expect(changed.json).toEqual(exampleOf('updatePet', '200'));
      await expectStatus('deletePet', 204, '/pets/1', { method: 'DELETE', headers: stale });
      expect((await expectStatus('getPet', 200, '/pets/1')).json).toEqual(exampleOf('getPet', '200'));
    },
    'prism-accept-not-json': async () => {
      for (const [operationId, path] of [['listPets', '/pets'], ['getPet', '/pets/1']] as const) {
        const exchange = await send(path, { headers: { Accept: 'text/html' } });
        expectPrismProblem(exchange, 406, 'NOT_ACCEPTABLE');
        expect(conformance.check(operationId, exchange).length, exchange.request).toBeGreaterThan(0);
      }
    },
  };

  describe(`contract [${profile.name}]`, () => {
    describe('any operation', () => {
      check('404 not_found Error for a path the contract lacks; 405 method_not_allowed Error with Allow for a method the path lacks', { difference: 'prism-route-errors' }, async () => {
        expectErrorBody(await send('/nope'), 404, 'not_found');
        for (const { method, path, declared } of undeclaredMethods) {
          const exchange = await send(path, { method });
          expectErrorBody(exchange, 405, 'method_not_allowed');
          expect(allowed(exchange), exchange.request).toEqual(declared);
        }
      });

      check('HEAD on every GET: the GET\'s status and headers (Content-Type, ETag, deprecation headers), no body', { difference: 'prism-head-no-content-type' }, async () => {
        for (const path of ['/pets?limit=1', '/pets/1']) {
          const get = await send(path);
          const head = await send(path, { method: 'HEAD' });
          expect(head.status, head.request).toBe(get.status);
          expect(head.text, head.request).toBe('');
          for (const name of ['content-type', 'etag', 'deprecation', 'sunset', 'link']) expect(head.headers.get(name), `${head.request}: ${name}`).toBe(get.headers.get(name));
        }
      });

      check('an Accept header without application/json is a 406 not_acceptable Error the contract declares (its default); one that allows JSON is answered', { difference: 'prism-accept-not-json' }, async () => {
        for (const [operationId, path] of [['listPets', '/pets'], ['getPet', '/pets/1']] as const) {
          const refused = await send(path, { headers: { Accept: 'text/html' } });
          expectErrorBody(refused, 406, 'not_acceptable');
          expectConforms(operationId, refused);
          expectConforms(operationId, await send(path, { headers: { Accept: 'text/html, */*;q=0.1' } }));
        }
      });

      it('every known difference of this target is asserted by a check', () => {
        expect([...knownDifferences].filter((d) => !referenced.has(d))).toEqual([]);
      });
    });

    describe('listPets: GET /pets', () => {
      check('200 with a key: a Pets array as application/json', {}, async () => {
        const exchange = await expectStatus('listPets', 200, '/pets');
        expect(Array.isArray(exchange.json)).toBe(true);
      });

      check('200 for every status filter and for the limit bounds 1 and 100', {}, async () => {
        for (const query of [...STATUSES.map((s) => `status=${s}`), 'limit=1', 'limit=100', 'limit=7&status=sold']) {
          await expectStatus('listPets', 200, `/pets?${query}`);
        }
      });

      check('400 validation_failed Error for a limit outside 1..100 or not an integer', {}, async () => {
        for (const limit of ['0', '101', '-1', 'abc', '1.5']) {
          const exchange = await expectStatus('listPets', 400, `/pets?limit=${limit}`);
          expect(field(exchange.json, 'code')).toBe('validation_failed');
        }
      });

      check('400 Error for an empty limit or cursor value', { difference: 'prism-empty-query-value' }, async () => {
        await expectStatus('listPets', 400, '/pets?limit=');
        await expectStatus('listPets', 400, '/pets?cursor=');
      });

      check('400 validation_failed Error for a limit or petId not written in plain decimal', {}, async () => {
        for (const limit of ['05', '%2B5', '1.0', '1e1', '0x5', '%205']) {
          const exchange = await expectStatus('listPets', 400, `/pets?limit=${limit}`);
          expect(field(exchange.json, 'code')).toBe('validation_failed');
        }
        for (const petId of ['01', '+1', '1.0', '1e0', '0x1']) {
          const exchange = await expectStatus('getPet', 400, `/pets/${petId}`);
          expect(field(exchange.json, 'code')).toBe('validation_failed');
        }
      });

      check('400 validation_failed Error for a status outside the enumeration', {}, async () => {
        const exchange = await expectStatus('listPets', 400, '/pets?status=lost');
        expect(field(exchange.json, 'code')).toBe('validation_failed');
      });

      check('400 Error for a cursor that breaks its declared pattern or length', {}, async () => {
        for (const cursor of ['%21%21', 'a'.repeat(201)]) await expectStatus('listPets', 400, `/pets?cursor=${cursor}`);
      });

      check('400 details name the offending query parameter', { stateful: true, difference: 'prism-400-example' }, async () => {
        for (const [query, name] of [['limit=0', 'limit'], ['status=lost', 'status'], ['cursor=%21', 'cursor']] as const) {
          const exchange = await expectStatus('listPets', 400, `/pets?${query}`);
          expect(field(exchange.json, 'details')).toEqual([expect.objectContaining({ in: 'query', field: name })]);
        }
      });

      check('400 for a query parameter the operation does not have', { stateful: true, difference: 'prism-unknown-query-parameter' }, async () => {
        const exchange = await expectStatus('listPets', 400, '/pets?offset=10');
        expect(field(exchange.json, 'details')).toEqual([expect.objectContaining({ in: 'query', field: 'offset' })]);
      });

      check('400 for a well-formed cursor the server never issued', { stateful: true, difference: 'prism-cursor-not-checked' }, async () => {
        const exchange = await expectStatus('listPets', 400, '/pets?cursor=abc.def');
        expect(field(exchange.json, 'details')).toEqual([expect.objectContaining({ in: 'query', field: 'cursor' })]);
      });

      check('limit caps the page and status keeps only matching animals', { stateful: true, difference: 'prism-example-page' }, async () => {
        for (let i = 0; i < 3; i++) await createPet({ name: `Sold ${i}`, categoryId: 4, status: 'sold' });
        const exchange = await expectStatus('listPets', 200, '/pets?status=sold&limit=2');
        const pets = exchange.json as Array<{ status: string }>;
        expect(pets).toHaveLength(2);
        expect(pets.every((p) => p.status === 'sold')).toBe(true);
      });

      check('paging: Link rel="next" keeps limit and status, lists every animal once in id order, and the last page has none', { stateful: true, difference: 'prism-one-page' }, async () => {
        const created: number[] = [];
        for (let i = 0; i < 5; i++) created.push(field((await createPet({ name: `Paged ${i}`, categoryId: 3, status: 'pending' })).json, 'id') as number);
        const seen: number[] = [];
        let next: string | undefined = '/pets?limit=2&status=pending';
        let last: Exchange | undefined;
        for (let pages = 0; next; pages++) {
          if (pages > 1000) throw new Error('paging does not end');
          last = await expectStatus('listPets', 200, next);
          const pets = last.json as Array<{ id: number; status: string }>;
          expect(pets.length).toBeLessThanOrEqual(2);
          expect(pets.every((p) => p.status === 'pending')).toBe(true);
          seen.push(...pets.map((p) => p.id));
          next = nextLink(last.headers.get('link'));
          if (next) expect(next).toMatch(/^\/v1\/pets\?limit=2&status=pending&cursor=[A-Za-z0-9_.-]+$/);
        }
        expect(last?.headers.get('link')).toBeNull();
        expect(seen, 'ids strictly ascending, so none twice').toEqual([...new Set(seen)].sort((a, b) => a - b));
        expect(seen).toEqual(expect.arrayContaining(created));
      });

      check('401 unauthorized Error with WWW-Authenticate: Bearer without a bearer header', {}, async () => {
        for (const authorization of [null, 'Basic dXNlcjpwYXNz']) await expectUnauthorized('listPets', '/pets', { authorization });
      });

      check('401 for a key the server never issued; the challenge adds error="invalid_token"', { stateful: true, difference: 'prism-any-token' }, async () => {
        for (const authorization of ['Bearer nope', `Bearer ask_${'A'.repeat(43)}`]) {
          const exchange = await expectUnauthorized('listPets', '/pets', { authorization });
          expect(exchange.headers.get('www-authenticate')).toBe('Bearer realm="animal-store", error="invalid_token"');
        }
        // Not a bearer token at all: 401 with either declared challenge.
        await expectUnauthorized('listPets', '/pets', { authorization: 'Bearer a b' });
      });

      check('the authentication scheme is case-insensitive: "bearer <key>" is accepted', { difference: 'prism-bearer-scheme-case' }, async () => {
        await expectStatus('listPets', 200, '/pets', { authorization: `bearer ${connection().key}` });
      });
    });

    describe('createPet: POST /pets', () => {
      check('201 Pet with a Location header, with and without status', {}, async () => {
        await createPet({ name: 'Biscuit', categoryId: 2 });
        await createPet({ name: 'Miso', categoryId: 1, status: 'pending' });
        await createPet({ name: 'Big', categoryId: MAX_SAFE, status: 'sold' });
      });

      check('create-then-get: 201 returns what was stored, Location is its address, status defaults to available', { stateful: true, difference: 'prism-create-example' }, async () => {
        for (const [body, expected] of [
          [{ name: 'Zoë 🐕‍🦺', categoryId: MAX_SAFE, status: 'pending' }, { status: 'pending' }],
          [{ name: '  padded "quoted" \\ ', categoryId: 2 }, { status: 'available' }],
        ] as const) {
          const created = await createPet(body);
          const pet = created.json as { id: number };
          expect(pet).toEqual({ ...body, ...expected, id: expect.any(Number) });
          expect(created.headers.get('location')).toBe(`/v1/pets/${pet.id}`);
          const fetched = await expectStatus('getPet', 200, created.headers.get('location') ?? '');
          expect(fetched.json).toEqual(pet);
        }
      });

      const invalid: Array<[string, string]> = [
        ['categoryId as a string', '{"name":"Rex","categoryId":"3"}'],
        ['categoryId beyond 2^53-1', '{"name":"Rex","categoryId":9007199254740993}'],
        ['categoryId of exactly 2^53', '{"name":"Rex","categoryId":9007199254740992}'],
        ['categoryId with a fraction', '{"name":"Rex","categoryId":1.5}'],
        ['categoryId below 1', '{"name":"Rex","categoryId":0}'],
        ['name missing', '{"categoryId":3}'],
        ['categoryId missing', '{"name":"Rex"}'],
        ['empty name', '{"name":"","categoryId":3}'],
        ['name over 255 characters', JSON.stringify({ name: 'a'.repeat(256), categoryId: 3 })],
        ['name with a NUL character', '{"name":"a\\u0000b","categoryId":3}'],
        ['name of the wrong type', '{"name":42,"categoryId":3}'],
        ['status outside the enumeration', '{"name":"Rex","categoryId":3,"status":"lost"}'],
        ['a field NewPet does not have', '{"name":"Rex","categoryId":3,"id":7}'],
        ['a __proto__ key', '{"name":"Rex","categoryId":3,"__proto__":{"admin":true}}'],
        ['an array instead of an object', '[{"name":"Rex","categoryId":3}]'],
        ['null instead of an object', 'null'],
      ];
      check('400 Error for every body that breaks NewPet', {}, async () => {
        for (const [rule, body] of invalid) {
          const exchange = await send('/pets', { method: 'POST', body });
          expect(exchange.status, `${rule}: ${exchange.text}`).toBe(400);
          expectConforms('createPet', exchange);
          expect(field(exchange.json, 'code'), rule).toBe('validation_failed');
        }
      });

      check('400 details name the offending body field', { stateful: true, difference: 'prism-400-example' }, async () => {
        for (const [body, name] of [['{"name":"Rex","categoryId":"3"}', 'categoryId'], ['{"name":"Rex","categoryId":3,"id":7}', 'id'], ['{"categoryId":3}', 'name']] as const) {
          const exchange = await expectStatus('createPet', 400, '/pets', { method: 'POST', body });
          const details = field(exchange.json, 'details') as Array<{ in: string; field: string }>;
          expect(details.some((d) => d.in === 'body' && d.field === name), exchange.text).toBe(true);
        }
      });

      check('400 Error for a missing body', {}, async () => {
        await expectStatus('createPet', 400, '/pets', { method: 'POST', contentType: 'application/json' });
        await expectStatus('createPet', 400, '/pets', { method: 'POST' });
      });

      check('400 invalid_json Error for a malformed JSON body', { difference: 'prism-malformed-json-body' }, async () => {
        for (const body of MALFORMED_JSON) {
          const exchange = await expectStatus('createPet', 400, '/pets', { method: 'POST', body });
          expect(field(exchange.json, 'code')).toBe('invalid_json');
        }
      });

      check('415 unsupported_media_type Error for a body that is not application/json', {}, async () => {
        const exchange = await expectStatus('createPet', 415, '/pets', { method: 'POST', body: 'name=Rex&categoryId=3', contentType: 'application/x-www-form-urlencoded' });
        expect(field(exchange.json, 'code')).toBe('unsupported_media_type');
      });

      check('415 unsupported_media_type Error for JSON sent as another media type or in another charset', { difference: 'prism-json-media-type' }, async () => {
        for (const contentType of ['application/vnd.api+json', 'application/json; charset=iso-8859-1']) {
          const exchange = await expectStatus('createPet', 415, '/pets', { method: 'POST', body: '{"name":"Rex","categoryId":3}', contentType });
          expect(field(exchange.json, 'code')).toBe('unsupported_media_type');
        }
      });

      check('400 validation_failed naming the field for a lone surrogate escape (not well-formed Unicode)', { difference: 'prism-lone-surrogate' }, async () => {
        for (const [body, name] of [['{"name":"a\\ud800b","categoryId":3}', 'name'], ['{"name":"Rex","categoryId":3,"status":"\\udfff"}', 'status']] as const) {
          const exchange = await expectStatus('createPet', 400, '/pets', { method: 'POST', body });
          expect(field(exchange.json, 'code')).toBe('validation_failed');
          const details = field(exchange.json, 'details') as Array<{ in: string; field: string }>;
          expect(details.some((d) => d.in === 'body' && d.field === name), exchange.text).toBe(true);
        }
      });

      check('413 payload_too_large Error for a body over 64 KiB', { stateful: true, difference: 'prism-no-size-limit' }, async () => {
        const exchange = await expectStatus('createPet', 413, '/pets', { method: 'POST', body: JSON.stringify({ name: 'x'.repeat(70_000), categoryId: 1 }) });
        expect(field(exchange.json, 'code')).toBe('payload_too_large');
      });

      check('401 unauthorized Error with WWW-Authenticate without a bearer header', {}, async () => {
        await expectUnauthorized('createPet', '/pets', { method: 'POST', body: '{"name":"Rex","categoryId":3}', authorization: null });
      });
    });

    describe('getPet: GET /pets/{petId} (deprecated)', () => {
      check('200 Pet with the Deprecation and Sunset headers the spec declares, for an id createPet returned', {}, async () => {
        const created = await createPet({ name: 'Fetched', categoryId: 2 });
        const exchange = await expectStatus('getPet', 200, `/pets/${field(created.json, 'id') as number}`);
        const expected = expectedDeprecationHeaders();
        expect(exchange.headers.get('deprecation')).toBe(expected.deprecation);
        expect(exchange.headers.get('sunset')).toBe(expected.sunset);
      });

      check('404 not_found Error for an id never created', { stateful: true, difference: 'prism-get-example' }, async () => {
        for (const id of ['987654321', String(MAX_SAFE)]) {
          const exchange = await expectStatus('getPet', 404, `/pets/${id}`);
          expect(field(exchange.json, 'code')).toBe('not_found');
        }
      });

      check('400 validation_failed Error for a petId that is not an id', {}, async () => {
        for (const petId of ['abc', '0', '-3', '1.5', '9007199254740992', '99999999999999999999']) {
          const exchange = await expectStatus('getPet', 400, `/pets/${petId}`);
          expect(field(exchange.json, 'code')).toBe('validation_failed');
        }
      });

      check('400 details name petId in the path', {}, async () => {
        const exchange = await expectStatus('getPet', 400, '/pets/abc');
        expect(field(exchange.json, 'details')).toEqual([expect.objectContaining({ in: 'path', field: 'petId' })]);
      });

      check('401 unauthorized Error with WWW-Authenticate without a bearer header', {}, async () => {
        await expectUnauthorized('getPet', '/pets/1', { authorization: null });
      });
    });

    describe('conditional reads: ETag and If-None-Match (listPets, getPet)', () => {
      /** One path per conditional read, on a pet the target just created. */
      async function conditionalReads(): Promise<Array<readonly [OperationId, string]>> {
        const created = await createPet({ name: 'Tagged', categoryId: 2 });
        return [['listPets', '/pets?limit=5'], ['getPet', `/pets/${field(created.json, 'id') as number}`]] as const;
      }

      check('200 carries an ETag: an entity tag as the contract declares', {}, async () => {
        for (const [operationId, path] of await conditionalReads()) {
          const exchange = await expectStatus(operationId, 200, path);
          expect(exchange.headers.get('etag'), exchange.request).toMatch(/^(W\/)?"[!#-~]+"$/);
        }
      });

      check('If-None-Match with that ETag (alone, weak, in a list, or *) answers 304 with no body and the same ETag; getPet\'s keeps Deprecation and Sunset; another tag gets the 200', { difference: 'prism-conditional-ignored' }, async () => {
        const expected = expectedDeprecationHeaders();
        for (const [operationId, path] of await conditionalReads()) {
          const first = await expectStatus(operationId, 200, path);
          const etag = first.headers.get('etag') ?? '';
          const opaque = etag.replace(/^W\//, '');
          for (const condition of [etag, `W/${opaque}`, `"not-this-one", ${etag}`, '*']) {
            const exchange = await expectStatus(operationId, 304, path, { headers: { 'If-None-Match': condition } });
            const what = `${exchange.request} If-None-Match: ${condition}`;
            expect(exchange.text, what).toBe('');
            expect(exchange.headers.get('etag'), what).toBe(etag);
            if (operationId === 'getPet') {
              expect(exchange.headers.get('deprecation'), what).toBe(expected.deprecation);
              expect(exchange.headers.get('sunset'), what).toBe(expected.sunset);
            }
          }
          const other = await expectStatus(operationId, 200, path, { headers: { 'If-None-Match': '"not-this-one"' } });
          expect(other.text, other.request).toBe(first.text);
          expect(other.headers.get('etag'), other.request).toBe(etag);
        }
      });

      check('a create that changes a page changes its ETag (the old one gets the 200 with the new pet); a page it does not change answers 304', { stateful: true, difference: 'prism-conditional-ignored' }, async () => {
        for (let i = 0; i < 2; i++) await createPet({ name: `Tagged ${i}`, categoryId: 5, status: 'pending' });
        // The first pending pet alone: a later id cannot change this page (or its Link).
        const untouched = await expectStatus('listPets', 200, '/pets?status=pending&limit=1');
        expect(nextLink(untouched.headers.get('link'))).toBeDefined();
        // The last page of the pending pets, where the next one lands.
        let path: string | undefined = '/pets?status=pending&limit=50';
        let last: Exchange | undefined;
        for (let pages = 0; path; pages++) {
          if (pages > 1000) throw new Error('paging does not end');
          last = await expectStatus('listPets', 200, path);
          const next = nextLink(last.headers.get('link'));
          if (!next) break;
          path = next;
        }
        if (!last || !path) throw new Error('no last page');
        const before = last.headers.get('etag') ?? '';

        const created = (await createPet({ name: 'Tagged last', categoryId: 5, status: 'pending' })).json;
        const after = await expectStatus('listPets', 200, path, { headers: { 'If-None-Match': before } });
        expect(after.headers.get('etag'), after.request).not.toBe(before);
        // The new pet is on this page, or (a full page) this page now links to the one it is on.
        if ((last.json as unknown[]).length < 50) expect(after.json, after.request).toContainEqual(created);
        else expect(nextLink(after.headers.get('link')), after.request).toBeDefined();
        await expectStatus('listPets', 304, path, { headers: { 'If-None-Match': after.headers.get('etag') ?? '' } });

        const again = await expectStatus('listPets', 304, '/pets?status=pending&limit=1', { headers: { 'If-None-Match': untouched.headers.get('etag') ?? '' } });
        expect(again.headers.get('link'), again.request).toBe(untouched.headers.get('link'));
      });

      check('an error answers as without If-None-Match: a missing pet is 404 even for *, with no ETag', { stateful: true, difference: 'prism-get-example' }, async () => {
        const exchange = await expectStatus('getPet', 404, '/pets/987654321', { headers: { 'If-None-Match': '*' } });
        expect(exchange.headers.get('etag')).toBeNull();
      });
    });

    describe('changes and removals: updatePet, deletePet, If-Match (contract 1.4.0)', () => {
      const patch = (body: Record<string, unknown>, ifMatch?: string) => ({ method: 'PATCH', contentType: 'application/merge-patch+json', body: JSON.stringify(body), ...(ifMatch === undefined ? {} : { headers: { 'If-Match': ifMatch } }) });

      check('a merge patch changes the fields it names and answers the animal with the ETag getPet then gives; with a stale If-Match it is a 412 precondition_failed and nothing changes', { stateful: true, difference: 'prism-if-match-ignored' }, async () => {
        const pet = (await createPet({ name: 'Changeling', categoryId: 2 })).json as { id: number };
        const read = await expectStatus('getPet', 200, `/pets/${pet.id}`);
        const changed = await expectStatus('updatePet', 200, `/pets/${pet.id}`, patch({ status: 'sold' }, read.headers.get('etag') ?? ''));
        expect(changed.json).toEqual({ ...(read.json as object), status: 'sold' });
        expect(changed.headers.get('etag')).toBe((await expectStatus('getPet', 200, `/pets/${pet.id}`)).headers.get('etag'));
        const stale = await expectStatus('updatePet', 412, `/pets/${pet.id}`, patch({ status: 'available' }, read.headers.get('etag') ?? ''));
        expect(field(stale.json, 'code')).toBe('precondition_failed');
        expect((await expectStatus('getPet', 200, `/pets/${pet.id}`)).json).toEqual(changed.json);
        expectErrorBody(await send(`/pets/${pet.id}`, patch({ name: null })), 400, 'validation_failed');
        await expectStatus('updatePet', 404, '/pets/987654321', patch({ status: 'sold' }));
      });

      check('a removal is a 204, then getPet is a 404; with a stale If-Match it is a 412 and the animal stays', { stateful: true, difference: 'prism-if-match-ignored' }, async () => {
        const pet = (await createPet({ name: 'Leaving', categoryId: 2 })).json as { id: number };
        await expectStatus('deletePet', 412, `/pets/${pet.id}`, { method: 'DELETE', headers: { 'If-Match': '"AAAAAAAAAAAAAAAAAAAAAA"' } });
        await expectStatus('getPet', 200, `/pets/${pet.id}`);
        await expectStatus('deletePet', 204, `/pets/${pet.id}`, { method: 'DELETE' });
        await expectStatus('getPet', 404, `/pets/${pet.id}`);
        await expectStatus('deletePet', 404, `/pets/${pet.id}`, { method: 'DELETE' });
      });
    });

    describe('exactly-once creates: Idempotency-Key (createPet)', () => {
      const post = (body: Record<string, unknown>, key: string) => ({ method: 'POST', body: JSON.stringify(body), headers: { 'Idempotency-Key': key } });

      check('201 with a key; the same key and body again is the same 201 (id, body, Location) with Idempotent-Replayed: true, and adds nothing', { stateful: true, difference: 'prism-idempotency-ignored' }, async () => {
        const key = `"${randomUUID()}"`;
        const name = `Once ${key}`;
        const first = await expectStatus('createPet', 201, '/pets', post({ name, categoryId: 2 }, key));
        expect(first.headers.get('idempotent-replayed')).toBeNull();
        // The same animal after the spec's default: the body is compared by value, defaults applied.
        const again = await expectStatus('createPet', 201, '/pets', post({ status: 'available', categoryId: 2, name }, key));
        expect(again.text).toBe(first.text);
        expect(again.headers.get('location')).toBe(first.headers.get('location'));
        expect(again.headers.get('idempotent-replayed')).toBe('true');
        const id = (first.json as { id: number }).id;
        const next = await createPet({ name: `After ${key}`, categoryId: 2 });
        // Nothing was added by the replay: the next animal is the next id after any other creates, and the first is unchanged.
        expect((next.json as { id: number }).id).toBeGreaterThan(id);
        expect((await expectStatus('getPet', 200, `/pets/${id}`)).json).toEqual(first.json);
      });

      check('the same key with another body: 422 idempotency_key_reused, and nothing is added', { stateful: true, difference: 'prism-idempotency-ignored' }, async () => {
        const key = randomUUID();
        const first = await expectStatus('createPet', 201, '/pets', post({ name: 'Reused', categoryId: 2 }, key));
        const other = await expectStatus('createPet', 422, '/pets', post({ name: 'Reused', categoryId: 3 }, key));
        expect(field(other.json, 'code')).toBe('idempotency_key_reused');
        // The key still replays its own animal.
        const again = await expectStatus('createPet', 201, '/pets', post({ name: 'Reused', categoryId: 2 }, key));
        expect(again.json).toEqual(first.json);
      });

      check('400 validation_failed Error for an Idempotency-Key outside 1 to 255 visible ASCII characters', {}, async () => {
        for (const key of ['has space', 'k'.repeat(256)]) {
          const exchange = await expectStatus('createPet', 400, '/pets', post({ name: 'Rex', categoryId: 3 }, key));
          expect(field(exchange.json, 'code'), key).toBe('validation_failed');
        }
      });
    });
  });
}
