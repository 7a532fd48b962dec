/**
 * `prism proxy` (node_modules/.bin/prism, 5.14.2) as a child process in front of an upstream,
 * validating the traffic against the contract. Prism ignores the server URL's base path, so it
 * gets the same /v1-path copy of the contract the mock derives (withBasePathInPaths), and the
 * upstream is the server's origin.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withBasePathInPaths } from '../../../scripts/lib/prismContract.js';
import { projectRoot } from '../../../src/shared/paths.js';
import { loadBundledSpec } from '../../../src/shared/spec.js';
import { freePort, startProcess, stopProcess, waitForHttp, type RunningProcess } from '../../../scripts/lib/processes.js';

export interface ProxySpec {
  path: string;
  dispose(): void;
}

/** Writes the /v1-path copy of generated/openapi.json to a temp file. */
export function writeProxySpec(): ProxySpec {
  const dir = mkdtempSync(join(tmpdir(), 'animal-store-prism-proxy-'));
  const path = join(dir, 'openapi.json');
  writeFileSync(path, JSON.stringify(withBasePathInPaths(loadBundledSpec()), null, 2));
  return { path, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface PrismProxy {
  /** `http://127.0.0.1:<port>`: the proxy's origin; the API is under /v1. */
  origin: string;
  proc: RunningProcess;
  stop(): Promise<void>;
}

/**
 * Starts `prism proxy <spec> <upstream>`; with `errors`, Prism answers a request that breaks the
 * contract itself (422, or 401 for security) without forwarding it, and turns a response that
 * breaks it into a 500 problem+json of type VIOLATIONS. Either way the `sl-violations` header
 * lists what it found.
 */
export async function startPrismProxy(specPath: string, upstream: string, options: { errors: boolean }): Promise<PrismProxy> {
  const host = '127.0.0.1';
  const port = await freePort(host);
  const args = ['proxy', specPath, upstream, '--host', host, '--port', String(port), ...(options.errors ? ['--errors'] : [])];
  const proc = startProcess(join(projectRoot, 'node_modules', '.bin', 'prism'), args, { cwd: projectRoot });
  const origin = `http://${host}:${port}`;
  try {
    await waitForHttp(`${origin}/`, proc);
  } catch (error) {
    await stopProcess(proc, 'SIGKILL');
    throw error;
  }
  return {
    origin,
    proc,
    stop: async () => {
      await stopProcess(proc);
    },
  };
}
