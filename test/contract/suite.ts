/**
 * The contract suite: one set of checks that any implementation of the Animal Store API must
 * pass, written against raw HTTP so it can run on the real server (SQLite, PostgreSQL), the Prism
 * mock and the real server behind a validating Prism proxy alike. Every response it receives is
 * checked against the contract (status declared, body and headers by schema) besides what each
 * check asserts.
 *
 * Checks that only a real implementation can pass are titled "[stateful]" and skipped on targets
 * without that capability. On a target with a documented difference (KNOWN_DIFFERENCES), the
 * check it defeats is replaced by one that asserts the difference itself, exactly as documented:
 * it fails when the target behaves like the contract (the difference is gone: drop it), when it
 * departs in another way, and when it crashes, where `it.fails` passed on any failure.
 */
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
}

interface CheckOptions {
  stateful?: boolean;
  difference?: KnownDifference;
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

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
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
    const { difference } = options;
    if (needs('stateful')) {
      it.skip(shown, body);
    } else if (difference && knownDifferences.has(difference)) {
      it(`${shown} [known difference ${difference}: the difference itself is asserted]`, () => observeDifference[difference]());
    } else {
      it(shown, body);
    }
  }

  async function send(path: string, options: RequestOptions = {}): Promise<Exchange> {
    const { baseUrl, key, fetch } = connection();
    const headers = new Headers();
    const authorization = options.authorization === undefined ? `Bearer ${key}` : options.authorization;
    if (authorization !== null) headers.set('Authorization', authorization);
    if (options.body !== undefined || options.contentType) headers.set('Content-Type', options.contentType ?? 'application/json');
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

  /**
   * What a target with each documented difference must answer instead (target.ts says why). Each
   * pins the departure, and shows the contract check does flag it, so nothing else passes for it.
   */
  const observeDifference: Record<KnownDifference, () => Promise<void>> = {
    'prism-malformed-json-body': async () => {
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
    'prism-empty-query-value': async () => {
      // Treated as absent: the same conforming 200 as without the parameter.
      const absent = await expectStatus('listPets', 200, '/pets');
      for (const query of ['limit=', 'cursor=']) {
        const exchange = await expectStatus('listPets', 200, `/pets?${query}`);
        expect(exchange.json, exchange.request).toEqual(absent.json);
      }
    },
    'prism-bearer-scheme-case': async () => {
      // Only the scheme's case differs between the two requests: "Bearer" passes, "bearer" is a 401.
      await expectStatus('listPets', 200, '/pets', { authorization: `Bearer ${connection().key}` });
      await expectUnauthorized('listPets', '/pets', { authorization: `bearer ${connection().key}` });
    },
  };

  describe(`contract [${profile.name}]`, () => {
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

      check('400 validation_failed Error for a status outside the enumeration', {}, async () => {
        const exchange = await expectStatus('listPets', 400, '/pets?status=lost');
        expect(field(exchange.json, 'code')).toBe('validation_failed');
      });

      check('400 Error for a cursor that breaks its declared pattern or length', {}, async () => {
        for (const cursor of ['%21%21', 'a'.repeat(201)]) await expectStatus('listPets', 400, `/pets?cursor=${cursor}`);
      });

      check('400 details name the offending query parameter', { stateful: true }, async () => {
        for (const [query, name] of [['limit=0', 'limit'], ['status=lost', 'status'], ['cursor=%21', 'cursor']] as const) {
          const exchange = await expectStatus('listPets', 400, `/pets?${query}`);
          expect(field(exchange.json, 'details')).toEqual([expect.objectContaining({ in: 'query', field: name })]);
        }
      });

      check('400 for a query parameter the operation does not have', { stateful: true }, async () => {
        const exchange = await expectStatus('listPets', 400, '/pets?offset=10');
        expect(field(exchange.json, 'details')).toEqual([expect.objectContaining({ in: 'query', field: 'offset' })]);
      });

      check('400 for a well-formed cursor the server never issued', { stateful: true }, async () => {
        const exchange = await expectStatus('listPets', 400, '/pets?cursor=abc.def');
        expect(field(exchange.json, 'details')).toEqual([expect.objectContaining({ in: 'query', field: 'cursor' })]);
      });

      check('limit caps the page and status keeps only matching animals', { stateful: true }, async () => {
        for (let i = 0; i < 3; i++) await createPet({ name: `Sold ${i}`, categoryId: 4, status: 'sold' });
        const exchange = await expectStatus('listPets', 200, '/pets?status=sold&limit=2');
        const pets = exchange.json as Array<{ status: string }>;
        expect(pets).toHaveLength(2);
        expect(pets.every((p) => p.status === 'sold')).toBe(true);
      });

      check('paging: Link rel="next" keeps limit and status, lists every animal once in id order, and the last page has none', { stateful: true }, async () => {
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

      check('401 for a key the server never issued; the challenge adds error="invalid_token"', { stateful: true }, async () => {
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

      check('create-then-get: 201 returns what was stored, Location is its address, status defaults to available', { stateful: true }, async () => {
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
        ['name with a lone surrogate', '{"name":"a\\ud800b","categoryId":3}'],
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

      check('400 details name the offending body field', { stateful: true }, async () => {
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

      check('413 payload_too_large Error for a body over 64 KiB', { stateful: true }, async () => {
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

      check('404 not_found Error for an id never created', { stateful: true }, async () => {
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

      check('400 details name petId in the path', { stateful: true }, async () => {
        const exchange = await expectStatus('getPet', 400, '/pets/abc');
        expect(field(exchange.json, 'details')).toEqual([expect.objectContaining({ in: 'path', field: 'petId' })]);
      });

      check('401 unauthorized Error with WWW-Authenticate without a bearer header', {}, async () => {
        await expectUnauthorized('getPet', '/pets/1', { authorization: null });
      });
    });
  });
}
