/**
 * `npm run build:client`: the client package, @animal-store/client, of the working contract or of
 * a frozen release, as a tarball ready for `npm publish` or `npm install <file>`. Which contract,
 * and when it refuses: HELP. The build itself: scripts/lib/client/clientPackage.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { projectRoot } from '../src/shared/paths.js';
import { buildClientPackage } from './lib/client/clientPackage.js';
import { commandLine, fail, usageError } from './lib/commandLine.js';
import { parseVersion } from './lib/contract/releases.js';

const HELP = `Usage: npm run build:client [-- --release <x.y.z>] [--out <dir>]

Builds the client package @animal-store/client, whose version is the contract's info.version:
client/'s sources with that contract's types and operation table, compiled to JavaScript and
.d.ts, with the contract (openapi.json) and its changelog section (CHANGELOG.md), packed into
<dir>/animal-store-client-<version>.tgz.

  (no --release)      the working contract, generated/openapi.json. It must be its version's
                      frozen release, unchanged: a package version names one contract, so an
                      unreleased change is refused (release it first: npm run release -- <x.y.z>)
  --release <x.y.z>   the frozen release spec/released/<x.y.z>.json, rebuilt with today's client
  --out <dir>         where the tarball goes (default: dist/client)
  --help              show this text

Exit status: 0 built, 1 refused or failed, 2 usage error.`;

const options = commandLine(HELP, { release: { type: 'string' }, out: { type: 'string' } });
const read = (file: string) => readFileSync(join(projectRoot, file), 'utf8');

function contractToBuild(): { file: string; contract: string } {
  if (options.release !== undefined) {
    if (!parseVersion(options.release)) usageError(HELP, `--release needs a version x.y.z, not ${options.release}`);
    const file = `spec/released/${options.release}.json`;
    if (!existsSync(join(projectRoot, file))) fail(`npm run build:client: no frozen release ${file}.`);
    return { file, contract: read(file) };
  }
  const file = 'generated/openapi.json';
  const contract = read(file);
  const version = String((JSON.parse(contract) as { info?: { version?: unknown } }).info?.version);
  const frozen = `spec/released/${version}.json`;
  if (!existsSync(join(projectRoot, frozen)) || read(frozen) !== contract) {
    fail(`npm run build:client: the working contract (${file}, version ${version}) is not the frozen release ${frozen}: a package of version ${version} would not be that contract. Release it first (npm run release -- <x.y.z>), or build a release with --release <x.y.z>.`);
  }
  return { file, contract };
}

const { file, contract } = contractToBuild();
const outDir = resolve(options.out ?? join(projectRoot, 'dist', 'client'));
try {
  const started = performance.now();
  const built = await buildClientPackage({ root: projectRoot, contract, source: file, changelog: read('spec/CHANGELOG.md'), outDir });
  console.log(`Built @animal-store/client ${built.version} from ${file} into ${relative(process.cwd(), built.tarball) || built.tarball} in ${Math.round(performance.now() - started)} ms.`);
} catch (error) {
  fail(`npm run build:client: ${error instanceof Error ? error.message : String(error)}`);
}
