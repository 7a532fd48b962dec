/** The outcome of a run: rounds summarised into medians, printed as markdown, written to the results file. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, relative } from 'node:path';
import { projectRoot } from '../src/shared/paths.js';
import type { LoadGenerator, RunResult } from './load.js';
import type { Memory } from './measure.js';
import type { BenchOptions } from './options.js';
import type { Scale } from './scale.js';
import { sameRound, type Goal, type Scenario } from './scenarios.js';
import { log, median, round2 } from './stats.js';
import { WEBHOOKS_ENV, WEBHOOKS_ON, webhookLines, type WebhookSummary } from './webhooks.js';
import { wrkSeconds } from './wrk.js';

export type RoundResult = RunResult & { baselineRps: number };

/** Medians across rounds (key order is the results file's); ratioToPeer is filled in once every target is summarised. */
export function summarise(target: string, scenario: Scenario, runs: RoundResult[], connections: number, generator: LoadGenerator) {
  const med = (pick: (r: RoundResult) => number) => median(runs.map(pick));
  return {
    target,
    scenario: scenario.name,
    expected: scenario.expected,
    rps: Math.round(med((r) => r.rps)),
    ratioToBaseline: round2(med((r) => r.rps / r.baselineRps)),
    /** Our SQLite server's req/s ÷ the Fastify peer's in the same round (median), where the peer ran the scenario. */
    ratioToPeer: Number.NaN,
    p50Ms: round2(med((r) => r.p50)),
    p99Ms: round2(med((r) => r.p99)),
    maxMs: round2(Math.max(...runs.map((r) => r.max))),
    /** connections ÷ req/s: the mean response time by Little's law, right even where autocannon's timing is not. */
    littleMeanMs: round2((1000 * connections) / med((r) => r.rps)),
    /** autocannon's response times are not meaningful for this scenario (see Scenario.closes); wrk's are. */
    latencyInvalid: scenario.closes === true && generator === 'autocannon',
    /** Median time until every connection had had a first response (left out of the measurement). */
    rampMs: Math.round(med((r) => r.rampMs)),
    unexpected: runs.reduce((s, r) => s + r.unexpected, 0),
    errors: runs.reduce((s, r) => s + r.errors, 0),
    /** Server CPU per response: the cost, whatever else the machine is doing; then on its main thread (the rest is GC helpers, libuv). */
    serverUsPerRequest: Math.round(med((r) => r.cpu.serverUsPerRequest)),
    serverMainUsPerRequest: Math.round(med((r) => r.cpu.serverMainUsPerRequest)),
    /** The highest share of the machine taken by work not ours during any round, in %. */
    otherLoadPct: round2(Math.max(...runs.map((r) => r.cpu.otherPct))),
    perRound: runs,
  };
}

export type ScenarioSummary = ReturnType<typeof summarise>;

export interface Outcome {
  opts: BenchOptions;
  /** The server command as run, e.g. `node --max-semi-space-size=8 dist/server/server.mjs`. */
  serverCommand: string;
  notes: string[];
  runtimeSeconds: number;
  stores: {
    pets: number;
    seedMs: { sqlite: number; postgres: number | null };
    firstPageBytes: number;
    baselineBodyBytes: number;
    deepCursors: Record<string, { hops: number; afterId: number | undefined }>;
  };
  summaries: ScenarioSummary[];
  coldStartMs: { runs: number[]; median: number };
  memory: Record<string, Memory>;
  scale: Scale;
  /** Per store, what the receiver of our server with webhooks on heard (./webhooks.ts). */
  webhooks: WebhookSummary[];
  goals: Goal[];
}

function table(header: string[], rows: (string | number)[][]): string {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? (Number.isNaN(c) ? '–' : String(c)) : c)));
  const align = header.map((h, i) => (i === 0 ? '---' : /^(req|×|p50|p99|max|unexp|err|ms|MiB|ratio|value|run|µs|other|self|%|incl)/.test(h) ? '---:' : '---'));
  return [`| ${header.join(' | ')} |`, `| ${align.join(' | ')} |`, ...cells.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** The machine's load as vmstat's `st` column would show it, over every measured window of the run. */
function stealLine(o: Outcome): string {
  const steal = o.summaries.flatMap((s) => s.perRound.map((r) => r.cpu.stealPct));
  const other = o.summaries.flatMap((s) => s.perRound.map((r) => r.cpu.otherPct));
  return `Machine load during the measured windows: hypervisor steal (vmstat's \`st\`) median ${round2(median(steal))} %, max ${round2(Math.max(...steal))} %; other work (steal included) median ${round2(median(other))} %, max ${round2(Math.max(...other))} % of all cores.`;
}

function loadSection(o: Outcome): string[] {
  const { opts } = o;
  const command = o.serverCommand.replace(/^node /, ['node', ...opts.serverNodeArgs, ''].join(' '));
  return [
    `Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} × ${cpus().length}, server: \`${command}\` (NODE_ENV=production, LOG_LEVEL=silent).`,
    `Load generator: ${opts.loadGenerator === 'wrk' ? `wrk, one thread (per scenario a warm-up run of ${wrkSeconds(opts.warmup)} s, then ${wrkSeconds(opts.duration)} s measured on new connections; latency percentiles from wrk's histogram)` : `autocannon, in the bench's process (per scenario a warm-up of ≥ ${opts.warmup} s, until every connection has had a response, then ${opts.duration} s measured on the same connections; latency from every response, µs resolution)`}.`,
    `${opts.pets.toLocaleString('en')} pets per store; ${opts.connections} connections; ${opts.rounds} round(s); medians across rounds.`,
    `Baseline: bare node:http answering \`GET /v1/pets?limit=20\` with the server's own first page (${o.stores.baselineBodyBytes} bytes) after a bearer check.`,
    '',
    table(
      ['target', 'scenario', 'expect', 'req/s', '× baseline', '× peer', 'p50 ms', 'p99 ms', 'max ms', 'µs CPU/req (main thread)', 'unexpected', 'errors', 'other load %'],
      o.summaries.map((s) => [
        s.target,
        s.scenario,
        s.expected,
        s.rps,
        s.ratioToBaseline,
        s.ratioToPeer,
        s.latencyInvalid ? `≈${s.littleMeanMs} mean†` : s.p50Ms,
        s.latencyInvalid ? '†' : s.p99Ms,
        s.latencyInvalid ? '†' : s.maxMs,
        `${s.serverUsPerRequest} (${s.serverMainUsPerRequest})`,
        s.unexpected,
        s.errors,
        s.otherLoadPct,
      ]),
    ),
    '',
    ...(o.summaries.some((s) => s.latencyInvalid) ? [`† The server closes the connection after a 401, which autocannon mis-times (it writes a request into the closing socket and never drops it from its queue), so only req/s counts there; the mean shown is connections ÷ req/s (Little's law). The 401 rows compare with a baseline that closes too.`, ''] : []),
    stealLine(o),
    '',
    "`× baseline`: median over rounds of req/s ÷ the baseline's req/s in the same round; `× peer`, of our SQLite server's req/s ÷ the Fastify peer's (bench/peer.ts) in the same round. `unexpected`: responses with another status than `expect`, summed over rounds. `µs CPU/req`: the server process's CPU time per response from /proc (in brackets: its main thread alone; the rest is GC helper threads). `other load %`: the largest share of the machine (all cores) used during a round by processes that are not this benchmark, its children or PostgreSQL, and by the hypervisor's steal; above ~10 % the numbers of that row are disturbed.",
  ];
}

function startMemoryScaleSection(o: Outcome): string[] {
  const { opts } = o;
  const small = opts.smallPets.toLocaleString('en');
  const big = opts.big.toLocaleString('en');
  return [
    `Cold start (spawn → first 200 on GET /v1/pets?limit=1), ms: ${o.coldStartMs.runs.join(', ')}; median ${o.coldStartMs.median}.`,
    `RSS after load: ${Object.entries(o.memory).map(([k, v]) => `${k} ${v.rssMiB} MiB (peak ${v.hwmMiB} MiB; anonymous ${v.anonMiB} MiB, mapped files ${v.fileMiB} MiB)`).join('; ')}.`,
    '',
    `listPets limit=20, one connection, sequential, p50 (p99) in ms — ${small} vs ${big} pets (median of ${Math.max(3, opts.rounds)} interleaved batches of ${opts.samples}):`,
    '',
    table(
      ['position', `${small} pets`, `${big} pets`, 'ratio'],
      o.scale.rows.map((r) => [r.position, `${r.smallP50Ms} (${r.smallP99Ms})`, `${r.bigP50Ms} (${r.bigP99Ms})`, `${r.ratio}×`]),
    ),
    '',
    "Goals of issue 31 (reported, never enforced; a ratio is the median over rounds of the same round's figures):",
    '',
    ...o.goals.map((g) => `- ${g.pass === undefined ? 'NOT RUN' : g.pass ? 'MET' : 'MISSED'}: ${g.goal}: ${g.value}`),
  ];
}

/** Our server with one endpoint subscribed against the same server without, and what its receiver heard. */
function webhookSection(o: Outcome): string[] {
  if (o.webhooks.length === 0) return [];
  const lines = o.webhooks.flatMap((w) => {
    const store = w.target.slice(0, -WEBHOOKS_ON.length - 1);
    const hooked = o.summaries.find((s) => s.target === w.target && s.scenario === 'createPet');
    const plain = o.summaries.find((s) => s.target === store && s.scenario === 'createPet');
    return webhookLines(w, hooked, plain, sameRound(hooked, plain, (a, b) => a.rps / b.rps));
  });
  const settings = Object.entries(WEBHOOKS_ENV).map(([k, v]) => `${k}=${v}`).join(' ');
  return [
    `Webhooks: our server on a store of its own with one endpoint subscribed to every event (${settings}, the other WEBHOOKS_* at their defaults), a node:http receiver in the bench's process answering 204 at once, against the plain server (no endpoint: each create still writes its event) in the same rounds. After each of its runs the bench waits until that run's events have arrived. Emit → receiver: the receiver's clock at arrival minus the body's \`timestamp\` (the handler's emit, in the create's transaction).`,
    '',
    ...lines,
  ];
}

/** The markdown report, on stdout. */
export function printReport(o: Outcome): void {
  const webhooks = webhookSection(o);
  const report = [`## Animal Store API benchmark — ${new Date().toISOString()}`, '', ...loadSection(o), '', ...(webhooks.length ? [...webhooks, ''] : []), ...startMemoryScaleSection(o)];
  if (o.notes.length) report.push('', ...o.notes.map((n) => `Note: ${n}`));
  report.push('', `Total runtime: ${o.runtimeSeconds} s.`);
  console.log(report.join('\n'));
}

/** The results file (--out, not committed): the machine, the options, and every figure of the run. */
export function writeResults(o: Outcome): void {
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: round2(totalmem() / 2 ** 30),
    platform: `${process.platform} ${process.arch}`,
    serverCommand: o.serverCommand,
    options: { ...o.opts, out: relative(projectRoot, o.opts.out) },
    runtimeSeconds: o.runtimeSeconds,
    notes: o.notes,
    stores: o.stores,
    scenarios: o.summaries,
    coldStartMs: o.coldStartMs,
    memoryAfterLoad: o.memory,
    scale: { small: o.opts.smallPets, big: o.opts.big, seedMs: o.scale.seedMs, samplesPerBatch: o.opts.samples, positions: o.scale.rows },
    webhooks: o.webhooks,
    goals: o.goals,
  };
  mkdirSync(dirname(o.opts.out), { recursive: true });
  writeFileSync(o.opts.out, `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote ${relative(projectRoot, o.opts.out)}`);
}
