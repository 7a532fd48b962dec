/**
 * Publishing the client package (issue 40), against a real npm registry on this machine:
 * Verdaccio 6.8.0 (the last line that supports Node 20; 6.9+ declares Node 22), installed from
 * the npm registry with the lockfile of test/fixtures/registry/ into a folder outside this
 * repository. `npm publish` of build:client's tarball there, then, in an empty project whose
 * .npmrc maps the `@animal-store` scope to that registry (as a team's does to its company
 * registry), `npm install @animal-store/client@<version>`: the package comes from that registry,
 * the very tarball published, its dependencies from the npm registry, and it imports and runs.
 */
import { createHash, randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltClient } from '../../scripts/lib/client/clientPackage.js';
import { freePort, startProcess, stopProcess, waitForHttp, type RunningProcess } from '../../scripts/lib/processes.js';
import { projectRoot } from '../../src/shared/paths.js';
import { buildWorkingClient, emptyProject, npm } from '../support/clientConsumer.js';

const run = promisify(execFile);
const HOST = '127.0.0.1';
const fixture = join(projectRoot, 'test', 'fixtures', 'registry');

/** Verdaccio, installed by `npm ci` from the fixture's lockfile once per lockfile (a folder named by its hash, kept between runs). */
function installedVerdaccio(): string {
  const lock = readFileSync(join(fixture, 'package-lock.json'));
  const dir = join(tmpdir(), `animal-store-verdaccio-${createHash('sha256').update(lock).digest('hex').slice(0, 16)}`);
  const bin = join(dir, 'node_modules', 'verdaccio', 'bin', 'verdaccio');
  if (!existsSync(bin)) {
    const staging = mkdtempSync(`${dir}-installing-`);
    for (const file of ['package.json', 'package-lock.json']) copyFileSync(join(fixture, file), join(staging, file));
    npm(staging, ['ci']);
    // Only a complete install takes the folder's name: a run cut short leaves none half-made.
    rmSync(dir, { recursive: true, force: true });
    renameSync(staging, dir);
  }
  return bin;
}

/** A registry for the `@animal-store` scope only: no uplink, so a package there is one published there. */
const CONFIG = (storage: string) => `storage: ${storage}/storage
auth:
  htpasswd:
    file: ${storage}/htpasswd
    max_users: 1
uplinks: {}
packages:
  '@animal-store/*':
    access: $all
    publish: $authenticated
    unpublish: $authenticated
web:
  enable: false
middlewares:
  audit:
    enabled: false
log:
  type: stdout
  format: pretty
  level: warn
`;

let work: string;
let registry: RunningProcess;
let registryUrl: string;
let client: BuiltClient;
let consumer: { dir: string; remove(): void };

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'animal-store-registry-'));
  const bin = installedVerdaccio();
  mkdirSync(join(work, 'storage'));
  writeFileSync(join(work, 'config.yaml'), CONFIG(work));
  const port = await freePort(HOST);
  registryUrl = `http://${HOST}:${port}/`;
  registry = startProcess(process.execPath, [bin, '--config', join(work, 'config.yaml'), '--listen', `${HOST}:${port}`], { cwd: work });
  client = await buildWorkingClient(join(work, 'tarballs'));
  await waitForHttp(`${registryUrl}-/ping`, registry);
}, 300_000);

afterAll(async () => {
  if (registry) await stopProcess(registry);
  consumer?.remove();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the client package on a real registry (Verdaccio)', () => {
  it('npm publish puts @animal-store/client <version> there, for a user the registry knows', async () => {
    // The registry's own sign-up (what npm adduser does): a user and its token, kept out of every log.
    const signUp = await fetch(`${registryUrl}-/user/org.couchdb.user:publisher`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'publisher', password: randomBytes(18).toString('base64url') }),
    });
    expect(signUp.status).toBe(201);
    const { token } = (await signUp.json()) as { token: string };
    const npmrc = join(work, 'publisher.npmrc');
    const host = registryUrl.replace(/^http:/, '');
    writeFileSync(npmrc, `registry=${registryUrl}\n${host}:_authToken=${token}\n`);
    const env = { ...process.env, npm_config_userconfig: npmrc };
    npm(work, ['publish', client.tarball, '--registry', registryUrl], env);
    const versions = JSON.parse(npm(work, ['view', '@animal-store/client', 'versions', '--json', '--registry', registryUrl], env)) as string[] | string;
    expect([versions].flat()).toEqual([client.version]);
    // A published version is immutable: the same version again is refused.
    expect(() => npm(work, ['publish', client.tarball, '--registry', registryUrl], env)).toThrow(/EPUBLISHCONFLICT|409|cannot publish over/i);
  }, 120_000);

  it('npm install @animal-store/client@<version> in an empty project takes that tarball from the registry, its dependencies from npm, and imports it', async () => {
    consumer = emptyProject('animal-store-registry-consumer');
    writeFileSync(join(consumer.dir, '.npmrc'), `@animal-store:registry=${registryUrl}\n`);
    // The lockfile records where each package came from (this machine's npm config omits it by default).
    npm(consumer.dir, ['install', '--save-exact', '--omit-lockfile-registry-resolved=false', `@animal-store/client@${client.version}`]);
    const manifest = JSON.parse(readFileSync(join(consumer.dir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(manifest.dependencies).toEqual({ '@animal-store/client': client.version });
    const lock = JSON.parse(readFileSync(join(consumer.dir, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; resolved?: string; integrity?: string }> };
    const entry = lock.packages['node_modules/@animal-store/client'];
    const integrity = `sha512-${createHash('sha512').update(readFileSync(client.tarball)).digest('base64')}`;
    expect(entry).toMatchObject({ version: client.version, resolved: `${registryUrl}@animal-store/client/-/client-${client.version}.tgz`, integrity });
    expect(lock.packages['node_modules/openapi-fetch']?.resolved).toMatch(/^https:\/\/registry\.npmjs\.org\//);
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', "const m = await import('@animal-store/client'); console.log(typeof m.createAnimalStoreClient, typeof m.createAnimalStoreClient({ baseUrl: 'http://x.example/v1', apiKey: 'k' }).listPets);"], { cwd: consumer.dir, encoding: 'utf8' });
    expect(stdout.trim()).toBe('function function');
  }, 240_000);
});
