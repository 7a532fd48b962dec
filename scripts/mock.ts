/**
 * `npm run mock`: a mock of the Animal Store API, answering from the contract's examples, so a
 * frontend can be built before (or without) the real server.
 *
 * It runs Prism (@stoplight/prism-cli) on generated/openapi.json, with one fix: Prism ignores the
 * path of the server URL and would serve `/pets`, while the real server serves `/v1/pets`. So this
 * script derives, at start and again whenever generated/openapi.json changes, a copy of the
 * contract whose paths carry the base path of the first server URL (`/v1/pets`,
 * `/v1/pets/{petId}`), in a temp folder, and points Prism at that copy. A frontend then switches
 * between the mock and the real server by host and port only. The copy also drops what would
 * make Prism answer outside the contract, and refuses numerals the server refuses (see forMock in
 * scripts/lib/prismContract.ts). What the mock still does differently is listed by --help, from
 * MOCK_DIFFERENCES there, which the contract suite asserts on the mock.
 *
 * SIGINT and SIGTERM are passed on to Prism; the script exits 0 once Prism has stopped.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, unwatchFile, watchFile, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { bundledSpecPath, projectRoot } from '../src/shared/paths.js';
import { basePathOf, loadBundledSpec } from '../src/shared/spec.js';
import { commandLine, fail, usageError } from './lib/commandLine.js';
import { exampleFileFront } from './lib/mockFiles.js';
import { freePort, listenProblem, waitForPort } from './lib/processes.js';
import { forMock, mockDifferencesHelp } from './lib/prismContract.js';

const DEFAULT_PORT = 4010;
const DEFAULT_HOST = '127.0.0.1';

const HELP = `Usage: npm run mock [-- [--port <port>] [--host <host>]]

Serves a mock of the Animal Store API (Prism) from generated/openapi.json, on the same paths as
the real server: http://${DEFAULT_HOST}:${DEFAULT_PORT}/v1/pets, /v1/pets/{petId}.

  --port <port>   port to listen on (default ${DEFAULT_PORT}). The PORT variable is not read:
                  it is the real server's, so both can run side by side.
  --host <host>   address to listen on (default ${DEFAULT_HOST}; 0.0.0.0 for every interface)
  --help          show this text

The mock answers with the examples of the contract. It wants an Authorization: Bearer header,
with any token; without one it answers 401 with the contract's Error example. It checks
parameters and bodies against the contract but stores nothing. Choose another declared
response with a Prefer header, e.g. "Prefer: code=404" or "Prefer: example=sold". CORS is
open to every origin. After \`npm run generate\` the mock reloads by itself.

What the mock does differently from the real server (the contract suite asserts each one on
the mock, test/contract/suite.ts):
${mockDifferencesHelp()}

Stop it with Ctrl-C.`;

const { port: portText = String(DEFAULT_PORT), host = DEFAULT_HOST } = commandLine(HELP, { port: { type: 'string' }, host: { type: 'string' } });
if (!/^\d+$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) usageError(HELP, `--port must be a whole number from 1 to 65535; got "${portText}"`);
if (!/^[A-Za-z0-9.:-]+$/.test(host)) usageError(HELP, `--host must be a host name or IP address; got "${host}"`);
const port = Number(portText);

if (!existsSync(bundledSpecPath)) fail(`${relative(projectRoot, bundledSpecPath)} is missing: run \`npm run generate\` first.`);

// Prism reports a busy port with a stack of usage text; say it plainly instead.
const listenError = await listenProblem(host, port);
if (listenError) fail(`Cannot listen on ${host}:${port} (${listenError}).${listenError === 'EADDRINUSE' ? ' Choose another port with --port.' : ''}`);

const dir = mkdtempSync(join(tmpdir(), 'animal-store-mock-'));
const mockSpecPath = join(dir, 'openapi.json');
const removeDir = () => rmSync(dir, { recursive: true, force: true });
process.on('exit', removeDir);

function writeMockSpec(): string {
  const document = forMock(loadBundledSpec());
  writeFileSync(mockSpecPath, JSON.stringify(document, null, 2));
  return basePathOf(document);
}

let basePath: string;
try {
  basePath = writeMockSpec();
} catch (error) {
  fail(`Cannot derive the mock's contract from ${relative(projectRoot, bundledSpecPath)}: ${error instanceof Error ? error.message : String(error)}`);
}

// Prism reloads when its document changes; keep its copy in step with generated/openapi.json.
watchFile(bundledSpecPath, { interval: 1000 }, (current, previous) => {
  if (current.mtimeMs === previous.mtimeMs || !existsSync(bundledSpecPath)) return;
  try {
    writeMockSpec();
  } catch (error) {
    console.error(`Not reloading: ${error instanceof Error ? error.message : String(error)}`);
  }
});

// Prism listens on a port of its own on this machine; the front on the one asked for answers
// every request through it, with the bytes of the example files (./lib/mockFiles.ts).
const prismHost = '127.0.0.1';
const prismPort = await freePort(prismHost);
const prism = spawn(join(projectRoot, 'node_modules', '.bin', 'prism'), ['mock', mockSpecPath, '--host', prismHost, '--port', String(prismPort)], { cwd: projectRoot, stdio: 'inherit' });
const front = exampleFileFront({ host: prismHost, port: prismPort }, join(projectRoot, 'spec'));
front.on('error', (error) => {
  prism.kill('SIGTERM');
  fail(`Cannot listen on ${host}:${port}: ${error.message}`);
});

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stopping = true;
    // A Prism that has exited is not signalled (kill does nothing then).
    prism.kill(signal);
  });
}

prism.on('error', (error) => fail(`Cannot start Prism: ${error.message}`));

prism.on('exit', (code, signal) => {
  unwatchFile(bundledSpecPath);
  if (stopping) {
    console.log('Mock stopped.');
    process.exit(0);
  }
  console.error(`Prism exited unexpectedly (${signal ?? `exit code ${code}`}).`);
  process.exit(code === null || code === 0 ? 1 : code);
});

const gaveUp = () => prism.exitCode !== null || prism.signalCode !== null || stopping;
if ((await waitForPort(prismHost, prismPort, gaveUp)) && (await new Promise<boolean>((resolve) => front.listen(port, host, () => resolve(true))))) {
  const shown = host === '127.0.0.1' || host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  const base = `http://${shown}:${port}${basePath}`;
  console.log(`\nMock of the Animal Store API on ${base} (any bearer token is accepted).`);
  console.log(`Try: curl -H "Authorization: Bearer test" ${base}/pets\n`);
}
