/**
 * `npm run dev` as a developer uses it: save a source file and a new server process answers; stop
 * it with SIGTERM and nothing is left running. It runs on a copy of the project (node_modules
 * linked), because the loop generates at start and reacts to every save: in the real tree it
 * could rewrite generated/ and would restart whenever someone else saved the spec. The restart
 * time is printed by the loop, not asserted here.
 */
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, isListening, startProcess, stopProcess, type RunningProcess } from '../scripts/lib/processes.js';

const root = process.cwd();

/** Waits until the output printed after `from` matches `pattern`; fails if the process exits first. */
async function printed(proc: RunningProcess, pattern: RegExp, from = 0): Promise<RegExpExecArray> {
  for (;;) {
    const match = pattern.exec(proc.output().slice(from));
    if (match) return match;
    if (!proc.running()) throw new Error(`npm run dev exited before printing ${pattern}:\n${proc.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Pids of processes whose command line mentions `text` (Linux; elsewhere, none are found). */
function processesMentioning(text: string): number[] {
  if (!existsSync('/proc')) return [];
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
    .filter((name) => {
      try {
        return readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(text);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

describe('npm run dev', () => {
  let copy = '';
  let port = 0;
  let dev: RunningProcess;
  let firstPid = 0;
  /** The pid of the server that answers now. */
  let serverPid = 0;

  beforeAll(async () => {
    copy = mkdtempSync(join(tmpdir(), 'animal-store-dev-'));
    for (const entry of ['package.json', 'tsconfig.json', 'redocly.yaml', 'spec', 'generated', 'handlers', 'src', 'scripts']) {
      cpSync(join(root, entry), join(copy, entry), { recursive: true });
    }
    symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
    port = await freePort();
    dev = startProcess(join(root, 'node_modules', '.bin', 'tsx'), ['scripts/dev.ts'], {
      cwd: copy,
      env: { ...process.env, PORT: String(port), SQLITE_PATH: join(copy, 'dev.sqlite'), DATABASE_URL: '', LOG_LEVEL: 'warn' },
    });
    const ready = await printed(dev, /\[dev\] server answering on http:\/\/localhost:(\d+) in [\d.]+ s, pid (\d+)/);
    expect(Number(ready[1])).toBe(port);
    firstPid = Number(ready[2]);
    serverPid = firstPid;
  }, 180_000);

  afterAll(async () => {
    if (dev) await stopProcess(dev, 'SIGKILL');
    for (const pid of processesMentioning(copy)) process.kill(pid, 'SIGKILL');
    rmSync(copy, { recursive: true, force: true });
  });

  it('a saved source file (same content, new mtime) restarts the server: one line with the time, and a new process answers /healthz', async () => {
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const file = join(copy, 'src', 'paths.ts');
    const content = readFileSync(file, 'utf8');
    const from = dev.output().length;
    const now = new Date();
    utimesSync(file, now, now);

    const restarted = await printed(dev, /\[dev\] restarted in ([\d.]+) s \(save → answering\), pid (\d+): src\/paths\.ts\n/, from);
    const newPid = Number(restarted[2]);
    serverPid = newPid;
    expect(Number(restarted[1])).toBeGreaterThan(0);
    expect(newPid).not.toBe(firstPid);
    expect(alive(firstPid), 'the old server has exited').toBe(false);
    expect(alive(newPid)).toBe(true);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect(readFileSync(file, 'utf8')).toBe(content);
  }, 120_000);

  it('SIGTERM stops the server cleanly and exits 0, leaving no process behind', async () => {
    const pid = serverPid;
    expect(alive(pid)).toBe(true);
    const exit = await stopProcess(dev, 'SIGTERM');
    expect(exit, dev.output()).toEqual({ code: 0, signal: null });
    expect(dev.output()).toContain('[dev] stopped.');
    expect(alive(pid)).toBe(false);
    expect(await isListening('127.0.0.1', port)).toBe(false);
    // Nor the spares that wait to be the next server or the next generate.
    expect(processesMentioning(copy)).toEqual([]);
    // The one save caused one restart: what the restart itself touched caused none.
    expect(dev.output().match(/\[dev\] restarted/g)).toHaveLength(1);
  }, 60_000);
});
