/** The outcome of a run: rounds summarised into medians, printed as markdown, written as results.json. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, relative } from 'node:path';
import { projectRoot } from '../src/paths.js';
import type { RunResult } from './load.js';
import type { Memory } from './measure.js';
import type { BenchOptions } from './options.js';
import type { ListPetsProfile, ProfileSummary } from './profile.js';
import type { Scale } from './scale.js';
import type { Budget, Scenario, ScenarioFigures } from './scenarios.js';
import { log, median, round2 } from './stats.js';

export type RoundResult = RunResult & { baselineRps: number };

export interface ScenarioSummary extends ScenarioFigures {
  expected: number;
  p50Ms: number;
  maxMs: number;
  /** connections ÷ req/s: the mean response time by Little's law, right even where autocannon's timing is not. */
  littleMeanMs: number;
  /** autocannon's response times are not meaningful for this scenario (see Scenario.closes). */
  latencyInvalid: boolean;
  /** Median time until every connection had had a first response (left out of the measurement). */
  rampMs: number;
  unexpected: number;
  errors: number;
  /** Server CPU per response (median of rounds): the cost, whatever else the machine is doing. */
  serverUsPerRequest: number;
  /** Of which on the main thread (the event loop); the rest is V8's GC helpers and libuv. */
  serverMainUsPerRequest: number;
  /** The highest share of the machine taken by work not ours during any round, in %. */
  otherLoadPct: number;
  perRound: RoundResult[];
}

/** Medians across rounds (key order is results.json's). */
export function summarise(target: string, scenario: Scenario, runs: RoundResult[], connections: number): ScenarioSummary {
  const med = (pick: (r: RoundResult) => number) => median(runs.map(pick));
  return {
    target,
    scenario: scenario.name,
    expected: scenario.expected,
    read: scenario.read,
    rps: Math.round(med((r) => r.rps)),
    ratioToBaseline: round2(med((r) => r.rps / r.baselineRps)),
    p50Ms: round2(med((r) => r.p50)),
    p99Ms: round2(med((r) => r.p99)),
    maxMs: round2(Math.max(...runs.map((r) => r.max))),
    littleMeanMs: round2((1000 * connections) / med((r) => r.rps)),
    latencyInvalid: scenario.closes === true,
    rampMs: Math.round(med((r) => r.rampMs)),
    unexpected: runs.reduce((s, r) => s + r.unexpected, 0),
    errors: runs.reduce((s, r) => s + r.errors, 0),
    serverUsPerRequest: Math.round(med((r) => r.cpu.serverUsPerRequest)),
    serverMainUsPerRequest: Math.round(med((r) => r.cpu.serverMainUsPerRequest)),
    otherLoadPct: round2(Math.max(...runs.map((r) => r.cpu.otherPct))),
    perRound: runs,
  };
}

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
  budgets: Budget[];
  /** One line per optional feature: what turning it on costs per request (metrics, rate limiting). */
  featureCosts: string[];
  profile: ListPetsProfile | undefined;
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
    `${opts.pets.toLocaleString('en')} pets per store; ${opts.connections} connections; ${opts.rounds} round(s); per scenario a warm-up of ≥ ${opts.warmup} s (until every connection has had a response) and ${opts.duration} s measured on the same connections; medians across rounds; latency from every response (µs resolution).`,
    `Baseline: bare node:http answering \`GET /v1/pets?limit=20\` with the server's own first page (${o.stores.baselineBodyBytes} bytes) after a bearer check.`,
    '',
    table(
      ['target', 'scenario', 'expect', 'req/s', '× baseline', 'p50 ms', 'p99 ms', 'max ms', 'µs CPU/req (main thread)', 'unexpected', 'errors', 'other load %'],
      o.summaries.map((s) => [
        s.target,
        s.scenario,
        s.expected,
        s.rps,
        s.ratioToBaseline,
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
    `† The server closes the connection after a 401, which autocannon mis-times (it writes a request into the closing socket and never drops it from its queue), so only req/s counts there; the mean shown is connections ÷ req/s (Little's law). The 401 rows compare with a baseline that closes too.`,
    '',
    stealLine(o),
    '',
    "`× baseline`: median over rounds of req/s ÷ the baseline's req/s in the same round. `unexpected`: responses with another status than `expect`, summed over rounds. `µs CPU/req`: the server process's CPU time per response from /proc (in brackets: its main thread alone; the rest is GC helper threads). `other load %`: the largest share of the machine (all cores) used during a round by processes that are not this benchmark, its children or PostgreSQL, and by the hypervisor's steal; above ~10 % the numbers of that row are disturbed.",
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
    'Budgets (issue 11; reported, never enforced). `value` is the measured figure, its ratio for the throughput floors:',
    '',
    table(
      ['budget', 'target', 'value', 'result'],
      o.budgets.map((b) => [b.budget, b.target, b.value, b.pass ? 'met' : '**missed**']),
    ),
    '',
    `Budgets met: ${o.budgets.filter((b) => b.pass).length} of ${o.budgets.length}${o.budgets.some((b) => !b.pass) ? `; missed: ${o.budgets.filter((b) => !b.pass).map((b) => `${b.budget} (${b.target}, ${b.value})`).join('; ')}` : ''}.`,
    '',
    'Cost per request of the optional features, in process (no HTTP; measured after the load, on the same machine):',
    '',
    ...o.featureCosts.map((line) => `- ${line}`),
  ];
}

const byArea = (p: ProfileSummary) => table(['area', 'self ms', '% of busy'], p.byArea.map((a) => [a.area, a.selfMs, a.pct]));
const inclusive = (p: ProfileSummary, rows: number) => table(['function', 'where', 'incl ms', '% of busy'], p.inclusive.slice(0, rows).map((f) => [f.fn, `\`${f.where}\``, f.totalMs, f.pct]));

function profileSection(profile: ListPetsProfile, duration: number): string[] {
  return [
    '',
    `CPU profile of the server during ${duration} s of listPets limit=20 after warm-up (${profile.rps} req/s, p50 ${profile.p50} ms, p99 ${profile.p99} ms under the profiler; ${profile.busyMs} ms busy, ${profile.idleMs} ms idle). Self time by area:`,
    '',
    byArea(profile),
    '',
    'Top functions by self time:',
    '',
    table(['function', 'where', 'self ms', '% of busy'], profile.top.map((f) => [f.fn, f.where ? `\`${f.where}\`` : '', f.selfMs, f.pct])),
    '',
    'Library and project frames by inclusive time (the stage and everything it calls):',
    '',
    inclusive(profile, profile.inclusive.length),
    '',
    `Start-up of the same process (spawn → first 200 on GET /v1/pets?limit=1: ${profile.startup.ms} ms under the profiler; ${profile.startup.busyMs} ms busy on its main thread). Self time by area:`,
    '',
    byArea(profile.startup),
    '',
    'Start-up, library and project frames by inclusive time:',
    '',
    inclusive(profile.startup, 20),
  ];
}

/** The markdown report, on stdout. */
export function printReport(o: Outcome): void {
  const report = [`## Animal Store API benchmark — ${new Date().toISOString()}`, '', ...loadSection(o), '', ...startMemoryScaleSection(o)];
  if (o.profile) report.push(...profileSection(o.profile, o.opts.duration));
  if (o.notes.length) report.push('', ...o.notes.map((n) => `Note: ${n}`));
  report.push('', `Total runtime: ${o.runtimeSeconds} s.`);
  console.log(report.join('\n'));
}

/** results.json (to --out): the machine, the options, and every figure of the run. */
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
    scale: { small: o.opts.smallPets, big: o.opts.big, seedMs: o.scale.seedMs, samplesPerBatch: o.opts.samples, positions: o.scale.rows, raw: o.scale.raw },
    budgets: o.budgets,
    featureCosts: o.featureCosts,
    profile: o.profile ?? null,
  };
  mkdirSync(dirname(o.opts.out), { recursive: true });
  writeFileSync(o.opts.out, `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote ${relative(projectRoot, o.opts.out)}`);
}
