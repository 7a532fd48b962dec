/**
 * The production entry point as `npm start` runs it (the esbuild bundle, dist/server/server.mjs):
 * a child process on the embedded SQLite file or on PostgreSQL, its console and JSON logs,
 * SIGTERM, and a restart that still has every pet.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase } from './support/postgres.js';

interface Started {
  child: ChildProcess;
  base: string;
  output: () => string;
  exited: Promise<number | null>;
}

function start(env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, ['dist/server/server.mjs'], { env: { ...process.env, DATABASE_URL: '', NODE_ENV: 'production', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/\S+\/v1)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ child, base: match[1], output: () => output, exited });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`exited with ${code}:\n${output}`)));
  });
}

describe('npm start: run, stop with SIGTERM, restart', () => {
  beforeAll(() => {
    execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { stdio: 'pipe' });
  });
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-life-'));
  const env = { PORT: '0', SQLITE_PATH: join(dir, 'store.sqlite'), LOG_LEVEL: 'info' };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('first start prints the base URL, docs URL, data location and a key shown once; SIGTERM exits 0; a restart keeps every pet', async () => {
    const first = await start(env);
    const key = /^\s+(ask_[A-Za-z0-9_-]{43})$/m.exec(first.output())?.[1];
    expect(key, first.output()).toBeDefined();
    expect(first.output()).toContain('/docs');
    expect(first.output()).toContain(join(dir, 'store.sqlite'));
    expect(first.output()).toContain('npm run keys -- create');
    const auth = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };

    const created: unknown[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await fetch(`${first.base}/pets`, { method: 'POST', headers: auth, body: JSON.stringify({ name: `Keeper ${i}`, categoryId: i + 1 }) });
      expect(response.status).toBe(201);
      created.push(await response.json());
    }
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    // The structured log: one line per request with the fields an operator needs, never a key.
    const logLines = first
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const requestLog = logLines.find((l) => l.msg === 'request' && l.method === 'POST');
    expect(requestLog).toMatchObject({ reqId: expect.any(String), method: 'POST', path: '/v1/pets', status: 201, durationMs: expect.any(Number) });
    expect(logLines.some((l) => l.msg === 'stopped')).toBe(true);
    const jsonLog = first.output().split('\n').filter((l) => l.startsWith('{')).join('\n');
    expect(jsonLog).not.toContain(key);

    const second = await start(env);
    try {
      expect(second.output()).not.toMatch(/ask_[A-Za-z0-9_-]{43}/);
      const listed = await fetch(`${second.base}/pets`, { headers: auth });
      expect(listed.status).toBe(200);
      expect(await listed.json()).toEqual(created);
    } finally {
      second.child.kill('SIGINT');
      expect(await second.exited).toBe(0);
    }
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://localhost/x'],
    ['LOG_LEVEL', 'loud'],
  ])('a bad %s=%s stops the server with a message naming the variable', async (name, value) => {
    const failed = start({ ...env, [name]: value });
    await expect(failed).rejects.toThrow(new RegExp(`exited with 2:[\\s\\S]*${name}`));
  });

  const postgresUrl = process.env.DATABASE_URL;
  it.skipIf(!postgresUrl)('on PostgreSQL (DATABASE_URL) the bundle loads its driver, migrates, and serves', async () => {
    const scratch = await createScratchDatabase(postgresUrl ?? '', 'life');
    try {
      const server = await start({ ...env, DATABASE_URL: scratch.url });
      try {
        const key = /^\s+(ask_[A-Za-z0-9_-]{43})$/m.exec(server.output())?.[1];
        expect(server.output()).toContain('(postgres)');
        const auth = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
        const created = await fetch(`${server.base}/pets`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Elephant', categoryId: 9007199254740991 }) });
        expect(created.status).toBe(201);
        const listed = await fetch(`${server.base}/pets`, { headers: auth });
        expect(await listed.json()).toEqual([await created.json()]);
      } finally {
        server.child.kill('SIGTERM');
        expect(await server.exited).toBe(0);
      }
    } finally {
      await scratch.drop();
    }
  });
});
