/**
 * A frontend team's project, as the client package's tests meet it: an empty folder outside this
 * repository (so nothing resolves into the repository's node_modules or sources) where the
 * package tarball `npm run build:client` makes is installed with npm, its dependencies from the
 * registry. Shared by the package's tests (compile and publish, Node, browser).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildClientPackage, type BuiltClient } from '../../scripts/lib/client/clientPackage.js';
import { projectRoot } from '../../src/shared/paths.js';

/** The package of the working contract (which the tests' checkout keeps equal to its release), built into `outDir`. */
export async function buildWorkingClient(outDir: string): Promise<BuiltClient> {
  const read = (file: string) => readFileSync(join(projectRoot, file), 'utf8');
  return buildClientPackage({ root: projectRoot, contract: read('generated/openapi.json'), source: 'generated/openapi.json', changelog: read('spec/CHANGELOG.md'), outDir });
}

/** Runs npm in `cwd`; its output when it fails. Quiet, and never asks the audit or funding servers. */
export function npm(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): string {
  const run = spawnSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, env, encoding: 'utf8', timeout: 240_000 });
  if (run.status !== 0) throw new Error(`npm ${args.join(' ')} failed in ${cwd} (${run.status ?? run.signal}):\n${run.stdout}${run.stderr}${run.error?.message ?? ''}`);
  return run.stdout;
}

/** An empty ES-module project in the system's temp folder; `remove` deletes it. */
export function emptyProject(name: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `${name}-`));
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name, private: true, type: 'module', version: '0.0.0' }, null, 2)}\n`);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Consumer {
  dir: string;
  client: BuiltClient;
  remove(): void;
}

/** Builds the package and installs its tarball into an empty project, as `npm install ./animal-store-client-<v>.tgz` does. */
export async function consumerWithTarball(name: string): Promise<Consumer> {
  const project = emptyProject(name);
  try {
    const client = await buildWorkingClient(join(project.dir, 'tarballs'));
    npm(project.dir, ['install', '--save-exact', client.tarball]);
    return { dir: project.dir, client, remove: project.remove };
  } catch (error) {
    project.remove();
    throw error;
  }
}

/** The app code every consumer test uses: the documented first call, by operationId. */
export const LIST_PETS_APP = `import { createAnimalStoreClient } from '@animal-store/client';

export async function listPets(baseUrl: string, apiKey: string) {
  const api = createAnimalStoreClient({ baseUrl, apiKey });
  const { data, error, headers, response } = await api.listPets({ params: { query: { limit: 2 } } });
  return { status: response.status, names: data?.map((pet) => pet.name) ?? [], code: error?.code, etag: headers.etag ?? null, next: headers.nextCursor ?? null };
}
`;
