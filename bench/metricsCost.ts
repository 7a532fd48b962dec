/**
 * `npx tsx bench/metricsCost.ts`: what counting one request costs with METRICS_PORT set, in
 * process and without HTTP: the hook app.ts runs per request (a clock read and a 'finish'
 * listener on a real ServerResponse) and, at the finish, the counter and histogram updates on
 * cached label children. Prints µs per request, the median of 5 runs, against the same
 * ServerResponse work without metrics. The prom-client scrape itself is timed too (off the
 * request path: once per scrape interval). `measureMetricsCost()` is what the bench's report
 * calls; run alone, this prints it.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { Exchange } from '../src/http/exchange.js';
import { createMetrics } from '../src/http/metrics.js';

const N = 200_000;
const RUNS = 5;
const OPERATIONS = ['listPets', 'getPet', 'createPet'];
const STATUSES = [200, 201, 400, 404];

const metrics = createMetrics({ dialect: 'sqlite', keysLoadedAt: () => Date.now() });

let logged = 0;
/** Fresh exchanges; `withLog`: each response already has the log line's 'finish' listener (LOG_LEVEL info, the default). */
function exchanges(count: number, withLog: boolean): Exchange[] {
  return Array.from({ length: count }, () => {
    const req = new IncomingMessage(new Socket());
    const res = new ServerResponse(req);
    if (withLog) res.on('finish', () => void logged++);
    return { req, res, requestId: 'x', operationId: undefined, body: 'none' } as Exchange;
  });
}

/** µs per request for `count` fresh responses: make each finish, with or without the metrics' hook. */
function perRequest(withMetrics: boolean, withLog: boolean): number {
  const list = exchanges(N, withLog);
  const started = performance.now();
  for (let i = 0; i < N; i++) {
    const exchange = list[i] as Exchange;
    if (withMetrics) metrics.track(exchange, 'api', undefined);
    exchange.operationId = OPERATIONS[i % 3];
    exchange.res.statusCode = STATUSES[i & 3] as number;
    exchange.res.emit('finish');
  }
  return ((performance.now() - started) * 1000) / N;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

export interface MetricsCost {
  /** µs per request that counting adds, with the log line's listener present (LOG_LEVEL=info, the default) and without it. */
  withLogUs: number;
  withoutLogUs: number;
  /** One scrape (registry.metrics()), in ms: off the request path, once per scrape interval. */
  scrapeMs: number;
}

/** The in-process cost of METRICS_PORT per request (median of RUNS runs of N, against the same work without it). */
export async function measureMetricsCost(): Promise<MetricsCost> {
  const cost = { withLogUs: 0, withoutLogUs: 0 };
  for (const withLog of [false, true]) {
    perRequest(true, withLog); // warm up: series created, code optimised
    perRequest(false, withLog);
    const on: number[] = [];
    const off: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      off.push(perRequest(false, withLog));
      on.push(perRequest(true, withLog));
    }
    cost[withLog ? 'withLogUs' : 'withoutLogUs'] = median(on) - median(off);
  }
  const scrapes: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    await metrics.registry.metrics();
    scrapes.push(performance.now() - t);
  }
  return { ...cost, scrapeMs: median(scrapes) };
}

/** One line, for the bench's output and for running this file alone. */
export function describeMetricsCost(cost: MetricsCost): string[] {
  return [
    `metrics (METRICS_PORT set): +${cost.withLogUs.toFixed(3)} µs per request with the log line's listener (LOG_LEVEL=info), +${cost.withoutLogUs.toFixed(3)} µs without it; a scrape ${cost.scrapeMs.toFixed(2)} ms (median of ${RUNS} runs of ${N.toLocaleString('en')}, in process)`,
  ];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const line of describeMetricsCost(await measureMetricsCost())) console.log(line);
  process.exit(0);
}
