/**
 * `npx tsx bench/metricsCost.ts`: what counting one request costs with METRICS_PORT set, in
 * process and without HTTP: the hook app.ts runs per request (a clock read and a 'finish'
 * listener on a real ServerResponse) and, at the finish, the counter and histogram updates on
 * cached label children. Prints µs per request, the median of 5 runs, against the same
 * ServerResponse work without metrics. The prom-client scrape itself is timed too (off the
 * request path: once per scrape interval).
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
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

for (const withLog of [false, true]) {
  perRequest(true, withLog); // warm up: series created, code optimised
  perRequest(false, withLog);
  const on: number[] = [];
  const off: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    off.push(perRequest(false, withLog));
    on.push(perRequest(true, withLog));
  }
  const label = withLog ? 'with the log listener (LOG_LEVEL=info)' : 'without logging (LOG_LEVEL=warn or higher)';
  console.log(`${label}: metrics off ${median(off).toFixed(3)} µs, on ${median(on).toFixed(3)} µs: counting a request costs ${(median(on) - median(off)).toFixed(3)} µs (median of ${RUNS} runs of ${N.toLocaleString('en')})`);
}
const scrapes: number[] = [];
for (let i = 0; i < 20; i++) {
  const t = performance.now();
  await metrics.registry.metrics();
  scrapes.push(performance.now() - t);
}
console.log(`a scrape (registry.metrics()): ${median(scrapes).toFixed(2)} ms`);
process.exit(0);
