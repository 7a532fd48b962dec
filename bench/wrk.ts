/**
 * The wrk driver: Debian's `wrk` (C, epoll) as a child process with one thread, so the load
 * generator takes as little of the two cores as a load generator can and none of it runs on this
 * process's event loop. A warm-up run of its own, then the measured run; a Lua script sets the
 * method, headers and body, cycles through the paths when there are several, and prints the
 * figures on one line at the end.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startProcess } from '../scripts/lib/processes.js';
import { childPids, makeTempDir, track } from './cleanup.js';
import type { LoadRequest, LoadTiming, RunResult } from './load.js';
import { cpuSnapshot, cpuUse, settle } from './measure.js';
import { round2 } from './stats.js';

/** Whether `wrk` runs here (it prints its usage and exits 1 to `-v`, so the output is what tells). */
export function wrkInstalled(): boolean {
  const probe = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  return probe.error === undefined && /\bwrk\b.*Copyright/i.test(`${probe.stdout}${probe.stderr}`);
}

/** A Lua string literal; the scenarios send ASCII only, and anything else would be a bug here. */
function luaString(text: string): string {
  if (!/^[\x20-\x7e]*$/.test(text)) throw new Error(`wrk script: only printable ASCII is supported, got ${JSON.stringify(text)}`);
  return `"${text.replace(/[\\"]/g, '\\$&')}"`;
}

const MARK = 'WRK_RESULT';

/** wrk runs for whole seconds, at least one: `seconds` as it will run them. */
export const wrkSeconds = (seconds: number): number => Math.max(1, Math.ceil(seconds));

/**
 * The script for `request`. Without paths there is no request() function: wrk then builds the
 * request once and resends its bytes, its fastest way. A body of bytes (an image, a multipart
 * body) is written to a file beside the script and read from it in binary.
 */
function script(request: LoadRequest, dir: string): string {
  const lines = [`wrk.method = ${luaString(request.method ?? 'GET')}`];
  for (const [name, value] of Object.entries(request.headers ?? {})) lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  if (typeof request.body === 'string') lines.push(`wrk.body = ${luaString(request.body)}`);
  else if (request.body !== undefined) {
    const file = join(dir, 'body.bin');
    writeFileSync(file, request.body);
    lines.push(`local body = assert(io.open(${luaString(file)}, "rb"))`, 'wrk.body = body:read("*a")', 'body:close()');
  }
  if (request.paths?.length) {
    lines.push(`local paths = {${request.paths.map(luaString).join(',')}}`, 'local n = 0', 'request = function()', '  n = n % #paths + 1', '  return wrk.format(nil, paths[n])', 'end');
  }
  // errors.status counts responses with a status of 400 or more (wrk's only status figure without a per-response Lua callback, which would cost the generator more than the server).
  lines.push(
    'done = function(summary, latency, requests)',
    `  io.write(string.format("${MARK} %d %d %d %d %d %d %d %d %.1f %.1f %.1f\\n", summary.requests, summary.duration, summary.bytes, summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout, latency:percentile(50), latency:percentile(99), latency.max))`,
    'end',
  );
  return `${lines.join('\n')}\n`;
}

interface WrkFigures {
  requests: number;
  durationUs: number;
  bytes: number;
  socketErrors: number;
  statusErrors: number;
  timeouts: number;
  p50Us: number;
  p99Us: number;
  maxUs: number;
}

let scripts: string | undefined;

/** One wrk process for `seconds` (wrk takes whole seconds); its figures, or an error with its output. */
async function wrk(request: LoadRequest, connections: number, seconds: number): Promise<WrkFigures> {
  scripts ??= makeTempDir();
  const file = join(scripts, 'load.lua');
  writeFileSync(file, script(request, scripts));
  const proc = track(startProcess('wrk', ['-t1', `-c${connections}`, `-d${wrkSeconds(seconds)}s`, '--timeout', '10s', '-s', file, request.url]));
  const exit = await proc.exited;
  const line = proc.output().split('\n').find((l) => l.startsWith(MARK));
  if (exit.code !== 0 || !line) throw new Error(`wrk exited with ${exit.code ?? exit.signal}:\n${proc.output()}`);
  const [requests, durationUs, bytes, connect, read, write, status, timeout, p50, p99, max] = line.slice(MARK.length).trim().split(/\s+/).map(Number) as number[];
  return { requests: requests!, durationUs: durationUs!, bytes: bytes!, socketErrors: connect! + read! + write!, statusErrors: status!, timeouts: timeout!, p50Us: p50!, p99Us: p99!, maxUs: max! };
}

export async function runWrk(request: LoadRequest, expected: number, serverPid: number, timing: LoadTiming): Promise<RunResult> {
  if (timing.warmup > 0) await wrk(request, timing.connections, timing.warmup);
  const before = cpuSnapshot(serverPid);
  const f = await wrk(request, timing.connections, timing.duration);
  const after = cpuSnapshot(serverPid);
  // wrk tells only how many answers had a status ≥ 400: that is the unexpected count when a 2xx is expected, the expected count otherwise.
  const unexpected = expected < 400 ? f.statusErrors : f.requests - f.statusErrors;
  await settle();
  return {
    rps: Math.round(f.requests / Math.max(f.durationUs / 1e6, 1e-3)),
    total: f.requests,
    p50: round2(f.p50Us / 1000),
    p99: round2(f.p99Us / 1000),
    max: round2(f.maxUs / 1000),
    unexpected,
    errors: f.socketErrors,
    timeouts: f.timeouts,
    statuses: { [String(expected)]: f.requests - unexpected, ...(unexpected ? { other: unexpected } : {}) },
    responseBytes: Math.round(f.bytes / Math.max(1, f.requests)),
    cpu: cpuUse(before, after, serverPid, f.requests, childPids()),
    rampMs: Number.NaN,
    window: { from: before.at, to: after.at },
  };
}
