/**
 * The breaking-change gate as a function: `npm run breaking` (scripts/breaking.ts, which says
 * what it judges and how) is this module's main run on the process's arguments and output. The
 * tests call main in their own process instead of starting the command for each case.
 */
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Diff } from 'api-smart-diff';
import { projectRoot } from '../../../src/shared/paths.js';
import { CommandExit, exitStatus } from '../commandExit.js';
import { componentOf, componentsUnder, contractDiffs, loadContract } from './contractDiff.js';
import { releasesIn } from './releases.js';
import { readWaivers, WAIVERS_FILE, type Waiver } from './waivers.js';
import { CONTRACT_DATE, contractDay, removableFrom, sunsetDate, sunsetInstant, sunsetRemovals, where } from './sunsets.js';

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
the spec: one exact BREAKING line, or a change inside a shared component in the words the gate
prints under "In shared components" (components.<kind>.<name>: <where in it> <what>), which
covers it in every operation it reaches. It is printed as "waived: …" and fails nothing. A waiver
that matches no change of any release fails the gate (checked when --against is not given),
unless what it waived went with an operation removed after its sunset ("spent waiver: …").

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
  /** Each contract the run compares, resolved (default: loadContract); a comparison leaves what it is given as it was, so a test may hand the same document to many runs. */
  load?: (file: string) => Promise<object>;
}

const rel = (file: string) => {
  const r = relative(projectRoot, file);
  return r.startsWith('..') || isAbsolute(r) ? file : r;
};

const PAST: Record<Diff['action'], string> = { add: 'added', remove: 'removed', replace: 'changed', rename: 'renamed' };
const show = (value: unknown) => (typeof value === 'string' ? `"${value}"` : String(value));
const isScalar = (value: unknown) => ['string', 'number', 'boolean'].includes(typeof value);
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
/** ` (16384 → 8192)`: the values of a change, when they are short. */
const valuesOf = ({ before, after }: Diff) => {
  const values = [before, after].filter(isScalar).map(show).join(' → ');
  return values ? ` (${values})` : '';
};

/** `GET /pets: [Removed] property `status` …` (`webhook petCreated: …`), and the response status the change was seen in. */
function describe(diff: Diff): { line: string; status?: string } {
  const { path, action, description } = diff;
  const [top, template, method, ...rest] = path.map(String);
  const inOperation = top === 'paths' && method !== undefined;
  // A webhook by its name (`webhook petCreated`), as the changelog names it.
  const inWebhook = top === 'webhooks' && template !== undefined;
  const where = inOperation ? `${method.toUpperCase()} ${template}` : inWebhook ? `webhook ${template}` : path.join('.');
  const within = inWebhook ? path.slice(3).map(String) : rest;
  const what = description ?? ((inOperation || inWebhook) && within.length > 0 ? `${within.join('.')} ${PAST[action]}` : PAST[action]);
  const line = `${where}: ${what}${valuesOf(diff)}`;
  return inOperation && path[3] === 'responses' ? { line, status: String(path[4]) } : { line };
}

/**
 * `components.parameters.IfNoneMatch: schema.maxLength changed (16384 → 8192)`: a change inside
 * a shared component, the same words wherever the component is used, so that one waiver covers
 * it in every operation it reaches, however many of them there are now or later.
 */
function componentLine(diff: Diff, before: object): string | undefined {
  const spot = componentOf(before, diff.path);
  return spot && `${spot.component}: ${spot.inner.join('.')} ${PAST[diff.action]}${valuesOf(diff)}`;
}

/** One line of the gate: a change of an operation, seen in one or more of its responses, with the shared component each sighting lies in. */
interface Line {
  text: string;
  /** The operation, `GET /pets`. */
  where: string;
  /** Per sighting, the component it lies in (undefined: the operation's own). */
  components: (string | undefined)[];
}

/** One line per change; the same change in several responses of an operation is one line. */
function linesOf(diffs: Diff[], before: object): Line[] {
  const lines = new Map<string, { statuses: string[]; components: (string | undefined)[] }>();
  for (const diff of diffs) {
    const { line, status } = describe(diff);
    const key = status === undefined ? line : line.replace(`Response ${status}`, 'Response {}');
    const entry = lines.get(key) ?? { statuses: [], components: [] };
    if (status !== undefined) entry.statuses.push(status);
    entry.components.push(componentLine(diff, before));
    lines.set(key, entry);
  }
  return [...lines].map(([key, { statuses, components }]) => ({ text: key.replace('Response {}', `Response ${statuses.join(', ')}`), where: key.slice(0, key.indexOf(': ')), components }));
}

/** Whether `waiver` lets `line` through: it is the line, or the shared component change every sighting of the line lies in. */
const waives = (waiver: Waiver, line: Line) => waiver.change === line.text || line.components.every((c) => c === waiver.change);

/** The gate on `argv` (the command's arguments), writing through `io`: resolves with its exit status instead of exiting. */
export const main = (argv: string[], io: GateIo): Promise<number> => exitStatus(() => gate(argv, io));

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
    return releases.filter((r) => r.parts[0] === newest.parts[0]).reverse().map((r) => r.file);
  }

  /** `run`'s value, or the gate stops (exit 2) with the error's message put in `words`. */
  function orFail<T>(run: () => T, words: (message: string) => string): T {
    try {
      return run();
    } catch (error) {
      return fail(words(messageOf(error)));
    }
  }

  /** The contract at `file`, resolved (./contractDiff.ts), or an error naming it when it is missing. */
  async function load(file: string): Promise<object> {
    if (!existsSync(file)) throw new Error(`${rel(file)} does not exist`);
    return readContract(file);
  }

  const options = { spec: { type: 'string' }, against: { type: 'string' }, verbose: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;
  // Node's parseArgs quotes the argument it stumbled on: an unknown one, or an option without its value.
  const { values } = orFail(() => parseArgs({ args: argv, options }), (message) => `Unknown or incomplete argument: ${/'([^' ]+)/.exec(message)?.[1] ?? message}\n\n${HELP}`);
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  const args = { spec: resolve(values.spec ?? join(projectRoot, 'spec', 'openapi.yaml')), against: values.against === undefined ? releasesOfNewestMajor() : [resolve(values.against)] };
  const waiversFile = join(dirname(args.spec), WAIVERS_FILE);
  const waivers = orFail(() => readWaivers(waiversFile), (message) => `Reading ${rel(waiversFile)} failed: ${message}`);
  const day = orFail(() => contractDay(io.env), (message) => message);
  const spec = await load(args.spec).catch((error: unknown) => fail(`Reading ${rel(args.spec)} failed: ${messageOf(error)}`));

  const usedNow = componentsUnder(spec, (spec as { paths?: unknown }).paths);

  /**
   * The changes from one released contract to the working spec, judged, without the removals the
   * calendar excuses; those come as operations of their own, with the components only they used
   * (a waiver of a change in one is spent, not stale), and so do the hints for removals that come
   * too early.
   */
  async function compareWith(against: string) {
    try {
      const before = await load(against);
      const removals = sunsetRemovals(before, spec, day);
      const paths = (before as { paths?: Record<string, Record<string, unknown>> }).paths ?? {};
      const retired = removals.excused.flatMap((op) => [...componentsUnder(before, paths[op.path]?.[op.method])]);
      return {
        before,
        diffs: contractDiffs(before, spec).filter((d) => !removals.excuses(d.path)),
        retiredComponents: retired.filter((component) => !usedNow.has(component)),
        excused: removals.excused,
        early: removals.early.map((op) => `${op.operationId} (${where(op)}) is deprecated: removing it is no break from ${removableFrom(op)} on (its sunset is ${sunsetInstant(op)}; this run judged ${day.date}).`),
      };
    } catch (error) {
      if (error instanceof CommandExit) throw error;
      return fail(`Comparing ${rel(args.spec)} with ${rel(against)} failed: ${messageOf(error)}`);
    }
  }

  // Each release of the major version is checked, not only the newest: a client written against
  // 1.0.0 was promised 1.0.0's contract, whatever a later release added (ErrorCode became
  // extensible in 1.1.0, so only clients of 1.1.0 and later were told its values may grow).
  const breaking = new Map<string, { releases: string[]; component?: string; where: string }>();
  const waived = new Map<Waiver, Set<string>>();
  const excused = new Map<string, string>();
  const retiredComponents = new Set<string>();
  const early = new Set<string>();
  for (const against of args.against) {
    const { before, diffs, ...compared } = await compareWith(against);
    for (const op of compared.excused) excused.set(where(op), `removed after its sunset (${sunsetDate(op)}): ${op.operationId} ${where(op)}`);
    for (const component of compared.retiredComponents) retiredComponents.add(component);
    for (const line of compared.early) early.add(line);
    let waivedHere = 0;
    const lines = linesOf(diffs.filter((d) => d.type === 'breaking'), before).filter((line) => {
      const waiver = waivers.find((w) => waives(w, line));
      if (waiver) {
        waivedHere += 1;
        waived.set(waiver, (waived.get(waiver) ?? new Set()).add(line.where));
      }
      return !waiver;
    });
    const compatible = linesOf(diffs.filter((d) => d.type !== 'breaking' && d.type !== 'annotation'), before).map((line) => `compatible: ${line.text}`);
    if (values.verbose && compatible.length > 0) io.out(compatible.join('\n'));
    for (const { text, where: at, components } of lines) {
      const shared = new Set(components);
      const entry = breaking.get(text) ?? { releases: [], where: at, ...(shared.size === 1 && components[0] !== undefined ? { component: components[0] } : {}) };
      breaking.set(text, { ...entry, releases: [...entry.releases, rel(against)] });
    }
    if (lines.length === 0) {
      const counts = [compatible.length ? `${compatible.length} compatible change${compatible.length === 1 ? '' : 's'}` : '', waivedHere ? `${waivedHere} waived` : ''].filter(Boolean);
      io.out(`No breaking change in ${rel(args.spec)} against ${rel(against)}${counts.length ? ` (${counts.join(', ')})` : ''}.`);
    }
  }
  // Once, however many of the releases had the operation.
  if (excused.size > 0) io.out([...excused.values()].join('\n'));
  for (const [{ change, why }, at] of waived) {
    const reach = change.startsWith('components.') ? ` (in ${[...at].join(', ')})` : '';
    io.out(`waived: ${change}${reach}\n  (${rel(waiversFile)}: ${why})`);
  }
  // A waiver that matched nothing is stale, unless what it waived went with an operation removed
  // after its sunset: the operation it names, or the last operation that used the component it
  // names. Retiring an operation is a change of its own, so it never fails the gate for that.
  const unmatched = values.against !== undefined ? [] : waivers.filter((w) => !waived.has(w));
  const spent = (w: Waiver) => [excused, retiredComponents].some((gone) => gone.has(w.change.slice(0, w.change.indexOf(': '))));
  for (const w of unmatched.filter(spent)) io.out(`spent waiver: ${w.change}\n  (what it waived went with an operation removed after its sunset; delete it from ${rel(waiversFile)})`);
  const stale = unmatched.filter((w) => !spent(w));
  if (stale.length > 0) {
    io.err(stale.map((w) => `STALE WAIVER: ${w.change}`).join('\n'));
    io.err(`\n${stale.length} waiver${stale.length === 1 ? '' : 's'} in ${rel(waiversFile)} match${stale.length === 1 ? 'es' : ''} no change against any released contract: remove ${stale.length === 1 ? 'it' : 'them'}.`);
  }
  if (breaking.size > 0) {
    const releases = [...new Set([...breaking.values()].flatMap((b) => b.releases))];
    io.err([...breaking.keys()].map((line) => `BREAKING: ${line}`).join('\n'));
    const shared = new Map<string, Set<string>>();
    for (const { component, where: at } of breaking.values()) if (component) shared.set(component, (shared.get(component) ?? new Set()).add(at));
    io.err(
      `\n${breaking.size} breaking change${breaking.size === 1 ? '' : 's'} in ${rel(args.spec)} against the released contract${releases.length === 1 ? '' : 's'} ${releases.join(', ')}.` +
        '\nMake the change additive (optional, new, wider), or keep the old form next to the new one.' +
        (shared.size > 0 ? `\nIn shared components (a waiver in these words covers each operation the change reaches):${[...shared].map(([component, at]) => `\n  ${component} (in ${[...at].join(', ')})`).join('')}` : '') +
        [...early].map((line) => `\n${line}`).join(''),
    );
  }
  return breaking.size > 0 || stale.length > 0 ? 1 : 0;
}
