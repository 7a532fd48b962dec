/**
 * What a run leaves behind and must remove on exit, error, SIGINT or SIGTERM: child processes,
 * temp directories and PostgreSQL databases. Every module that creates one registers it here.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopProcess, type RunningProcess } from '../scripts/lib/processes.js';

const processes = new Set<RunningProcess>();
const tempDirs = new Set<string>();
/** Database name → how to drop it. */
const databases = new Map<string, () => Promise<void>>();

/** Registers `proc` until it exits, so that cleanup stops it and CPU accounting counts it as ours. */
export function track(proc: RunningProcess): RunningProcess {
  processes.add(proc);
  void proc.exited.then(() => processes.delete(proc));
  return proc;
}

/** Pids of the children still running: the benchmark's own load, not other people's. */
export function childPids(): number[] {
  return [...processes].flatMap((proc) => (proc.child.pid === undefined ? [] : [proc.child.pid]));
}

export function makeTempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-bench-'));
  tempDirs.add(dir);
  return dir;
}

export function trackDatabase(name: string, drop: () => Promise<void>): void {
  databases.set(name, drop);
}

/** Drops every database created so far; a failure is thrown (mid-run, it means a broken setup). */
export async function dropDatabases(): Promise<void> {
  for (const [name, drop] of [...databases]) {
    await drop();
    databases.delete(name);
  }
}

let cleaning: Promise<void> | undefined;

/** Stops the children, drops the databases and removes the temp directories; once, however often called. */
export function cleanup(): Promise<void> {
  return (cleaning ??= (async () => {
    await Promise.all([...processes].map((proc) => stopProcess(proc, 'SIGTERM', 3000)));
    for (const [name, drop] of [...databases]) {
      await drop().catch((error: unknown) => console.error(`could not drop database ${name}: ${String(error)}`));
      databases.delete(name);
    }
    for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
    tempDirs.clear();
  })());
}

/** Last resort for an abrupt exit, where nothing asynchronous runs: kill and delete synchronously. */
export function cleanupNow(): void {
  for (const proc of processes) proc.child.kill('SIGKILL');
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}
