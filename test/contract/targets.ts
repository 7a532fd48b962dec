/**
 * The targets of the contract suite and how to start them: the real server on SQLite or on a real
 * PostgreSQL (in-process, as the other server tests start it), the Prism mock (`npm run mock` as a
 * child process), and the sandbox (`npm run sandbox` as a child process: the real server's code on
 * a throwaway store, any bearer token), and the real server on PostgreSQL through a PgBouncer in
 * transaction mode. CONTRACT_TARGET picks them: a comma-separated list of sqlite, postgres,
 * pgbouncer, mock, sandbox; unset means every target this machine can run.
 */
import { join } from 'node:path';
import { SANDBOX_TOKEN } from '../../src/features/sandbox/token.js';
import { projectRoot } from '../../src/shared/paths.js';
import { freePort, startProcess, stopProcess, waitForHttp } from '../../scripts/lib/processes.js';
import { pgbouncerMissing } from '../../scripts/lib/pgbouncer.js';
import { startTestServer } from '../support/server.js';
import type { Connection, TargetProfile } from './suite.js';
import { MOCK_PROFILE, SANDBOX_PROFILE, type KnownDifference } from './target.js';

export const TARGET_NAMES = ['sqlite', 'postgres', 'pgbouncer', 'mock', 'sandbox'] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

const REAL_SERVER = { capabilities: { stateful: true }, knownDifferences: new Set<KnownDifference>() };

export const PROFILES: Record<TargetName, TargetProfile> = {
  sqlite: { name: 'sqlite', ...REAL_SERVER },
  postgres: { name: 'postgres', ...REAL_SERVER },
  pgbouncer: { name: 'pgbouncer', ...REAL_SERVER },
  mock: { name: 'mock', ...MOCK_PROFILE },
  sandbox: { name: 'sandbox', ...SANDBOX_PROFILE },
};

export interface Selection {
  run: TargetName[];
  /** Targets asked for (or implied) that cannot run here, with the reason. */
  skipped: Array<{ name: TargetName; reason: string }>;
}

function isTargetName(value: string): value is TargetName {
  return (TARGET_NAMES as readonly string[]).includes(value);
}

/**
 * Without CONTRACT_TARGET, the suite's stores (TEST_STORAGE, vitest.config.ts): the quick suite's
 * SQLite brings the mock and the sandbox along, `npm run test:storage` adds PostgreSQL, directly
 * and through PgBouncer.
 */
function defaultTargets(env: NodeJS.ProcessEnv): TargetName[] {
  const storage = env.TEST_STORAGE?.trim() ? env.TEST_STORAGE.split(',').map((s) => s.trim()) : ['sqlite', 'postgres', 'pgbouncer'];
  return TARGET_NAMES.filter((name) => (name === 'postgres' || name === 'pgbouncer' ? storage.includes(name) : storage.includes('sqlite')));
}

/** Parses CONTRACT_TARGET; an unknown name is an error, not a silent skip. */
export function selectTargets(env: NodeJS.ProcessEnv = process.env): Selection {
  const raw = env.CONTRACT_TARGET?.trim();
  const names = raw ? raw.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean) : defaultTargets(env);
  const unknown = names.filter((n) => !isTargetName(n));
  if (unknown.length > 0) throw new Error(`CONTRACT_TARGET: unknown target(s) ${unknown.join(', ')}; use a comma-separated list of ${TARGET_NAMES.join(', ')}`);
  const selection: Selection = { run: [], skipped: [] };
  for (const name of new Set(names.filter(isTargetName))) {
    const missing = name === 'pgbouncer' ? pgbouncerMissing(env) : undefined;
    if (name === 'postgres' && !env.DATABASE_URL) {
      selection.skipped.push({ name, reason: 'DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)' });
    } else if (missing !== undefined) {
      selection.skipped.push({ name, reason: missing });
    } else {
      selection.run.push(name);
    }
  }
  return selection;
}

export interface StartedTarget {
  connection: Connection;
  /** Responses the real server's own checker flagged since the last call (always [] for the mock). */
  takeServerViolations(): unknown[];
  stop(): Promise<void>;
}

async function startRealServer(storage: 'sqlite' | 'postgres' | 'pgbouncer'): Promise<StartedTarget> {
  const server = await startTestServer(storage);
  return {
    connection: { baseUrl: server.api, key: server.key, fetch: globalThis.fetch },
    takeServerViolations: () => server.server.violations.splice(0),
    stop: () => server.close(),
  };
}

async function startMock(): Promise<StartedTarget> {
  const host = '127.0.0.1';
  const port = await freePort(host);
  const baseUrl = `http://${host}:${port}/v1`;
  const mock = startProcess(join(projectRoot, 'node_modules', '.bin', 'tsx'), ['scripts/mock.ts', '--host', host, '--port', String(port)], { cwd: projectRoot });
  try {
    await waitForHttp(`${baseUrl}/pets`, mock);
  } catch (error) {
    await stopProcess(mock, 'SIGKILL');
    throw error;
  }
  return {
    // The mock accepts any bearer token.
    connection: { baseUrl, key: 'any-token-will-do', fetch: globalThis.fetch },
    takeServerViolations: () => [],
    stop: async () => {
      await stopProcess(mock);
    },
  };
}

/** The log line src/http/responseChecker.ts writes for a response that breaks the contract. */
const VIOLATION = /^\{.*"msg":"response breaks the contract"\}$/gm;

async function startSandbox(): Promise<StartedTarget> {
  const host = '127.0.0.1';
  const port = await freePort(host);
  const baseUrl = `http://${host}:${port}/v1`;
  // The command a frontend runs, as it runs it; without DATABASE_URL (CI sets it for the postgres target), which the sandbox refuses.
  const env = { ...process.env };
  delete env.DATABASE_URL;
  const sandbox = startProcess('npm', ['run', '-s', 'sandbox', '--', '--host', host, '--port', String(port)], { cwd: projectRoot, env });
  try {
    await waitForHttp(`${baseUrl}/pets`, sandbox);
  } catch (error) {
    await stopProcess(sandbox, 'SIGKILL');
    throw error;
  }
  let seen = 0;
  return {
    // The sandbox's one documented key (any other is the real 401 invalid_token).
    connection: { baseUrl, key: SANDBOX_TOKEN, fetch: globalThis.fetch },
    // The sandbox checks its own responses too (VALIDATE_RESPONSES as in development) and logs each violation.
    takeServerViolations: () => {
      const output = sandbox.output();
      const fresh = output.slice(seen);
      seen = output.length;
      return [...fresh.matchAll(VIOLATION)].map((m) => JSON.parse(m[0]) as unknown);
    },
    stop: async () => {
      const exit = await stopProcess(sandbox);
      if (exit.code !== 0) throw new Error(`npm run sandbox exited with ${JSON.stringify(exit)}:\n${sandbox.output()}`);
    },
  };
}

export function startTarget(name: TargetName): Promise<StartedTarget> {
  if (name === 'mock') return startMock();
  if (name === 'sandbox') return startSandbox();
  return startRealServer(name);
}
