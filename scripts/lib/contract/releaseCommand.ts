/**
 * The release as a function: `npm run release` (scripts/release.ts) is this module's main run on
 * the process's arguments and output; HELP says what it writes and when it refuses. The tests
 * call main in their own process, on a copy of the project, instead of starting the command.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { isScalar, parseDocument } from 'yaml';
import { projectRoot } from '../../../src/shared/paths.js';
import { buildClientPackage, tarballName } from '../client/clientPackage.js';
import { CommandExit, exitStatus } from '../commandExit.js';
import { redoclyEnv } from '../redocly.js';
import { changesMarkdown, contractChanges, type ChangeGroup } from './contractChanges.js';
import { compareVersions, parseVersion, releasesIn } from './releases.js';
import { dayStart } from './sunsets.js';

const HELP = `Usage: npm run release -- <x.y.z> [--date YYYY-MM-DD]

Releases the working contract (spec/openapi.yaml) as version x.y.z:

  - sets info.version in spec/openapi.yaml, and version in package.json and package-lock.json
  - regenerates generated/ and client/generated/ (as npm run generate does), so they carry the
    new version
  - freezes the bundled contract as spec/released/<x.y.z>.json
  - sets version in client/package.json and builds the client package of that contract,
    dist/client/animal-store-client-<x.y.z>.tgz (as npm run build:client -- --release <x.y.z>),
    ready for npm publish
  - in spec/CHANGELOG.md, turns "## Unreleased" into "## x.y.z (date)": your notes, then the
    changes computed from the newest release, operation by operation; a new empty
    "## Unreleased" goes above it

It refuses, and writes nothing, when x.y.z is not a version of three numbers, is not above the
newest spec/released/<version>.json, or changes the major version (a new major is a /v2 contract,
not a release of this one), when the spec does not lint (Redocly, Spectral), when the
breaking-change gate (npm run breaking) finds a break, or when the client does not build.

  --date YYYY-MM-DD   the release date written in the changelog (default: today, UTC)
  --help              show this text

Exit status: 0 released, 1 refused, 2 usage error.`;

const specFile = 'spec/openapi.yaml';
const changelogFile = 'spec/CHANGELOG.md';
const releasedDir = 'spec/released';
const clientManifest = 'client/package.json';

/** Where a release writes what it prints, and which project it releases: a process's own, or a test's. */
export interface ReleaseIo {
  /** Text for stdout, as process.stdout.write takes it. */
  stdout(text: string): void;
  /** Text for stderr. */
  stderr(text: string): void;
  /** The project to release (default: this one); the checks and generate run in it. */
  root?: string;
}

/** The release on `argv` (the command's arguments), writing through `io`: resolves with its exit status instead of exiting. */
export const main = (argv: string[], io: ReleaseIo): Promise<number> => exitStatus(() => release(argv, io, io.root ?? projectRoot));

async function release(argv: string[], io: ReleaseIo, root: string): Promise<void> {
  const log = (text: string) => io.stdout(`${text}\n`);
  const logError = (text: string) => io.stderr(`${text}\n`);
  const bin = (name: string, base = root) => join(base, 'node_modules', '.bin', name);

  function usage(message: string): never {
    logError(`npm run release: ${message}\n\n${HELP}`);
    throw new CommandExit(2);
  }

  function refuse(message: string): never {
    logError(`npm run release: refused, nothing written.\n${message}`);
    throw new CommandExit(1);
  }

  /** The version and the date; Node's parseArgs names an unknown option or a missing value. */
  function parseArguments(): { version: string; date: string } {
    const parsed = (() => {
      try {
        return parseArgs({ args: argv, allowPositionals: true, options: { date: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
      } catch (error) {
        return usage(error instanceof Error ? error.message : String(error));
      }
    })();
    if (parsed.values.help) {
      log(HELP);
      throw new CommandExit(0);
    }
    const [version, extra] = parsed.positionals;
    const date = parsed.values.date ?? new Date().toISOString().slice(0, 10);
    if (Number.isNaN(dayStart(date))) usage(`--date needs a calendar date as YYYY-MM-DD, not ${date}`);
    if (extra !== undefined) usage(`one version only, not ${version} and ${extra}`);
    if (version === undefined) usage('which version? e.g. npm run release -- 1.2.0');
    return { version, date };
  }

  const read = (file: string, base = root) => readFileSync(join(base, file), 'utf8');

  /** Runs `command` as a child in `cwd`: undefined when it succeeds, else its output (the reason for a refusal). */
  function failure(command: string, args: string[], cwd = root): string | undefined {
    const run = spawnSync(command, args, { cwd, encoding: 'utf8', env: redoclyEnv(), maxBuffer: 64 * 1024 * 1024 });
    return run.status === 0 ? undefined : `${run.stdout ?? ''}${run.stderr ?? ''}${run.error ? `\n${run.error.message}` : ''}`.trim();
  }

  /** Runs a check, its output shown only when it fails. */
  function check(name: string, command: string, args: string[]): void {
    io.stdout(`${name}... `);
    const output = failure(command, args);
    log(output === undefined ? 'passed' : 'FAILED');
    if (output !== undefined) refuse(`${name} failed:\n\n${output}`);
  }

  // -- What each file becomes (nothing is written here) ----------------------------------------

  /** spec/openapi.yaml with only the text of `info.version` replaced, comments and layout kept. */
  function specWithVersion(text: string, version: string): string {
    const node = parseDocument(text).getIn(['info', 'version'], true);
    if (!isScalar(node) || !node.range) refuse(`${specFile} has no info.version to set.`);
    const quote = node.type === 'QUOTE_DOUBLE' ? '"' : node.type === 'QUOTE_SINGLE' ? "'" : '';
    const [start, end] = node.range;
    const result = `${text.slice(0, start)}${quote}${version}${quote}${text.slice(end)}`;
    if (parseDocument(result).getIn(['info', 'version']) !== version) refuse(`Could not set info.version in ${specFile} (its value is written in a form this script does not edit).`);
    return result;
  }

  /** The changelog with "## Unreleased" turned into the version's entry, and a new empty "## Unreleased" above it. */
  function changelogWithRelease(text: string, version: string, date: string, previous: string, changes: string): string {
    const lines = text.split('\n');
    const start = lines.findIndex((line) => /^## Unreleased\s*$/.test(line));
    if (start === -1) refuse(`${changelogFile} has no "## Unreleased" section to release.`);
    const next = lines.findIndex((line, i) => i > start && /^## /.test(line));
    const end = next === -1 ? lines.length : next;
    const notes = lines.slice(start + 1, end).join('\n').trim();
    const entry = [
      '## Unreleased',
      '',
      `## ${version} (${date})`,
      '',
      ...(notes ? [notes, ''] : []),
      '### Changes by operation',
      '',
      `Computed from the contracts by \`npm run release\`: every change from ${previous} to ${version}.`,
      '',
      changes.trimEnd(),
      '',
    ];
    return [...lines.slice(0, start), ...entry, ...(next === -1 ? [] : lines.slice(end))].join('\n').replace(/\n*$/, '\n');
  }

  /** client/package.json with only its version's text replaced. */
  function clientManifestWithVersion(text: string, version: string): string {
    const result = text.replace(/^(  "version": )"[^"]*"/m, `$1"${version}"`);
    if ((JSON.parse(result) as { version?: unknown }).version !== version) refuse(`Could not set the version in ${clientManifest}.`);
    return result;
  }

  /** The project's files as git sees them (tracked, and untracked but not ignored), as on disk now. */
  function projectFiles(): string[] {
    const git = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (git.status !== 0) refuse(`npm run release needs git to list the project's files: ${git.error?.message ?? git.stderr.trim()}`);
    return [...new Set(git.stdout.split('\0').filter(Boolean))].filter((file) => statSync(join(root, file), { throwIfNoEntry: false })?.isFile());
  }

  /**
   * What the release writes beside the spec and the changelog, made in a throwaway copy of the
   * project so the working tree stays untouched until every file is ready: package.json and
   * package-lock.json as `npm version` sets them, the generated files and handler stubs that `npm
   * run generate` writes for the new spec (those that differ from the working tree's); and the
   * changes from the release `previous` to the new bundled contract.
   */
  async function madeInCopy(spec: string, version: string, previous: string): Promise<{ made: Map<string, string>; groups: ChangeGroup[] }> {
    const copy = mkdtempSync(join(tmpdir(), 'animal-store-release-'));
    try {
      for (const file of projectFiles()) cpSync(join(root, file), join(copy, file));
      symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir');
      writeFileSync(join(copy, specFile), spec);
      const npm = failure('npm', ['version', version, '--no-git-tag-version', '--allow-same-version', '--ignore-scripts'], copy);
      if (npm !== undefined) refuse(`npm version ${version} failed:\n\n${npm}`);
      const generate = failure(bin('tsx', copy), ['scripts/generate.ts'], copy);
      if (generate !== undefined) refuse(`npm run generate failed on the new spec:\n\n${generate}`);
      const made = new Map<string, string>();
      const outputs = ['generated', 'handlers', 'client/generated'].flatMap((dir) => readdirSync(join(copy, dir), { recursive: true, encoding: 'utf8' }).map((file) => join(dir, file)));
      for (const file of ['package.json', 'package-lock.json', ...outputs].filter((file) => statSync(join(copy, file)).isFile())) {
        const text = read(file, copy);
        if (!existsSync(join(root, file)) || text !== read(file)) made.set(file, text);
      }
      return { made, groups: await contractChanges(join(root, releasedDir, `${previous}.json`), join(copy, 'generated', 'openapi.json')) };
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }

  // -- The release -----------------------------------------------------------------------------

  const { version, date } = parseArguments();
  const wanted = parseVersion(version);
  if (!wanted) refuse(`"${version}" is not a version: three numbers, x.y.z (e.g. 1.2.0), without a "v" or a suffix.`);
  const newest = releasesIn(join(root, releasedDir))[0];
  if (!newest) refuse(`No released contract in ${releasedDir}/ to release after.`);
  const nextMinor = `${newest.parts[0]}.${newest.parts[1] + 1}.0`;
  if (compareVersions(wanted, newest.parts) <= 0) refuse(`${version} is not above the newest released contract, ${newest.version} (${releasedDir}/${newest.version}.json). Choose a greater version, e.g. ${nextMinor}.`);
  if (wanted[0] !== newest.parts[0]) {
    refuse(
      `${version} is a new major version. A major version is a new contract (a /v2 API, served beside /v1), not a release of this one: ` +
        `npm run release makes minor and patch releases of ${newest.parts[0]}.x only. For a compatible change, release ${nextMinor}.`,
    );
  }
  if (!/^## Unreleased\s*$/m.test(read(changelogFile))) refuse(`${changelogFile} has no "## Unreleased" section to release.`);

  log(`Releasing the contract ${newest.version} -> ${version} (${date}).`);
  check('Redocly lint of the spec', bin('redocly'), ['lint']);
  check('Spectral (OWASP) lint of the spec', bin('spectral'), ['lint', specFile, '--ruleset', '.spectral.yaml', '--fail-severity=warn']);
  check('Breaking-change gate', bin('tsx'), ['scripts/breaking.ts']);

  const spec = read(specFile);
  const previousVersion = String(parseDocument(spec).getIn(['info', 'version']) ?? '?');
  const files = new Map<string, string>([[specFile, specWithVersion(spec, version)]]);
  const { made, groups } = await madeInCopy(files.get(specFile)!, version, newest.version);
  for (const [file, text] of made) files.set(file, text);
  const bundled = files.get('generated/openapi.json');
  if (bundled === undefined || (JSON.parse(bundled) as { info?: { version?: unknown } }).info?.version !== version) {
    refuse('generated/openapi.json did not come out with the new version.');
  }
  const frozen = `${releasedDir}/${version}.json`;
  files.set(frozen, bundled);
  if (groups.length === 0) refuse(`The contract has not changed since ${newest.version}: nothing to release.`);
  files.set(changelogFile, changelogWithRelease(read(changelogFile), version, date, newest.version, changesMarkdown(groups, 4)));
  files.set(clientManifest, clientManifestWithVersion(read(clientManifest), version));

  // The client package of the new contract, built as build:client rebuilds any frozen release.
  io.stdout('The client package... ');
  const tarball = `dist/client/${tarballName(version)}`;
  const packed = mkdtempSync(join(tmpdir(), 'animal-store-release-client-'));
  try {
    const built = await buildClientPackage({ root, contract: bundled, source: frozen, changelog: files.get(changelogFile)!, outDir: packed }).catch((error: unknown) => {
      log('FAILED');
      return refuse(`The client package did not build against the new contract:\n\n${error instanceof Error ? error.message : String(error)}`);
    });
    log('built');

    // Every check passed and every file is built: now the working tree.
    for (const [file, text] of files) {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      writeFileSync(join(root, file), text);
    }
    mkdirSync(join(root, 'dist', 'client'), { recursive: true });
    copyFileSync(built.tarball, join(root, tarball));
  } finally {
    rmSync(packed, { recursive: true, force: true });
  }

  const changeCount = groups.reduce((sum, group) => sum + group.changes.length, 0);
  const described = new Map<string, string>([
    [specFile, `info.version ${previousVersion} -> ${version}`],
    ['package.json', `version ${version}`],
    ['package-lock.json', `version ${version} (top level and packages[""])`],
    [frozen, 'the released contract, frozen (the bundled generated/openapi.json)'],
    [clientManifest, `version ${version}`],
    [tarball, `@animal-store/client ${version}, the client package of this contract (not committed: npm publish it)`],
    [changelogFile, `"## ${version} (${date})": the Unreleased notes, then ${changeCount} computed change${changeCount === 1 ? '' : 's'} in ${groups.length} group${groups.length === 1 ? '' : 's'}; a new empty "## Unreleased"`],
  ]);
  const written = [...files.keys(), tarball];
  const width = Math.max(...written.map((file) => file.length));
  log(`\nReleased contract ${version}. Wrote:`);
  for (const file of written) log(`  ${file.padEnd(width)}  ${described.get(file) ?? 'regenerated'}`);
  log(`\nNext: read the new changelog entry (${changelogFile}), then commit and tag:
  git add ${[...files.keys()].join(' ')}
  git commit -m "Release contract ${version}"
  git tag v${version}
then publish its client: npm publish ${tarball}`);
}

