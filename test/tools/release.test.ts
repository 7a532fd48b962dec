/**
 * `npm run release -- <x.y.z>` on a copy of the project (a git checkout, as a release is made
 * from): a release writes exactly the files it should, each as it should, and every refusal leaves
 * every file of the project byte-identical. Also the computed changes it writes
 * (scripts/lib/contract/contractChanges.ts), read on the released contracts themselves.
 *
 * The release runs in this process (the main of scripts/lib/contract/releaseCommand.ts, on the
 * copy), its checks and generate as the children they are: npm and a TypeScript start per case cost
 * more than most refusals. The release itself, and one refusal compared byte for byte with the
 * in-process run, go through `npm run release`, to prove the command prints and exits as the
 * function says.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main as releaseMain } from '../../scripts/lib/contract/releaseCommand.js';
import { changesMarkdown, contractChanges, type ChangeGroup } from '../../scripts/lib/contract/contractChanges.js';
import { editedContract, RELEASED, WEBHOOK_EDITS } from '../support/webhookContracts.js';
import { copyProject, projectRoot, replaceOnce, runCommand, type CommandResult, type ProjectCopy } from '../support/projectCopy.js';

const DATE = '2026-12-01';
/** A header no spec will plausibly add, so the release always has this one change to report. */
const HEADER = 'X-Release-Test-Marker';
const NOTE = 'A note written by hand in test/tools/release.test.ts, kept on top of the computed changes.';

/** Every file of the copy (never node_modules, the symlink to the project's, nor .git), by path. */
function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (relative: string) => {
    for (const name of readdirSync(join(dir, relative))) {
      const path = relative ? `${relative}/${name}` : name;
      if (path === 'node_modules' || path === '.git') continue;
      if (statSync(join(dir, path)).isDirectory()) walk(path);
      else files.set(path, readFileSync(join(dir, path), 'latin1'));
    }
  };
  walk('');
  return files;
}

/** The paths whose content differs between two snapshots (added and removed ones too). */
function changedFiles(before: Map<string, string>, after: Map<string, string>): string[] {
  const paths = new Set([...before.keys(), ...after.keys()]);
  return [...paths].filter((path) => before.get(path) !== after.get(path)).sort();
}

/** The lines of `a` and `b` that differ, position by position (the files must have as many lines). */
function differingLines(a: string, b: string): { was: string; is: string }[] {
  const [x, y] = [a.split('\n'), b.split('\n')];
  expect(y.length).toBe(x.length);
  return x.flatMap((line, i) => (line === y[i] ? [] : [{ was: line, is: y[i]! }]));
}

const versionOf = (name: string) => name.replace(/\.json$/, '').split('.').map(Number) as [number, number, number];

let copy: ProjectCopy;
let newest: string;
let next: string;

/** `npm run release -- <args>` in the copy, as the command. */
const releaseCommand = (...args: string[]): Promise<CommandResult> => runCommand('npm', ['run', '-s', 'release', '--', ...args], { cwd: copy.dir, timeoutMs: 240_000 });

/** The same release of the copy, run in this process: its output and exit status as the command's. */
async function release(...args: string[]): Promise<CommandResult> {
  const started = performance.now();
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await releaseMain(args, { stdout: (text) => stdout.push(text), stderr: (text) => stderr.push(text), root: copy.dir });
  return { code, stdout: stdout.join(''), stderr: stderr.join(''), ms: Math.round(performance.now() - started) };
}

beforeAll(() => {
  copy = copyProject('animal-store-release-');
  // A release is made from a git checkout (the script lists the project's files with git).
  execFileSync('git', ['init', '-q'], { cwd: copy.dir });
  const released = readdirSync(copy.path('spec', 'released'))
    .filter((f) => /^\d+\.\d+\.\d+\.json$/.test(f))
    .map(versionOf)
    .sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
  const top = released.at(-1)!;
  newest = top.join('.');
  next = `${top[0]}.${top[1] + 1}.0`;
  // An additive change of our own and a note of our own, whatever the project's spec holds today.
  copy.edit('spec/openapi.yaml', (text) => {
    const listPets = text.indexOf('operationId: listPets');
    const headers = text.indexOf('\n          headers:\n', listPets);
    expect(listPets).toBeGreaterThan(-1);
    expect(headers).toBeGreaterThan(listPets);
    const at = headers + '\n          headers:\n'.length;
    const header = [
      `            ${HEADER}:`,
      '              description: A header added by the release test.',
      '              required: false',
      '              schema:',
      '                type: string',
      '                maxLength: 20',
      "                pattern: '^[a-z]+$'",
      '',
    ].join('\n');
    return text.slice(0, at) + header + text.slice(at);
  });
  copy.edit('spec/CHANGELOG.md', (text) => replaceOnce(text, '## Unreleased\n', `## Unreleased\n\n${NOTE}\n`, 'the Unreleased heading'));
});

afterAll(() => copy?.remove());

describe('npm run release refuses, writing nothing', () => {
  const cases: [string, RegExp][] = [
    ['abc', /"abc" is not a version/],
    ['1.1.0', /is not above the newest released contract/],
    ['1.0.5', /is not above the newest released contract/],
    ['2.0.0', /new major version.*\/v2/],
  ];
  it.each(cases)('%s', async (version, reason) => {
    const before = snapshot(copy.dir);
    const run = await release(version, '--date', DATE);
    expect(run.code, run.stdout + run.stderr).not.toBe(0);
    expect(run.stderr).toMatch(/refused, nothing written/);
    expect(run.stderr).toMatch(reason);
    expect(changedFiles(before, snapshot(copy.dir))).toEqual([]);
  });

  it('abc, as the command: the same output and exit status as in process', async () => {
    const before = snapshot(copy.dir);
    const [command, inProcess] = [await releaseCommand('abc', '--date', DATE), await release('abc', '--date', DATE)];
    expect(command.code, command.stdout + command.stderr).toBe(1);
    expect({ code: command.code, stdout: command.stdout, stderr: command.stderr }).toEqual({ code: inProcess.code, stdout: inProcess.stdout, stderr: inProcess.stderr });
    expect(changedFiles(before, snapshot(copy.dir))).toEqual([]);
  });

  it('the newest released version again', async () => {
    const before = snapshot(copy.dir);
    const run = await release(newest);
    expect(run.code, run.stdout + run.stderr).not.toBe(0);
    expect(run.stderr).toContain(`${newest} is not above the newest released contract, ${newest}`);
    expect(changedFiles(before, snapshot(copy.dir))).toEqual([]);
  });

  it('a spec the breaking-change gate refuses', async () => {
    const spec = copy.read('spec/openapi.yaml');
    // A request that accepts less: a client of the release that asked for 100 animals is refused.
    copy.edit('spec/openapi.yaml', (text) => replaceOnce(text, '        minimum: 1\n        maximum: 100\n        default: 20\n', '        minimum: 1\n        maximum: 50\n        default: 20\n', 'the limit parameter'));
    try {
      const before = snapshot(copy.dir);
      const run = await release(next, '--date', DATE);
      expect(run.code, run.stdout + run.stderr).not.toBe(0);
      expect(run.stdout).toMatch(/Redocly lint of the spec\.\.\. passed/);
      expect(run.stderr).toMatch(/Breaking-change gate failed/);
      expect(run.stderr).toMatch(/BREAKING: .*GET \/pets/);
      expect(changedFiles(before, snapshot(copy.dir))).toEqual([]);
    } finally {
      copy.write('spec/openapi.yaml', spec);
    }
  });

  it('a spec that does not lint', async () => {
    const spec = copy.read('spec/openapi.yaml');
    copy.edit('spec/openapi.yaml', (text) => replaceOnce(text, '      operationId: listPets\n', '      operationId: listPets\n      summary-typo: nothing\n', 'listPets'));
    try {
      const before = snapshot(copy.dir);
      const run = await release(next, '--date', DATE);
      expect(run.code, run.stdout + run.stderr).not.toBe(0);
      expect(run.stderr).toMatch(/Redocly lint of the spec failed/);
      expect(changedFiles(before, snapshot(copy.dir))).toEqual([]);
    } finally {
      copy.write('spec/openapi.yaml', spec);
    }
  });
});

describe('npm run release <next minor>', () => {
  let before: Map<string, string>;
  let after: Map<string, string>;
  let run: CommandResult;

  beforeAll(async () => {
    before = snapshot(copy.dir);
    run = await releaseCommand(next, '--date', DATE);
    after = snapshot(copy.dir);
  }, 300_000);

  const file = (snap: Map<string, string>, path: string) => {
    const text = snap.get(path);
    if (text === undefined) throw new Error(`${path} is missing`);
    return Buffer.from(text, 'latin1').toString('utf8');
  };

  it('succeeds, and says what it wrote and what to do next', () => {
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain(`Released contract ${next}.`);
    expect(run.stdout).toContain(`spec/released/${next}.json`);
    expect(run.stdout).toMatch(new RegExp(`git tag v${next.replaceAll('.', '\\.')}`));
  });

  it('writes exactly the release files, and no other', () => {
    const changed = changedFiles(before, after);
    const required = ['client/package.json', `dist/client/animal-store-client-${next}.tgz`, 'generated/openapi.json', 'package-lock.json', 'package.json', 'spec/CHANGELOG.md', 'spec/openapi.yaml', `spec/released/${next}.json`];
    expect(changed).toEqual(expect.arrayContaining(required));
    // Besides those, only what the generator derives from the spec may change.
    expect(changed.filter((path) => !required.includes(path) && !path.startsWith('generated/') && !path.startsWith('client/generated/'))).toEqual([]);
  });

  it("builds the client package of the release: @animal-store/client at the new version, its contract and its changelog section, and sets client/package.json's version", () => {
    expect(differingLines(file(before, 'client/package.json'), file(after, 'client/package.json'))).toEqual([{ was: `  "version": "${newest}",`, is: `  "version": "${next}",` }]);
    const tarball = join(copy.dir, 'dist', 'client', `animal-store-client-${next}.tgz`);
    const read = (path: string) => execFileSync('tar', ['-xzOf', tarball, `package/${path}`], { encoding: 'utf8' });
    expect(JSON.parse(read('package.json'))).toMatchObject({ name: '@animal-store/client', version: next });
    expect(read('openapi.json')).toBe(file(after, `spec/released/${next}.json`));
    expect(read('CHANGELOG.md')).toContain(`## Contract ${next} (${DATE})`);
    expect(read('CHANGELOG.md')).toContain(NOTE);
    // The new header reaches the client's parsed headers.
    expect(read('dist/generated/operations.js')).toContain(HEADER);
    expect(run.stdout).toContain(`npm publish dist/client/animal-store-client-${next}.tgz`);
  });

  it('sets info.version in spec/openapi.yaml and changes nothing else in it', () => {
    expect(differingLines(file(before, 'spec/openapi.yaml'), file(after, 'spec/openapi.yaml'))).toEqual([{ was: `  version: ${newest}`, is: `  version: ${next}` }]);
  });

  it('sets the version of package.json and of both places in package-lock.json', () => {
    expect(differingLines(file(before, 'package.json'), file(after, 'package.json'))).toEqual([{ was: `  "version": "${newest}",`, is: `  "version": "${next}",` }]);
    expect(differingLines(file(before, 'package-lock.json'), file(after, 'package-lock.json'))).toEqual([
      { was: `  "version": "${newest}",`, is: `  "version": "${next}",` },
      { was: `      "version": "${newest}",`, is: `      "version": "${next}",` },
    ]);
    const lock = JSON.parse(file(after, 'package-lock.json')) as { version: string; packages: Record<string, { version?: string }> };
    expect([lock.version, lock.packages['']?.version]).toEqual([next, next]);
  });

  it('regenerates generated/ and freezes it as spec/released/<version>.json', async () => {
    const bundled = file(after, 'generated/openapi.json');
    expect((JSON.parse(bundled) as { info: { version: string } }).info.version).toBe(next);
    expect(file(after, `spec/released/${next}.json`)).toBe(bundled);
    const check = await runCommand(copy.bin('tsx'), ['scripts/generate.ts', '--check'], { cwd: copy.dir });
    expect(check.code, check.stdout + check.stderr).toBe(0);
    // Earlier releases stay as they were.
    for (const path of before.keys()) if (path.startsWith('spec/released/')) expect(after.get(path)).toBe(before.get(path));
  });

  it('turns Unreleased into the version, notes on top and the computed changes below, under a new empty Unreleased', () => {
    const was = file(before, 'spec/CHANGELOG.md');
    const is = file(after, 'spec/CHANGELOG.md');
    const [head] = was.split('## Unreleased\n');
    const previousHeading = was.slice(was.indexOf('\n## ', was.indexOf('## Unreleased')) + 1);
    expect(is.startsWith(`${head}## Unreleased\n\n## ${next} (${DATE})\n\n`)).toBe(true);
    // Everything from the previous release on is untouched.
    expect(is.endsWith(previousHeading)).toBe(true);
    const entry = is.slice(is.indexOf(`## ${next} (${DATE})`), is.length - previousHeading.length);
    expect(entry.indexOf(NOTE)).toBeGreaterThan(-1);
    expect(entry.indexOf(NOTE)).toBeLessThan(entry.indexOf('### Changes by operation'));
    expect(entry).toContain(`every change from ${newest} to ${next}`);
    // (Another header added to the same response in this release would share the line.)
    expect(entry).toMatch(new RegExp(`#### listPets \\(GET /pets\\)\\n\\n(- .*\\n)*- Added headers? [^\\n]*\`${HEADER}\`[^\\n]* to response \`200\`\\n`));
    // The new Unreleased is empty: the new version's heading follows it at once.
    expect(is).toContain(`## Unreleased\n\n## ${next}`);
  });

  it('then refuses the same version again', async () => {
    const snap = snapshot(copy.dir);
    const again = await release(next);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(`is not above the newest released contract, ${next}`);
    expect(changedFiles(snap, snapshot(copy.dir))).toEqual([]);
  });
});

describe('the computed changes (scripts/lib/contract/contractChanges.ts)', () => {
  const released = (version: string) => join(projectRoot, 'spec', 'released', `${version}.json`);
  let groups: ChangeGroup[];
  beforeAll(async () => {
    groups = await contractChanges(released('1.0.0'), released('1.1.0'));
  });
  const lines = (operationId: string) => groups.find((g) => g.operationId === operationId)?.changes.map((c) => `${c.kind}: ${c.text}`) ?? [];

  it('1.0.0 -> 1.1.0, operation by operation, in plain words', () => {
    expect(groups.map((g) => g.subject)).toEqual(['listPets (GET /pets)', 'createPet (POST /pets)', 'getPet (GET /pets/{petId})', 'Whole contract']);
    expect(lines('listPets')).toEqual(
      expect.arrayContaining([
        'added: Added optional header parameter `If-None-Match`',
        'added: Added header `ETag` to response `200`',
        // The same headers on several statuses are one line; a new response is one line, not one per header.
        'added: Added headers `RateLimit` and `RateLimit-Policy` to responses `200`, `400`, `500` and `default`',
        'added: Added responses `304` and `429`',
      ]),
    );
    expect(lines('createPet')).toEqual(expect.arrayContaining(['added: Added optional header parameter `Idempotency-Key`', 'added: Added responses `409`, `422` and `429`', 'added: Added header `Idempotent-Replayed` to response `201`']));
    for (const group of groups) {
      // Descriptions and examples: one line per group, the last.
      expect(group.changes.filter((c) => c.text.startsWith('Descriptions or examples changed'))).toHaveLength(1);
      expect(group.changes.at(-1)?.text).toMatch(/^Descriptions or examples changed/);
      // Nothing from api-smart-diff's own vocabulary or JSON paths leaks into a line.
      for (const change of group.changes) expect(change.text).not.toMatch(/\[(Added|Removed|Replaced)\]|content\.application|\.schema\./);
    }
    expect(groups.flatMap((g) => g.changes).some((c) => c.text.includes('to response `304`'))).toBe(false);
  });

  it('names parameters, bounds, enum values, fields, deprecations and removals', async () => {
    const edited = copyProject('animal-store-changes-');
    try {
      edited.edit('spec/openapi.yaml', (text) => {
        let spec = replaceOnce(text, '        minimum: 1\n        maximum: 100\n        default: 20\n', '        minimum: 1\n        maximum: 50\n        default: 20\n', 'limit');
        spec = replaceOnce(spec, '      enum: [available, pending, sold]\n', '      enum: [available, pending, sold, lost]\n', 'PetStatus');
        spec = replaceOnce(spec, '      operationId: createPet\n', "      operationId: createPet\n      deprecated: true\n      x-sunset: '2031-01-01T00:00:00Z'\n      x-replacement: POST /animals\n", 'createPet');
        return spec;
      });
      const after = await contractChanges(join(projectRoot, 'spec', 'openapi.yaml'), edited.path('spec', 'openapi.yaml'));
      const text = (operationId: string) => after.find((g) => g.operationId === operationId)?.changes.map((c) => `${c.kind}: ${c.text}`);
      expect(text('listPets')).toEqual(
        expect.arrayContaining(['changed: Changed `maximum` of query parameter `limit` from 100 to 50', 'added: Added `lost` to the values of query parameter `status`', 'added: Added `lost` to the values of body field `[].status` in response `200`']),
      );
      expect(text('createPet')).toEqual(expect.arrayContaining(['deprecated: Deprecated (sunset 2031-01-01, use POST /animals)', 'added: Added `lost` to the values of request body field `status`']));
      const withoutGetPet = JSON.parse(readFileSync(released('1.1.0'), 'utf8')) as { paths: Record<string, unknown> };
      delete withoutGetPet.paths['/pets/{petId}'];
      edited.write('without-getPet.json', JSON.stringify(withoutGetPet));
      const removed = await contractChanges(released('1.1.0'), edited.path('without-getPet.json'));
      expect(removed).toEqual([{ subject: 'getPet (GET /pets/{petId})', operationId: 'getPet', changes: [{ kind: 'removed', text: 'Removed operation (sunset 2030-12-05)' }] }]);
      expect(changesMarkdown(after)).toMatch(/^### listPets \(GET \/pets\)\n\n- /);
      expect(changesMarkdown(after, 4)).toMatch(/^#### listPets/);
      expect(await contractChanges(released('1.1.0'), released('1.1.0'))).toEqual([]);
    } finally {
      edited.remove();
    }
  });

  it('names each webhook added, removed or changed under its own name, as the operations are', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-webhook-changes-'));
    try {
      const file = editedContract(join(dir, 'webhooks.json'), WEBHOOK_EDITS.addWebhook, WEBHOOK_EDITS.removeWebhook, WEBHOOK_EDITS.addOptionalField, WEBHOOK_EDITS.headerOptional);
      const groups = await contractChanges(RELEASED, file);
      const of = (subject: string) => groups.find((g) => g.subject === subject)?.changes.map((c) => `${c.kind}: ${c.text}`);
      expect(of('petCreated (webhook)')).toEqual(['removed: Removed webhook']);
      expect(of('petAdoptedExample (webhook)')).toEqual(['added: Added webhook: An animal was adopted']);
      expect(of('petUpdated (webhook)')).toEqual(['changed: Made header parameter `webhook-id` optional']);
      expect(groups.some((g) => g.subject === 'Whole contract')).toBe(false);
      // 1.3.0 had no webhooks: 1.4.0's are each an added webhook, not "Added `webhooks` to the contract".
      const first = await contractChanges(join(projectRoot, 'spec', 'released', '1.3.0.json'), RELEASED);
      expect(first.filter((g) => g.subject.endsWith('(webhook)')).map((g) => [g.subject, g.changes.map((c) => c.text)])).toEqual([
        ['petCreated (webhook)', ['Added webhook: An animal was added']],
        ['petUpdated (webhook)', ['Added webhook: An animal was changed']],
        ['petDeleted (webhook)', ['Added webhook: An animal was removed']],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
