/**
 * The breaking-change gate as a function: `npm run breaking` (scripts/breaking.ts, which says
 * what it judges and how) is this module's main run on the process's arguments and output. The
 * tests call main in their own process instead of starting the command for each case.
 */
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { Diff } from 'api-smart-diff';
import { projectRoot } from '../../src/paths.js';
import { CommandExit, exitStatus } from './commandExit.js';
import { contractDiffs, loadContract } from './contractDiff.js';
import { releasesIn } from './releases.js';
import { readWaivers, WAIVERS_FILE, type Waiver } from './waivers.js';
import { CONTRACT_DATE, ContractDateError, contractDay, removableFrom, sunsetDate, sunsetInstant, sunsetRemovals, where } from './sunsets.js';

const HELP = `Usage: npm run breaking [-- [--spec <file>] [--against <file>] [--verbose]]

Fails (exit 1) with one BREAKING line per change of the contract that would break an existing
client: compares the working spec with each released contract of the newest major version in
spec/released/ (a client of 1.0.0 must keep working, not only one of the newest release).

  --spec <file>      the working spec, YAML or JSON (default: spec/openapi.yaml)
  --against <file>   the one contract to stay compatible with (default: every
                     spec/released/<x.y.z>.json of the newest major, by version)
  --verbose          also list the compatible changes
  --help             show this text

Removing a whole deprecated operation is no break once its sunset, its x-sunset in the released
contract, has passed: the server answers it 410 Gone from that instant on. Each such removal is
listed as "removed after its sunset (<date>): <operationId> <METHOD> <path>". Every other change
is judged as before. The sunset has passed on a day when its instant is at or before 00:00 UTC of
that day (a sunset at 2030-12-05T00:00:00Z has passed on 2030-12-05; one at noon, on the next day).

  ${CONTRACT_DATE}=YYYY-MM-DD   the day to judge on (default: today's date in UTC), e.g.
                             CONTRACT_DATE=2030-12-06 npm run breaking

A change decided on and let through anyway is listed, with its reason, in ${WAIVERS_FILE} beside
the spec (one exact BREAKING line each); it is printed as "waived: …" and fails nothing. A waiver
that matches no change of any release fails the gate (checked when --against is not given).

Exit status: 0 compatible, 1 breaking changes, 2 usage or tool error.`;

const releasedDir = join(projectRoot, 'spec', 'released');

/** Where the gate writes, what environment it reads and how it reads a contract: a process's own, or a test's. */
export interface GateIo {
  /** One line or more to stdout, as console.log writes them. */
  out(text: string): void;
  /** The same to stderr, as console.error. */
  err(text: string): void;
  /** Read for CONTRACT_DATE. */
  env: Readonly<Record<string, string | undefined>>;
  /** Each contract the run compares, resolved (default: loadContract); called once per file and run, since a comparison may change what it is given. */
  load?: (file: string) => Promise<object>;
}


const rel = (file: string) => {
  const r = relative(projectRoot, file);
  return r.startsWith('..') || isAbsolute(r) ? file : r;
};

const PAST: Record<Diff['action'], string> = { add: 'added', remove: 'removed', replace: 'changed', rename: 'renamed' };
const show = (value: unknown) => (typeof value === 'string' ? `"${value}"` : String(value));
const isScalar = (value: unknown) => ['string', 'number', 'boolean'].includes(typeof value);

/** `GET /pets: [Removed] property `status` …`, with the values when they are short. */
function describe({ path, action, description, before, after }: Diff): { line: string; status?: string } {
  const [top, template, method, ...rest] = path.map(String);
  const inOperation = top === 'paths' && method !== undefined;
  const where = inOperation ? `${method.toUpperCase()} ${template}` : path.join('.');
  const what = description ?? (inOperation && rest.length > 0 ? `${rest.join('.')} ${PAST[action]}` : PAST[action]);
  const values = [before, after].filter(isScalar).map(show).join(' → ');
  const line = `${where}: ${what}${values ? ` (${values})` : ''}`;
  return inOperation && path[3] === 'responses' ? { line, status: String(path[4]) } : { line };
}

/** One line per change; the same change in several responses of an operation is one line. */
function linesOf(diffs: Diff[], prefix: string): string[] {
  const lines = new Map<string, string[]>();
  for (const diff of diffs) {
    const { line, status } = describe(diff);
    const key = status === undefined ? line : line.replace(`Response ${status}`, 'Response {}');
    lines.set(key, [...(lines.get(key) ?? []), ...(status === undefined ? [] : [status])]);
  }
  return [...lines].map(([key, statuses]) => `${prefix}${key.replace('Response {}', `Response ${statuses.join(', ')}`)}`);
}

/**
 * The gate, as `npm run breaking` runs it with `argv` (its arguments): writes what the command
 * prints through `io` and resolves with its exit status instead of exiting, so the tests can run
 * it in their own process.
 */
export async function main(argv: string[], io: GateIo): Promise<number> {
  return exitStatus(() => gate(argv, io));
}

async function gate(argv: string[], io: GateIo): Promise<number> {
  const readContract = io.load ?? loadContract;

  function fail(message: string): never {
    io.err(message);
    throw new CommandExit(2);
  }

  /** Every spec/released/<x.y.z>.json of the newest major version, oldest first (by version, not by name or date). */
  function releasesOfNewestMajor(): string[] {
    const releases = releasesIn(releasedDir);
    const newest = releases[0];
    if (!newest) fail(`No released contract in ${rel(releasedDir)}/ (expected <x.y.z>.json files)`);
    return releases
      .filter((r) => r.parts[0] === newest.parts[0])
      .reverse()
      .map((r) => r.file);
  }

  function parseArgs(): { spec: string; against: string[]; againstGiven: boolean; verbose: boolean } {
    const args = { spec: join(projectRoot, 'spec', 'openapi.yaml'), against: '', verbose: false };
    for (let i = 0; i < argv.length; i += 1) {
      const [arg, value] = [argv[i], argv[i + 1]];
      if (arg === '--verbose') args.verbose = true;
      else if ((arg === '--spec' || arg === '--against') && value !== undefined && !value.startsWith('--')) {
        args[arg === '--spec' ? 'spec' : 'against'] = resolve(value);
        i += 1;
      } else fail(`Unknown or incomplete argument: ${arg}\n\n${HELP}`);
    }
    return { ...args, againstGiven: args.against !== '', against: args.against ? [args.against] : releasesOfNewestMajor() };
  }

  /** The contract at `file`, resolved (./contractDiff.ts), or an error naming it when it is missing. */
  async function load(file: string): Promise<object> {
    if (!existsSync(file)) throw new Error(`${rel(file)} does not exist`);
    return readContract(file);
  }

  if (argv.includes('--help') || argv.includes('-h')) {
    io.out(HELP);
    return 0;
  }
  const args = parseArgs();
  const waiversFile = join(dirname(args.spec), WAIVERS_FILE);
  const waivers: Waiver[] = (() => {
    try {
      return readWaivers(waiversFile);
    } catch (error) {
      return fail(`Reading ${rel(waiversFile)} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  })();
  const day = (() => {
    try {
      return contractDay(io.env);
    } catch (error) {
      if (error instanceof ContractDateError) fail(error.message);
      throw error;
    }
  })();
  const spec = await load(args.spec).catch((error: unknown) => fail(`Reading ${rel(args.spec)} failed: ${error instanceof Error ? error.message : String(error)}`));

  /**
   * The changes from one released contract to the working spec, judged, without the removals the
   * calendar excuses; those come as lines of their own, and so do the hints for removals that come
   * too early.
   */
  async function compareWith(against: string): Promise<{ diffs: Diff[]; excused: string[]; early: string[] }> {
    try {
      const before = await load(against);
      const removals = sunsetRemovals(before, spec, day);
      const diffs = contractDiffs(before, spec).filter((d) => !removals.excuses(d.path));
      return {
        diffs,
        excused: removals.excused.map((op) => `removed after its sunset (${sunsetDate(op)}): ${op.operationId} ${where(op)}`),
        early: removals.early.map((op) => `${op.operationId} (${where(op)}) is deprecated: removing it is no break from ${removableFrom(op)} on (its sunset is ${sunsetInstant(op)}; this run judged ${day.date}).`),
      };
    } catch (error) {
      if (error instanceof CommandExit) throw error;
      return fail(`Comparing ${rel(args.spec)} with ${rel(against)} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  // Each release of the major version is checked, not only the newest: a client written against
  // 1.0.0 was promised 1.0.0's contract, whatever a later release added (ErrorCode became
  // extensible in 1.1.0, so only clients of 1.1.0 and later were told its values may grow).
  const breaking = new Map<string, string[]>();
  const waived = new Map<string, Waiver>();
  const excused = new Set<string>();
  const early = new Set<string>();
  let failed = false;
  for (const against of args.against) {
    const { diffs, ...sunsets } = await compareWith(against);
    for (const line of sunsets.excused) excused.add(line);
    for (const line of sunsets.early) early.add(line);
    let waivedHere = 0;
    const lines = linesOf(diffs.filter((d) => d.type === 'breaking'), 'BREAKING: ').filter((line) => {
      const waiver = waivers.find((w) => `BREAKING: ${w.change}` === line);
      if (waiver) {
        waivedHere += 1;
        waived.set(line, waiver);
      }
      return !waiver;
    });
    const compatible = linesOf(diffs.filter((d) => d.type !== 'breaking' && d.type !== 'annotation'), 'compatible: ');
    if (args.verbose && compatible.length > 0) io.out(compatible.join('\n'));
    for (const line of lines) breaking.set(line, [...(breaking.get(line) ?? []), rel(against)]);
    if (lines.length > 0) failed = true;
    else {
      const counts = [compatible.length ? `${compatible.length} compatible change${compatible.length === 1 ? '' : 's'}` : '', waivedHere ? `${waivedHere} waived` : ''].filter(Boolean);
      io.out(`No breaking change in ${rel(args.spec)} against ${rel(against)}${counts.length ? ` (${counts.join(', ')})` : ''}.`);
    }
  }
  // Once, however many of the releases had the operation.
  if (excused.size > 0) io.out([...excused].join('\n'));
  for (const [line, { why }] of waived) io.out(`waived: ${line.slice('BREAKING: '.length)}\n  (${rel(waiversFile)}: ${why})`);
  const stale = args.againstGiven ? [] : waivers.filter((w) => !waived.has(`BREAKING: ${w.change}`));
  if (stale.length > 0) {
    io.err(stale.map((w) => `STALE WAIVER: ${w.change}`).join('\n'));
    io.err(`\n${stale.length} waiver${stale.length === 1 ? '' : 's'} in ${rel(waiversFile)} match${stale.length === 1 ? 'es' : ''} no change against any released contract: remove ${stale.length === 1 ? 'it' : 'them'}.`);
    failed = true;
  }
  if (breaking.size > 0) {
    const releases = [...new Set([...breaking.values()].flat())];
    io.err([...breaking.keys()].join('\n'));
    io.err(
      `\n${breaking.size} breaking change${breaking.size === 1 ? '' : 's'} in ${rel(args.spec)} against the released contract${releases.length === 1 ? '' : 's'} ${releases.join(', ')}.` +
        '\nMake the change additive (optional, new, wider), or keep the old form next to the new one.' +
        [...early].map((line) => `\n${line}`).join(''),
    );
  }
  return failed ? 1 : 0;
}

