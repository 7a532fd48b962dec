/**
 * Prometheus metrics (src/features/metrics/): served on their own listener when METRICS_PORT is set,
 * never on the public port. HTTP server metrics by OpenTelemetry's semantic conventions in their
 * Prometheus form (http_server_request_duration_seconds by method, status and route, with the
 * conventions' buckets; http_server_active_requests), scraped from a real server on a real port;
 * the service's own animal_store_ metrics (group commit batch sizes, the key cache's age, the pool
 * on PostgreSQL) and Node's defaults.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/env.js';
import { loadConfig } from '../../config.js';
import { readMetrics } from './config.js';
import { addPets, startTestServer, type Target, type TestServer } from '../../../test/support/server.js';
import { startReceiver } from '../../../test/support/receiver.js';
import { createEndpointStore } from '../webhooks/endpoints.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Every sample of a Prometheus text exposition, its labels parsed (values unescaped enough for these tests). */
function samplesOf(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key as string] = value as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The value of the one sample with exactly these labels (no more, no fewer), in whatever order the text writes them. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels);
  const found = samplesOf(text).find((s) => s.name === name && Object.keys(s.labels).length === wanted.length && wanted.every(([k, v]) => s.labels[k] === v));
  return found?.value;
}

const COUNT = 'http_server_request_duration_seconds_count';
/** The labels of one request's series: the conventions' names, the status as sent, the scheme of this plain-HTTP server. */
const series = (method: string, status: number, route?: string, extra: Record<string, string> = {}): Record<string, string> => ({
  http_request_method: method,
  http_response_status_code: String(status),
  ...(route === undefined ? {} : { http_route: route }),
  url_scheme: 'http',
  ...extra,
});

async function scrape(t: TestServer): Promise<string> {
  const origin = t.server.featureOrigins.metrics;
  if (!origin) throw new Error('no metrics listener');
  const response = await fetch(`${origin}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** Scrapes until `done` holds (the server sees a closed connection a moment after the client closes it). */
async function scrapeUntil(t: TestServer, done: (text: string) => boolean): Promise<string> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const text = await scrape(t);
    if (done(text) || Date.now() > deadline) return text;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each<Target>(['sqlite', 'pglite'])('metrics on METRICS_PORT [%s]', (target) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(target, { env: { METRICS_PORT: '0', METRICS_HOST: '127.0.0.1', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_RETRY_SCHEDULE: '0.1', WEBHOOKS_POLL_MS: '100' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a second listener, on another port, serves GET /metrics only', async () => {
    const origin = t.server.featureOrigins.metrics ?? '';
    expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(origin).not.toBe(t.origin);
    const other = await fetch(`${origin}/v1/pets`, { headers: { Authorization: `Bearer ${t.key}` } });
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ code: 'not_found', status: 404 });
    const post = await fetch(`${origin}/metrics`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('the public port answers /metrics with its 404 Error body, with or without an API key', async () => {
    for (const headers of [{}, { Authorization: `Bearer ${t.key}` }] as Array<Record<string, string>>) {
      const response = await fetch(`${t.origin}/metrics`, { headers });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ code: 'not_found', message: expect.any(String), status: 404 });
    }
  });

  it("http_server_request_duration_seconds counts each request by method, status and the spec's route (its _count is the request count)", async () => {
    const [pet] = await addPets(t, 1);
    const listed = series('GET', 200, '/v1/pets');
    const before = sample(await scrape(t), COUNT, listed) ?? 0;
    for (let i = 0; i < 3; i++) expect((await t.request('/pets?limit=1')).status).toBe(200);
    expect((await t.request(`/pets/${pet?.id ?? 0}`)).status).toBe(200);
    expect((await t.request('/pets?limit=0')).status).toBe(400);
    expect((await t.request('/pets/987654321')).status).toBe(404);
    expect((await t.request('/pets', { auth: false })).status).toBe(401);
    expect((await fetch(`${t.origin}/healthz`)).status).toBe(200);
    expect((await fetch(`${t.origin}/no/such/path/123`)).status).toBe(404);
    const text = await scrape(t);
    expect(sample(text, COUNT, listed)).toBe(before + 3);
    // The exposition line as a dashboard's query matches it: the path template, never the id.
    expect(text).toMatch(/^http_server_request_duration_seconds_count\{http_request_method="GET",http_response_status_code="200",http_route="\/v1\/pets\/\{petId\}",url_scheme="http"\} [1-9]\d*$/m);
    expect(sample(text, COUNT, series('GET', 400, '/v1/pets'))).toBeGreaterThanOrEqual(1);
    expect(sample(text, COUNT, series('GET', 404, '/v1/pets/{petId}'))).toBeGreaterThanOrEqual(1);
    // A failed key check belongs to the operation the router matched: its route, as the conventions define http.route.
    expect(sample(text, COUNT, series('GET', 401, '/v1/pets'))).toBeGreaterThanOrEqual(1);
    expect(sample(text, COUNT, series('GET', 200, '/healthz'))).toBeGreaterThanOrEqual(1);
    // An unknown path matched no route: the conventions leave http_route out rather than put the path in.
    expect(sample(text, COUNT, series('GET', 404))).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('/no/such/path');
    expect(text).not.toContain('987654321');
    // Every route label is a route of the server: the spec's templates and the fixed pages.
    const routes = new Set(samplesOf(text).flatMap((s) => (s.labels.http_route === undefined ? [] : [s.labels.http_route])));
    expect([...routes].filter((route) => !['/v1/pets', '/v1/pets/{petId}', '/healthz', '/readyz', '/openapi.json', '/docs', '/docs/*'].includes(route))).toEqual([]);
    // The request counter this histogram replaced is gone, with its lane and operation labels.
    expect(text).not.toContain('animal_store_http_');
  });

  it('a method the conventions do not know is _OTHER, whatever the client sent', async () => {
    // node:http's parser admits WebDAV's methods; the API has no route for them.
    expect((await t.request('/pets', { method: 'PROPFIND' })).status).toBe(405);
    expect((await fetch(`${t.origin}/no/such/path`, { method: 'MKCOL' })).status).toBe(404);
    const text = await scrape(t);
    expect(sample(text, COUNT, series('_OTHER', 405))).toBeGreaterThanOrEqual(1);
    expect(sample(text, COUNT, series('_OTHER', 404))).toBeGreaterThanOrEqual(1);
    expect(text).not.toMatch(/PROPFIND|MKCOL/);
  });

  it("the duration histogram has the conventions' buckets (5 ms to 10 s), its sum and count", async () => {
    const text = await scrape(t);
    const listed = series('GET', 200, '/v1/pets');
    const count = sample(text, COUNT, listed) ?? 0;
    expect(count).toBeGreaterThanOrEqual(3);
    const bounds = samplesOf(text)
      .filter((s) => s.name === 'http_server_request_duration_seconds_bucket' && s.labels.http_route === '/v1/pets' && s.labels.http_response_status_code === '200')
      .map((s) => s.labels.le);
    expect(bounds).toEqual(['0.005', '0.01', '0.025', '0.05', '0.075', '0.1', '0.25', '0.5', '0.75', '1', '2.5', '5', '7.5', '10', '+Inf']);
    expect(sample(text, 'http_server_request_duration_seconds_bucket', { ...listed, le: '+Inf' })).toBe(count);
    expect(sample(text, 'http_server_request_duration_seconds_sum', listed)).toBeGreaterThan(0);
    expect(text).toContain('# TYPE http_server_request_duration_seconds histogram');
  });

  it('http_server_active_requests counts a request in flight; a request whose client leaves is timed with error_type aborted', async () => {
    const active = { http_request_method: 'POST', url_scheme: 'http' };
    // A create whose body never finishes arriving: the server holds it, reading.
    const client = httpRequest(`${t.api}/pets`, { method: 'POST', headers: { Authorization: `Bearer ${t.key}`, 'Content-Type': 'application/json', 'Content-Length': '100' } });
    client.on('error', () => {});
    client.write('{"name":');
    const during = await scrapeUntil(t, (text) => (sample(text, 'http_server_active_requests', active) ?? 0) >= 1);
    expect(sample(during, 'http_server_active_requests', active)).toBeGreaterThanOrEqual(1);
    expect(during).toContain('# TYPE http_server_active_requests gauge');
    const aborted = { error_type: 'aborted', http_request_method: 'POST', http_route: '/v1/pets', url_scheme: 'http' };
    const before = sample(during, COUNT, aborted) ?? 0;
    client.destroy();
    const after = await scrapeUntil(t, (text) => sample(text, 'http_server_active_requests', active) === 0);
    expect(sample(after, 'http_server_active_requests', active)).toBe(0);
    // No status was sent, so none is labelled.
    expect(sample(after, COUNT, aborted)).toBe(before + 1);
  });

  it('batch sizes of the group commit after creates', async () => {
    const before = sample(await scrape(t), 'animal_store_create_batch_size_sum') ?? 0;
    await addPets(t, 20); // ten concurrent creates at a time
    const text = await scrape(t);
    expect(sample(text, 'animal_store_create_batch_size_sum')).toBe(before + 20);
    expect(sample(text, 'animal_store_create_batch_size_count')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'animal_store_create_batch_size_bucket', { le: '256' })).toBe(sample(text, 'animal_store_create_batch_size_count'));
    expect(sample(text, COUNT, series('POST', 201, '/v1/pets'))).toBeGreaterThanOrEqual(20);
  });

  it('webhook attempts by event and outcome, and the lag from commit to delivery', async () => {
    const receiver = await startReceiver((_delivery, nth) => ({ status: nth === 0 ? 500 : 204 }));
    try {
      await createEndpointStore(t.server.database.db).add(receiver.url, ['petCreated']);
      await addPets(t, 1);
      const text = await scrapeUntil(t, (scraped) => sample(scraped, 'animal_store_webhook_attempts_total', { event: 'petCreated', outcome: 'delivered' }) === 1);
      expect(sample(text, 'animal_store_webhook_attempts_total', { event: 'petCreated', outcome: 'failed' })).toBe(1);
      expect(sample(text, 'animal_store_webhook_delivery_lag_seconds_count', { event: 'petCreated' })).toBe(1);
      expect(sample(text, 'animal_store_webhook_delivery_lag_seconds_bucket', { event: 'petCreated', le: '259200' })).toBe(1);
      // The retry came at least the schedule's delay (0.1 s, less its jitter) after the first attempt.
      expect(sample(text, 'animal_store_webhook_delivery_lag_seconds_sum', { event: 'petCreated' })).toBeGreaterThan(0.09);
    } finally {
      await receiver.close();
    }
  });

  it('the key cache age: seconds since the last successful reload (KEY_REFRESH_MS 200 here)', async () => {
    const age = sample(await scrape(t), 'animal_store_api_key_cache_age_seconds');
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(2);
  });

  it('the database: its dialect, and the pool on PostgreSQL', async () => {
    const text = await scrape(t);
    const dialect = target === 'sqlite' ? 'sqlite' : 'postgres';
    expect(sample(text, 'animal_store_db_info', { dialect })).toBe(1);
    if (target === 'sqlite') {
      expect(text).not.toContain('animal_store_db_pool_');
    } else {
      expect(sample(text, 'animal_store_db_pool_connections')).toBeGreaterThanOrEqual(0);
      expect(sample(text, 'animal_store_db_pool_idle_connections')).toBeGreaterThanOrEqual(0);
      expect(sample(text, 'animal_store_db_pool_waiting_requests')).toBe(0);
    }
  });

  it("prom-client's default process metrics", async () => {
    const text = await scrape(t);
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
      expect(sample(text, name), name).toBeGreaterThanOrEqual(0);
    }
  });
});

describe('metrics off (METRICS_PORT unset)', () => {
  it('no listener, and /metrics on the public port is a 404 Error body with or without a key', async () => {
    const t = await startTestServer('sqlite');
    try {
      expect(t.server.featureOrigins.metrics).toBeUndefined();
      for (const headers of [{}, { Authorization: `Bearer ${t.key}` }] as Array<Record<string, string>>) {
        const response = await fetch(`${t.origin}/metrics`, { headers });
        expect(response.status).toBe(404);
        expect(await response.json()).toMatchObject({ code: 'not_found', status: 404 });
      }
    } finally {
      await t.close();
    }
  });

  it('graceful close closes the metrics listener too', async () => {
    const t = await startTestServer('sqlite', { env: { METRICS_PORT: '0' } });
    const origin = t.server.featureOrigins.metrics ?? '';
    expect((await fetch(`${origin}/metrics`)).status).toBe(200);
    await t.close();
    await expect(fetch(`${origin}/metrics`)).rejects.toThrow();
  });
});

describe('METRICS_PORT and METRICS_HOST are checked like the other variables', () => {
  it('unset or empty: off', () => {
    expect(readMetrics({})).toBeUndefined();
    expect(readMetrics({ METRICS_PORT: '' })).toBeUndefined();
  });

  it('set: the port, and METRICS_HOST (127.0.0.1 by default)', () => {
    expect(readMetrics({ METRICS_PORT: '9464' })).toEqual({ port: 9464, host: '127.0.0.1' });
    expect(readMetrics({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' })).toEqual({ port: 9464, host: '0.0.0.0' });
  });

  it.each([
    [{ METRICS_PORT: 'abc' }, /^METRICS_PORT must be a whole number from 0 to 65535; got "abc"$/],
    [{ METRICS_PORT: '70000' }, /^METRICS_PORT must be a whole number/],
    [{ METRICS_PORT: '-1' }, /^METRICS_PORT must be a whole number/],
    [{ METRICS_PORT: '8080' }, /^METRICS_PORT must differ from PORT \(8080\)/],
    [{ PORT: '9000', METRICS_PORT: '9000' }, /^METRICS_PORT must differ from PORT \(9000\)/],
    [{ METRICS_PORT: '9464', METRICS_HOST: 'bad host/' }, /^METRICS_HOST must be a host name or IP address/],
    [{ METRICS_HOST: '0.0.0.0' }, /^METRICS_HOST is set but METRICS_PORT is not/],
  ])('%o is refused, naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
