/**
 * Debian's HAProxy in front of the server's instances, as an operator runs it: HTTP mode,
 * keep-alive and connection reuse to the instances, health checks of GET /readyz, retries with
 * redispatch. `haproxyVersion()` says whether it is installed; `startHaproxy` writes the
 * configuration, starts it in the foreground, and reads each instance's state from its stats page
 * (CSV), where the checks' verdicts show.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startProcess, stopProcess, waitForHttp, type RunningProcess } from '../../../scripts/lib/processes.js';

/** `HAProxy version 2.6.12-…`, or undefined when `haproxy` is not on PATH. */
export function haproxyVersion(): string | undefined {
  const probe = spawnSync('haproxy', ['-v'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) return undefined;
  return probe.stdout.split('\n')[0]?.trim();
}

export interface Backend {
  name: string;
  port: number;
}

export interface HealthCheck {
  /** `inter`: how often each instance is asked. */
  intervalMs: number;
  /** `fall`: failed checks in a row that take an instance out. */
  fall: number;
  /** `rise`: passed checks in a row that put it back. */
  rise: number;
}

export interface Haproxy {
  /** `http://127.0.0.1:<port>`: the balancer's front end. */
  origin: string;
  /** The configuration it runs, for the printed figures and for failures. */
  config: string;
  proc: RunningProcess;
  /** Each instance's state as HAProxy sees it: `UP`, `DOWN`, `UP 1/2` (going down), `DOWN 1/2` (coming up), … */
  states(): Promise<Map<string, string>>;
  stop(): Promise<void>;
}

/** The configuration: what the operator ran (checks of /readyz, `retries 3`, `option redispatch`, reuse to the instances). */
export function haproxyConfig(frontPort: number, statsPort: number, backends: readonly Backend[], check: HealthCheck): string {
  return [
    'global',
    '  maxconn 2000',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 30s',
    '  timeout server 30s',
    '  retries 3',
    '  option redispatch',
    '  option http-keep-alive',
    // Idle connections to the instances are reused by any client's request, the most a balancer
    // reuses: a connection the server closes while HAProxy picks it is a failed request.
    '  http-reuse always',
    'frontend api',
    `  bind 127.0.0.1:${frontPort}`,
    '  default_backend instances',
    'backend instances',
    '  balance roundrobin',
    '  option httpchk GET /readyz',
    '  http-check expect status 200',
    `  default-server inter ${check.intervalMs} fall ${check.fall} rise ${check.rise}`,
    ...backends.map((backend) => `  server ${backend.name} 127.0.0.1:${backend.port} check`),
    'frontend stats',
    `  bind 127.0.0.1:${statsPort}`,
    '  stats enable',
    '  stats uri /stats',
    '',
  ].join('\n');
}

/** The `status` column of the stats CSV, per server of the `instances` backend. */
export function parseStates(csv: string): Map<string, string> {
  const [head, ...rows] = csv.trim().split('\n');
  const columns = (head ?? '').replace(/^# /, '').split(',');
  const [proxy, server, status] = ['pxname', 'svname', 'status'].map((name) => columns.indexOf(name));
  if (proxy === undefined || server === undefined || status === undefined || [proxy, server, status].includes(-1)) throw new Error(`not HAProxy's stats CSV: ${csv.slice(0, 300)}`);
  const states = new Map<string, string>();
  for (const row of rows) {
    const cells = row.split(',');
    const name = cells[server];
    if (cells[proxy] === 'instances' && name !== undefined && name !== 'BACKEND') states.set(name, cells[status] ?? '');
  }
  return states;
}

/** Starts HAProxy (foreground, `-db`) and resolves once its stats page answers. */
export async function startHaproxy(backends: readonly Backend[], check: HealthCheck): Promise<Haproxy> {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-haproxy-'));
  const [frontPort, statsPort] = [await freePort(), await freePort()];
  const config = haproxyConfig(frontPort, statsPort, backends, check);
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  const proc = startProcess('haproxy', ['-db', '-f', file]);
  const statsUrl = `http://127.0.0.1:${statsPort}/stats;csv;norefresh`;
  try {
    await waitForHttp(statsUrl, proc, {}, 50);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    origin: `http://127.0.0.1:${frontPort}`,
    config,
    proc,
    async states() {
      const response = await fetch(statsUrl);
      return parseStates(await response.text());
    },
    async stop() {
      await stopProcess(proc, 'SIGTERM', 5_000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
