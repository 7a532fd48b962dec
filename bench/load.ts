/**
 * One load run, whatever generates the load: wrk (Debian's package, C, one thread) when it is
 * installed, autocannon (Node, in this process) otherwise or when asked. A run is a warm-up, then a
 * measured window with its response times, statuses and the server's CPU use over it.
 */
import { runAutocannon } from './autocannon.js';
import type { CpuUse } from './measure.js';
import { runWrk } from './wrk.js';

export const LOAD_GENERATORS = ['wrk', 'autocannon'] as const;
export type LoadGenerator = (typeof LOAD_GENERATORS)[number];

/** What a scenario sends; connections and timing come from the run's options. */
export interface LoadRequest {
  /** The target's origin and the path of every request (of the first, with `paths`). */
  url: string;
  method?: 'GET' | 'POST' | 'PUT';
  headers?: Record<string, string>;
  /** The body: text, or bytes (an image, a multipart body). */
  body?: string | Buffer;
  /** Paths sent in turn instead of `url`'s, over and over (getPet across the store). */
  paths?: readonly string[];
}

export interface LoadTiming {
  connections: number;
  /** Seconds at the start not counted. */
  warmup: number;
  /** Seconds measured. */
  duration: number;
}

export interface RunResult {
  rps: number;
  total: number;
  p50: number;
  p99: number;
  max: number;
  /** Responses with another status than expected. */
  unexpected: number;
  errors: number;
  timeouts: number;
  /** By status, or for wrk (which counts only statuses ≥ 400) the expected one and `other`. */
  statuses: Record<string, number>;
  responseBytes: number;
  cpu: CpuUse;
  /** The measured window, performance.now() in this process (./webhooks.ts reads what arrived in it). */
  window: { from: number; to: number };
  /** autocannon: from the start of the run until every connection had had a response; wrk: NaN (its warm-up is a run of its own). */
  rampMs: number;
}

export function runLoad(generator: LoadGenerator, request: LoadRequest, expected: number, serverPid: number, timing: LoadTiming): Promise<RunResult> {
  return generator === 'wrk' ? runWrk(request, expected, serverPid, timing) : runAutocannon(request, expected, serverPid, timing);
}
