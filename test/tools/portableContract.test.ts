/**
 * The contract says only what every client can read and the server will do (issue 22, item 5):
 * header parameters fit, with the rest of a request, in the request head the server accepts;
 * patterns stay in JSON Schema's portable subset (a lint rule refuses `\p{…}`), and the gate
 * judges a rewritten pattern by what it accepts; a break decided on is waived by its exact line, or
 * by the shared component's change it is, never loosely.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { comparePatterns } from '../../scripts/lib/contract/patternScope.js';
import { MAX_REQUEST_HEAD_BYTES } from '../../src/transport/clientError.js';
import { loadBundledSpec } from '../../src/shared/spec.js';
import { runGate } from '../support/gate.js';
import { startTestServer, type TestServer } from '../support/server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'animal-store-portable-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Room for what a browser or an SDK sends besides the header under test (the live request below sends about 2.5 KiB of it). */
const REST_OF_A_REQUEST_BYTES = 8 * 1024;

interface HeaderParameter {
  name: string;
  in: string;
  schema?: { maxLength?: number; pattern?: string };
}

/** Every header parameter of the bundled contract, with the operations that take it. */
function headerParameters(): Array<{ parameter: HeaderParameter; operations: Array<{ method: string; path: string }> }> {
  const spec = loadBundledSpec() as unknown as { paths: Record<string, Record<string, { parameters?: Array<{ $ref?: string } & HeaderParameter> }>>; components: { parameters: Record<string, HeaderParameter> } };
  const found = new Map<string, { parameter: HeaderParameter; operations: Array<{ method: string; path: string }> }>();
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      for (const raw of operation.parameters ?? []) {
        const parameter = raw.$ref ? spec.components.parameters[raw.$ref.split('/').at(-1)!]! : raw;
        if (parameter.in !== 'header') continue;
        const entry = found.get(parameter.name) ?? { parameter, operations: [] };
        entry.operations.push({ method, path });
        found.set(parameter.name, entry);
      }
    }
  }
  return [...found.values()];
}

describe('header parameters fit in the request head the server accepts', () => {
  it('every header parameter has a maxLength that leaves room for the rest of a request', () => {
    const parameters = headerParameters();
    expect(parameters.map((p) => p.parameter.name)).toContain('If-None-Match');
    for (const { parameter } of parameters) {
      expect(parameter.schema?.maxLength, `${parameter.name}'s maxLength`).toBeLessThanOrEqual(MAX_REQUEST_HEAD_BYTES - REST_OF_A_REQUEST_BYTES);
    }
  });

  it("lint's header-parameter-length rule (spec/lint/rules.js, plain JS that cannot import the server) holds the server's bound and this room", async () => {
    const rules = (await import(pathToFileURL(join(root, 'spec/lint/rules.js')).href)) as { MAX_REQUEST_HEAD_BYTES: number; HEADER_PARAMETER_MAX_LENGTH: number };
    expect(rules.MAX_REQUEST_HEAD_BYTES).toBe(MAX_REQUEST_HEAD_BYTES);
    expect(rules.HEADER_PARAMETER_MAX_LENGTH).toBe(MAX_REQUEST_HEAD_BYTES - REST_OF_A_REQUEST_BYTES);
  });

  describe('on the real server', () => {
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer('sqlite');
      await t.request('/pets', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"name":"Biscuit","categoryId":2}' });
    }, 60_000);
    afterAll(async () => t?.close());

    it('a GET with each header parameter at its maxLength, and a browser\'s other headers, is answered (not 431)', async () => {
      const browser = {
        'User-Agent': `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36 ${'x'.repeat(200)}`,
        Accept: 'application/json, text/plain, */*',
        'Accept-Language': 'en-GB,en;q=0.9,fr;q=0.8,de;q=0.7',
        Cookie: `session=${'c'.repeat(2_000)}`,
      };
      for (const { parameter, operations } of headerParameters()) {
        for (const { method, path } of operations.filter((o) => o.method === 'get')) {
          const value = 'A'.repeat(parameter.schema?.maxLength ?? 1);
          expect(new RegExp(parameter.schema?.pattern ?? '', 'u').test(value)).toBe(true);
          const url = `${path.replace('{petId}', '1')}?`.replace(/\?$/, '');
          const response = await t.request(url, { headers: { ...browser, [parameter.name]: value } });
          // As answered without it (a 200; pet 1's photo, which no one stored, a 404): never a 431.
          const without = await t.request(url, { headers: browser });
          expect([200, 404]).toContain(without.status);
          expect(response.status, `${method.toUpperCase()} ${path} with ${parameter.name} of ${value.length} characters`).toBe(without.status);
        }
      }
    });
  });
});

/** Runs the gate (in this process: test/tools/breaking.test.ts proves the command prints the same); resolves with its exit code and output. */
async function gate(args: string[]): Promise<{ code: number; output: string }> {
  const { code, stdout, stderr } = await runGate(args);
  return { code, output: `${stdout}${stderr}` };
}

const released = join(root, 'spec', 'released', '1.1.0.json');

/** 1.1.0's contract with PetName's pattern replaced, written to a file of its own. */
function withPetNamePattern(pattern: string, file: string): string {
  const contract = JSON.parse(readFileSync(released, 'utf8')) as { components: { schemas: { PetName: { pattern: string } } } };
  expect(contract.components.schemas.PetName.pattern).toBe('^[^\\p{Cc}\\p{Cs}]*$');
  contract.components.schemas.PetName.pattern = pattern;
  const path = join(tmp, file);
  writeFileSync(path, JSON.stringify(contract));
  return path;
}

describe('patterns: portable, and judged by what they accept', () => {
  it('comparePatterns decides repeated character classes over every Unicode scalar value', () => {
    expect(comparePatterns('^[^\\p{Cc}\\p{Cs}]*$', '^[^\\x00-\\x1F\\x7F-\\x9F]*$')).toBe('same');
    expect(comparePatterns('^[^\\x00-\\x1F\\x7F-\\x9F]*$', '^[^\\x00-\\x1F]*$')).toBe('wider');
    expect(comparePatterns('^[A-Za-z0-9_.-]+$', '^[A-Za-z0-9]+$')).toBe('narrower');
    expect(comparePatterns('^[a-z]+$', '^[0-9]+$')).toBe('other');
    expect(comparePatterns('^[a-z]+$', '^[a-z]*$')).toBe('other');
    expect(comparePatterns('^(W/)?"[a-z]+"$', '^[a-z]*$')).toBe('other');
  });

  it('the gate: \\p{Cc} spelled as ranges is no change; a pattern that accepts less or more breaks the request or the response', async () => {
    const same = await gate(['--spec', withPetNamePattern('^[^\\x00-\\x1F\\x7F-\\x9F]*$', 'same.json'), '--against', released]);
    expect(same.code, same.output).toBe(0);
    const narrower = await gate(['--spec', withPetNamePattern('^[^\\x00-\\x1F\\x7F-\\x9F!]*$', 'narrower.json'), '--against', released]);
    expect(narrower.code, narrower.output).toBe(1);
    expect(narrower.output).toMatch(/BREAKING: POST \/pets: .*pattern validator of `name` in Request Body/);
    const wider = await gate(['--spec', withPetNamePattern('^[^\\x00-\\x1F]*$', 'wider.json'), '--against', released]);
    expect(wider.code, wider.output).toBe(1);
    expect(wider.output).toMatch(/BREAKING: GET \/pets.*pattern validator of `name`.*Response/);
    expect(wider.output).not.toMatch(/BREAKING: POST \/pets: .*Request Body/);
  });

  it('lint refuses a \\p{…} pattern', async () => {
    const file = join(mkdtempSync(join(tmp, 'lint-')), 'openapi.yaml');
    const spec = readFileSync(join(root, 'spec', 'openapi.yaml'), 'utf8');
    writeFileSync(file, spec.replace("pattern: '^[^\\x00-\\x1F\\x7F-\\x9F]*$'", () => "pattern: '^[^\\p{Cc}]*$'"));
    expect(readFileSync(file, 'utf8')).toContain('\\p{Cc}');
    const report = await new Promise<string>((resolve) => {
      execFile(join(root, 'node_modules', '.bin', 'redocly'), ['lint', file, '--config', join(root, 'redocly.yaml'), '--format=json'], { cwd: root, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => resolve(stdout || `${String(error)}\n${stderr}`));
    });
    const problems = (JSON.parse(report) as { problems: Array<{ ruleId: string; location: Array<{ pointer: string }> }> }).problems;
    expect(problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}`)).toEqual(['rule/portable-pattern #/components/schemas/PetName/pattern']);
  });
});

describe('waivers: a decided break by its exact line or its shared component, never a stale one', () => {
  const waivers = parse(readFileSync(join(root, 'spec', 'breaking-waivers.yaml'), 'utf8')) as { waivers: Array<{ change: string; why: string }> };

  it('the gate passes the spec with each waiver printed, and fails on a waiver that matches nothing', async () => {
    const passed = await gate([]);
    expect(passed.code, passed.output).toBe(0);
    for (const { change } of waivers.waivers) expect(passed.output).toContain(`waived: ${change}`);

    const dir = mkdtempSync(join(tmp, 'stale-'));
    copyFileSync(join(root, 'spec', 'openapi.yaml'), join(dir, 'openapi.yaml'));
    const stale = { waivers: [...waivers.waivers, { change: 'GET /pets: [Removed] nothing that ever happened', why: 'a test' }] };
    writeFileSync(join(dir, 'breaking-waivers.yaml'), JSON.stringify(stale));
    const failed = await gate(['--spec', join(dir, 'openapi.yaml')]);
    expect(failed.code, failed.output).toBe(1);
    expect(failed.output).toContain('STALE WAIVER: GET /pets: [Removed] nothing that ever happened');
  });

  it('without its waiver, the If-None-Match narrowing is a break', async () => {
    const dir = mkdtempSync(join(tmp, 'unwaived-'));
    copyFileSync(join(root, 'spec', 'openapi.yaml'), join(dir, 'openapi.yaml'));
    const failed = await gate(['--spec', join(dir, 'openapi.yaml')]);
    expect(failed.code, failed.output).toBe(1);
    expect(failed.output).toContain('BREAKING: GET /pets/{petId}: [Replaced] maxLength validator in header parameter `If-None-Match` (16384 → 8192)');
  });
});
