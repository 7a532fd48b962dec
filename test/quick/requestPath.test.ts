/**
 * The request path is one list (src/pipeline/requestPath.ts): every request runs through a prefix
 * of it, each stage once and in the list's order, and stops at the stage that answers or refuses
 * it. Each request here is one of the ways a request ends, sent in process (no socket adds
 * anything to the order), with every stage observed through `arrangeStages`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Stage } from '../../src/http/stage.js';
import { injectable, type Injectable } from '../support/inject.js';

/** The stages each request visited, in the order it visited them, by request id. */
const visits = new Map<string, string[]>();
const observed = (stages: Stage[]): Stage[] =>
  stages.map((stage) => ({
    name: stage.name,
    run(exchange, next) {
      const list = visits.get(exchange.requestId) ?? [];
      list.push(stage.name);
      visits.set(exchange.requestId, list);
      return stage.run(exchange, next);
    },
  }));

let t: Injectable;
let listed: readonly string[] = [];
beforeAll(async () => {
  t = await injectable({ arrangeStages: observed, env: { CORS_ORIGINS: 'https://app.example' } });
  listed = t.app.stages;
});
afterAll(() => t.close());

/** Sends one request with its own id; returns its status and the stages it visited. */
async function visited(name: string, options: Parameters<Injectable['inject']>[0]): Promise<{ status: number; stages: string[] }> {
  const id = `rp-${name.replace(/[^A-Za-z0-9]+/g, '-')}`;
  const response = await t.inject({ ...options, headers: { 'x-request-id': id, ...options.headers } });
  return { status: response.statusCode, stages: visits.get(id) ?? [] };
}

describe('the request path: one list, each stage once, in order', () => {
  it('lists the stages in the documented order, the configured features among them', () => {
    expect(listed).toEqual(['exit', 'cors', 'webhooks', 'probes', 'web', 'before routing', 'match', 'deprecation', 'authenticate', 'sunset', 'body', 'validate', 'negotiate', 'answer', 'ranges', 'conditional', 'exactly once', 'handle']);
  });

  const created = { name: 'Biscuit', categoryId: 2 };
  const cases: Array<[string, Parameters<Injectable['inject']>[0], number, string]> = [
    ['a create, through every stage', { method: 'POST', url: '/v1/pets', payload: created }, 201, 'handle'],
    ['a list', { method: 'GET', url: '/v1/pets?limit=2' }, 200, 'handle'],
    ['a deprecated read of an unknown pet', { method: 'GET', url: '/v1/pets/987654' }, 404, 'handle'],
    ['a probe', { method: 'GET', url: '/healthz' }, 200, 'probes'],
    ['a preflight', { method: 'OPTIONS', url: '/v1/pets', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } }, 204, 'cors'],
    ['a trailing slash', { method: 'GET', url: '/v1/pets/' }, 404, 'before routing'],
    ['an unknown path', { method: 'GET', url: '/v1/nope' }, 404, 'match'],
    ['another method', { method: 'DELETE', url: '/v1/pets' }, 405, 'match'],
    ['no key', { method: 'GET', url: '/v1/pets', auth: false }, 401, 'authenticate'],
    ['no key on a deprecated operation', { method: 'GET', url: '/v1/pets/1', auth: false }, 401, 'authenticate'],
    ['a body that is not JSON', { method: 'POST', url: '/v1/pets', payload: '{"name":', headers: { 'content-type': 'application/json' } }, 400, 'body'],
    ['a body of another media type', { method: 'POST', url: '/v1/pets', payload: 'name=Biscuit', headers: { 'content-type': 'text/plain' } }, 415, 'body'],
    ['a field that breaks the schema', { method: 'POST', url: '/v1/pets', payload: { name: 'Biscuit', categoryId: '2' } }, 400, 'validate'],
    ['a limit over the maximum', { method: 'GET', url: '/v1/pets?limit=101' }, 400, 'validate'],
  ];
  it.each(cases)('%s: the stages up to the one that ends it, each once, in the list\'s order', async (name, options, status, last) => {
    const result = await visited(name, options);
    expect(result.status).toBe(status);
    expect(result.stages.at(-1)).toBe(last);
    // A prefix of the list: in order, none twice, none skipped.
    expect(result.stages).toEqual(listed.slice(0, listed.indexOf(last) + 1));
  });

  it('a page outside the API ends in the web lane, past the probes', async () => {
    const result = await visited('the contract', { method: 'GET', url: '/openapi.json', auth: false });
    expect(result.status).toBe(200);
    expect(result.stages).toEqual(['exit', 'cors', 'webhooks', 'probes', 'web']);
  });

  it('no contract violation on the way', () => {
    expect(t.app.violations).toEqual([]);
  });
});
