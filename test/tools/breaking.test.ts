/**
 * The breaking-change gate bites: scripts/breaking.ts fails with one `BREAKING:` line naming each
 * break of the contract, lets additive changes through, and passes the spec as it is.
 *
 * The cases (test/support/breakingCorpus.ts) each edit a copy of test/fixtures/spec/openapi.yaml,
 * a frozen copy of the spec, written to a temporary folder. The gate runs on each copy with
 * `--spec <mutated.yaml> --against <unmodified.yaml>` (or the released contract a case describes):
 * the cases do not depend on what spec/released/ holds. A case about the calendar (a deprecated
 * operation removed before or after its sunset) names its day with CONTRACT_DATE; the others run
 * without it, on today's date. The real spec/openapi.yaml is judged as `npm run lint` judges it,
 * against spec/released/, and so is a user's retiring getPet after its sunset (the last cases).
 *
 * The gate runs in this process (test/support/gate.ts): a TypeScript start per case cost more than
 * the comparison. A few runs go through the command itself, to prove it prints and exits as the
 * function says (the last cases).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseDocument, stringify } from 'yaml';
import { redocly, redoclyEnv } from '../../scripts/lib/redocly.js';
import { WAIVERS_FILE } from '../../scripts/lib/contract/waivers.js';
import { append, BREAKS, ERROR_CODES, IF_NONE_MATCH_NARROWED, mutate, PASSES, REMOVE_GET_PET, SUNSET_LINE, SUNSET_PASSES, type Case } from '../support/breakingCorpus.js';
import { runGate, type GateResult } from '../support/gate.js';
import { editedContract, RELEASED, WEBHOOK_EDITS } from '../support/webhookContracts.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'animal-store-breaking-'));

interface Result extends GateResult {
  breaking: string[];
}

const withBreaking = (result: GateResult): Result => ({
  ...result,
  breaking: `${result.stdout}\n${result.stderr}`
    .split('\n')
    .filter((l) => l.startsWith('BREAKING: '))
    .map((l) => l.slice('BREAKING: '.length)),
});

/** Runs the gate on `date` (CONTRACT_DATE; today when undefined), in this process; resolves with its exit code and output whatever the code. */
const gate = async (args: string[], date?: string): Promise<Result> => withBreaking(await runGate(args, date));

/** The same, as the command `npm run breaking` runs. */
function gateCommand(args: string[], date?: string): Promise<Result> {
  const env = { ...process.env };
  delete env.CONTRACT_DATE;
  if (date !== undefined) env.CONTRACT_DATE = date;
  return new Promise((resolve) => {
    // `node --import tsx` is what the tsx command does, minus a second process: a quarter faster.
    execFile(process.execPath, ['--import', 'tsx', 'scripts/breaking.ts', ...args], { cwd: root, env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve(withBreaking({ code, stdout, stderr }));
    });
  });
}

/** At most `width` runs at a time: the gate's comparisons are synchronous (one), `redocly diff` a process each (one per core). */
function limit(width: number) {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running >= width) await new Promise<void>((resolve) => waiting.push(resolve));
    running += 1;
    try {
      return await task();
    } finally {
      running -= 1;
      waiting.shift()?.();
    }
  };
}

/**
 * Whether `redocly diff` (the card's own tool, @redocly/cli; experimental) finds a break from
 * `base` to `revision` with every diff rule on at the recommended impact, the best its
 * configuration can do on this corpus (a rule can only be set to another impact or off).
 */
function redoclyFindsABreak(base: string, revision: string): Promise<boolean> {
  const config = join(tmp, 'redocly-diff.yaml');
  writeFileSync(config, 'extends:\n  - diff-recommended\n');
  return new Promise((resolve, reject) => {
    execFile(redocly, ['diff', base, revision, '--format', 'json', '--config', config], { cwd: tmp, env: redoclyEnv(), maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      try {
        resolve((JSON.parse(stdout) as { summary: { major: number } }).summary.major > 0);
      } catch {
        reject(new Error(`redocly diff ${base} ${revision} printed no report: ${String(error)}\n${stderr}`));
      }
    });
  });
}
const redoclyVerdicts = new Map<string, Promise<boolean>>();

/**
 * What the comparison below was last judged on: @redocly/cli's version and the corpus (each case's
 * name, the contracts it compares and the verdict expected of `redocly diff`), as a SHA-256. The
 * tool is pinned and the corpus frozen, so the same inputs give the same verdicts: while the
 * fingerprint is the one recorded, the verdicts are known and `redocly diff` (a process of about a
 * second per case) does not run. An upgrade or a new case changes the fingerprint: the comparison
 * runs, and the test asks for the new fingerprint to be recorded once every verdict holds.
 */
const REDOCLY_DIFF_JUDGED = '1e885db86974a117475f8de96f70e3fa32d9ee7577b6c970d6a1356363f906fa';
const redoclyVersion = (JSON.parse(readFileSync(join(root, 'node_modules', '@redocly', 'cli', 'package.json'), 'utf8')) as { version: string }).version;
const corpusPrint = createHash('sha256').update(`@redocly/cli ${redoclyVersion}\n`);
let redoclyFingerprint = '';

const results = new Map<string, Promise<Result>>();
const mutationErrors = new Map<string, Error>();
const file = (name: string) => join(tmp, `${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 80)}.yaml`);

/** The command's own runs, started first so that they go on beside the in-process ones. */
const commands = new Map<string, Promise<Result>>();
/** The case that is run both ways, to show that the command prints and exits as the function does. */
const BOTH_WAYS = BREAKS[0]!;

beforeAll(() => {
  const unmodified = file('unmodified');
  writeFileSync(unmodified, mutate([]));
  commands.set('help', gateCommand(['--help']));
  commands.set('unknown', gateCommand(['--base', 'x.json']));
  const run = limit(1);
  const redoclyRun = limit(2);
  const comparisons: Array<[string, string, string]> = [];
  for (const c of [...BREAKS, ...PASSES, ...SUNSET_PASSES]) {
    const [mutated, against] = [file(c.name), c.against ? file(`against ${c.name}`) : unmodified];
    try {
      writeFileSync(mutated, mutate(c.edits()));
      if (c.against) writeFileSync(against, mutate(c.against()));
    } catch (error) {
      mutationErrors.set(c.name, error as Error);
      continue;
    }
    const args = c.reversed ? ['--spec', against, '--against', mutated] : ['--spec', mutated, '--against', against];
    if (c === BOTH_WAYS) commands.set(c.name, gateCommand(args, c.date));
    results.set(c.name, run(() => gate(args, c.date)));
    const [base, revision] = c.reversed ? [mutated, against] : [against, mutated];
    corpusPrint.update(`${c.name}\n${c.redocly ?? ''}\n${readFileSync(base, 'utf8')}\n${readFileSync(revision, 'utf8')}\n`);
    comparisons.push([c.name, base, revision]);
  }
  redoclyFingerprint = corpusPrint.digest('hex');
  // Judged already on these inputs: the verdicts are the expected ones (see REDOCLY_DIFF_JUDGED).
  if (redoclyFingerprint !== REDOCLY_DIFF_JUDGED) for (const [name, base, revision] of comparisons) redoclyVerdicts.set(name, redoclyRun(() => redoclyFindsABreak(base, revision)));
  results.set('default', run(() => gate([])));
});

afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

async function resultOf(c: Case): Promise<Result> {
  const error = mutationErrors.get(c.name);
  if (error) throw error;
  const result = results.get(c.name);
  if (!result) throw new Error(`no run for ${c.name}`);
  return result;
}

describe('scripts/breaking.ts, the breaking-change gate', () => {
  it.each(BREAKS.map((c) => [c.name, c] as const))('fails on %s, naming it', async (_name, c) => {
    const result = await resultOf(c);
    expect(result.code, result.stderr).toBe(1);
    if (typeof c.expected === 'function') c.expected(result.breaking);
    else expect([...result.breaking].sort()).toEqual([...c.expected].sort());
    c.output?.(result);
  });

  it.each(PASSES.map((c) => [c.name, c] as const))('passes %s, with no message', async (_name, c) => {
    const result = await resultOf(c);
    expect(result.code, result.stderr).toBe(0);
    expect(result.breaking).toEqual([]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^No breaking change in .+ against .+\.\n$/);
  });

  it.each(SUNSET_PASSES.map((c) => [c.name, c] as const))('passes %s, and lists the removal', async (_name, c) => {
    const result = await resultOf(c);
    expect(result.code, result.stderr).toBe(0);
    expect(result.breaking).toEqual([]);
    expect(result.stderr).toBe('');
    expect(result.stdout.split('\n').filter((line) => line === SUNSET_LINE)).toHaveLength(1);
  });

  it('passes the working spec/openapi.yaml against every spec/released/ contract of its major version (what npm run lint runs)', async () => {
    const result = await results.get('default')!;
    expect(result.breaking).toEqual([]);
    expect(result.code, result.stderr).toBe(0);
    const working = readFileSync(join(root, 'spec', 'openapi.yaml'), 'utf8');
    const major = /^(\d+)\./.exec(String((parse(working) as { info: { version: string } }).info.version))![1];
    const releases = readdirSync(join(root, 'spec', 'released')).filter((f) => f.startsWith(`${major}.`) && f.endsWith('.json'));
    expect(releases.length).toBeGreaterThan(1);
    for (const release of releases) expect(result.stdout).toContain(`No breaking change in spec/openapi.yaml against spec/released/${release}`);
  });

  it('holds a later release to every earlier one: a new ErrorCode passes against 1.1.0, which marks it extensible, and fails by default, because 1.0.0 did not', async () => {
    const mutated = file('a new ErrorCode against each release');
    writeFileSync(mutated, mutate([append([...ERROR_CODES, 'enum'], 'rate_limited')]));
    const newest = await gate(['--spec', mutated, '--against', join(root, 'spec', 'released', '1.1.0.json')]);
    const every = await gate(['--spec', mutated]);
    expect(newest.code, newest.stderr).toBe(0);
    expect(every.code, every.stdout).toBe(1);
    expect(every.breaking.length).toBeGreaterThan(0);
    // 1.0.0 is among the releases it breaks (the corpus's spec is frozen before 1.3.0's photos, so 1.3.0 is too).
    expect(every.stderr).toMatch(/against the released contracts? spec\/released\/1\.0\.0\.json[.,]/);
    expect(every.stderr).toContain('components.schemas.ErrorCode: enum.10 added ("rate_limited")');
  });

  describe("redocly diff on the same corpus, in the gate's place (docs/contract.md records the comparison)", () => {
    // Kept so that an upgrade of @redocly/cli that judges a case otherwise says so: the choice of
    // api-smart-diff over it rests on these verdicts. It knows no calendar: every sunset case is a break to it.
    const kinds = [...BREAKS.map((c) => ['break', c] as const), ...PASSES.map((c) => ['pass', c] as const), ...SUNSET_PASSES.map((c) => ['sunset', c] as const)];
    it.each(kinds.map(([kind, c]) => [c.redocly ?? (kind === 'sunset' ? 'no calendar' : 'agrees'), c.name, kind, c] as const))('%s: %s', async (_verdict, _name, kind, c) => {
      await resultOf(c);
      const finds = kind !== 'pass' ? c.redocly !== 'misses' : c.redocly === 'over-reports';
      const verdict = redoclyVerdicts.get(c.name);
      // Unrun: these inputs were judged with these verdicts (the fingerprint test below).
      if (verdict !== undefined) expect(await verdict).toBe(finds);
    });

    it('was judged on exactly this corpus and this @redocly/cli (REDOCLY_DIFF_JUDGED); otherwise it ran above, and its fingerprint is to be recorded', () => {
      expect(redoclyVerdicts.size === 0 || redoclyVerdicts.size === kinds.length).toBe(true);
      expect(REDOCLY_DIFF_JUDGED, `the comparison ran on @redocly/cli ${redoclyVersion}; once every verdict above holds, set REDOCLY_DIFF_JUDGED in ${'test/tools/breaking.test.ts'} to this`).toBe(redoclyFingerprint);
    });
  });

  describe('retiring getPet after its sunset (CONTRACT_DATE=2030-12-06): spec/openapi.yaml without it, against every spec/released/ contract', () => {
    /** The working spec with getPet removed, and nothing else (or kept), beside `waivers` (default: spec/breaking-waivers.yaml as it is). */
    function withoutGetPet(name: string, waivers = readFileSync(join(root, 'spec', WAIVERS_FILE), 'utf8'), retired = true): string {
      const dir = join(tmp, name);
      mkdirSync(dir);
      const doc = parseDocument(readFileSync(join(root, 'spec', 'openapi.yaml'), 'utf8'));
      for (const edit of retired ? REMOVE_GET_PET : []) edit(doc);
      writeFileSync(join(dir, 'openapi.yaml'), doc.toString({ flowCollectionPadding: false, lineWidth: 0 }));
      writeFileSync(join(dir, WAIVERS_FILE), waivers);
      return join(dir, 'openapi.yaml');
    }
    /** `tested` beside every waiver of spec/breaking-waivers.yaml but the If-None-Match one these tests replace. */
    const waiversWith = (tested: Array<{ change: string; why: string }>) => {
      const { waivers } = parse(readFileSync(join(root, 'spec', WAIVERS_FILE), 'utf8')) as { waivers: Array<{ change: string; why: string }> };
      return stringify({ waivers: [...waivers.filter((waiver) => waiver.change !== IF_NONE_MATCH_NARROWED), ...tested] });
    };
    const operationWaivers = (...wheres: string[]) =>
      waiversWith(wheres.map((at) => ({ change: `${at}: [Replaced] maxLength validator in header parameter \`If-None-Match\` (16384 → 8192)`, why: 'a test' })));

    it('passes with nothing but the removal: no waiver turns stale, no break surfaces in listPets that was not there before', async () => {
      const result = await gate(['--spec', withoutGetPet('retired')], '2030-12-06');
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout.split('\n').filter((line) => line === SUNSET_LINE)).toHaveLength(1);
      expect(result.stdout).not.toContain('STALE');
    });

    it('a waiver naming the shared component covers listPets before the retirement and after it', async () => {
      const waivers = waiversWith([{ change: IF_NONE_MATCH_NARROWED, why: 'a test' }]);
      const before = await gate(['--spec', withoutGetPet('component waiver, getPet kept', waivers, false)]);
      const after = await gate(['--spec', withoutGetPet('component waiver', waivers)], '2030-12-06');
      expect(before.code, before.stderr).toBe(0);
      expect(before.stdout).toContain(`waived: ${IF_NONE_MATCH_NARROWED} (in GET /pets, GET /pets/{petId})\n`);
      expect(after.code, after.stderr).toBe(0);
      expect(after.stdout).toContain(`waived: ${IF_NONE_MATCH_NARROWED} (in GET /pets)\n`);
    });

    it("a waiver naming getPet's own line is spent, not stale: it is said, and the gate passes", async () => {
      const result = await gate(['--spec', withoutGetPet('operation waivers', operationWaivers('GET /pets', 'GET /pets/{petId}'))], '2030-12-06');
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('waived: GET /pets: [Replaced] maxLength validator');
      expect(result.stdout).toContain('spent waiver: GET /pets/{petId}: [Replaced] maxLength validator in header parameter `If-None-Match` (16384 → 8192)\n');
    });

    // Only getPet reaches the Sunset header (PetId is the photo operations' too, from 1.3.0 on).
    it("a waiver naming a component only getPet reached is spent; one naming a component listPets still takes, matching nothing, is stale", async () => {
      const waivers = waiversWith(['headers.Sunset', 'parameters.Limit'].map((name) => ({ change: `components.${name}: schema.maxLength changed (100 → 50)`, why: 'a test' })));
      const result = await gate(['--spec', withoutGetPet('component waivers', waivers)], '2030-12-06');
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('spent waiver: components.headers.Sunset: schema.maxLength changed (100 → 50)\n');
      expect(result.stderr).toContain('STALE WAIVER: components.parameters.Limit: schema.maxLength changed (100 → 50)\n');
      expect(result.stderr).not.toContain('Sunset');
    });

    it('while getPet is in the spec, a waiver that names only one user of the shared parameter leaves the other a break, and one that matches nothing is stale', async () => {
      const result = await gate(['--spec', withoutGetPet('one user', operationWaivers('GET /pets/{petId}', 'POST /pets'), false)]);
      expect(result.code).toBe(1);
      expect(result.breaking).toEqual(['GET /pets: [Replaced] maxLength validator in header parameter `If-None-Match` (16384 → 8192)']);
      expect(result.stderr).toContain(`\n  ${IF_NONE_MATCH_NARROWED} (in GET /pets)\n`);
      expect(result.stderr).toContain('STALE WAIVER: POST /pets: [Replaced] maxLength validator');
    });
  });

  it('documents --spec, --against and CONTRACT_DATE in --help, and refuses an unknown argument and a CONTRACT_DATE that is not a date', async () => {
    const [help, unknown, badDate] = await Promise.all([commands.get('help')!, commands.get('unknown')!, gate([], '2030-12-32')]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--spec <file>');
    expect(help.stdout).toContain('--against <file>');
    expect(help.stdout).toContain('CONTRACT_DATE=YYYY-MM-DD');
    expect(help.stdout).toContain('at or before 00:00 UTC of');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown or incomplete argument: --base');
    expect(badDate.code).toBe(2);
    expect(badDate.stderr).toContain('CONTRACT_DATE must be a calendar date in the form YYYY-MM-DD');
    expect(badDate.stderr).toContain('"2030-12-32"');
  });

  it(`as a command prints exactly what it prints in process, and exits with its status (${BOTH_WAYS.name})`, async () => {
    const [command, inProcess] = await Promise.all([commands.get(BOTH_WAYS.name)!, resultOf(BOTH_WAYS)]);
    expect(command.code, command.stderr).toBe(1);
    expect(command).toEqual(inProcess);
  });

  // api-smart-diff judges nothing under `webhooks`: scripts/lib/contract/breakingRules.ts does, as what the API sends.
  describe("webhooks, judged as what the API sends its receivers (released 1.4.0's)", () => {
    const against = (name: keyof typeof WEBHOOK_EDITS) => gate(['--spec', editedContract(join(tmp, `webhook-${name}.json`), WEBHOOK_EDITS[name]), '--against', RELEASED]);

    it.each([
      ['removeWebhook', ['webhook petCreated: removed']],
      ['dropRequiredField', ['webhook petUpdated: [Removed] required status from `data.changed` in Request Body content (application/json) ("changed")']],
      ['widenEnum', ['webhook petUpdated: [Replaced] possible values of `data.changed[]` in Request Body content (application/json) ("photo")']],
      ['headerOptional', ['webhook petCreated: parameters.0.required removed (true)', 'webhook petUpdated: parameters.0.required removed (true)', 'webhook petDeleted: parameters.0.required removed (true)']],
    ] as const)('%s breaks its receivers, naming the webhook', async (name, lines) => {
      const result = await against(name);
      expect(result.code).toBe(1);
      expect(result.breaking).toEqual(lines);
    });

    it.each(['addWebhook', 'addOptionalField'] as const)('%s breaks nobody', async (name) => {
      const result = await against(name);
      expect(result.breaking).toEqual([]);
      expect(result.code).toBe(0);
    });
  });
});
