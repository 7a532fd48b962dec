/**
 * The error catalog (src/errors/catalog.ts) and the spec say the same: every code the contract
 * enumerates has an entry, and no other; each code's body is the schema whose enumeration holds
 * it; each code is sent with the statuses the enumeration's description gives it; and every
 * Refusal the catalog makes is an instance of that schema, with the code's headers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOG, type Code } from '../../src/errors/catalog.js';
import { errorResult, refuse } from '../../src/errors/refusal.js';
import { newAjv } from '../../src/shared/ajv.js';

type Schema = { enum?: string[]; description?: string; [key: string]: unknown };
const document = JSON.parse(readFileSync(join(process.cwd(), 'generated/openapi.json'), 'utf8')) as { components: { schemas: Record<string, Schema> } };
const { schemas } = document.components;

/** Each body schema and the enumeration of its `code`. */
const BODIES = { Error: 'ErrorCode', LimitError: 'LimitErrorCode', GoneError: 'GoneErrorCode', MediaError: 'MediaErrorCode' } as const;

/** `- \`code\` (400, 431): …` lines of an enumeration's description: the statuses it names per code. */
function statusesDescribed(schema: Schema): Map<string, number[]> {
  const described = new Map<string, number[]>();
  for (const match of (schema.description ?? '').matchAll(/^- `([a-z_]+)` \(([\d, ]+)\)/gm)) {
    described.set(match[1] as string, (match[2] as string).split(',').map((s) => Number(s.trim())));
  }
  return described;
}

const codes = Object.keys(CATALOG) as Code[];

describe('the error catalog against the spec', () => {
  it('has an entry for every code the spec enumerates, and for no other', () => {
    const enumerated = Object.values(BODIES).flatMap((name) => schemas[name]?.enum ?? []);
    expect(enumerated.length).toBeGreaterThan(0);
    expect([...codes].sort()).toEqual([...enumerated].sort());
  });

  it.each(codes)('%s: its body is the schema whose enumeration holds it, sent with the statuses the spec describes', (code) => {
    const entry = CATALOG[code];
    expect(schemas[BODIES[entry.body]]?.enum, `${code} is in ${BODIES[entry.body]}`).toContain(code);
    expect(statusesDescribed(schemas[BODIES[entry.body]] as Schema).get(code), `the spec's description of ${code}`).toEqual([...entry.statuses]);
  });

  it('every refusal a condition makes is an instance of its code\'s body schema, with the code\'s status and headers', () => {
    const ajv = newAjv();
    // The schemas' own $refs (#/components/schemas/ErrorCode) resolve inside this one.
    ajv.addSchema({ $id: 'spec', components: { schemas } });
    // Sample arguments by parameter name: each condition's sentence is built from these.
    const samples: Record<string, unknown> = {
      details: [{ in: 'query', field: 'limit', message: 'must be <= 100' }],
      challenge: 'Bearer realm="animal-store"',
      path: '/v1/nope',
      canonical: '/v1/nope',
      version: '9.9.9',
      method: 'PUT',
      allow: 'GET, HEAD',
      limit: 65536,
      limitKiB: 16,
      accepted: ['application/json'],
      offered: ['application/json', 'application/xml'],
      requestId: 'req-1',
      problems: ['status 299 is not declared'],
      operationId: 'getPet',
      message: 'Over the limit.',
      retryAfterS: 3,
      until: '2030-01-01T00:00:00Z',
      gone: { sunset: '2030-12-05T00:00:00Z', replacement: 'GET /pets' },
      problem: 'it ends before its closing boundary',
      field: 'name',
      what: 'Animal 1',
      name: 'photo',
      type: 'image/gif',
      max: 100,
      format: 'PNG',
      size: 2048,
    };
    let made = 0;
    for (const code of codes) {
      const entry = CATALOG[code];
      for (const [condition, say] of Object.entries(entry.says)) {
        const names = /^\(([^)]*)\)/.exec(say.toString())?.[1]?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];
        const args = names.map((name) => {
          expect(Object.hasOwn(samples, name), `a sample for ${code}.${condition}'s ${name}`).toBe(true);
          return samples[name];
        });
        const refusal = (refuse as (c: Code, k: string, ...a: unknown[]) => ReturnType<typeof refuse>)(code, condition, ...args);
        expect(entry.statuses, `${code}.${condition}'s status`).toContain(refusal.status);
        const body = refusal.body();
        expect(body).toMatchObject({ code, status: refusal.status });
        expect(ajv.validate({ $ref: `spec#/components/schemas/${entry.body}` }, body), `${code}.${condition}: ${ajv.errorsText()}`).toBe(true);
        for (const [header, value] of Object.entries('headers' in entry ? entry.headers : {})) {
          expect(refusal.headers?.[header], `${code}.${condition} carries ${header}`).toBe(value);
        }
        made++;
      }
    }
    expect(made).toBeGreaterThan(codes.length);
  });

  it('a handler\'s Error result takes its status and headers from the catalog', () => {
    expect(errorResult('not_found', 'No animal has id 3.')).toEqual({ status: 404, body: { code: 'not_found', message: 'No animal has id 3.', status: 404 } });
    expect(errorResult('idempotency_key_in_use', 'Retry.')).toEqual({ status: 409, body: { code: 'idempotency_key_in_use', message: 'Retry.', status: 409 }, headers: { 'Retry-After': '1' } });
  });
});
