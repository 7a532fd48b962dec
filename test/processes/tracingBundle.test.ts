/**
 * Traces from the server exactly as `npm start` runs it: the esbuild bundle, where OpenTelemetry
 * lives in lazy chunks of its own (src/server.ts imports src/features/tracing/tracing.ts only when the
 * variables ask). Without the variables none of those chunks is even read; with them the spans of
 * a request reach a local OTLP/HTTP receiver when SIGTERM stops the server. (The sources' run is
 * src/features/tracing/tracing.test.ts; a bundle can differ: a dynamic import of a CommonJS package there has no
 * named exports, which once broke the exporter's loading in the bundle alone.)
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundledServerArgs, ensureBundle, root } from '../../scripts/lib/bundle.js';
import { stopProcess } from '../../scripts/lib/processes.js';
import { plainEnv, recordedModules, startAndAsk, startReceiver, type Receiver } from '../support/tracing.js';

const serverDir = join(root, 'dist', 'server');

/** The bundle's chunks built from OpenTelemetry's packages, as their source maps list their sources, by file URL. */
function openTelemetryChunks(): string[] {
  return readdirSync(serverDir)
    .filter((name) => name.endsWith('.mjs.map'))
    .filter((name) => {
      const { sources } = JSON.parse(readFileSync(join(serverDir, name), 'utf8')) as { sources: string[] };
      return sources.some((source) => source.includes('node_modules/@opentelemetry/'));
    })
    .map((name) => pathToFileURL(join(serverDir, name.slice(0, -'.map'.length))).href);
}

describe('the bundle `npm start` runs (dist/server/server.mjs), every chunk it loads recorded', () => {
  let dir: string;
  let receiver: Receiver;
  let chunks: string[];
  // The hook reports the bundle's own files, the chunks.
  const record = { RECORD_MODULES: '/dist/server/' };

  beforeAll(async () => {
    console.info(`tracingBundle: ${await ensureBundle()}`);
    chunks = openTelemetryChunks();
    dir = mkdtempSync(join(tmpdir(), 'animal-store-tracing-bundle-'));
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('OpenTelemetry is in chunks of its own, none of them the entry', () => {
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.some((url) => url.endsWith('/server.mjs'))).toBe(false);
  });

  it('without the variables: none of those chunks is loaded, nothing is exported', async () => {
    const { proc } = await startAndAsk(bundledServerArgs(), plainEnv(join(dir, 'off.sqlite'), record));
    expect(await stopProcess(proc)).toEqual({ code: 0, signal: null });
    const loaded = recordedModules(proc.output());
    expect(loaded.some((url) => url.endsWith('/dist/server/server.mjs'))).toBe(true);
    expect(loaded.filter((url) => chunks.includes(url))).toEqual([]);
    expect(receiver.received).toEqual([]);
  }, 90_000);

  it('with OTEL_EXPORTER_OTLP_ENDPOINT: they are loaded, the log lines carry the ids, and SIGTERM exports the request spans', async () => {
    const { proc, traceId } = await startAndAsk(bundledServerArgs(), plainEnv(join(dir, 'on.sqlite'), { ...record, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '600000' }));
    expect(await stopProcess(proc)).toEqual({ code: 0, signal: null });
    expect(recordedModules(proc.output()).filter((url) => chunks.includes(url)).length).toBeGreaterThan(0);

    const requestLine = proc
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((entry) => entry.msg === 'request' && entry.method === 'GET');
    expect(requestLine).toMatchObject({ trace_id: traceId, span_id: expect.stringMatching(/^[0-9a-f]{16}$/) });

    expect(receiver.received.length).toBeGreaterThan(0);
    for (const { contentType } of receiver.received) expect(contentType).toBe('application/x-protobuf');
    const body = Buffer.concat(receiver.received.map((r) => r.body));
    expect(body.includes(Buffer.from(traceId, 'hex'))).toBe(true);
    for (const text of ['GET /v1/pets/{petId}', 'POST /v1/pets', 'SELECT pets', 'INSERT pets', 'animal_store.operation_id']) expect(body.includes(Buffer.from(text)), text).toBe(true);
  }, 90_000);
});
