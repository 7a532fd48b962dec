/**
 * For the tracing tests (src/features/tracing/tracing.test.ts, test/processes/tracingBundle.test.ts): a real OTLP/HTTP
 * receiver on a local port that decodes what arrives as a collector would, and the server's entry
 * started as a process under a loader hook that records every module it loads.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'vitest';
import { startProcess, type RunningProcess } from '../../scripts/lib/processes.js';
import { projectRoot } from '../../src/shared/paths.js';

export interface Received {
  path: string;
  contentType: string;
  body: Buffer;
}

export interface Receiver {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT names: the exporter appends /v1/traces. */
  endpoint: string;
  /** Every export request, in arrival order. */
  received: Received[];
  close(): Promise<void>;
}

/** Accepts POST /v1/traces in JSON or protobuf and answers as a collector does: an empty success in the same encoding. */
export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const contentType = req.headers['content-type'] ?? '';
      received.push({ path: req.url ?? '', contentType, body: Buffer.concat(chunks) });
      const json = contentType.startsWith('application/json');
      res.writeHead(req.method === 'POST' && req.url === '/v1/traces' ? 200 : 404, { 'Content-Type': json ? 'application/json' : 'application/x-protobuf' });
      res.end(json ? '{}' : undefined);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the receiver got no port');
  return { endpoint: `http://127.0.0.1:${address.port}`, received, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

type Value = string | number | boolean;

export interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 2 SERVER, 3 CLIENT. */
  kind: number;
  attributes: Record<string, Value>;
  /** OTLP's status code: 0 unset, 2 error. */
  status: number;
  resource: Record<string, Value>;
}

interface JsonKeyValue {
  key: string;
  value: { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
}

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: JsonKeyValue[];
  status?: { code?: number };
}

interface JsonExportRequest {
  resourceSpans?: Array<{ resource?: { attributes?: JsonKeyValue[] }; scopeSpans?: Array<{ spans?: JsonSpan[] }> }>;
}

function valuesOf(list: JsonKeyValue[] | undefined): Record<string, Value> {
  const values: Record<string, Value> = {};
  // OTLP/JSON may write a 64-bit integer as a string.
  for (const { key, value } of list ?? []) values[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : undefined) ?? value.boolValue ?? value.doubleValue ?? '';
  return values;
}

/** Every span of the OTLP/JSON export requests received so far (each checked to be one). */
export function jsonSpans(received: readonly Received[]): ExportedSpan[] {
  const spans: ExportedSpan[] = [];
  for (const { path, contentType, body } of received) {
    expect(path).toBe('/v1/traces');
    expect(contentType).toMatch(/^application\/json/);
    const request = JSON.parse(body.toString('utf8')) as JsonExportRequest;
    for (const resourceSpans of request.resourceSpans ?? []) {
      const resource = valuesOf(resourceSpans.resource?.attributes);
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          spans.push({ traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId ?? '', name: span.name, kind: span.kind, attributes: valuesOf(span.attributes), status: span.status?.code ?? 0, resource });
        }
      }
    }
  }
  return spans;
}

/** Polls `find` until it returns something; fails naming `what` after `timeoutMs`. */
export async function until<T>(what: string, find: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export const randomHex = (bytes: number): string => randomBytes(bytes).toString('hex');

/** A W3C traceparent for a sampled call from a caller's span. */
export const traceparent = (traceId: string, parentSpanId: string): string => `00-${traceId}-${parentSpanId}-01`;

/** `node --import` this first: the process prints the modules it loaded as it exits (test/fixtures/tracing/record-modules.mjs). */
export const RECORD_MODULES_HOOK = pathToFileURL(join(projectRoot, 'test', 'fixtures', 'tracing', 'record-modules.mjs')).href;

/** The modules the process reported as it exited (those matching its RECORD_MODULES). */
export function recordedModules(output: string): string[] {
  const match = /^RECORDED MODULES (\[.*\])$/m.exec(output);
  if (!match) throw new Error(`the process did not report its modules:\n${output}`);
  return JSON.parse(match[1] as string) as string[];
}

/**
 * The environment of a plain start on a fresh SQLite file: none of OpenTelemetry's variables, and
 * no metrics (prom-client itself loads @opentelemetry/api); then `extra`.
 */
export function plainEnv(sqlitePath: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('OTEL_')) env[key] = value;
  return { ...env, PORT: '0', HOST: '127.0.0.1', SQLITE_PATH: sqlitePath, DATABASE_URL: '', METRICS_PORT: '', RATE_LIMIT: '', LOG_LEVEL: 'info', NODE_ENV: 'production', ...extra };
}

/**
 * Starts the server's entry (`args` after node's own, the loader hook first), reads its address and
 * the first key from its banner, creates a pet and reads it back with a traceparent. Resolves with
 * the process and the trace id the read carried.
 */
export async function startAndAsk(args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ proc: RunningProcess; traceId: string }> {
  const proc = startProcess(process.execPath, ['--import', RECORD_MODULES_HOOK, ...args], { cwd: projectRoot, env });
  try {
    return { proc, traceId: await askTraced(proc) };
  } catch (error) {
    // A failed step must not leave the server running after the test.
    proc.child.kill('SIGKILL');
    throw error;
  }
}

async function askTraced(proc: RunningProcess): Promise<string> {
  const { base, key } = await until(
    'the banner',
    () => {
      if (!proc.running()) throw new Error(`the server exited:\n${proc.output()}`);
      const base = /listening on (http:\/\/\S+\/v1)/.exec(proc.output())?.[1];
      const key = /^\s+(ask_[A-Za-z0-9_-]{43})$/m.exec(proc.output())?.[1];
      return base !== undefined && key !== undefined ? { base, key } : undefined;
    },
    45_000,
  );
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  const created = await fetch(`${base}/pets`, { method: 'POST', headers, body: JSON.stringify({ name: 'Biscuit', categoryId: 2 }) });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: number };
  const traceId = randomHex(16);
  const read = await fetch(`${base}/pets/${id}`, { headers: { ...headers, traceparent: traceparent(traceId, randomHex(8)) } });
  expect(read.status).toBe(200);
  return traceId;
}
