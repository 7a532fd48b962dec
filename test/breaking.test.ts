/**
 * The breaking-change gate bites: scripts/breaking.ts fails with one `BREAKING:` line naming each
 * break of the contract, lets additive changes through, and passes the spec as it is.
 *
 * Each case parses spec/openapi.yaml, changes the parsed document and writes the copy to a
 * temporary folder. Each edit first checks the value it replaces or removes, so a reworded spec
 * cannot make a case silently test nothing; what a case adds has a generated name, so the spec
 * gaining a field, parameter or operation of its own cannot collide with it; and an edit reaches
 * its node by its path, so an unrelated addition to the spec changes no case. The mutated copies
 * are bundled by one `redocly bundle` call, then the gate runs on each, two at a time, with `--spec <mutated.json> --against <unmodified.json>`: the cases do not depend on what
 * spec/released/ holds. A few cases hand the gate YAML, so its own bundling is proven too.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual, promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNode, isSeq, parseDocument, type Document } from 'yaml';

const root = fileURLToPath(new URL('..', import.meta.url));
const redocly = join(root, 'node_modules', '.bin', 'redocly');
const original = readFileSync(join(root, 'spec', 'openapi.yaml'), 'utf8');
const tmp = mkdtempSync(join(tmpdir(), 'animal-store-breaking-'));
const yamlDir = join(tmp, 'yaml');
const jsonDir = join(tmp, 'json');

/**
 * One change to the parsed spec. Each edit checks what it changes first (the value it replaces,
 * the node it removes, the absence of what it adds), so a reworded spec cannot make a case
 * silently test nothing, while an unrelated addition to the spec (a new field, operation or
 * parameter) leaves every case as it was.
 */
type Edit = (doc: Document) => void;
type Path = readonly (string | number)[];

const where = (path: Path) => path.map(String).join(' → ');
const plain = (doc: Document, path: Path): unknown => {
  const node = doc.getIn(path);
  return isNode(node) ? node.toJSON() : node;
};

/** The value at `path` must be `from`; it becomes `to`. */
const change =
  (path: Path, from: unknown, to: unknown): Edit =>
  (doc) => {
    const now = plain(doc, path);
    if (!isDeepStrictEqual(now, from)) throw new Error(`spec/openapi.yaml: ${where(path)} is ${JSON.stringify(now)}, this case expects ${JSON.stringify(from)}`);
    doc.setIn(path, doc.createNode(to));
  };

/** `path` must exist (and hold `value`, when given); it is removed. */
const remove =
  (path: Path, ...value: [unknown?]): Edit =>
  (doc) => {
    if (!doc.hasIn(path)) throw new Error(`spec/openapi.yaml has no ${where(path)}`);
    const now = plain(doc, path);
    if (value.length > 0 && !isDeepStrictEqual(now, value[0])) throw new Error(`spec/openapi.yaml: ${where(path)} is ${JSON.stringify(now)}, this case expects ${JSON.stringify(value[0])}`);
    doc.deleteIn(path);
  };

/** `path` must not exist; it is added with `value`. */
const add =
  (path: Path, value: unknown): Edit =>
  (doc) => {
    if (doc.hasIn(path)) throw new Error(`spec/openapi.yaml already has ${where(path)}`);
    doc.setIn(path, doc.createNode(value));
  };

/** The list at `path` must hold exactly one item equal to `item`; it is removed. */
const removeItem =
  (path: Path, item: unknown): Edit =>
  (doc) => {
    const list = plain(doc, path);
    const found = Array.isArray(list) ? list.flatMap((x, i) => (isDeepStrictEqual(x, item) ? [i] : [])) : [];
    if (found.length !== 1) throw new Error(`spec/openapi.yaml: ${where(path)} holds ${JSON.stringify(item)} ${found.length} times, expected once`);
    doc.deleteIn([...path, found[0] as number]);
  };

/** The list at `path` gets `item` at its end. */
const append =
  (path: Path, item: unknown): Edit =>
  (doc) => {
    const list = doc.getIn(path);
    if (!isSeq(list)) throw new Error(`spec/openapi.yaml: ${where(path)} is not a list`);
    list.add(doc.createNode(item));
  };

/** Moves the operation at `from` (path, method) to `to`; a path left without operations goes. */
const moveOperation =
  (from: readonly [string, string], to: readonly [string, string]): Edit =>
  (doc) => {
    const op = plain(doc, ['paths', ...from]);
    remove(['paths', ...from])(doc);
    add(['paths', ...to], op)(doc);
    removeEmptyPath(doc, from[0]);
  };

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
function removeEmptyPath(doc: Document, path: string): void {
  const item = plain(doc, ['paths', path]) as Record<string, unknown> | undefined;
  if (item && !Object.keys(item).some((k) => HTTP_METHODS.includes(k))) doc.deleteIn(['paths', path]);
}

function mutate(edits: readonly Edit[]): string {
  const doc = parseDocument(original);
  if (doc.errors.length > 0) throw new Error(`spec/openapi.yaml does not parse: ${doc.errors.map((e) => e.message).join('; ')}`);
  for (const edit of edits) edit(doc);
  // These options write the unmodified spec back byte for byte.
  return doc.toString({ flowCollectionPadding: false, lineWidth: 0 });
}

/**
 * Names that cannot be in the spec: what a case adds is new whatever the spec gains later
 * (a property, a parameter, an operation of the same name would collide with a fixed one).
 */
const unique = (prefix: string) => `${prefix}${randomBytes(4).toString('hex')}`;
const NEW_REQUEST_PROPERTY = unique('probeRequest');
const NEW_RESPONSE_PROPERTY = unique('probeResponse');
const NEW_REQUIRED_PARAMETER = unique('probeRequired');
const NEW_OPTIONAL_PARAMETER = unique('probeOptional');
const NEW_OPERATION = unique('probeOperation');

// Places used by several cases.
const SCHEMAS = ['components', 'schemas'] as const;
const PARAMETERS = ['components', 'parameters'] as const;
const LIST_PETS = ['paths', '/pets', 'get'] as const;
const CREATE_PET = ['paths', '/pets', 'post'] as const;
const GET_PET = ['paths', '/pets/{petId}', 'get'] as const;

const NEWPET_STATUS = {
  description: 'Availability of the new animal; `available` when omitted.',
  default: 'available',
  allOf: [{ $ref: '#/components/schemas/PetStatus' }],
};
const REMOVE_NEWPET_STATUS = remove([...SCHEMAS, 'NewPet', 'properties', 'status'], NEWPET_STATUS);
const REQUIRE_LIMIT = change([...PARAMETERS, 'Limit', 'required'], false, true);
const NARROW_STATUS_FILTER = change([...PARAMETERS, 'StatusFilter', 'schema'], { $ref: '#/components/schemas/PetStatus' }, { type: 'string', enum: ['available', 'pending'] });
const CURSOR_PATTERN = [...PARAMETERS, 'Cursor', 'schema', 'pattern'] as const;

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
    edits: () => [remove(GET_PET), (doc) => removeEmptyPath(doc, '/pets/{petId}')],
    expected: ['GET /pets/{petId}: operation "getPet" removed'],
  },
  {
    name: 'an operation moved to another path',
    edits: () => [moveOperation(['/pets/{petId}', 'get'], ['/animals/{petId}', 'get'])],
    expected: ['GET /pets/{petId}: operation "getPet" removed (it is now GET /animals/{petId})'],
  },
  {
    name: 'an operation moved to another method',
    edits: () => [moveOperation(['/pets', 'post'], ['/pets', 'put'])],
    expected: ['POST /pets: operation "createPet" removed (it is now PUT /pets)'],
  },
  {
    name: 'an operationId renamed',
    edits: () => [change([...LIST_PETS, 'operationId'], 'listPets', 'listAnimals')],
    expected: ['GET /pets: operationId changed from "listPets" to "listAnimals"'],
  },
  {
    name: 'a parameter removed',
    edits: () => [removeItem([...LIST_PETS, 'parameters'], { $ref: '#/components/parameters/Cursor' })],
    expected: ['GET /pets: query parameter "cursor" removed'],
  },
  {
    name: 'a parameter renamed',
    edits: () => [change([...PARAMETERS, 'Limit', 'name'], 'limit', 'pageSize')],
    expected: ['GET /pets: query parameter "limit" removed (or renamed: query parameter "pageSize" is new)'],
  },
  {
    name: 'a request property removed',
    edits: () => [REMOVE_NEWPET_STATUS],
    expected: ['POST /pets: request body property "status" removed'],
  },
  {
    name: 'a required response property removed',
    edits: () => [removeItem([...SCHEMAS, 'Pet', 'required'], 'status'), remove([...SCHEMAS, 'Pet', 'properties', 'status'], { $ref: '#/components/schemas/PetStatus' })],
    expected: [
      'GET /pets: response body property "[].status" removed (response 200)',
      'POST /pets: response body property "status" removed (response 201)',
      'GET /pets/{petId}: response body property "status" removed (response 200)',
    ],
  },
  {
    name: 'an optional response property removed',
    edits: () => [remove([...SCHEMAS, 'Error', 'properties', 'details'])],
    expected: startsWithEach([
      'GET /pets: response body property "details" removed (responses 400, 401, ',
      'POST /pets: response body property "details" removed (responses 400, 401, ',
      'GET /pets/{petId}: response body property "details" removed (responses 400, 401, ',
    ]),
  },
  {
    name: 'a request property newly required',
    edits: () => [append([...SCHEMAS, 'NewPet', 'required'], 'status')],
    expected: ['POST /pets: request body property "status" is now required'],
  },
  {
    name: 'a parameter newly required',
    edits: () => [REQUIRE_LIMIT],
    expected: ['GET /pets: query parameter "limit" is now required'],
  },
  {
    name: 'a required parameter added',
    edits: () => [append([...LIST_PETS, 'parameters'], { name: NEW_REQUIRED_PARAMETER, in: 'query', required: true, schema: { type: 'string' } })],
    expected: [`GET /pets: query parameter "${NEW_REQUIRED_PARAMETER}" added as required`],
  },
  {
    name: 'the type of a parameter changed',
    edits: () => [change([...PARAMETERS, 'Limit', 'schema', 'type'], 'integer', 'string')],
    expected: ['GET /pets: query parameter "limit" type changed from integer to string'],
  },
  {
    name: 'the type of a body property changed (request and responses; its bounds are not repeated)',
    edits: () => [change([...SCHEMAS, 'CategoryId', 'type'], 'integer', 'string')],
    expected: [
      'POST /pets: request body property "categoryId" type changed from integer to string',
      'GET /pets: response body property "[].categoryId" type changed from integer to string (response 200)',
      'POST /pets: response body property "categoryId" type changed from integer to string (response 201)',
      'GET /pets/{petId}: response body property "categoryId" type changed from integer to string (response 200)',
    ],
  },
  {
    name: 'a format changed (int64 to int32 narrows the path parameter; responses only narrow)',
    edits: () => [change([...SCHEMAS, 'Id', 'format'], 'int64', 'int32')],
    expected: ['GET /pets/{petId}: path parameter "petId" format changed from "int64" to "int32"'],
  },
  {
    name: 'an enum narrowed (PetStatus: the status filter and the request body; responses only narrow)',
    edits: () => [change([...SCHEMAS, 'PetStatus', 'enum'], ['available', 'pending', 'sold'], ['available', 'pending'])],
    expected: ['GET /pets: query parameter "status" enum value "sold" removed', 'POST /pets: request body property "status" enum value "sold" removed'],
  },
  {
    name: 'an enum widened in responses (a new ErrorCode an old client cannot know)',
    edits: () => [append([...SCHEMAS, 'ErrorCode', 'enum'], 'rate_limited')],
    expected: startsWithEach([
      'GET /pets: response body property "code" enum value "rate_limited" added (responses 400, ',
      'POST /pets: response body property "code" enum value "rate_limited" added (responses 400, ',
      'GET /pets/{petId}: response body property "code" enum value "rate_limited" added (responses 400, ',
    ]),
  },
  {
    name: 'a maximum lowered',
    edits: () => [change([...PARAMETERS, 'Limit', 'schema', 'maximum'], 100, 50)],
    expected: ['GET /pets: query parameter "limit" maximum lowered from 100 to 50'],
  },
  {
    name: 'a minimum raised',
    edits: () => [change([...SCHEMAS, 'CategoryId', 'minimum'], 1, 10)],
    expected: ['POST /pets: request body property "categoryId" minimum raised from 1 to 10'],
  },
  {
    name: 'a maxLength lowered',
    edits: () => [change([...SCHEMAS, 'PetName', 'maxLength'], 255, 100)],
    expected: ['POST /pets: request body property "name" maxLength lowered from 255 to 100'],
  },
  {
    name: 'a minLength raised',
    edits: () => [change([...SCHEMAS, 'PetName', 'minLength'], 1, 2)],
    expected: ['POST /pets: request body property "name" minLength raised from 1 to 2'],
  },
  {
    name: 'a pattern changed',
    edits: () => [change(CURSOR_PATTERN, '^[A-Za-z0-9_.-]+$', '^[A-Za-z0-9]+$')],
    expected: ["GET /pets: query parameter \"cursor\" pattern changed from '^[A-Za-z0-9_.-]+$' to '^[A-Za-z0-9]+$'"],
  },
  {
    name: 'a pattern added (the old contract had none)',
    reversed: true,
    edits: () => [remove(CURSOR_PATTERN, '^[A-Za-z0-9_.-]+$')],
    expected: ["GET /pets: query parameter \"cursor\" pattern '^[A-Za-z0-9_.-]+$' added"],
  },
  {
    name: 'a response status removed',
    edits: () => [remove([...GET_PET, 'responses', '404'], { $ref: '#/components/responses/NotFound' })],
    expected: ['GET /pets/{petId}: response 404 removed'],
  },
  {
    name: 'a request body newly required (the old contract had it optional)',
    reversed: true,
    edits: () => [change([...CREATE_PET, 'requestBody', 'required'], true, false)],
    expected: ['POST /pets: request body is now required'],
  },
  {
    name: 'a required request body added (the old contract had none)',
    reversed: true,
    edits: () => [remove([...CREATE_PET, 'requestBody'])],
    expected: ['POST /pets: request body added as required'],
  },
  {
    name: 'a response header no longer always sent (the old contract had Link required)',
    reversed: true,
    edits: () => [change([...LIST_PETS, 'responses', '200', 'headers', 'Link', 'required'], false, true)],
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

/** A response status getPet does not declare yet, for a case that adds one. */
const undeclaredStatus = (doc: Document) => ['403', '409', '422', '429', '451'].find((s) => !doc.hasIn([...GET_PET, 'responses', s]));

const PASSES: Case[] = [
  { name: 'the unmodified spec, as YAML', yaml: true, edits: () => [], expected: [] },
  {
    name: 'an optional request property added',
    edits: () => [add([...SCHEMAS, 'NewPet', 'properties', NEW_REQUEST_PROPERTY], { type: 'string', maxLength: 50 })],
    expected: [],
  },
  {
    name: 'an optional response property added',
    edits: () => [add([...SCHEMAS, 'Pet', 'properties', NEW_RESPONSE_PROPERTY], { type: 'string' })],
    expected: [],
  },
  {
    name: 'an operation added',
    edits: () => [
      add(['paths', `/${NEW_OPERATION}/{petId}`], {
        delete: {
          operationId: NEW_OPERATION,
          summary: 'Delete an animal',
          parameters: [{ $ref: '#/components/parameters/PetId' }],
          responses: {
            '204': { description: 'Deleted.' },
            '401': { $ref: '#/components/responses/Unauthorized' },
            default: { $ref: '#/components/responses/UnexpectedError' },
          },
        },
      }),
    ],
    expected: [],
  },
  {
    name: 'a request widened: an optional parameter added, a maximum raised, a status added',
    edits: () => [
      append([...LIST_PETS, 'parameters'], { name: NEW_OPTIONAL_PARAMETER, in: 'query', schema: { type: 'string', maxLength: 50 } }),
      change([...PARAMETERS, 'Limit', 'schema', 'maximum'], 100, 200),
      (doc) => add([...GET_PET, 'responses', undeclaredStatus(doc) ?? 'none free'], { $ref: '#/components/responses/Unauthorized' })(doc),
    ],
    expected: [],
  },
  {
    name: 'a response narrowed: an enum value removed, a maxLength added (clients get fewer values)',
    edits: () => [
      removeItem([...SCHEMAS, 'ErrorDetail', 'properties', 'in', 'enum'], 'header'),
      add([...SCHEMAS, 'ErrorDetail', 'properties', 'message', 'maxLength'], 500),
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
