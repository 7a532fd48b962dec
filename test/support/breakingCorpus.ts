/**
 * The cases of the breaking-change gate (test/tools/breaking.test.ts): what breaks a client, what does
 * not, and what the sunset calendar lets go, each as edits to test/fixtures/spec/openapi.yaml, a
 * frozen copy of the spec (its README says why), with the BREAKING lines the gate must print.
 * Each edit first checks the value it replaces or removes, so an edited fixture cannot make a case
 * silently test nothing; what a case adds has a generated name; and an edit reaches its node by
 * its path. The expected lines name every operation a change reaches, so on the real spec every
 * new operation (or a field beside a changed one) would change them. The same corpus measures
 * `redocly diff` (test/tools/breaking.test.ts too).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';
import { isNode, isSeq, parseDocument, type Document } from 'yaml';
import { projectRoot } from './projectCopy.js';

export const FROZEN = join('test', 'fixtures', 'spec', 'openapi.yaml');
const original = readFileSync(join(projectRoot, FROZEN), 'utf8');

/**
 * One change to the parsed spec. Each edit checks what it changes first (the value it replaces,
 * the node it removes, the absence of what it adds), so a reworded spec cannot make a case
 * silently test nothing, while an unrelated addition to the spec (a new field, operation or
 * parameter) leaves every case as it was.
 */
export type Edit = (doc: Document) => void;
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
    if (!isDeepStrictEqual(now, from)) throw new Error(`${FROZEN}: ${where(path)} is ${JSON.stringify(now)}, this case expects ${JSON.stringify(from)}`);
    doc.setIn(path, doc.createNode(to));
  };

/** `path` must exist (and hold `value`, when given); it is removed. */
export const remove =
  (path: Path, ...value: [unknown?]): Edit =>
  (doc) => {
    if (!doc.hasIn(path)) throw new Error(`${FROZEN} has no ${where(path)}`);
    const now = plain(doc, path);
    if (value.length > 0 && !isDeepStrictEqual(now, value[0])) throw new Error(`${FROZEN}: ${where(path)} is ${JSON.stringify(now)}, this case expects ${JSON.stringify(value[0])}`);
    doc.deleteIn(path);
  };

/** `path` must not exist; it is added with `value`. */
const add =
  (path: Path, value: unknown): Edit =>
  (doc) => {
    if (doc.hasIn(path)) throw new Error(`${FROZEN} already has ${where(path)}`);
    doc.setIn(path, doc.createNode(value));
  };

/** The list at `path` must hold exactly one item equal to `item`; it is removed. */
const removeItem =
  (path: Path, item: unknown): Edit =>
  (doc) => {
    const list = plain(doc, path);
    const found = Array.isArray(list) ? list.flatMap((x, i) => (isDeepStrictEqual(x, item) ? [i] : [])) : [];
    if (found.length !== 1) throw new Error(`${FROZEN}: ${where(path)} holds ${JSON.stringify(item)} ${found.length} times, expected once`);
    doc.deleteIn([...path, found[0] as number]);
  };

/** The list at `path` gets `item` at its end. */
export const append =
  (path: Path, item: unknown): Edit =>
  (doc) => {
    const list = doc.getIn(path);
    if (!isSeq(list)) throw new Error(`${FROZEN}: ${where(path)} is not a list`);
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
export function removeEmptyPath(doc: Document, path: string): void {
  const item = plain(doc, ['paths', path]) as Record<string, unknown> | undefined;
  if (item && !Object.keys(item).some((k) => HTTP_METHODS.includes(k))) doc.deleteIn(['paths', path]);
}

export function mutate(edits: readonly Edit[]): string {
  const doc = parseDocument(original);
  if (doc.errors.length > 0) throw new Error(`${FROZEN} does not parse: ${doc.errors.map((e) => e.message).join('; ')}`);
  for (const edit of edits) edit(doc);
  // These options write the unmodified spec back byte for byte.
  return doc.toString({ flowCollectionPadding: false, lineWidth: 0 });
}

/**
 * Names that no spec will have: what a case adds is new whatever the spec gains later (a
 * property, a parameter, an operation named plainly would collide one day). The same on every run,
 * so the corpus is the same contracts every time (breaking.test.ts's REDOCLY_DIFF_JUDGED rests on it).
 */
const unique = (prefix: string) => `${prefix}${createHash('sha256').update(prefix).digest('hex').slice(0, 8)}`;
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
export const GET_PET = ['paths', '/pets/{petId}', 'get'] as const;

const NEWPET_STATUS = {
  description: 'Availability of the new animal; `available` when omitted.',
  default: 'available',
  allOf: [{ $ref: '#/components/schemas/PetStatus' }],
};
const REMOVE_NEWPET_STATUS = remove([...SCHEMAS, 'NewPet', 'properties', 'status'], NEWPET_STATUS);
const REQUIRE_LIMIT = change([...PARAMETERS, 'Limit', 'required'], false, true);
const NARROW_STATUS_FILTER = change([...PARAMETERS, 'StatusFilter', 'schema'], { $ref: '#/components/schemas/PetStatus' }, { type: 'string', enum: ['available', 'pending'] });
const CURSOR_PATTERN = [...PARAMETERS, 'Cursor', 'schema', 'pattern'] as const;
export const ERROR_CODES = [...SCHEMAS, 'ErrorCode'] as const;
// The spec marks ErrorCode extensible since 1.1.0; the cases about a closed enum take the mark away.
const UNMARK_ERROR_CODES = remove([...ERROR_CODES, 'x-extensible-enum'], true);
const ERROR_STATUS_MAXIMUM = [...SCHEMAS, 'Error', 'properties', 'status', 'maximum'] as const;
// getPet is deprecated with x-sunset 2030-12-05T00:00:00Z: the calendar cases are the days around it.
export const REMOVE_GET_PET: Edit[] = [remove(GET_PET), (doc) => removeEmptyPath(doc, '/pets/{petId}')];
export const SUNSET_LINE = 'removed after its sunset (2030-12-05): getPet GET /pets/{petId}';
const IF_NONE_MATCH_MAX_LENGTH = [...PARAMETERS, 'IfNoneMatch', 'schema', 'maxLength'] as const;
/** The If-None-Match narrowing as the gate words a change inside a shared component, and as a waiver names it. */
export const IF_NONE_MATCH_NARROWED = 'components.parameters.IfNoneMatch: schema.maxLength changed (16384 → 8192)';

export interface Case {
  name: string;
  edits: () => readonly Edit[];
  /** The released contract to compare with: the spec with these edits (default: unmodified). */
  against?: () => readonly Edit[];
  /** The gate compares the unmodified spec against the mutated one: the mutation is the old contract. */
  reversed?: boolean;
  /** Exactly these BREAKING lines (without the prefix), in any order; or a check of its own. */
  expected: string[] | ((lines: string[]) => void);
  /** CONTRACT_DATE for the run (default: unset, today). */
  date?: string;
  /** More to check in the output. */
  output?: (result: { stdout: string; stderr: string }) => void;
  /**
   * Where `redocly diff` (diff-recommended) judges the case otherwise than the gate: it finds no
   * break where there is one, or one where there is none. The verdicts docs/contract.md records.
   */
  redocly?: 'misses' | 'over-reports';
}

/** Each response line carries the statuses it concerns; the error statuses vary with the spec. */
const startsWithEach = (prefixes: string[]) => (lines: string[]) => {
  expect(lines).toHaveLength(prefixes.length);
  for (const prefix of prefixes) expect(lines.some((l) => l.startsWith(prefix)), `a line starting with ${prefix}\nin ${lines.join('\n')}`).toBe(true);
};

export const BREAKS: Case[] = [
  {
    name: 'an operation removed the day before its sunset (getPet, CONTRACT_DATE=2030-12-04)',
    date: '2030-12-04',
    edits: () => REMOVE_GET_PET,
    expected: ['GET /pets/{petId}: [Removed] operation GET /pets/{petId}'],
    output: ({ stdout, stderr }) => {
      expect(stdout).not.toContain('removed after its sunset');
      expect(stderr).toContain('getPet (GET /pets/{petId}) is deprecated: removing it is no break from 2030-12-05 on (its sunset is 2030-12-05T00:00:00Z; this run judged 2030-12-04).');
    },
  },
  {
    name: 'an operation removed after its sunset and a request property removed, in one spec (CONTRACT_DATE=2030-12-06): the property still breaks',
    date: '2030-12-06',
    edits: () => [...REMOVE_GET_PET, REMOVE_NEWPET_STATUS],
    expected: ['POST /pets: [Removed] property `status` in Request Body content (application/json)'],
    output: ({ stdout }) => expect(stdout).toContain(SUNSET_LINE),
  },
  {
    name: 'an operation removed after a sunset the released contract did not set (CONTRACT_DATE=2030-12-06)',
    date: '2030-12-06',
    against: () => ['deprecated', 'x-deprecated-at', 'x-sunset', 'x-replacement'].map((key) => remove([...GET_PET, key])),
    edits: () => REMOVE_GET_PET,
    expected: ['GET /pets/{petId}: [Removed] operation GET /pets/{petId}'],
    output: ({ stdout }) => expect(stdout).not.toContain('removed after its sunset'),
  },
  {
    name: 'an operation moved to another path before its sunset',
    date: '2030-12-04',
    edits: () => [moveOperation(['/pets/{petId}', 'get'], ['/animals/{petId}', 'get'])],
    expected: ['GET /pets/{petId}: [Removed] operation GET /pets/{petId}'],
  },
  {
    name: 'an operation moved to another method',
    edits: () => [moveOperation(['/pets', 'post'], ['/pets', 'put'])],
    expected: ['POST /pets: [Removed] operation POST /pets'],
  },
  {
    name: 'an operationId renamed',
    edits: () => [change([...LIST_PETS, 'operationId'], 'listPets', 'listAnimals')],
    expected: ['GET /pets: operationId changed ("listPets" → "listAnimals")'],
  },
  {
    // api-smart-diff calls every parameter that declares `required` (even false) "required".
    name: 'a parameter removed',
    edits: () => [removeItem([...LIST_PETS, 'parameters'], { $ref: '#/components/parameters/Cursor' })],
    expected: ['GET /pets: [Removed] required query parameter `cursor`'],
  },
  {
    name: 'a parameter renamed',
    edits: () => [change([...PARAMETERS, 'Limit', 'name'], 'limit', 'pageSize')],
    expected: ['GET /pets: [Removed] required query parameter `limit`'],
  },
  {
    name: 'a request property removed',
    edits: () => [REMOVE_NEWPET_STATUS],
    expected: ['POST /pets: [Removed] property `status` in Request Body content (application/json)'],
  },
  {
    name: 'a required response property removed',
    edits: () => [removeItem([...SCHEMAS, 'Pet', 'required'], 'status'), remove([...SCHEMAS, 'Pet', 'properties', 'status'], { $ref: '#/components/schemas/PetStatus' })],
    expected: [
      'GET /pets: [Removed] required status from `[].status` in Response 200 content (application/json) ("status")',
      'GET /pets: [Removed] property `status` from `[]` in Response 200 content (application/json)',
      'POST /pets: [Removed] required status from `status` in Response 201 content (application/json) ("status")',
      'POST /pets: [Removed] property `status` in Response 201 content (application/json)',
      'GET /pets/{petId}: [Removed] required status from `status` in Response 200 content (application/json) ("status")',
      'GET /pets/{petId}: [Removed] property `status` in Response 200 content (application/json)',
    ],
  },
  {
    name: 'an optional response property removed',
    edits: () => [remove([...SCHEMAS, 'Error', 'properties', 'details'])],
    expected: startsWithEach([
      'GET /pets: [Removed] property `details` in Response 400, 401, ',
      'POST /pets: [Removed] property `details` in Response 400, 401, ',
      'GET /pets/{petId}: [Removed] property `details` in Response 400, 401, ',
    ]),
  },
  {
    name: 'a response property no longer required',
    edits: () => [removeItem([...SCHEMAS, 'Pet', 'required'], 'status')],
    expected: [
      'GET /pets: [Removed] required status from `[].status` in Response 200 content (application/json) ("status")',
      'POST /pets: [Removed] required status from `status` in Response 201 content (application/json) ("status")',
      'GET /pets/{petId}: [Removed] required status from `status` in Response 200 content (application/json) ("status")',
    ],
  },
  {
    name: 'a request property newly required (one with a default)',
    edits: () => [append([...SCHEMAS, 'NewPet', 'required'], 'status')],
    expected: ['POST /pets: [Added] required status to `status` in Request Body content (application/json) ("status")'],
  },
  {
    name: 'a required request property added',
    edits: () => [add([...SCHEMAS, 'NewPet', 'properties', NEW_REQUEST_PROPERTY], { type: 'string' }), append([...SCHEMAS, 'NewPet', 'required'], NEW_REQUEST_PROPERTY)],
    expected: [`POST /pets: [Added] required status to \`${NEW_REQUEST_PROPERTY}\` in Request Body content (application/json) ("${NEW_REQUEST_PROPERTY}")`],
  },
  {
    name: 'a parameter newly required',
    edits: () => [REQUIRE_LIMIT],
    expected: ['GET /pets: [Added] required status to required query parameter `limit` (true)'],
  },
  {
    name: 'a required parameter added',
    edits: () => [append([...LIST_PETS, 'parameters'], { name: NEW_REQUIRED_PARAMETER, in: 'query', required: true, schema: { type: 'string' } })],
    expected: [`GET /pets: [Added] required query parameter \`${NEW_REQUIRED_PARAMETER}\``],
  },
  {
    name: 'the type of a parameter changed',
    edits: () => [change([...PARAMETERS, 'Limit', 'schema', 'type'], 'integer', 'string')],
    expected: ['GET /pets: [Replaced] type definition in query parameter `limit` ("integer" → "string")'],
  },
  {
    name: 'the type of a body property changed (request and responses; its bounds are not repeated)',
    edits: () => [change([...SCHEMAS, 'CategoryId', 'type'], 'integer', 'string')],
    expected: [
      'POST /pets: [Replaced] type definition of `categoryId` in Request Body content (application/json) ("integer" → "string")',
      'GET /pets: [Replaced] type definition of `[].categoryId` in Response 200 content (application/json) ("integer" → "string")',
      'POST /pets: [Replaced] type definition of `categoryId` in Response 201 content (application/json) ("integer" → "string")',
      'GET /pets/{petId}: [Replaced] type definition of `categoryId` in Response 200 content (application/json) ("integer" → "string")',
    ],
  },
  {
    name: 'the type of a response property changed',
    edits: () => [change([...SCHEMAS, 'Error', 'properties', 'message', 'type'], 'string', 'object')],
    expected: startsWithEach([
      'GET /pets: [Replaced] type definition of `message` in Response 400, 401, ',
      'POST /pets: [Replaced] type definition of `message` in Response 400, 401, ',
      'GET /pets/{petId}: [Replaced] type definition of `message` in Response 400, 401, ',
    ]),
  },
  {
    name: 'a format changed (int64 to int32 narrows the path parameter; responses only narrow)',
    edits: () => [change([...SCHEMAS, 'Id', 'format'], 'int64', 'int32')],
    expected: ['GET /pets/{petId}: [Replaced] value format in path parameter `petId` ("int64" → "int32")'],
  },
  {
    // The tool describes a value removed from an enum as "[Replaced] possible values".
    name: 'an enum narrowed (PetStatus: the status filter and the request body; responses only narrow)',
    edits: () => [change([...SCHEMAS, 'PetStatus', 'enum'], ['available', 'pending', 'sold'], ['available', 'pending'])],
    expected: [
      'GET /pets: [Replaced] possible values in query parameter `status` ("sold")',
      'POST /pets: [Replaced] possible values of `status` in Request Body content (application/json) ("sold")',
    ],
    // NewPet's `status` is `allOf: [$ref PetStatus]`, the filter's schema PetStatus itself: one component.
    output: ({ stderr }) => expect(stderr).toContain('\n  components.schemas.PetStatus: enum.2 removed ("sold") (in GET /pets, POST /pets)\n'),
  },
  {
    name: 'an enum widened in responses (a new ErrorCode an old client cannot know)',
    against: () => [UNMARK_ERROR_CODES],
    edits: () => [UNMARK_ERROR_CODES, append([...ERROR_CODES, 'enum'], 'rate_limited')],
    expected: startsWithEach([
      'GET /pets: [Replaced] possible values of `code` in Response 400, 401, ',
      'POST /pets: [Replaced] possible values of `code` in Response 400, 401, ',
      'GET /pets/{petId}: [Replaced] possible values of `code` in Response 400, 401, ',
    ]),
  },
  {
    name: 'an enum widened in responses and marked x-extensible-enum in the same change (the released contract did not say so)',
    against: () => [UNMARK_ERROR_CODES],
    edits: () => [append([...ERROR_CODES, 'enum'], 'rate_limited')],
    expected: startsWithEach([
      'GET /pets: [Replaced] possible values of `code` in Response 400, 401, ',
      'POST /pets: [Replaced] possible values of `code` in Response 400, 401, ',
      'GET /pets/{petId}: [Replaced] possible values of `code` in Response 400, 401, ',
    ]),
  },
  {
    name: 'a maximum lowered',
    edits: () => [change([...PARAMETERS, 'Limit', 'schema', 'maximum'], 100, 50)],
    expected: ['GET /pets: [Replaced] maximum validator in query parameter `limit` (100 → 50)'],
  },
  {
    name: 'a minimum raised',
    edits: () => [change([...SCHEMAS, 'CategoryId', 'minimum'], 1, 10)],
    expected: ['POST /pets: [Replaced] minimum validator of `categoryId` in Request Body content (application/json) (1 → 10)'],
  },
  {
    name: 'a maxLength lowered (PetName, shared: createPet sends it, the responses only narrow)',
    edits: () => [change([...SCHEMAS, 'PetName', 'maxLength'], 255, 100)],
    expected: ['POST /pets: [Replaced] maxLength validator of `name` in Request Body content (application/json) (255 → 100)'],
    output: ({ stderr }) => expect(stderr).toContain('\n  components.schemas.PetName: maxLength changed (255 → 100) (in POST /pets)\n'),
  },
  {
    name: 'a minLength raised',
    edits: () => [change([...SCHEMAS, 'PetName', 'minLength'], 1, 2)],
    expected: ['POST /pets: [Replaced] minLength validator of `name` in Request Body content (application/json) (1 → 2)'],
  },
  {
    name: 'a response maximum raised (a client may get a value it never saw)',
    edits: () => [change(ERROR_STATUS_MAXIMUM, 599, 999)],
    expected: startsWithEach([
      'GET /pets: [Replaced] maximum validator of `status` in Response 400, 401, ',
      'POST /pets: [Replaced] maximum validator of `status` in Response 400, 401, ',
      'GET /pets/{petId}: [Replaced] maximum validator of `status` in Response 400, 401, ',
    ]),
  },
  {
    name: 'a pattern changed',
    edits: () => [change(CURSOR_PATTERN, '^[A-Za-z0-9_.-]+$', '^[A-Za-z0-9]+$')],
    expected: ['GET /pets: [Replaced] pattern validator in query parameter `cursor` ("^[A-Za-z0-9_.-]+$" → "^[A-Za-z0-9]+$")'],
  },
  {
    name: 'a pattern added (the old contract had none)',
    reversed: true,
    edits: () => [remove(CURSOR_PATTERN, '^[A-Za-z0-9_.-]+$')],
    expected: ['GET /pets: [Added] pattern validator in query parameter `cursor` ("^[A-Za-z0-9_.-]+$")'],
  },
  {
    name: 'a request body closed to other properties (the old contract had no additionalProperties: false)',
    reversed: true,
    edits: () => [remove([...SCHEMAS, 'NewPet', 'additionalProperties'], false)],
    expected: ['POST /pets: [Added] schema for additional properties to `{.*}` in Request Body content (application/json) (false)'],
  },
  {
    name: 'a response status removed',
    edits: () => [remove([...GET_PET, 'responses', '404'], { $ref: '#/components/responses/NotFound' })],
    expected: ['GET /pets/{petId}: [Removed] Response 404'],
  },
  {
    name: 'a request body newly required (the old contract had it optional)',
    reversed: true,
    edits: () => [change([...CREATE_PET, 'requestBody', 'required'], true, false)],
    expected: ['POST /pets: [Replaced] required status of Request Body (false → true)'],
  },
  {
    // redocly diff: request-body-became-required judges only a body that was optional before.
    redocly: 'misses',
    name: 'a required request body added (the old contract had none)',
    reversed: true,
    edits: () => [remove([...CREATE_PET, 'requestBody'])],
    expected: ['POST /pets: [Added] Request Body'],
  },
  {
    name: 'a response header removed',
    edits: () => [remove([...CREATE_PET, 'responses', '201', 'headers', 'Location'], { $ref: '#/components/headers/Location' })],
    expected: ['POST /pets: responses.201.headers.Location removed'],
  },
  {
    // redocly diff: a header's `required` in a response is no rule of its.
    redocly: 'misses',
    name: 'a response header no longer always sent (the old contract had Link required)',
    reversed: true,
    edits: () => [change([...LIST_PETS, 'responses', '200', 'headers', 'Link', 'required'], false, true)],
    expected: ['GET /pets: responses.200.headers.Link.required changed (true → false)'],
  },
  {
    // redocly diff: an operation's `security: []` removed, falling back to the document's, is no rule of its.
    redocly: 'misses',
    name: 'a public operation that now needs a key (the old contract had security: [])',
    reversed: true,
    edits: () => [add([...LIST_PETS, 'security'], [])],
    expected: ['GET /pets: security removed'],
  },
  {
    // A shared component is judged in each operation that uses it, never in one of them alone, and
    // named once in the words a waiver can use for all of them (retiring one user changes nothing
    // for the others: the cases on the real spec at the end).
    name: 'a shared header parameter narrowed (If-None-Match, taken by listPets and getPet): a line for each operation, the component named once',
    edits: () => [change(IF_NONE_MATCH_MAX_LENGTH, 16384, 8192)],
    expected: ['GET /pets: [Replaced] maxLength validator in header parameter `If-None-Match` (16384 → 8192)', 'GET /pets/{petId}: [Replaced] maxLength validator in header parameter `If-None-Match` (16384 → 8192)'],
    output: ({ stderr }) => expect(stderr).toContain(`\n  ${IF_NONE_MATCH_NARROWED} (in GET /pets, GET /pets/{petId})\n`),
  },
  {
    name: 'a removed property + a newly required parameter + a narrowed enum, in one spec: three lines',
    edits: () => [REMOVE_NEWPET_STATUS, REQUIRE_LIMIT, NARROW_STATUS_FILTER],
    expected: [
      'POST /pets: [Removed] property `status` in Request Body content (application/json)',
      'GET /pets: [Added] required status to required query parameter `limit` (true)',
      'GET /pets: [Replaced] possible values in query parameter `status` ("sold")',
    ],
  },
];

/** A response status getPet does not declare yet, for a case that adds one. */
const undeclaredStatus = (doc: Document) => ['403', '409', '422', '429', '451'].find((s) => !doc.hasIn([...GET_PET, 'responses', s]));

export const PASSES: Case[] = [
  { name: 'the unmodified spec', edits: () => [], expected: [] },
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
    name: 'an optional query parameter added',
    edits: () => [append([...LIST_PETS, 'parameters'], { name: NEW_OPTIONAL_PARAMETER, in: 'query', schema: { type: 'string', maxLength: 50 } })],
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
    name: 'a request widened: an optional parameter added, a maximum raised, a property no longer required, a status added',
    edits: () => [
      append([...LIST_PETS, 'parameters'], { name: NEW_OPTIONAL_PARAMETER, in: 'query', schema: { type: 'string', maxLength: 50 } }),
      change([...PARAMETERS, 'Limit', 'schema', 'maximum'], 100, 200),
      removeItem([...SCHEMAS, 'NewPet', 'required'], 'categoryId'),
      (doc) => add([...GET_PET, 'responses', undeclaredStatus(doc) ?? 'none free'], { $ref: '#/components/responses/Unauthorized' })(doc),
    ],
    expected: [],
  },
  {
    name: 'a response narrowed: an enum value removed, a maxLength added, a maximum lowered (clients get fewer values)',
    edits: () => [
      removeItem([...SCHEMAS, 'ErrorDetail', 'properties', 'in', 'enum'], 'header'),
      add([...SCHEMAS, 'ErrorDetail', 'properties', 'message', 'maxLength'], 500),
      change(ERROR_STATUS_MAXIMUM, 599, 550),
    ],
    expected: [],
  },
  {
    // redocly diff: enum-values-added knows no `x-extensible-enum`.
    redocly: 'over-reports',
    name: 'a new value in a response enum the released contract marks x-extensible-enum',
    edits: () => [append([...ERROR_CODES, 'enum'], 'rate_limited')],
    expected: [],
  },
  {
    // redocly diff: schema-constraint-changed takes any other format for a change both ways.
    redocly: 'over-reports',
    name: 'a format narrowed in a response only (Pet.id int64 to int32: clients get fewer values)',
    edits: () => [change([...SCHEMAS, 'Pet', 'properties', 'id'], { $ref: '#/components/schemas/Id' }, { type: 'integer', format: 'int32', minimum: 1, maximum: 9007199254740991 })],
    against: () => [change([...SCHEMAS, 'Pet', 'properties', 'id'], { $ref: '#/components/schemas/Id' }, { type: 'integer', format: 'int64', minimum: 1, maximum: 9007199254740991 })],
    expected: [],
  },
  {
    // redocly diff: schema-constraint-changed compares a pattern's text, not what it accepts.
    redocly: 'over-reports',
    name: 'a pattern rewritten to accept the same values (PetName: \\p{Cc}\\p{Cs} spelled as ranges, as in 1.2.0)',
    against: () => [change([...SCHEMAS, 'PetName', 'pattern'], '^[^\\x00-\\x1F\\x7F-\\x9F]*$', '^[^\\p{Cc}\\p{Cs}]*$')],
    edits: () => [],
    expected: [],
  },
  {
    name: 'a summary, a description and an example changed',
    edits: () => [change([...LIST_PETS, 'summary'], 'List animals', 'List the animals'), change([...PARAMETERS, 'Limit', 'description'], 'Maximum number of animals returned.', 'At most this many animals.'), change([...PARAMETERS, 'Limit', 'example'], 20, 10)],
    expected: [],
  },
];

/** A deprecated operation removed once its sunset has passed: no break, and said so. */
export const SUNSET_PASSES: Case[] = [
  { name: 'getPet removed on the day of its sunset (CONTRACT_DATE=2030-12-05: its x-sunset is 00:00 UTC that day)', date: '2030-12-05', edits: () => REMOVE_GET_PET, expected: [] },
  { name: 'getPet removed after its sunset (CONTRACT_DATE=2030-12-06)', date: '2030-12-06', edits: () => REMOVE_GET_PET, expected: [] },
];

