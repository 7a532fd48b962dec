/**
 * The autocannon driver (its programmatic API, in this process; every server is a child, so none
 * shares the load generator's event loop): a warm-up on the same connections, then a measured
 * window with every response time, its statuses and the server's CPU use over it.
 */
import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { childPids } from './cleanup.js';
import type { LoadRequest, LoadTiming, RunResult } from './load.js';
import { cpuSnapshot, cpuUse, settle, type CpuSnapshot } from './measure.js';
import { percentile, round2 } from './stats.js';

// autocannon is CommonJS without bundled types: the slice of its API used here.

interface AcRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  setupRequest?: (request: AcRequest, context: Record<string, unknown>) => AcRequest;
}
interface AcOptions {
  url: string;
  connections: number;
  duration: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  requests?: AcRequest[];
  timeout?: number;
  /** Milliseconds between autocannon's samples; also how often it checks for stop(). */
  sampleInt?: number;
}
interface AcResult {
  timeouts: number;
  requests: { average: number };
  throughput: { average: number };
}
type AcInstance = EventEmitter & PromiseLike<AcResult> & { stop(): void };
const autocannon = createRequire(import.meta.url)('autocannon') as (options: AcOptions) => AcInstance;

/** Never wait for the ramp-up longer than this: a connection that gets no answer must not stall the run. */
const MAX_RAMP_S = 5;

interface Window {
  latencies: number[];
  statuses: Record<string, number>;
  errors: number;
  rampMs: number;
  /** CPU at the start of the measured window (undefined when it never started). */
  before: CpuSnapshot | undefined;
  /** The measured window, in ms (performance.now()). */
  from: number;
  to: number;
}

/**
 * Follows autocannon's responses through the warm-up into the measured window, and stops the
 * instance when that window is over. (Opening the connections is left out on purpose: a Node
 * server that is saturated accepts about one new connection per event-loop turn, so with 50
 * connections the last one waits 50 turns, 1–2 s here, for its first response; measured, that
 * ramp-up would be the p99. `rampMs` keeps it.)
 */
function measuredWindow(instance: AcInstance, serverPid: number, timing: LoadTiming): Promise<Window> {
  const w: Window = { latencies: [], statuses: {}, errors: 0, rampMs: Number.NaN, before: undefined, from: 0, to: 0 };
  const seen = new Set<unknown>();
  const started = performance.now();
  let phase: 'warmup' | 'measuring' | 'done' = 'warmup';
  return new Promise<Window>((resolve) => {
    const end = () => {
      if (w.to === 0) w.to = performance.now();
      phase = 'done';
      clearTimeout(forced);
      resolve(w);
    };
    const begin = () => {
      if (phase !== 'warmup') return;
      phase = 'measuring';
      w.before = cpuSnapshot(serverPid);
      w.from = performance.now();
      setTimeout(() => {
        end();
        instance.stop();
      }, timing.duration * 1000);
    };
    const forced = setTimeout(begin, (timing.warmup + MAX_RAMP_S) * 1000);
    instance.on('response', (client: unknown, status: number, _bytes: number, responseTime: number) => {
      if (phase === 'warmup') {
        seen.add(client);
        const allAnswered = seen.size >= timing.connections;
        if (allAnswered && Number.isNaN(w.rampMs)) w.rampMs = Math.round(performance.now() - started);
        if (allAnswered && performance.now() - started >= timing.warmup * 1000) begin();
      } else if (phase === 'measuring') {
        // autocannon's own histogram has 1 ms resolution and spans the warm-up: keep every response time.
        w.latencies.push(responseTime);
        w.statuses[status] = (w.statuses[status] ?? 0) + 1;
      }
    });
    instance.on('reqError', () => {
      if (phase === 'measuring') w.errors++;
    });
    void Promise.resolve(instance).then(end);
  });
}

/** One autocannon run over the same connections throughout: the warm-up, then `timing.duration` measured seconds. */
export async function runAutocannon(request: LoadRequest, expected: number, serverPid: number, timing: LoadTiming): Promise<RunResult> {
  const { paths, ...fixed } = request;
  let n = 0;
  const requests = paths?.length ? [{ method: request.method ?? 'GET', setupRequest: (r: AcRequest) => ({ ...r, path: paths[n++ % paths.length] }) }] : undefined;
  // autocannon's own duration is only a backstop: measuredWindow stops it.
  const instance = autocannon({ ...fixed, requests, connections: timing.connections, duration: timing.warmup + MAX_RAMP_S + timing.duration + 5, sampleInt: 100 });
  const w = await measuredWindow(instance, serverPid, timing);
  const after = cpuSnapshot(serverPid);
  const result = await instance;
  const seconds = (w.to - w.from) / 1000;
  const total = w.latencies.length;
  const sorted = Float64Array.from(w.latencies).sort();
  let unexpected = 0;
  for (const [code, count] of Object.entries(w.statuses)) if (Number(code) !== expected) unexpected += count;
  await settle();
  return {
    rps: Math.round(total / Math.max(seconds, 1e-3)),
    total,
    p50: round2(percentile(sorted, 50)),
    p99: round2(percentile(sorted, 99)),
    max: round2(sorted.length ? sorted[sorted.length - 1]! : Number.NaN),
    unexpected,
    errors: w.errors,
    timeouts: result.timeouts,
    statuses: w.statuses,
    responseBytes: Math.round(result.throughput.average / Math.max(1, result.requests.average)),
    cpu: cpuUse(w.before ?? after, after, serverPid, total, childPids()),
    rampMs: w.rampMs,
    window: { from: w.from, to: w.to },
  };
}
