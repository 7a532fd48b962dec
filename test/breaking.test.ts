/**
 * The breaking-change gate bites: scripts/breaking.ts fails with one `BREAKING:` line naming each
 * break of the contract, lets additive changes through, and passes the spec as it is.
 *
 * Each case copies spec/openapi.yaml to a temporary folder and applies string replacements (each
 * must match exactly once, so a reworded spec cannot make a case silently test nothing). The
 * mutated copies are bundled by one `redocly bundle` call, then the gate runs on each, two at a
 * time, with `--spec <mutated.json> --against <unmodified.json>`: the cases do not depend on what
 * spec/released/ holds. A few cases hand the gate YAML, so its own bundling is proven too.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const redocly = join(root, 'node_modules', '.bin', 'redocly');
const original = readFileSync(join(root, 'spec', 'openapi.yaml'), 'utf8');
const tmp = mkdtempSync(join(tmpdir(), 'animal-store-breaking-'));
const yamlDir = join(tmp, 'yaml');
const jsonDir = join(tmp, 'json');

/** `from` is replaced by `to`; `from` must occur exactly once in the text at that point. */
type Edit = readonly [from: string, to: string];

/** The exact text from `start` up to (not including) `end`, each occurring once: to cut a block. */
function between(start: string, end: string): string {
  const count = (s: string) => original.split(s).length - 1;
  if (count(start) !== 1 || count(end) !== 1) throw new Error(`between(): anchors occur ${count(start)} and ${count(end)} times, expected once each`);
  const from = original.indexOf(start);
  return original.slice(from, original.indexOf(end, from));
}

function mutate(edits: readonly Edit[]): string {
  let text = original;
  for (const [from, to] of edits) {
    const count = text.split(from).length - 1;
    if (count !== 1) throw new Error(`The mutation's anchor occurs ${count} times in spec/openapi.yaml, expected once:\n${from}`);
    text = text.replace(from, () => to);
  }
  return text;
}

// Edits used by several cases.
const REMOVE_NEWPET_STATUS: Edit = [
  "        status:\n          description: Availability of the new animal; `available` when omitted.\n          default: available\n          allOf:\n            - $ref: '#/components/schemas/PetStatus'\n",
  '',
];
const REQUIRE_LIMIT: Edit = ['      required: false\n      description: Maximum number of animals returned.\n', '      required: true\n      description: Maximum number of animals returned.\n'];
const NARROW_STATUS_FILTER: Edit = [
  "      schema:\n        $ref: '#/components/schemas/PetStatus'\n      example: available\n",
  '      schema:\n        type: string\n        enum: [available, pending]\n      example: available\n',
];
const REQUEST_BODY_REQUIRED = '      requestBody:\n        required: true\n';
const CURSOR_PATTERN = "        pattern: '^[A-Za-z0-9_.-]+$'\n";

interface Case {
  name: string;
  edits: () => readonly Edit[];
  /** The gate compares the unmodified spec against the mutated one: the mutation is the old contract. */
  reversed?: boolean;
  /** The gate gets the mutated YAML and bundles it itself. */
  yaml?: boolean;
  /** Exactly these BREAKING lines (without the prefix), in any order; or a check of its own. */
  expected: string[] | ((lines: string[]) => void);
}

/** Each response line carries the statuses it concerns; the error statuses vary with the spec. */
const startsWithEach = (prefixes: string[]) => (lines: string[]) => {
  expect(lines).toHaveLength(prefixes.length);
  for (const prefix of prefixes) expect(lines.some((l) => l.startsWith(prefix)), `a line starting with ${prefix}\nin ${lines.join('\n')}`).toBe(true);
};

const BREAKS: Case[] = [
  {
    name: 'an operation removed',
    edits: () => [[between('  /pets/{petId}:\n', 'components:\n'), '']],
    expected: ['GET /pets/{petId}: operation "getPet" removed'],
  },
  {
    name: 'an operation moved to another path',
    edits: () => [['  /pets/{petId}:\n', '  /animals/{petId}:\n']],
    expected: ['GET /pets/{petId}: operation "getPet" removed (it is now GET /animals/{petId})'],
  },
  {
    name: 'an operation moved to another method',
    edits: () => [['    post:\n      operationId: createPet\n', '    put:\n      operationId: createPet\n']],
    expected: ['POST /pets: operation "createPet" removed (it is now PUT /pets)'],
  },
  {
    name: 'an operationId renamed',
    edits: () => [['      operationId: listPets\n', '      operationId: listAnimals\n']],
    expected: ['GET /pets: operationId changed from "listPets" to "listAnimals"'],
  },
  {
    name: 'a parameter removed',
    edits: () => [["        - $ref: '#/components/parameters/Cursor'\n", '']],
    expected: ['GET /pets: query parameter "cursor" removed'],
  },
  {
    name: 'a parameter renamed',
    edits: () => [['      name: limit\n', '      name: pageSize\n']],
    expected: ['GET /pets: query parameter "limit" removed (or renamed: query parameter "pageSize" is new)'],
  },
  {
    name: 'a request property removed',
    edits: () => [REMOVE_NEWPET_STATUS],
    expected: ['POST /pets: request body property "status" removed'],
  },
  {
    name: 'a required response property removed',
    edits: () => [
      ['      required: [id, name, categoryId, status]\n', '      required: [id, name, categoryId]\n'],
      ["        status:\n          $ref: '#/components/schemas/PetStatus'\n    Pets:\n", '    Pets:\n'],
    ],
    expected: [
      'GET /pets: response body property "[].status" removed (response 200)',
      'POST /pets: response body property "status" removed (response 201)',
      'GET /pets/{petId}: response body property "status" removed (response 200)',
    ],
  },
  {
    name: 'an optional response property removed',
    edits: () => [
      ["        details:\n          description: For a 400, each offending field.\n          type: array\n          items:\n            $ref: '#/components/schemas/ErrorDetail'\n", ''],
    ],
    expected: startsWithEach([
      'GET /pets: response body property "details" removed (responses 400, 401, ',
      'POST /pets: response body property "details" removed (responses 400, 401, ',
      'GET /pets/{petId}: response body property "details" removed (responses 400, 401, ',
    ]),
  },
  {
    name: 'a request property newly required',
    edits: () => [['      required: [name, categoryId]\n', '      required: [name, categoryId, status]\n']],
    expected: ['POST /pets: request body property "status" is now required'],
  },
  {
    name: 'a parameter newly required',
    edits: () => [REQUIRE_LIMIT],
    expected: ['GET /pets: query parameter "limit" is now required'],
  },
  {
    name: 'a required parameter added',
    edits: () => [["        - $ref: '#/components/parameters/Cursor'\n", "        - $ref: '#/components/parameters/Cursor'\n        - name: q\n          in: query\n          required: true\n          schema:\n            type: string\n"]],
    expected: ['GET /pets: query parameter "q" added as required'],
  },
  {
    name: 'the type of a parameter changed',
    edits: () => [['      description: Maximum number of animals returned.\n      schema:\n        type: integer\n', '      description: Maximum number of animals returned.\n      schema:\n        type: string\n']],
    expected: ['GET /pets: query parameter "limit" type changed from integer to string'],
  },
  {
    name: 'the type of a body property changed (request and responses; its bounds are not repeated)',
    edits: () => [['like every identifier.\n      type: integer\n', 'like every identifier.\n      type: string\n']],
    expected: [
      'POST /pets: request body property "categoryId" type changed from integer to string',
      'GET /pets: response body property "[].categoryId" type changed from integer to string (response 200)',
      'POST /pets: response body property "categoryId" type changed from integer to string (response 201)',
      'GET /pets/{petId}: response body property "categoryId" type changed from integer to string (response 200)',
    ],
  },
  {
    name: 'a format changed (int64 to int32 narrows the path parameter; responses only narrow)',
    edits: () => [['      format: int64\n      minimum: 1\n      maximum: 9007199254740991\n      examples: [1]\n', '      format: int32\n      minimum: 1\n      maximum: 9007199254740991\n      examples: [1]\n']],
    expected: ['GET /pets/{petId}: path parameter "petId" format changed from "int64" to "int32"'],
  },
  {
    name: 'an enum narrowed (PetStatus: the status filter and the request body; responses only narrow)',
    edits: () => [['      enum: [available, pending, sold]\n', '      enum: [available, pending]\n']],
    expected: ['GET /pets: query parameter "status" enum value "sold" removed', 'POST /pets: request body property "status" enum value "sold" removed'],
  },
  {
    name: 'an enum widened in responses (a new ErrorCode an old client cannot know)',
    edits: () => [['        - service_unavailable\n      examples:', '        - service_unavailable\n        - rate_limited\n      examples:']],
    expected: startsWithEach([
      'GET /pets: response body property "code" enum value "rate_limited" added (responses 400, ',
      'POST /pets: response body property "code" enum value "rate_limited" added (responses 400, ',
      'GET /pets/{petId}: response body property "code" enum value "rate_limited" added (responses 400, ',
    ]),
  },
  {
    name: 'a maximum lowered',
    edits: () => [['        maximum: 100\n', '        maximum: 50\n']],
    expected: ['GET /pets: query parameter "limit" maximum lowered from 100 to 50'],
  },
  {
    name: 'a minimum raised',
    edits: () => [['like every identifier.\n      type: integer\n      format: int64\n      minimum: 1\n', 'like every identifier.\n      type: integer\n      format: int64\n      minimum: 10\n']],
    expected: ['POST /pets: request body property "categoryId" minimum raised from 1 to 10'],
  },
  {
    name: 'a maxLength lowered',
    edits: () => [['      maxLength: 255\n', '      maxLength: 100\n']],
    expected: ['POST /pets: request body property "name" maxLength lowered from 255 to 100'],
  },
  {
    name: 'a minLength raised',
    edits: () => [['      minLength: 1\n      maxLength: 255\n', '      minLength: 2\n      maxLength: 255\n']],
    expected: ['POST /pets: request body property "name" minLength raised from 1 to 2'],
  },
  {
    name: 'a pattern changed',
    edits: () => [[CURSOR_PATTERN, "        pattern: '^[A-Za-z0-9]+$'\n"]],
    expected: ["GET /pets: query parameter \"cursor\" pattern changed from '^[A-Za-z0-9_.-]+$' to '^[A-Za-z0-9]+$'"],
  },
  {
    name: 'a pattern added (the old contract had none)',
    reversed: true,
    edits: () => [[CURSOR_PATTERN, '']],
    expected: ["GET /pets: query parameter \"cursor\" pattern '^[A-Za-z0-9_.-]+$' added"],
  },
  {
    name: 'a response status removed',
    edits: () => [["          $ref: '#/components/responses/Unauthorized'\n        '404':\n          $ref: '#/components/responses/NotFound'\n", "          $ref: '#/components/responses/Unauthorized'\n"]],
    expected: ['GET /pets/{petId}: response 404 removed'],
  },
  {
    name: 'a request body newly required (the old contract had it optional)',
    reversed: true,
    edits: () => [[REQUEST_BODY_REQUIRED, '      requestBody:\n        required: false\n']],
    expected: ['POST /pets: request body is now required'],
  },
  {
    name: 'a required request body added (the old contract had none)',
    reversed: true,
    edits: () => [[between(REQUEST_BODY_REQUIRED, '      responses:\n        \'201\':\n'), '']],
    expected: ['POST /pets: request body added as required'],
  },
  {
    name: 'a response header no longer always sent (the old contract had Link required)',
    reversed: true,
    edits: () => [['              required: false\n              schema:\n                type: string\n', '              required: true\n              schema:\n                type: string\n']],
    expected: ['GET /pets: response header "Link" is no longer always sent (response 200)'],
  },
  {
    name: 'a removed property + a newly required parameter + a narrowed enum, in one spec: three lines',
    yaml: true,
    edits: () => [REMOVE_NEWPET_STATUS, REQUIRE_LIMIT, NARROW_STATUS_FILTER],
    expected: [
      'POST /pets: request body property "status" removed',
      'GET /pets: query parameter "limit" is now required',
      'GET /pets: query parameter "status" enum value "sold" removed',
    ],
  },
];

const PASSES: Case[] = [
  { name: 'the unmodified spec, as YAML', yaml: true, edits: () => [], expected: [] },
  {
    name: 'an optional request property added',
    edits: () => [["        categoryId:\n          $ref: '#/components/schemas/CategoryId'\n        status:\n          description:", "        categoryId:\n          $ref: '#/components/schemas/CategoryId'\n        nickname:\n          type: string\n          maxLength: 50\n        status:\n          description:"]],
    expected: [],
  },
  {
    name: 'an optional response property added',
    edits: () => [["        status:\n          $ref: '#/components/schemas/PetStatus'\n    Pets:\n", "        status:\n          $ref: '#/components/schemas/PetStatus'\n        nickname:\n          type: string\n    Pets:\n"]],
    expected: [],
  },
  {
    name: 'an operation added',
    edits: () => [
      [
        '  /pets/{petId}:\n    get:\n',
        "  /pets/{petId}:\n    delete:\n      operationId: deletePet\n      summary: Delete an animal\n      parameters:\n        - $ref: '#/components/parameters/PetId'\n      responses:\n        '204':\n          description: Deleted.\n        '401':\n          $ref: '#/components/responses/Unauthorized'\n        default:\n          $ref: '#/components/responses/UnexpectedError'\n    get:\n",
      ],
    ],
    expected: [],
  },
  {
    name: 'a request widened: an optional parameter added, a maximum raised, a status added',
    edits: () => [
      ["        - $ref: '#/components/parameters/Cursor'\n", "        - $ref: '#/components/parameters/Cursor'\n        - name: q\n          in: query\n          schema:\n            type: string\n            maxLength: 50\n"],
      ['        maximum: 100\n', '        maximum: 200\n'],
      ["        '404':\n          $ref: '#/components/responses/NotFound'\n", "        '403':\n          $ref: '#/components/responses/Unauthorized'\n        '404':\n          $ref: '#/components/responses/NotFound'\n"],
    ],
    expected: [],
  },
  {
    name: 'a response narrowed: an enum value removed, a maxLength added (clients get fewer values)',
    edits: () => [
      ['          enum: [body, query, path, header]\n', '          enum: [body, query, path]\n'],
      ['          description: What is wrong with it.\n          type: string\n', '          description: What is wrong with it.\n          type: string\n          maxLength: 500\n'],
    ],
    expected: [],
  },
];

interface Result {
  code: number;
  stdout: string;
  stderr: string;
  breaking: string[];
}

/** Runs the gate; resolves with its exit code and output whatever the code. */
function gate(args: string[]): Promise<Result> {
  return new Promise((resolve) => {
    // `node --import tsx` is what the tsx command does, minus a second process: a quarter faster.
    execFile(process.execPath, ['--import', 'tsx', 'scripts/breaking.ts', ...args], { cwd: root, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      const breaking = `${stdout}\n${stderr}`
        .split('\n')
        .filter((l) => l.startsWith('BREAKING: '))
        .map((l) => l.slice('BREAKING: '.length));
      resolve({ code, stdout, stderr, breaking });
    });
  });
}

/** At most `limit` runs at a time (two cores). */
function pool(limit: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (running >= limit) await new Promise<void>((go) => waiting.push(go));
    running += 1;
    try {
      return await task();
    } finally {
      running -= 1;
      waiting.shift()?.();
    }
  };
}

const results = new Map<string, Promise<Result>>();
const mutationErrors = new Map<string, Error>();
const file = (dir: string, name: string, ext: string) => join(dir, `${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 80)}.${ext}`);

beforeAll(async () => {
  mkdirSync(yamlDir);
  const cases = [...BREAKS, ...PASSES];
  writeFileSync(file(yamlDir, 'unmodified', 'yaml'), original);
  for (const c of cases) {
    try {
      writeFileSync(file(yamlDir, c.name, 'yaml'), mutate(c.edits()));
    } catch (error) {
      mutationErrors.set(c.name, error as Error);
    }
  }
  // One redocly call bundles every copy (the gate would spend most of its time bundling each).
  const yamls = [file(yamlDir, 'unmodified', 'yaml'), ...cases.filter((c) => !mutationErrors.has(c.name)).map((c) => file(yamlDir, c.name, 'yaml'))];
  await promisify(execFile)(redocly, ['bundle', ...yamls, '--ext', 'json', '--output', jsonDir], {
    cwd: root,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    maxBuffer: 16 * 1024 * 1024,
  });
  const unmodified = file(jsonDir, 'unmodified', 'json');
  const run = pool(2);
  for (const c of cases) {
    if (mutationErrors.has(c.name)) continue;
    const mutated = file(c.yaml ? yamlDir : jsonDir, c.name, c.yaml ? 'yaml' : 'json');
    const args = c.reversed ? ['--spec', unmodified, '--against', mutated] : ['--spec', mutated, '--against', unmodified];
    results.set(c.name, run(() => gate(args)));
  }
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
  });

  it.each(PASSES.map((c) => [c.name, c] as const))('passes %s, with no message', async (_name, c) => {
    const result = await resultOf(c);
    expect(result.code, result.stderr).toBe(0);
    expect(result.breaking).toEqual([]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^No breaking change in .+ against .+\.\n$/);
  });

  it('passes the working spec/openapi.yaml against the newest spec/released/ contract (what npm run lint runs)', async () => {
    const result = await results.get('default')!;
    expect(result.breaking).toEqual([]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^No breaking change in spec\/openapi\.yaml against spec\/released\/\d+\.\d+\.\d+\.json/);
  });

  it('documents --spec and --against in --help, and refuses an unknown argument', async () => {
    const [help, unknown] = await Promise.all([gate(['--help']), gate(['--base', 'x.json'])]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--spec <file>');
    expect(help.stdout).toContain('--against <file>');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown or incomplete argument: --base');
  });
});
