/**
 * What a server costs, read from /proc: CPU time per request (and how busy the machine was with
 * work that is not ours, since other people's tests share these cores), and its memory.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { startProcess } from '../scripts/lib/processes.js';
import { round2, sleep } from './stats.js';

/** Jiffies per second of /proc's CPU counters; 100 on every Linux we run on, asked anyway. */
const CLK_TCK = await (async () => {
  const getconf = startProcess('getconf', ['CLK_TCK']);
  const exit = await getconf.exited;
  return (exit.code === 0 && Number(getconf.output().trim())) || 100;
})();

/** Fields 14 and 15 of /proc/…/stat (utime, stime), counted after the command name in brackets. */
function statTicks(stat: string): number {
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(rest[11]) + Number(rest[12]);
}

/** This process and those that started it (tsx, npm, the shell): all idle, but ours. */
const ancestors = (() => {
  const pids = [process.pid];
  for (let pid = process.ppid; pid > 1 && pids.length < 10; ) {
    pids.push(pid);
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      break;
    }
  }
  return pids;
})();

export interface CpuSnapshot {
  at: number;
  /** Busy jiffies of the whole machine charged to processes (user, nice, system, steal) … */
  busy: number;
  /** … and those of interrupts (irq, softirq: much of loopback TCP), charged to none. */
  kernel: number;
  /** Jiffies the hypervisor gave to other guests while ours wanted to run (vmstat's `st`; part of `busy`). */
  steal: number;
  procs: Map<number, { ticks: number; comm: string }>;
  /** CPU jiffies of the main thread of the process asked for. */
  mainThread: number;
}

function threadTicks(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    return statTicks(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8'));
  } catch {
    return 0;
  }
}

export function cpuSnapshot(mainThreadOf?: number): CpuSnapshot {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const f = (i: number) => fields[i] ?? 0;
  const procs = new Map<number, { ticks: number; comm: string }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      procs.set(Number(entry), { ticks: statTicks(stat), comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) });
    } catch {
      // Gone in the meantime.
    }
  }
  return { at: performance.now(), busy: f(0) + f(1) + f(2) + f(7), kernel: f(5) + f(6), steal: f(7), procs, mainThread: threadTicks(mainThreadOf) };
}

export interface CpuUse {
  /** CPU time of the server under test, per response, in µs … */
  serverUsPerRequest: number;
  /** … and of its main thread alone. */
  serverMainUsPerRequest: number;
  /** Shares of the machine's capacity (all cores) during the run, in %. */
  serverPct: number;
  /** This process (autocannon) and its other children. */
  benchPct: number;
  /** PostgreSQL's processes. */
  databasePct: number;
  /** Interrupt handling (irq, softirq), mostly our own loopback traffic. */
  kernelPct: number;
  /** Everything else: other people's work on this machine, and steal. */
  otherPct: number;
  /** Of which steal: the hypervisor running other guests on our cores (vmstat's `st`). */
  stealPct: number;
  /** The busiest of those other processes, e.g. `node 38%`. */
  otherTop: string;
}

/** Jiffies between two snapshots by whose they were: the server's, ours (`childPids`), PostgreSQL's, the rest. */
function splitTicks(before: CpuSnapshot, after: CpuSnapshot, serverPid: number | undefined, childPids: readonly number[]) {
  const delta = (pid: number) => (after.procs.get(pid)?.ticks ?? 0) - (before.procs.get(pid)?.ticks ?? 0);
  const ours = new Set([...ancestors, ...childPids]);
  const split = { server: 0, bench: 0, database: 0, others: [] as { comm: string; ticks: number }[] };
  for (const [pid, { comm }] of after.procs) {
    if (pid === serverPid) split.server += delta(pid);
    else if (ours.has(pid)) split.bench += delta(pid);
    else if (comm === 'postgres') split.database += delta(pid);
    else if (delta(pid) > 0) split.others.push({ comm, ticks: delta(pid) });
  }
  return split;
}

export function cpuUse(before: CpuSnapshot, after: CpuSnapshot, serverPid: number | undefined, requests: number, childPids: readonly number[]): CpuUse {
  const { server, bench, database, others } = splitTicks(before, after, serverPid, childPids);
  const capacity = ((after.at - before.at) / 1000) * CLK_TCK * cpus().length;
  const pct = (ticks: number) => round2((100 * ticks) / capacity);
  const usPerRequest = (ticks: number) => Math.round(((ticks / CLK_TCK) * 1e6) / Math.max(1, requests));
  return {
    serverUsPerRequest: usPerRequest(server),
    serverMainUsPerRequest: usPerRequest(after.mainThread - before.mainThread),
    serverPct: pct(server),
    benchPct: pct(bench),
    databasePct: pct(database),
    kernelPct: pct(after.kernel - before.kernel),
    otherPct: pct(Math.max(0, after.busy - before.busy - server - bench - database)),
    stealPct: pct(after.steal - before.steal),
    otherTop: others
      .sort((a, b) => b.ticks - a.ticks)
      .filter((o) => pct(o.ticks) >= 1)
      .slice(0, 3)
      .map((o) => `${o.comm} ${Math.round(pct(o.ticks))}%`)
      .join(', '),
  };
}

export interface Memory {
  rssMiB: number;
  /** Peak RSS. */
  hwmMiB: number;
  /** Of the RSS: heap, stacks, native allocations … */
  anonMiB: number;
  /** … and mapped files (the node binary, shared libraries, better-sqlite3's addon). */
  fileMiB: number;
}

export function memoryOf(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const mib = (field: string) => round2(Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) / 1024);
  return { rssMiB: mib('VmRSS'), hwmMiB: mib('VmHWM'), anonMiB: mib('RssAnon'), fileMiB: mib('RssFile') };
}

/**
 * Between two load runs: the disk's writes flushed (`sync`: the run's SQLite pages, WAL and
 * photos, fsynced by the store but still written back by the kernel's threads), then closed
 * sockets given a moment. Without it, a write-heavy run (1 MiB uploads) is still being written
 * back during the next run's measured window, by kernel workers the next target competes with.
 */
export async function settle(): Promise<void> {
  await new Promise<void>((resolve) => execFile('sync', () => resolve()));
  await sleep(200);
}
