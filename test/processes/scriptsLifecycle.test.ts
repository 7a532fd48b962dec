/**
 * Every long-running npm script as a supervisor, a terminal or a container runtime stops it: the
 * signal goes to the npm process, and npm, the shell it ran the script in and whatever that
 * started (Prism, the server, a watcher) must all be gone, with exit code 0 and the port free.
 * A script that does not `exec` leaves its shell between npm and the program, which never passes
 * SIGTERM on: npm exits and the program keeps the port. And a script run through the tsx CLI has
 * one more process in between, which gives its child 30 ms to acknowledge a relayed signal and
 * otherwise kills it (exit 143): under load that race was lost, so the scripts run
 * `node --import tsx` instead. `npm start` has its own, longer test in
 * ./lifecycle.test.ts (an acknowledged write survives the stop); this file covers the others.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, isListening, processGroupAlive, startProcess, waitForPort, type RunningProcess } from '../../scripts/lib/processes.js';
import { projectRoot } from '../../src/shared/paths.js';

const HOST = '127.0.0.1';
const dir = mkdtempSync(join(tmpdir(), 'animal-store-scripts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Case {
  script: string;
  /** npm's arguments and environment for the script on `port`. */
  run(port: number): { args: string[]; env: Record<string, string> };
}

const CASES: Case[] = [
  { script: 'mock', run: (port) => ({ args: ['run', 'mock', '--', '--port', String(port)], env: {} }) },
  { script: 'sandbox', run: (port) => ({ args: ['run', 'sandbox', '--', '--port', String(port)], env: { DATABASE_URL: '' } }) },
  { script: 'dev', run: (port) => ({ args: ['run', 'dev'], env: { PORT: String(port), HOST, SQLITE_PATH: join(dir, 'dev.sqlite'), DATABASE_URL: '' } }) },
];

describe('every long-running npm script stops on SIGTERM to npm', () => {
  it.each(CASES)('npm run $script: npm exits 0, no process of its group is left, the port is free', async ({ script, run }) => {
    const port = await freePort();
    const { args, env } = run(port);
    // Its own process group (detached): "nothing left" is asked of npm, its shell and what they started.
    const npm: RunningProcess = startProcess('npm', args, { cwd: projectRoot, detached: true, env: { ...process.env, ...env } });
    const pid = npm.child.pid as number;
    try {
      const up = await Promise.race([waitForPort(HOST, port, () => !npm.running()), new Promise<false>((resolve) => setTimeout(() => resolve(false), 60_000))]);
      expect(up, `npm run ${script} did not listen on ${port}:\n${npm.output()}`).toBe(true);

      npm.child.kill('SIGTERM');
      expect(await npm.exited, npm.output()).toEqual({ code: 0, signal: null });
      // Polled for a moment: npm's own helpers may take a few milliseconds to go after npm has exited;
      // a program the signal never reached stays for good.
      const settled = Date.now() + 5_000;
      while ((processGroupAlive(pid) || (await isListening(HOST, port))) && Date.now() < settled) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(processGroupAlive(pid), `a process of npm run ${script}'s group is still running:\n${npm.output()}`).toBe(false);
      expect(await isListening(HOST, port), `port ${port} is still taken after npm run ${script} exited`).toBe(false);
    } finally {
      if (processGroupAlive(pid)) process.kill(-pid, 'SIGKILL');
    }
  }, 90_000);
});
