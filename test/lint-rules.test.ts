/**
 * The lint gate bites: each custom rule of redocly.yaml (and the example check) reports a problem
 * when the spec breaks it, and the spec as committed has none.
 *
 * Each case copies spec/openapi.yaml to a temporary folder, applies one string replacement (which
 * must match exactly once, so a reworded spec cannot make a case silently test nothing), and runs
 * `redocly lint --format=json` with the project's redocly.yaml.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const redocly = join(root, 'node_modules', '.bin', 'redocly');
const config = join(root, 'redocly.yaml');
const original = readFileSync(join(root, 'spec', 'openapi.yaml'), 'utf8');
const tmp = mkdtempSync(join(tmpdir(), 'animal-store-lint-'));

afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

interface Problem {
  ruleId: string;
  severity: string;
  message: string;
  location: { pointer: string }[];
}

/** Replaces `from` with `to`; `from` must occur exactly once in the spec. */
function mutate(from: string, to: string): string {
  const count = original.split(from).length - 1;
  if (count !== 1) throw new Error(`The mutation's anchor occurs ${count} times in spec/openapi.yaml, expected once:\n${from}`);
  return original.replace(from, () => to);
}

let counter = 0;

/** Lints `text` as a file of its own; resolves with the reported problems (stderr is ignored). */
function lint(text: string): Promise<Problem[]> {
  const dir = join(tmp, `case-${counter++}`);
  mkdirSync(dir);
  const file = join(dir, 'openapi.yaml');
  writeFileSync(file, text);
  return new Promise((resolve, reject) => {
    // redocly exits 1 when it finds errors; the JSON report on stdout is what we judge.
    execFile(redocly, ['lint', file, '--config', config, '--format=json'], { cwd: root, maxBuffer: 16 * 1024 * 1024 }, (error, stdout) => {
      try {
        resolve((JSON.parse(stdout) as { problems: Problem[] }).problems);
      } catch {
        reject(error ?? new Error(`redocly printed no JSON report:\n${stdout}`));
      }
    });
  });
}

const summary = (problems: Problem[]) => problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer ?? '?'}`);

describe('redocly.yaml rules', () => {
  it('f. the unmodified spec passes with zero problems', async () => {
    expect(summary(await lint(original))).toEqual([]);
  });

  const CASES: { name: string; rule: string; pointer: string; from: string; to: string }[] = [
    {
      name: 'a. x-stability: alpha on an operation',
      rule: 'rule/stability-values',
      pointer: '#/paths/~1pets/get/x-stability',
      from: '      operationId: listPets\n',
      to: '      operationId: listPets\n      x-stability: alpha\n',
    },
    {
      name: 'b. a lower-case summary with a final period',
      rule: 'rule/summary-sentence-case',
      pointer: '#/paths/~1pets/get/summary',
      from: '      summary: List animals\n',
      to: '      summary: list animals.\n',
    },
    {
      name: "c. getPet deprecated without its x-sunset",
      rule: 'rule/deprecation-complete',
      pointer: '#/paths/~1pets~1{petId}/get',
      from: "      x-sunset: '2030-12-05T00:00:00Z'\n",
      to: '',
    },
    {
      name: 'd. getPet without its 401 response',
      rule: 'rule/operation-401-response',
      pointer: '#/paths/~1pets~1{petId}/get/responses',
      from: "        '401':\n          $ref: '#/components/responses/Unauthorized'\n        '404':\n",
      to: "        '404':\n",
    },
    {
      name: 'e. a request example whose categoryId is "two"',
      rule: 'no-invalid-media-type-examples',
      pointer: '#/paths/~1pets/post/requestBody/content/application~1json/examples/minimal/value/categoryId',
      from: '                  categoryId: 2\n              withStatus:\n',
      to: '                  categoryId: two\n              withStatus:\n',
    },
  ];

  it.each(CASES.map((c) => [`${c.name} is reported as ${c.rule}`, c] as const))('%s', async (_name, c) => {
    const problems = await lint(mutate(c.from, c.to));
    // Exactly the rule under test fires, at the place that was broken.
    expect(summary(problems)).toEqual([`${c.rule} at ${c.pointer}`]);
    expect(problems[0]?.severity).toBe('error');
  });
});
