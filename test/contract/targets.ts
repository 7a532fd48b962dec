/**
 * The targets of the contract suite and how to start them: the real server on SQLite or on a real
 * PostgreSQL (in-process, as the other server tests start it), and the Prism mock (`npm run mock`
 * as a child process). CONTRACT_TARGET picks them: a comma-separated list of sqlite, postgres,
 * mock; unset means every target this machine can run.
 */
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { freePort, startProcess, stopProcess, waitForHttp } from '../../scripts/lib/processes.js';
import { startTestServer } from '../support/server.js';
import type { Connection, TargetProfile } from './suite.js';
import type { KnownDifference } from './target.js';

export const TARGET_NAMES = ['sqlite', 'postgres', 'mock'] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

const REAL_SERVER = { capabilities: { stateful: true }, knownDifferences: new Set<KnownDifference>() };

export const PROFILES: Record<TargetName, TargetProfile> = {
  sqlite: { name: 'sqlite', ...REAL_SERVER },
  postgres: { name: 'postgres', ...REAL_SERVER },
  mock: {
    name: 'mock',
    capabilities: { stateful: false },
    knownDifferences: new Set<KnownDifference>(['prism-malformed-json-body', 'prism-empty-query-value', 'prism-bearer-scheme-case']),
  },
};

export interface Selection {
  run: TargetName[];
  /** Targets asked for (or implied) that cannot run here, with the reason. */
  skipped: Array<{ name: TargetName; reason: string }>;
}

function isTargetName(value: string): value is TargetName {
  return (TARGET_NAMES as readonly string[]).includes(value);
}

/** Parses CONTRACT_TARGET; an unknown name is an error, not a silent skip. */
export function selectTargets(env: NodeJS.ProcessEnv = process.env): Selection {
  const raw = env.CONTRACT_TARGET?.trim();
  const names = raw ? raw.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean) : [...TARGET_NAMES];
  const unknown = names.filter((n) => !isTargetName(n));
  if (unknown.length > 0) throw new Error(`CONTRACT_TARGET: unknown target(s) ${unknown.join(', ')}; use a comma-separated list of ${TARGET_NAMES.join(', ')}`);
  const selection: Selection = { run: [], skipped: [] };
  for (const name of new Set(names.filter(isTargetName))) {
    if (name === 'postgres' && !env.DATABASE_URL) {
      selection.skipped.push({ name, reason: 'DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)' });
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

async function startRealServer(storage: 'sqlite' | 'postgres'): Promise<StartedTarget> {
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

export function startTarget(name: TargetName): Promise<StartedTarget> {
  return name === 'mock' ? startMock() : startRealServer(name);
}
