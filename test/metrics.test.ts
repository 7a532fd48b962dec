/**
 * Prometheus metrics (src/http/metrics.ts): served on their own listener when METRICS_PORT is set,
 * never on the public port; requests counted by lane, operationId and status, latency histograms,
 * the group commit's batch sizes, the key cache's age, the pool (PostgreSQL) and Node's defaults.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { addPets, startTestServer, type Target, type TestServer } from './support/server.js';

/** The value of one sample: `name{labels}` exactly as prom-client writes it (labels in declared order). */
function sample(text: string, name: string, labels = ''): number | undefined {
  const prefix = labels === '' ? `${name} ` : `${name}{${labels}} `;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(prefix.length));
}

async function scrape(t: TestServer): Promise<string> {
  const origin = t.server.metricsOrigin;
  if (!origin) throw new Error('no metrics listener');
  const response = await fetch(`${origin}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

describe.each<Target>(['sqlite', 'pglite'])('metrics on METRICS_PORT [%s]', (target) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer(target, { metricsPort: 0, metricsHost: '127.0.0.1' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a second listener, on another port, serves GET /metrics only', async () => {
    const origin = t.server.metricsOrigin ?? '';
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

  it('counts requests by operationId and status, and they go up after requests', async () => {
    const labels = 'lane="api",operation="listPets",status="200"';
    const before = sample(await scrape(t), 'animal_store_http_requests_total', labels) ?? 0;
    for (let i = 0; i < 3; i++) expect((await t.request('/pets?limit=1')).status).toBe(200);
    expect((await t.request('/pets?limit=0')).status).toBe(400);
    expect((await t.request('/pets/987654321')).status).toBe(404);
    expect((await t.request('/pets', { auth: false })).status).toBe(401);
    expect((await fetch(`${t.origin}/healthz`)).status).toBe(200);
    expect((await fetch(`${t.origin}/no/such/path/123`)).status).toBe(404);
    const text = await scrape(t);
    expect(sample(text, 'animal_store_http_requests_total', labels)).toBe(before + 3);
    expect(sample(text, 'animal_store_http_requests_total', 'lane="api",operation="listPets",status="400"')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'animal_store_http_requests_total', 'lane="api",operation="getPet",status="404"')).toBeGreaterThanOrEqual(1);
    // A failed key check gets no operation: its count says so without a path.
    expect(sample(text, 'animal_store_http_requests_total', 'lane="api",operation="none",status="401"')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'animal_store_http_requests_total', 'lane="probe",operation="healthz",status="200"')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'animal_store_http_requests_total', 'lane="unknown",operation="none",status="404"')).toBeGreaterThanOrEqual(1);
    // Never a raw path in a label.
    expect(text).not.toContain('/no/such/path');
    expect(text).not.toContain('987654321');
    expect(text.split('\n').filter((line) => /\{[^}]*\//.test(line))).toEqual([]);
  });

  it('latency histograms per operation: buckets, sum and count', async () => {
    const text = await scrape(t);
    const count = sample(text, 'animal_store_http_request_duration_seconds_count', 'lane="api",operation="listPets"') ?? 0;
    expect(count).toBeGreaterThanOrEqual(4);
    expect(sample(text, 'animal_store_http_request_duration_seconds_bucket', 'le="5",lane="api",operation="listPets"')).toBe(count);
    expect(sample(text, 'animal_store_http_request_duration_seconds_bucket', 'le="+Inf",lane="api",operation="listPets"')).toBe(count);
    expect(sample(text, 'animal_store_http_request_duration_seconds_bucket', 'le="0.0005",lane="api",operation="listPets"')).toBeDefined();
    expect(sample(text, 'animal_store_http_request_duration_seconds_sum', 'lane="api",operation="listPets"')).toBeGreaterThan(0);
  });

  it('batch sizes of the group commit after creates', async () => {
    const before = sample(await scrape(t), 'animal_store_create_batch_size_sum') ?? 0;
    await addPets(t, 20); // ten concurrent creates at a time
    const text = await scrape(t);
    expect(sample(text, 'animal_store_create_batch_size_sum')).toBe(before + 20);
    expect(sample(text, 'animal_store_create_batch_size_count')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'animal_store_create_batch_size_bucket', 'le="256"')).toBe(sample(text, 'animal_store_create_batch_size_count'));
    expect(sample(text, 'animal_store_http_requests_total', 'lane="api",operation="createPet",status="201"')).toBeGreaterThanOrEqual(20);
  });

  it('the key cache age: seconds since the last successful reload (KEY_REFRESH_MS 200 here)', async () => {
    const age = sample(await scrape(t), 'animal_store_api_key_cache_age_seconds');
    expect(age).toBeGreaterThanOrEqual(0);
    expect(age).toBeLessThan(2);
  });

  it('the database: its dialect, and the pool on PostgreSQL', async () => {
    const text = await scrape(t);
    const dialect = target === 'sqlite' ? 'sqlite' : 'postgres';
    expect(sample(text, 'animal_store_db_info', `dialect="${dialect}"`)).toBe(1);
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
      expect(t.server.metricsOrigin).toBeUndefined();
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
    const t = await startTestServer('sqlite', { metricsPort: 0 });
    const origin = t.server.metricsOrigin ?? '';
    expect((await fetch(`${origin}/metrics`)).status).toBe(200);
    await t.close();
    await expect(fetch(`${origin}/metrics`)).rejects.toThrow();
  });
});

describe('METRICS_PORT and METRICS_HOST are checked like the other variables', () => {
  it('unset or empty: off', () => {
    expect(loadConfig({}).metricsPort).toBeUndefined();
    expect(loadConfig({ METRICS_PORT: '' }).metricsPort).toBeUndefined();
  });

  it('set: the port, and METRICS_HOST (127.0.0.1 by default)', () => {
    expect(loadConfig({ METRICS_PORT: '9464' })).toMatchObject({ metricsPort: 9464, metricsHost: '127.0.0.1' });
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' })).toMatchObject({ metricsPort: 9464, metricsHost: '0.0.0.0' });
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
