/**
 * The lint gate bites: each custom rule of redocly.yaml (and the example check) reports a problem
 * when the spec breaks it, and the spec as committed has none. The `animal-store/*` rules
 * (spec/lint/rules.js) refuse what the server cannot parse, validate or serve, and name the
 * operation concerned; what it does support lints clean.
 *
 * Each case applies one string replacement to test/fixtures/spec/openapi.yaml, a frozen copy of
 * the spec (its README says why), writes the result to a temporary folder, and runs `redocly lint
 * --format=json` with the project's redocly.yaml. The replacement must match exactly once, so an
 * edited fixture cannot make a case silently test nothing; the real spec can gain fields and
 * operations without moving any case's anchor.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

const root = fileURLToPath(new URL('../..', import.meta.url));
const redocly = join(root, 'node_modules', '.bin', 'redocly');
const config = join(root, 'redocly.yaml');
const FROZEN = join('test', 'fixtures', 'spec', 'openapi.yaml');
const original = readFileSync(join(root, FROZEN), 'utf8');
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

/** Replaces `from` with `to`; `from` must occur exactly once in the frozen spec. */
function mutate(from: string, to: string): string {
  const count = original.split(from).length - 1;
  if (count !== 1) throw new Error(`The mutation's anchor occurs ${count} times in ${FROZEN}, expected once:\n${from}`);
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

const at = (p: Problem) => `${p.ruleId} at ${p.location[0]?.pointer ?? '?'}`;

/**
 * What the frozen copy breaks of the rules added since it was frozen, left as it is: its
 * If-None-Match allows 16384 characters (1.1.0's; 1.2.0 halved it with a waiver), and the
 * breaking-change tests compare this copy with released 1.1.0, where a change of it is a break.
 * The cases below judge everything else; case f says this one is reported.
 */
const FROZEN_KNOWN = ['animal-store/header-parameter-length at #/components/parameters/IfNoneMatch'];

const summary = (problems: Problem[]) => problems.map(at).filter((line) => !FROZEN_KNOWN.includes(line));


/** getPet's 404 (the shared NotFound) as the frozen spec writes it: our Error. */
const NOT_FOUND_AS_ERROR = [
        '    NotFound:',
        '      description: The requested animal could not be found.',
        '      headers:',
        '        RateLimit:',
        "          $ref: '#/components/headers/RateLimit'",
        '        RateLimit-Policy:',
        "          $ref: '#/components/headers/RateLimit-Policy'",
        '      content:',
        '        application/json:',
        '          schema:',
        "            $ref: '#/components/schemas/Error'",
        '          examples:',
        '            notFound:',
        '              summary: No such animal',
        '              value:',
        '                code: not_found',
        '                message: No animal has id 42.',
        '                status: 404',
        '',
      ].join('\n');
/** The same response as RFC 9457 Problem Details; `errors`: a member it requires and declares besides RFC 9457's. */
function notFoundAsProblem(errors = false): string {
  const lines = [
    '    NotFound:',
    '      description: The requested animal could not be found.',
    '      headers:',
    '        RateLimit:',
    "          $ref: '#/components/headers/RateLimit'",
    '        RateLimit-Policy:',
    "          $ref: '#/components/headers/RateLimit-Policy'",
    '      content:',
    '        application/problem+json:',
    '          schema:',
    '            type: object',
    '            description: RFC 9457 Problem Details.',
    '            required: [type, title, status]',
    '            properties:',
    '              type:',
    '                type: string',
    '                maxLength: 200',
    '                format: uri-reference',
    '              title:',
    '                type: string',
    '                maxLength: 100',
    '                pattern: "^[^\\x00-\\x1F]*$"',
    '              status:',
    '                type: integer',
    '                format: int32',
    '                minimum: 400',
    '                maximum: 599',
    '          example:',
    '            type: https://animal-store.example/problems/not_found',
    '            title: Not Found',
    '            status: 404',
    '',
  ];
  if (!errors) return lines.join('\n');
  const withErrors = lines.map((line) => (line.includes('required: [type, title, status]') ? line.replace('status]', 'status, errors]') : line));
  const at = withErrors.indexOf('          example:');
  withErrors.splice(at, 0, '              errors:', '                type: array', '                maxItems: 10', '                items:', '                  type: string', '                  maxLength: 100', '                  pattern: "^[^\\x00-\\x1F]*$"');
  withErrors.splice(withErrors.length - 1, 0, '            errors: []');
  return withErrors.join('\n');
}

describe('redocly.yaml rules', () => {
  it('f. the unmodified frozen spec passes with zero problems but its known one (the cases below start from nothing to report)', async () => {
    const problems = await lint(original);
    expect(problems.map(at)).toEqual(FROZEN_KNOWN);
    // The header rule: the parameter, the operations, the bound and why.
    expect(problems[0]?.message).toContain('listPets, getPet: header parameter `If-None-Match` has maxLength 16384: declare `maxLength: 8192` or less');
  });

  it('f2. spec/openapi.yaml as it is now passes with zero problems', async () => {
    expect(summary(await lint(readFileSync(join(root, 'spec', 'openapi.yaml'), 'utf8')))).toEqual([]);
  });

  /** `names`: what the message must mention (the operation, the parameter or the scheme). */
  const CASES: { name: string; rule: string; pointer: string; from: string; to: string; names?: string[] }[] = [
    {
      name: 'a. x-stability: alpha on an operation',
      rule: 'rule/stability-values',
      pointer: '#/paths/~1pets/get/x-stability',
      from: '      operationId: listPets\n',
      to: '      operationId: listPets\n      x-stability: alpha\n',
    },
    {
      name: 'b. a lower-case summary with a final period',
      rule: 'animal-store/summary-sentence-case',
      pointer: '#/paths/~1pets/get/summary',
      from: '      summary: List animals\n',
      to: '      summary: list animals.\n',
      names: ["listPets summary 'list animals.'", 'starts with "l", not a capital letter', 'it ends with a period', "Write 'List animals'"],
    },
    {
      // The period was blamed when the cause was a capitalised word: the message names the word.
      name: 'b2. a summary with a capitalised word after the first',
      rule: 'animal-store/summary-sentence-case',
      pointer: '#/paths/~1pets/post/summary',
      from: '      summary: Add an animal\n',
      to: '      summary: Add an animal by ID\n',
      names: ['createPet', "'ID' is capitalised after the first word", "Write 'Add an animal by id'"],
    },
    {
      name: 'b3. a shared error response without content (the 404 getPet uses)',
      rule: 'animal-store/error-response-body',
      pointer: '#/components/responses/NotFound',
      from: "          $ref: '#/components/headers/RateLimit-Policy'\n      content:\n        application/json:\n          schema:\n            $ref: '#/components/schemas/Error'\n          examples:\n            notFound:\n              summary: No such animal\n              value:\n                code: not_found\n                message: No animal has id 42.\n                status: 404\n",
      to: "          $ref: '#/components/headers/RateLimit-Policy'\n",
      names: ['getPet 404 has no Error body: declare content application/json with schema `$ref: \'#/components/schemas/Error\'`'],
    },
    {
      // Any operationId is served (`get-pet` by handlers/getPet.ts); two that give their handlers one name are not.
      name: 'b3b. listPets renamed get-pet, which names its handler as getPet does',
      rule: 'animal-store/operation-handler-name',
      pointer: '#/paths/~1pets~1{petId}/get/operationId',
      from: '      operationId: listPets\n',
      to: '      operationId: get-pet\n',
      names: ['`get-pet` and `getPet`', '`handlers/getPet.ts`', 'rename one'],
    },
    {
      name: 'b4. listPets without its 500',
      rule: 'animal-store/operation-500-response',
      pointer: '#/paths/~1pets/get/responses',
      from: "          $ref: '#/components/responses/TooManyRequests'\n        '500':\n          $ref: '#/components/responses/InternalError'\n        default:\n          $ref: '#/components/responses/UnexpectedError'\n    post:\n",
      to: "          $ref: '#/components/responses/TooManyRequests'\n        default:\n          $ref: '#/components/responses/UnexpectedError'\n    post:\n",
      names: ['listPets declares no 500 response', "add `'500':` with `$ref: '#/components/responses/InternalError'`"],
    },
    {
      name: 'b5. listPets without its default response',
      rule: 'animal-store/operation-default-response',
      pointer: '#/paths/~1pets/get/responses',
      from: "          $ref: '#/components/responses/InternalError'\n        default:\n          $ref: '#/components/responses/UnexpectedError'\n    post:\n",
      to: "          $ref: '#/components/responses/InternalError'\n    post:\n",
      names: ['listPets declares no default response', "add `default:` with `$ref: '#/components/responses/UnexpectedError'`"],
    },
    {
      name: 'b6. createPet deprecated without a 410',
      rule: 'animal-store/deprecated-operation-410',
      pointer: '#/paths/~1pets/post/responses',
      from: '      operationId: createPet\n',
      to: "      operationId: createPet\n      deprecated: true\n      x-deprecated-at: '2026-11-21T00:00:00Z'\n      x-sunset: '2030-12-05T00:00:00Z'\n      x-replacement: nothing\n",
      names: ['createPet is deprecated but declares no 410 response', "`$ref: '#/components/responses/OperationGone'`", 'GoneError'],
    },
    {
      name: 'b6b. getPet taking an Idempotency-Key without a 409 and a 422',
      rule: 'animal-store/idempotency-key-responses',
      pointer: '#/paths/~1pets~1{petId}/get/responses',
      from: "        - $ref: '#/components/parameters/PetId'\n        - $ref: '#/components/parameters/IfNoneMatch'\n",
      to: "        - $ref: '#/components/parameters/PetId'\n        - $ref: '#/components/parameters/IfNoneMatch'\n        - $ref: '#/components/parameters/IdempotencyKey'\n",
      names: ['getPet takes an Idempotency-Key but declares no 409 or 422 response', "`$ref: '#/components/responses/IdempotencyKeyInUse'`", "`$ref: '#/components/responses/IdempotencyKeyReused'`", 'exactly-once'],
    },
    {
      name: "b7. an ETag on createPet's 201, which the server never tags",
      rule: 'animal-store/server-headers',
      pointer: '#/paths/~1pets/post/responses/201/headers/ETag',
      from: "              $ref: '#/components/headers/Location'\n",
      to: "              $ref: '#/components/headers/Location'\n            ETag:\n              $ref: '#/components/headers/ETag'\n",
      names: ['createPet 201 declares the required header `ETag`', 'only on a 200 that declares it'],
    },
    {
      name: 'b8. limit without its maximum',
      rule: 'animal-store/integer-bounds',
      pointer: '#/components/parameters/Limit/schema',
      from: '        minimum: 1\n        maximum: 100\n        default: 20\n',
      to: '        minimum: 1\n        default: 20\n',
      names: ['`components.parameters.Limit`', 'no maximum', 'at most `maximum: 2147483647`'],
    },
    {
      name: "c. getPet deprecated without its x-sunset",
      rule: 'rule/deprecation-complete',
      pointer: '#/paths/~1pets~1{petId}/get',
      from: "      x-sunset: '2030-12-05T00:00:00Z'\n",
      to: '',
    },
    {
      name: 'd. listPets (secured by the root security) without its 401 response',
      rule: 'animal-store/operation-401-response',
      pointer: '#/paths/~1pets/get/responses',
      from: "        '401':\n          $ref: '#/components/responses/Unauthorized'\n        '429':\n",
      to: "        '429':\n",
      names: ['listPets', 'bearerApiKey'],
    },
    {
      name: 'd2. getPet (secured by the root security) without its 429 response',
      rule: 'animal-store/operation-429-response',
      pointer: '#/paths/~1pets~1{petId}/get/responses',
      from: "        '429':\n          $ref: '#/components/responses/TooManyRequests'\n        '500':\n          $ref: '#/components/responses/InternalError'\n        default:\n          $ref: '#/components/responses/UnexpectedError'\ncomponents:\n",
      to: "        '500':\n          $ref: '#/components/responses/InternalError'\n        default:\n          $ref: '#/components/responses/UnexpectedError'\ncomponents:\n",
      names: ['getPet', 'bearerApiKey', 'TooManyRequests'],
    },
    {
      name: 'e. a request example whose categoryId is "two"',
      rule: 'no-invalid-media-type-examples',
      pointer: '#/paths/~1pets/post/requestBody/content/application~1json/examples/minimal/value/categoryId',
      from: '                  categoryId: 2\n              withStatus:\n',
      to: '                  categoryId: two\n              withStatus:\n',
    },
    {
      name: 'g. a text/plain request body on createPet whose schema is an object (raw bytes need a binary string)',
      rule: 'animal-store/request-body-media-type',
      pointer: '#/paths/~1pets/post/requestBody/content/text~1plain',
      from: "        content:\n          application/json:\n            schema:\n              $ref: '#/components/schemas/NewPet'\n",
      to: "        content:\n          text/plain:\n            schema:\n              $ref: '#/components/schemas/NewPet'\n",
      names: ['createPet', 'text/plain', 'read as raw bytes', 'format: binary'],
    },
    {
      name: 'h. a text/plain 200 response on getPet whose schema is an object (XML and JSON are written from a value; any other type is bytes)',
      rule: 'animal-store/response-media-type',
      pointer: '#/paths/~1pets~1{petId}/get/responses/200/content/text~1plain',
      from: "            application/json:\n              schema:\n                $ref: '#/components/schemas/Pet'\n              examples:\n                found:\n",
      to: "            text/plain:\n              schema:\n                $ref: '#/components/schemas/Pet'\n              examples:\n                found:\n",
      names: ['getPet', 'text/plain'],
    },
    {
      name: 'i. an array path parameter (petId)',
      rule: 'animal-store/parameter-parseable',
      pointer: '#/components/parameters/PetId',
      from: "      schema:\n        $ref: '#/components/schemas/Id'\n      example: 1\n",
      to: "      schema:\n        type: array\n        maxItems: 3\n        items:\n          $ref: '#/components/schemas/Id'\n      example: [1]\n",
      names: ['getPet', '`petId`', 'array'],
    },
    {
      name: 'j. a query parameter (limit) with style matrix',
      rule: 'animal-store/parameter-parseable',
      pointer: '#/components/parameters/Limit',
      from: '      name: limit\n      in: query\n',
      to: '      name: limit\n      in: query\n      style: matrix\n',
      names: ['listPets', '`limit`', 'style matrix'],
    },
    {
      name: 'k. style deepObject on a string query parameter (status)',
      rule: 'animal-store/parameter-parseable',
      pointer: '#/components/parameters/StatusFilter',
      from: '      name: status\n      in: query\n',
      to: '      name: status\n      in: query\n      style: deepObject\n',
      names: ['listPets', '`status`', 'deepObject'],
    },
    {
      name: 'l. a query parameter (cursor) with text/plain content',
      rule: 'animal-store/parameter-parseable',
      pointer: '#/components/parameters/Cursor',
      from: "      schema:\n        type: string\n        minLength: 1\n        maxLength: 200\n        pattern: '^[A-Za-z0-9_.-]+$'\n      example: eyJhIjoyMH0.c2ln\n",
      to: "      content:\n        text/plain:\n          schema:\n            type: string\n            minLength: 1\n            maxLength: 200\n            pattern: '^[A-Za-z0-9_.-]+$'\n          example: eyJhIjoyMH0.c2ln\n",
      names: ['listPets', '`cursor`', 'text/plain'],
    },
    {
      name: 'm. an exploded query array without maxItems (qs makes an object of more than 20 values)',
      rule: 'animal-store/parameter-parseable',
      pointer: '#/paths/~1pets/get/parameters/3',
      from: "        - $ref: '#/components/parameters/Cursor'\n",
      to: [
        "        - $ref: '#/components/parameters/Cursor'",
        '        - name: tag',
        '          in: query',
        '          description: Keeps only animals with at least one of these tags.',
        '          schema:',
        '            type: array',
        '            items:',
        '              type: string',
        '              maxLength: 20',
        '          example: [friendly, small]',
        '',
      ].join('\n'),
      names: ['listPets', '`tag`', 'maxItems'],
    },
    {
      // http basic and an apiKey in a cookie are served (test/quick/authenticate.test.ts); a key in the query string is not.
      name: 'n. an API key in the query string',
      rule: 'animal-store/security-scheme-supported',
      pointer: '#/components/securitySchemes/bearerApiKey',
      from: '      type: http\n      scheme: bearer\n',
      to: '      type: apiKey\n      in: query\n      name: api_key\n',
      names: ['`bearerApiKey`', 'query string', 'header or a cookie', 'getPet'],
    },
    {
      name: 'n2. a Problem Details 404 whose schema requires a member the server never writes',
      rule: 'animal-store/error-response-body',
      pointer: '#/components/responses/NotFound',
      from: NOT_FOUND_AS_ERROR,
      to: notFoundAsProblem(true),
      names: ['getPet 404', '`errors`', 'which the server never writes'],
    },
    {
      // Redocly's own security-defined (recommended-strict) catches it; its pointer names the operation.
      name: "o. getPet's security naming a scheme that components.securitySchemes lacks",
      rule: 'security-defined',
      pointer: '#/paths/~1pets~1{petId}/get/security/0/missingScheme',
      from: '      x-replacement: GET /pets with the status filter\n',
      to: '      x-replacement: GET /pets with the status filter\n      security:\n        - missingScheme: []\n',
      names: ['`missingScheme`'],
    },
  ];

  it.each(CASES.map((c) => [`${c.name} is reported as ${c.rule}`, c] as const))('%s', async (_name, c) => {
    // A renamed operationId also draws camelCase's suggestion (a warning, below): not what is under test here.
    const problems = (await lint(mutate(c.from, c.to))).filter((p) => !FROZEN_KNOWN.includes(at(p)) && p.ruleId !== 'rule/operation-id-camel-case');
    // Exactly the rule under test fires, at the place that was broken.
    expect(summary(problems)).toEqual([`${c.rule} at ${c.pointer}`]);
    expect(problems[0]?.severity).toBe('error');
    for (const name of c.names ?? []) expect(problems[0]?.message).toContain(name);
  });

  it('an operationId in kebab case, as real APIs write them, is served (by a handler named listPetsExample): camelCase is only suggested, a warning', async () => {
    const problems = (await lint(mutate('      operationId: listPets\n', '      operationId: list-pets-example\n'))).filter((p) => !FROZEN_KNOWN.includes(at(p)));
    expect(problems.map((p) => `${at(p)} (${p.severity})`)).toEqual(['rule/operation-id-camel-case at #/paths/~1pets/get/operationId (warn)']);
  });

  /** A webhook (made up) declaring Standard Webhooks' `webhook-id` and `extra`, a header of its own, as an operation's parameters. */
  const webhookWithHeader = (extra: string[]) =>
    mutate('\ntags:\n', [
      '',
      'webhooks:',
      '  petAdoptedExample:',
      '    post:',
      '      operationId: petAdoptedExample',
      '      summary: An animal was adopted',
      '      parameters:',
      '        - name: webhook-id',
      '          in: header',
      '          required: true',
      '          schema:',
      '            type: string',
      '            maxLength: 100',
      ...extra,
      '      requestBody:',
      '        content:',
      '          application/json:',
      '            schema:',
      "              $ref: '#/components/schemas/PetName'",
      '            example: Rex',
      '      responses:',
      "        '204':",
      '          description: Received.',
      'tags:',
      '',
    ].join('\n'));
  const storeEventHeader = (required: boolean, value: string[]) => ['        - name: X-Example-Event', '          in: header', `          required: ${required}`, '          schema:', '            type: string', '            maxLength: 40', ...value];

  it("a webhook's required header whose schema fixes no value is a warning (webhook-header-value), naming the event and the header: every delivery would go without it", async () => {
    const problems = (await lint(webhookWithHeader(storeEventHeader(true, [])))).filter((p) => !FROZEN_KNOWN.includes(at(p)));
    expect(problems.map((p) => `${at(p)} (${p.severity})`)).toEqual(['animal-store/webhook-header-value at #/webhooks/petAdoptedExample/post/parameters/1/schema (warn)']);
    for (const name of ['`petAdoptedExample`', '`X-Example-Event`', '`const`', 'make it optional']) expect(problems[0]?.message).toContain(name);
  });

  it.each([
    ['a const', storeEventHeader(true, ['            const: pet.adopted'])],
    ['a one-value enum', storeEventHeader(true, ['            enum: [pet.adopted]'])],
    ['a default', storeEventHeader(true, ['            default: pet.adopted'])],
    ['no value but optional', storeEventHeader(false, [])],
  ])("a webhook's header with %s lints clean, as does Standard Webhooks' required webhook-id (the server sends them)", async (_name, extra) => {
    expect(summary(await lint(webhookWithHeader(extra)))).toEqual([]);
  });

  it("http basic is served, but a 401 whose WWW-Authenticate lists its values must list the Basic challenge the server then sends (server-headers), at each such 401", async () => {
    const problems = (await lint(mutate('      type: http\n      scheme: bearer\n', '      type: http\n      scheme: basic\n'))).filter((p) => !FROZEN_KNOWN.includes(at(p)));
    expect(summary(problems)).toEqual([
      'animal-store/server-headers at #/components/responses/Unauthorized/headers/WWW-Authenticate',
      'animal-store/server-headers at #/components/responses/UnauthorizedDeprecated/headers/WWW-Authenticate',
    ]);
    for (const problem of problems) expect(problem.message).toContain('`Basic realm="animal-store", charset="UTF-8"`');
  });

  // What the server supports lints clean.
  const CLEAN: { name: string; from: string; to: string }[] = [
    {
      // listPets: its 401 is the shared Unauthorized, which createPet still uses (getPet's own is
      // UnauthorizedDeprecated, which would be left unused).
      name: 'p. a public listPets (security: []) without a 401 response',
      from: [
        "        '401':",
        "          $ref: '#/components/responses/Unauthorized'",
        "        '429':",
        "          $ref: '#/components/responses/TooManyRequests'",
        "        '500':",
        "          $ref: '#/components/responses/InternalError'",
        '        default:',
        "          $ref: '#/components/responses/UnexpectedError'",
        '    post:',
        '',
      ].join('\n'),
      to: [
        "        '500':",
        "          $ref: '#/components/responses/InternalError'",
        '        default:',
        "          $ref: '#/components/responses/UnexpectedError'",
        '      security: []',
        '    post:',
        '',
      ].join('\n'),
    },
    {
      name: 'x. getPet answered as JSON or XML (negotiated by Accept), createPet also taking XML: the server writes and reads both',
      from: "              examples:\n                found:\n                  summary: An animal\n                  value:\n                    id: 1\n                    name: Biscuit\n                    categoryId: 2\n                    status: available\n        '304':\n",
      to: [
        '              examples:',
        '                found:',
        '                  summary: An animal',
        '                  value:',
        '                    id: 1',
        '                    name: Biscuit',
        '                    categoryId: 2',
        '                    status: available',
        '            application/xml:',
        '              schema:',
        "                $ref: '#/components/schemas/Pet'",
        '              example:',
        '                id: 1',
        '                name: Biscuit',
        '                categoryId: 2',
        '                status: available',
        "        '304':",
        '',
      ].join('\n'),
    },
    {
      name: 'r. createPet also as a form, as multipart with a photo, and as raw image bytes (the media types the server reads)',
      from: "        content:\n          application/json:\n            schema:\n              $ref: '#/components/schemas/NewPet'\n",
      to: [
        '        content:',
        '          application/x-www-form-urlencoded:',
        '            schema:',
        "              $ref: '#/components/schemas/NewPet'",
        '            example:',
        '              name: Biscuit',
        '              categoryId: 2',
        '          multipart/form-data:',
        '            schema:',
        '              type: object',
        '              additionalProperties: false',
        '              required: [name, categoryId]',
        '              properties:',
        '                name:',
        "                  $ref: '#/components/schemas/PetName'",
        '                categoryId:',
        "                  $ref: '#/components/schemas/CategoryId'",
        '                photo:',
        '                  type: string',
        '                  format: binary',
        '                  maxLength: 5242880',
        '            encoding:',
        '              photo:',
        '                contentType: image/png, image/jpeg',
        '            example:',
        '              name: Biscuit',
        '              categoryId: 2',
        '          image/png:',
        '            schema:',
        '              type: string',
        '              format: binary',
        '              maxLength: 5242880',
        '          application/json:',
        '            schema:',
        "              $ref: '#/components/schemas/NewPet'",
        '',
      ].join('\n'),
    },
    {
      name: 'q. listPets with an array query parameter (form, explode: true) and a deepObject object one',
      from: "        - $ref: '#/components/parameters/Cursor'\n",
      to: [
        "        - $ref: '#/components/parameters/Cursor'",
        '        - name: tag',
        '          in: query',
        '          required: false',
        '          description: Keeps only animals with at least one of these tags.',
        '          style: form',
        '          explode: true',
        '          schema:',
        '            type: array',
        '            maxItems: 10',
        '            items:',
        '              type: string',
        '              maxLength: 20',
        '          example: [friendly, small]',
        '        - name: filter',
        '          in: query',
        '          required: false',
        '          description: Keeps only animals whose fields have these values.',
        '          style: deepObject',
        '          explode: true',
        '          schema:',
        '            type: object',
        '            additionalProperties: false',
        '            properties:',
        '              name:',
        "                $ref: '#/components/schemas/PetName'",
        '              categoryId:',
        "                $ref: '#/components/schemas/CategoryId'",
        '          example:',
        '            name: Biscuit',
        '            categoryId: 2',
        '',
      ].join('\n'),
    },
    {
      // RFC 9457: the server writes its refusals and the handlers' errors as problems there (src/http/shapes/problems.ts).
      name: "s. getPet's 404 as Problem Details (application/problem+json), a schema the server fills",
      from: NOT_FOUND_AS_ERROR,
      to: notFoundAsProblem(),
    },
    {
      // A webhook's body is what the server sends: its read-only id belongs in the example
      // (spec/lint/rules.js, webhook-bodies-as-sent), where Redocly alone judges it a request.
      name: 'r. a webhook whose example has the readOnly id of what it announces',
      from: '\ntags:\n',
      to: [
        '',
        'webhooks:',
        '  petAdoptedExample:',
        '    post:',
        '      operationId: petAdoptedExample',
        '      summary: An animal was adopted',
        '      requestBody:',
        '        content:',
        '          application/json:',
        '            schema:',
        '              type: object',
        '              required: [id, name]',
        '              properties:',
        '                id:',
        '                  readOnly: true',
        "                  $ref: '#/components/schemas/Id'",
        '                name:',
        "                  $ref: '#/components/schemas/PetName'",
        '            example:',
        '              id: 7',
        '              name: Rex',
        '      responses:',
        "        '204':",
        '          description: Received.',
        'tags:',
        '',
      ].join('\n'),
    },
  ];

  it.each(CLEAN.map((c) => [`${c.name} lints clean`, c] as const))('%s', async (_name, c) => {
    expect(summary(await lint(mutate(c.from, c.to)))).toEqual([]);
  });
});

/**
 * The Swagger Petstore v3 store operations (getInventory, placeOrder, getOrderById, deleteOrder
 * and Order) pasted as a newcomer would (test/fixtures/lint/petstore-store-*.yaml: XML and form
 * bodies, summaries with "ID", error responses with only a description, an api_key scheme): one
 * run names every problem, with the operation and the fix, so fixing them is one round.
 */
describe('a newcomer pastes the Petstore store operations', () => {
  const fixture = (name: string) => readFileSync(join(root, 'test', 'fixtures', 'lint', name), 'utf8');
  const pasted = mutate('\ncomponents:\n  securitySchemes:\n', `\n${fixture('petstore-store-paths.yaml')}components:\n  securitySchemes:\n    api_key:\n      type: apiKey\n      name: api_key\n      in: header\n`).replace(
    '\n  schemas:\n    Id:\n',
    () => `\n  schemas:\n${fixture('petstore-store-schemas.yaml')}    Id:\n`,
  );

  it('one lint run reports every problem, each naming the operation, the place and the fix', async () => {
    const problems = await lint(pasted);
    const messages = problems.map((p) => p.message);
    const expected = [
      // Error answers the server sends and the response check holds them to.
      "getOrderById 404 has no Error body: declare `$ref: '#/components/responses/NotFound'`, or content application/json with schema `$ref: '#/components/schemas/Error'`",
      "deleteOrder 404 has no Error body: declare `$ref: '#/components/responses/NotFound'`",
      'getOrderById 400 has no Error body',
      'placeOrder 405 has no Error body: declare content application/json',
      "getInventory declares no 400 response: add `'400':` with `$ref: '#/components/responses/InvalidQuery'`",
      "placeOrder declares no 400 response: add `'400':` with `$ref: '#/components/responses/BadRequest'`",
      'getInventory requires an API key (security: api_key) but declares no 401 response',
      "deleteOrder requires an API key (security: bearerApiKey) but declares no 429 response: add `'429':` with `$ref: '#/components/responses/TooManyRequests'`",
      "getOrderById declares no 500 response: add `'500':` with `$ref: '#/components/responses/InternalError'`",
      "placeOrder declares no default response: add `default:` with `$ref: '#/components/responses/UnexpectedError'`",
      // House style, naming the word.
      "getOrderById summary 'Find purchase order by ID': 'ID' is capitalised after the first word",
      "deleteOrder summary 'Delete purchase order by ID': 'ID' is capitalised after the first word",
      // Integers: what to declare.
      '`Order.id` is an integer with no minimum or maximum: declare both',
      '`Order.quantity` is an integer with no minimum or maximum: declare both, the smallest and largest value it may take (e.g. `minimum: 1`, `maximum: 2147483647`)',
      "getInventory's 200 response body, at `additionalProperties`, is an integer with no minimum or maximum",
      "deleteOrder's parameter `orderId` is an integer with no maximum: declare the largest value it may take, at most `maximum: 9007199254740991`",
      // Examples.
      'getInventory: the 200 response body (application/json) has no example',
      'placeOrder: the request body (application/json) has no example',
    ];
    for (const text of expected) expect(messages.filter((m) => m.includes(text)), text).not.toEqual([]);
    // Every rule the paste breaks reports in this one run.
    // Its XML bodies and answers are served (by the schemas' xml objects): no media-type finding.
    expect(new Set(problems.map((p) => p.ruleId))).toEqual(
      new Set([
        'animal-store/error-response-body',
        'animal-store/operation-400-response',
        'animal-store/operation-401-response',
        'animal-store/operation-429-response',
        'animal-store/operation-500-response',
        'animal-store/operation-default-response',
        'animal-store/summary-sentence-case',
        'animal-store/integer-bounds',
        'animal-store/media-type-examples',
        'operation-2xx-response',
        ...FROZEN_KNOWN.map((line) => line.split(' at ')[0]!),
      ]),
    );
  });
});

/**
 * The Swagger Petstore's own pet operations (addPet, updatePet, findPetsByStatus, findPetsByTags,
 * getPetById, updatePetWithForm with a form, deletePet, uploadFile with application/octet-stream)
 * pasted as a newcomer would (test/fixtures/lint/petstore-pet-*.yaml), its `Pet` renamed once lint
 * said it was declared twice (test/quick/duplicateKeys.test.ts): one run names every fix. What this paste
 * found wrong in the messages: a 401 suggested UnauthorizedDeprecated (with a deprecated
 * operation's headers) to operations that are not deprecated; the Petstore's 422 "Validation
 * exception" was told to become IdempotencyKeyReused; a form of Pet (a category object, tag
 * objects) passed lint, and then no form could ever validate. test/loop/spec-loop.test.ts serves the
 * result of following them (test/fixtures/spec-loop/petstore-pets.yaml).
 */
describe('a newcomer pastes the Petstore pet operations', () => {
  const fixture = (name: string) => readFileSync(join(root, 'test', 'fixtures', 'lint', name), 'utf8');
  const pasted = mutate(
    '\ncomponents:\n  securitySchemes:\n',
    `\n${fixture('petstore-pet-paths.yaml')}components:\n  securitySchemes:\n    petstore_auth:\n      type: oauth2\n      flows:\n        implicit:\n          authorizationUrl: https://petstore3.swagger.io/oauth/authorize\n          scopes:\n            "write:pets": modify pets in your account\n            "read:pets": read your pets\n    api_key:\n      type: apiKey\n      name: api_key\n      in: header\n`,
  ).replace('\n  schemas:\n    Id:\n', () => `\n  schemas:\n${fixture('petstore-pet-schemas.yaml')}    Id:\n`);

  it('one lint run names every fix, each with the operation and what to declare instead', async () => {
    const problems = await lint(pasted);
    const messages = problems.map((p) => p.message);
    const expected = [
      'addPet: the form field `category` is an object: a form carries flat text fields',
      'updatePet: the form field `tags` is an array of objects',
      "uploadFile: the request body's media type `application/octet-stream` has no `maxLength`",
      'findPetsByTags: query parameter `tags` is an exploded array (name=a&name=b) without maxItems of at most 20',
      // The Petstore's oauth2 scheme is served now (its tokens checked against OAUTH_ISSUER); its scopes ask for a 403.
      'requires scopes (write:pets, read:pets) but declares no 403 response',
      "findPetsByStatus requires an API key (security: petstore_auth) but declares no 401 response: add `'401':` with `$ref: '#/components/responses/Unauthorized'` to its responses.",
      "deletePet requires an API key (security: petstore_auth) but declares no 429 response: add `'429':` with `$ref: '#/components/responses/TooManyRequests'`",
      'addPet 422 has no LimitError body',
      "A request that fails validation (the Petstore's \"Validation exception\") is a 400 validation_failed here, never a 422",
      "getPetById 404 has no Error body: declare `$ref: '#/components/responses/NotFound'`",
      "updatePetWithForm declares no 500 response: add `'500':` with `$ref: '#/components/responses/InternalError'`",
      "getPetById summary 'Find pet by ID.': 'ID' is capitalised after the first word; it ends with a period",
      'deletePet: header parameter `api_key` has no maxLength',
      "`PetstorePet.id` is an integer with no minimum or maximum",
      'updatePetWithForm: the request body (application/x-www-form-urlencoded) has no example',
    ];
    for (const text of expected) expect(messages.filter((m) => m.includes(text)), text).not.toEqual([]);
    // A deprecated operation's 401 is never offered to the others.
    expect(messages.filter((m) => /^(addPet|updatePet|findPets|getPetById|updatePetWithForm|deletePet|uploadFile).*UnauthorizedDeprecated/.test(m))).toEqual([]);
    // No rule reports a binary upload's missing example: bytes have none a YAML file can hold.
    expect(messages.filter((m) => m.includes('uploadFile: the request body (application/octet-stream) has no example'))).toEqual([]);
  });
});

/** docs/spec-rules.md is the one list of the spec's rules: every rule redocly.yaml turns on is in it. */
describe('docs/spec-rules.md', () => {
  it('names every rule that redocly.yaml turns on, and the rule sets it extends', () => {
    const settings = parseYaml(readFileSync(config, 'utf8')) as { extends?: string[]; rules: Record<string, unknown> };
    const page = readFileSync(join(root, 'docs', 'spec-rules.md'), 'utf8');
    const on = Object.entries(settings.rules)
      .filter(([, value]) => value !== 'off' && !(typeof value === 'object' && value !== null && (value as { severity?: string }).severity === 'off'))
      .map(([name]) => name);
    expect(on.length).toBeGreaterThan(10);
    const missing = [...on, ...(settings.extends ?? [])].filter((name) => !page.includes(`\`${name}\``));
    expect(missing, 'rules turned on in redocly.yaml that docs/spec-rules.md does not list').toEqual([]);
  });
});
