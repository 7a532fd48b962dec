/**
 * `npm run lint` as someone changing the spec meets it: every check runs to its end and says
 * whether it failed, so a change that breaks clients is explained by the breaking-change gate
 * even when Redocly fails first. Run on a copy of the project whose spec/openapi.yaml is the
 * frozen test/fixtures/spec/openapi.yaml with `status` removed from Pet (the case that used to
 * stop at Redocly's example errors): the real spec gains fields and operations, this copy does
 * not, so the edit always applies. On CONTRACT_DATE=2030-10-01, 65 days before getPet's sunset,
 * so the sunset calendar step passes with a warning (what it says on other days:
 * test/quick/sunsets.test.ts).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyProject, projectRoot, type ProjectCopy } from '../support/projectCopy.js';

interface Run {
  code: number;
  output: string;
}

function npm(dir: string, script: string, contractDate: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile('npm', ['run', '-s', script], { cwd: dir, env: { ...process.env, CONTRACT_DATE: contractDate }, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, output: `${stdout}\n${stderr}` });
    });
  });
}

const FROZEN_SPEC = join('test', 'fixtures', 'spec', 'openapi.yaml');

/** Replaces exactly one occurrence, so an edited fixture fails here instead of testing nothing. */
function replaceOnce(text: string, from: string, to: string): string {
  const at = text.indexOf(from);
  if (at === -1 || text.indexOf(from, at + 1) !== -1) throw new Error(`expected exactly one ${JSON.stringify(from)} in ${FROZEN_SPEC}`);
  return text.slice(0, at) + to + text.slice(at + from.length);
}

describe('npm run lint runs every check and reports each failure', () => {
  let copy: ProjectCopy;
  let lint: Run;
  let breaking: Run;

  beforeAll(async () => {
    copy = copyProject('animal-store-lint-');
    // At spec/openapi.yaml, where npm run lint reads it (and .spectral.yaml's overrides name it).
    copy.write('spec/openapi.yaml', readFileSync(join(projectRoot, FROZEN_SPEC), 'utf8'));
    copy.edit('spec/openapi.yaml', (text) =>
      replaceOnce(
        replaceOnce(text, '      required: [id, name, categoryId, status]\n', '      required: [id, name, categoryId]\n'),
        "        categoryId:\n          $ref: '#/components/schemas/CategoryId'\n        status:\n          $ref: '#/components/schemas/PetStatus'\n    Pets:",
        "        categoryId:\n          $ref: '#/components/schemas/CategoryId'\n    Pets:",
      ),
    );
    [lint, breaking] = await Promise.all([npm(copy.dir, 'lint', '2030-10-01'), npm(copy.dir, 'breaking', '2030-10-01')]);
  }, 180_000);
  afterAll(() => copy?.remove());

  it('fails, and still runs the breaking-change gate after Redocly failed: the gate names the removed field', () => {
    expect(lint.code, lint.output).not.toBe(0);
    expect(lint.output).toMatch(/^FAILED {2}redocly$/m);
    expect(lint.output).toMatch(/^FAILED {2}breaking-change gate$/m);
    expect(lint.output).toMatch(/BREAKING:.*status/);
  });

  it('runs the checks that pass too, and says so: Spectral and the compiler', () => {
    expect(lint.output).toMatch(/^passed {2}spectral$/m);
    expect(lint.output).toMatch(/^passed {2}tsc$/m);
    // The spec changed without `npm run generate`: the code still compiles, and lint says so anyway (README step 3).
    expect(lint.output).toMatch(/^FAILED {2}generated files \(generated\/ is stale: run `npm run generate`\)$/m);
    expect(lint.output).toMatch(/3 of 6 checks failed \(redocly, breaking-change gate, generated files\)/);
  });

  it('runs the sunset calendar as a step of its own: within 90 days of a sunset it warns, naming the operation and the date, and passes', () => {
    expect(lint.output).toMatch(/^== sunset calendar$/m);
    expect(lint.output).toContain('warning: getPet (GET /pets/{petId}) reaches its sunset on 2030-12-05, 65 days after 2030-10-01');
    expect(lint.output).toMatch(/^passed {2}sunset calendar \(1 warning, above\)$/m);
  });

  it("shows Redocly's problems without its Node.js 20 box above them (scripts/lint.ts filters it)", () => {
    expect(lint.output).toMatch(/validating spec\/openapi\.yaml/);
    expect(lint.output).not.toContain('Node.js 20 support is ending');
  });

  it('npm run breaking runs the gate alone, with the same verdict', () => {
    expect(breaking.code, breaking.output).toBe(1);
    expect(breaking.output).toMatch(/BREAKING:.*status/);
    expect(breaking.output).not.toMatch(/redocly|spectral|sunset calendar/i);
  });
});

describe('npm run lint refuses a CONTRACT_DATE that is not a date', () => {
  it('stops before any check, naming the variable and the form', async () => {
    const run = await npm(projectRoot, 'lint', '2030-12-06T00:00:00Z');
    expect(run.code, run.output).toBe(2);
    expect(run.output).toContain('CONTRACT_DATE must be a calendar date in the form YYYY-MM-DD');
    expect(run.output).not.toContain('== redocly');
  });
});

describe('npm run lint after a spec edit without npm run generate, in a copy where a client user has a script of their own', () => {
  let copy: ProjectCopy;
  let run: Run;
  beforeAll(async () => {
    copy = copyProject('animal-store-stale-');
    // A newcomer's summary edit, and a handler for an operation generate has not typed yet.
    copy.edit('spec/openapi.yaml', (text) => replaceOnce(text, '      summary: List animals\n', '      summary: List the animals\n'));
    copy.write('handlers/notGeneratedExample.ts', "import type { Handler } from '../src/domain/contract.js';\nexport const notGeneratedExample: Handler<'notGeneratedExample'> = async () => ({ status: 204, body: undefined });\n");
    // A user's own script beside package.json, as the issue found it: a wrong field name and a
    // status that does not exist (a misspelling and a made-up word: no spec will add either).
    copy.write(
      'my-app.ts',
      `import { createAnimalStoreClient } from './client/index.js';
const api = createAnimalStoreClient({ baseUrl: 'http://localhost:8080/v1', apiKey: 'ask_x' });
const { data } = await api.GET('/pets', { params: { query: { limit: 5, status: 'not-a-status' } } });
export const names: string[] = (data ?? []).map((pet) => pet.nmae);
`,
    );
    run = await npm(copy.dir, 'lint', '2030-10-01');
  }, 300_000);
  afterAll(() => copy?.remove());

  it('says generated/ is stale, and what to run, before the compiler errors it causes', () => {
    expect(run.code, run.output).not.toBe(0);
    const stale = run.output.indexOf('generated/ is stale: run `npm run generate`');
    expect(stale, run.output).toBeGreaterThan(-1);
    expect(stale).toBeLessThan(run.output.indexOf('error TS'));
    expect(run.output).toMatch(/^FAILED {2}tsc \(generated\/ is stale: run `npm run generate`\)$/m);
    expect(run.output).toMatch(/^FAILED {2}generated files \(generated\/ is stale: run `npm run generate`\)$/m);
  });

  it("the type-check covers a client user's own files anywhere in the repository: a misuse of the typed client in a new file at the root", () => {
    const errors = run.output.split('\n').filter((line) => line.includes('error TS'));
    // The user's file and the ungenerated handler, nothing of the client package or the project.
    expect(errors.filter((line) => !line.startsWith('my-app.ts') && !line.startsWith('handlers/notGeneratedExample.ts')), run.output).toEqual([]);
    expect(run.output).toMatch(/my-app\.ts\(3,[^)]*\): error TS2322: Type '"not-a-status"'/);
    // TS2551 is TS2339 with a "Did you mean 'name'?".
    expect(run.output).toMatch(/my-app\.ts\(4,[^)]*\): error TS(2339|2551): Property 'nmae' does not exist/);
  });
});
