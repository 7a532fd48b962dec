/**
 * OpenTelemetry traces (src/features/tracing/tracing.ts), turned on by the SDK's own variables and sent
 * over OTLP/HTTP to a real receiver on a local port, decoded as a collector would:
 * - each request is a SERVER span named and attributed by the HTTP conventions, continuing the
 *   caller's `traceparent`; each query of it a CLIENT span under it, by the database conventions,
 *   with no bound value and no API key anywhere; the request's log lines carry its ids;
 * - `npm start`'s entry as a process: without the variables no module of OpenTelemetry is loaded
 *   at all (a loader hook records every module), and with them SIGTERM exports what was buffered
 *   in the default protocol, protobuf.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopProcess } from '../../../scripts/lib/processes.js';
import { ConfigError } from '../../shared/env.js';
import { readTracing } from './config.js';
import { createLogger } from '../../shared/logger.js';
import { startTestServer, type TestServer } from '../../../test/support/server.js';
import { jsonSpans, plainEnv, randomHex as hex, recordedModules, startAndAsk, startReceiver, traceparent, until, type Receiver } from '../../../test/support/tracing.js';

describe('which variables turn traces on (src/features/tracing/config.ts, the SDK\'s own names)', () => {
  const tracing = (env: Record<string, string>) => readTracing(env);

  it('off unless an OTLP endpoint is named or OTEL_SDK_DISABLED=false asks for the SDK', () => {
    expect(tracing({})).toBeUndefined();
    expect(tracing({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toBeUndefined();
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBeUndefined();
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual({ protocol: 'http/protobuf' });
    expect(tracing({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector:4318/v1/traces' })).toEqual({ protocol: 'http/protobuf' });
    expect(tracing({ OTEL_SDK_DISABLED: 'false' })).toEqual({ protocol: 'http/protobuf' });
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'TRUE' })).toBeUndefined();
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
  });

  it('the protocol: the traces variable over the general one; http/json too; gRPC and other exporters refused at start', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(tracing({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toEqual({ protocol: 'http/json' });
    expect(tracing({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' })).toEqual({ protocol: 'http/protobuf' });
    expect(() => tracing({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(ConfigError);
    expect(() => tracing({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported/);
    expect(() => tracing({ ...on, OTEL_TRACES_EXPORTER: 'console' })).toThrow(/OTEL_TRACES_EXPORTER must be otlp or none/);
    expect(() => tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });
});

describe('the query summary (the database conventions\' "Generating a summary of the query")', () => {
  it('each operation and each table it names, in order; no literal, no placeholder', async () => {
    const { summarise } = await import('./tracing.js');
    expect(summarise('select "id", "name" from "pets" where "id" = ?')).toEqual({ summary: 'SELECT pets', operation: 'SELECT', collection: 'pets' });
    expect(summarise('insert into "pets" ("name") values (?) returning "id"')).toEqual({ summary: 'INSERT pets', operation: 'INSERT', collection: 'pets' });
    expect(summarise("select page, exists(select 1 from pets p where p.id > agg.last_id) from (select json_group_array(json_object('id', id)) as page from (select id from pets where status = ? limit cast(? as integer)) as r) as agg")).toEqual({
      summary: 'SELECT SELECT pets SELECT SELECT pets',
      operation: 'SELECT',
      collection: 'pets',
    });
    // A function in FROM is no table; ON CONFLICT … DO UPDATE belongs to its INSERT.
    expect(summarise('insert into idempotency_keys (caller) select c from unnest($1::text[]) as c on conflict (caller) do update set caller = excluded.caller')).toEqual({
      summary: 'INSERT idempotency_keys SELECT',
      operation: 'INSERT',
      collection: 'idempotency_keys',
    });
    expect(summarise('select * from songs, artists join albums on albums.id = songs.album_id')).toEqual({ summary: 'SELECT songs artists albums', operation: 'SELECT', collection: undefined });
    expect(summarise('update pets set status = ? where id = ?').summary).toBe('UPDATE pets');
  });
});

describe('traced (OTEL_EXPORTER_OTLP_ENDPOINT, http/json): a getPet with a traceparent, received by a local OTLP/HTTP receiver', () => {
  const variables = {
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'animal-store-under-test',
    // Export within a moment, not the default 5 s.
    OTEL_BSP_SCHEDULE_DELAY: '50',
  };
  const lines: string[] = [];
  let receiver: Receiver;
  let t: TestServer;

  beforeAll(async () => {
    receiver = await startReceiver();
    // The SDK reads the process's environment; the server's configuration reads the same names.
    Object.assign(process.env, variables, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint });
    expect(readTracing(process.env)).toEqual({ protocol: 'http/json' });
    t = await startTestServer('sqlite', { logLevel: 'info', env: process.env }, { logger: createLogger('info', { write: (line: string) => void lines.push(line) }) });
  });

  afterAll(async () => {
    await t?.close();
    for (const name of [...Object.keys(variables), 'OTEL_EXPORTER_OTLP_ENDPOINT']) delete process.env[name];
    await receiver?.close();
  });

  it("one SERVER span by the HTTP conventions, in the caller's trace, with a CLIENT span for its query under it", async () => {
    const created = await t.request('/pets', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Biscuit', categoryId: 2 }) });
    expect(created.status).toBe(201);
    const petId = ((await created.json()) as { id: number }).id;
    const traceId = hex(16);
    const callerSpanId = hex(8);
    const response = await t.request(`/pets/${petId}`, { headers: { traceparent: traceparent(traceId, callerSpanId), 'User-Agent': 'tracing-test/1' } });
    expect(response.status).toBe(200);

    const server = await until('the getPet span', () => jsonSpans(receiver.received).find((s) => s.traceId === traceId && s.kind === 2));
    expect(server.name).toBe('GET /v1/pets/{petId}');
    expect(server.parentSpanId).toBe(callerSpanId);
    const port = Number(new URL(t.origin).port);
    expect(server.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/v1/pets/{petId}',
      'http.response.status_code': 200,
      'url.path': `/v1/pets/${petId}`,
      'url.scheme': 'http',
      'server.address': '127.0.0.1',
      'server.port': port,
      'network.protocol.version': '1.1',
      'client.address': '127.0.0.1',
      'user_agent.original': 'tracing-test/1',
      'animal_store.operation_id': 'getPet',
    });
    // A success: no error.type, the status unset.
    expect(server.attributes['error.type']).toBeUndefined();
    expect(server.status).toBe(0);
    expect(server.resource['service.name']).toBe('animal-store-under-test');

    const query = await until('the query span', () => jsonSpans(receiver.received).find((s) => s.traceId === traceId && s.parentSpanId === server.spanId));
    expect(query).toMatchObject({ name: 'SELECT pets', kind: 3 });
    expect(query.attributes).toMatchObject({
      'db.system.name': 'sqlite',
      'db.operation.name': 'SELECT',
      'db.collection.name': 'pets',
      'db.query.summary': 'SELECT pets',
    });
    expect(query.attributes['db.query.text']).toMatch(/^select .* from "pets" where "id" = \?$/);
  });

  it("the request's log line carries its trace_id and span_id", async () => {
    const traceId = hex(16);
    const response = await t.request('/pets/1', { headers: { traceparent: traceparent(traceId, hex(8)), 'X-Request-Id': 'traced-request' } });
    expect(response.status).toBe(200);
    const server = await until('the span', () => jsonSpans(receiver.received).find((s) => s.traceId === traceId && s.kind === 2));
    const line = await until('the request log line', () => lines.map((text) => JSON.parse(text) as Record<string, unknown>).find((entry) => entry.reqId === 'traced-request' && entry.msg === 'request'));
    expect(line).toMatchObject({ trace_id: traceId, span_id: server.spanId, trace_flags: '01' });
    // Outside any request (the start-up, a key reload), a line has no ids.
    const outside = lines.map((text) => JSON.parse(text) as Record<string, unknown>).filter((entry) => entry.msg !== 'request');
    for (const entry of outside) expect(entry.trace_id).toBeUndefined();
  });

  it('a create: its insert under its own span; neither the body\'s values nor the API key appear in anything exported', async () => {
    const name = `Marker-${hex(6)}`;
    const traceId = hex(16);
    const response = await t.request('/pets', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', traceparent: traceparent(traceId, hex(8)) },
      body: JSON.stringify({ name, categoryId: 7 }),
    });
    expect(response.status).toBe(201);
    const server = await until('the createPet span', () => jsonSpans(receiver.received).find((s) => s.traceId === traceId && s.kind === 2));
    expect(server.name).toBe('POST /v1/pets');
    expect(server.attributes).toMatchObject({ 'http.route': '/v1/pets', 'http.response.status_code': 201, 'animal_store.operation_id': 'createPet' });
    const insert = await until('the insert span', () => jsonSpans(receiver.received).find((s) => s.parentSpanId === server.spanId));
    expect(insert).toMatchObject({ name: 'INSERT pets', kind: 3 });
    const everything = receiver.received.map((r) => r.body.toString('utf8')).join('\n');
    expect(everything).not.toContain(name);
    expect(everything).not.toContain(t.key);
  });

  it('no route matched: named by the method alone, without http.route; a 4xx is no server error', async () => {
    const traceId = hex(16);
    const response = await t.request('/no-such-thing', { headers: { traceparent: traceparent(traceId, hex(8)) } });
    expect(response.status).toBe(404);
    const server = await until('the span', () => jsonSpans(receiver.received).find((s) => s.traceId === traceId && s.kind === 2));
    expect(server.name).toBe('GET');
    expect(server.attributes['http.route']).toBeUndefined();
    expect(server.attributes['http.response.status_code']).toBe(404);
    expect(server.attributes['error.type']).toBeUndefined();
    expect(server.status).toBe(0);
  });
});

describe("`npm start`'s entry (src/main.ts, from the sources) as a process, every module it loads recorded", () => {
  const entry = ['--import', 'tsx', 'src/main.ts'];
  let dir: string;
  let receiver: Receiver;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'animal-store-tracing-'));
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('without the variables: no module of OpenTelemetry is loaded, nothing is exported', async () => {
    const { proc } = await startAndAsk(entry, plainEnv(join(dir, 'off.sqlite')));
    expect(await stopProcess(proc)).toEqual({ code: 0, signal: null });
    expect(recordedModules(proc.output())).toEqual([]);
    expect(receiver.received).toEqual([]);
  }, 90_000);

  it('with OTEL_EXPORTER_OTLP_ENDPOINT: the SDK is loaded, and SIGTERM exports the spans still buffered, in protobuf', async () => {
    // A schedule longer than the test: the spans leave only with the stop's flush.
    const { proc, traceId } = await startAndAsk(entry, plainEnv(join(dir, 'on.sqlite'), { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '600000' }));
    expect(receiver.received).toEqual([]);
    expect(await stopProcess(proc)).toEqual({ code: 0, signal: null });
    // The positive control of the test above: the same hook sees OpenTelemetry when it is loaded.
    const loaded = recordedModules(proc.output());
    expect(loaded.some((url) => url.includes('@opentelemetry/sdk-trace-node'))).toBe(true);
    expect(loaded.some((url) => url.includes('@opentelemetry/exporter-trace-otlp-proto'))).toBe(true);

    // OTLP/HTTP's default encoding: protobuf, the trace id as its 16 bytes, names as UTF-8.
    expect(receiver.received.length).toBeGreaterThan(0);
    for (const { path, contentType } of receiver.received) {
      expect(path).toBe('/v1/traces');
      expect(contentType).toBe('application/x-protobuf');
    }
    const body = Buffer.concat(receiver.received.map((r) => r.body));
    expect(body.includes(Buffer.from(traceId, 'hex'))).toBe(true);
    expect(body.includes(Buffer.from('GET /v1/pets/{petId}'))).toBe(true);
    expect(body.includes(Buffer.from('SELECT pets'))).toBe(true);
  }, 90_000);
});
