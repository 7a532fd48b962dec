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

const root = fileURLToPath(new URL('..', import.meta.url));
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

const summary = (problems: Problem[]) => problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer ?? '?'}`);

describe('redocly.yaml rules', () => {
  it('f. the unmodified frozen spec passes with zero problems (the cases below start from nothing to report)', async () => {
    expect(summary(await lint(original))).toEqual([]);
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
      name: 'g. a text/plain request body on createPet',
      rule: 'animal-store/request-body-json',
      pointer: '#/paths/~1pets/post/requestBody/content/text~1plain',
      from: "        content:\n          application/json:\n            schema:\n              $ref: '#/components/schemas/NewPet'\n",
      to: "        content:\n          text/plain:\n            schema:\n              $ref: '#/components/schemas/NewPet'\n",
      names: ['createPet', 'text/plain', 'only JSON bodies'],
    },
    {
      name: 'h. an application/xml 200 response on getPet',
      rule: 'animal-store/response-json',
      pointer: '#/paths/~1pets~1{petId}/get/responses/200/content/application~1xml',
      from: "            application/json:\n              schema:\n                $ref: '#/components/schemas/Pet'\n              examples:\n                found:\n",
      to: "            application/xml:\n              schema:\n                $ref: '#/components/schemas/Pet'\n              examples:\n                found:\n",
      names: ['getPet', 'application/xml'],
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
      name: 'n. an http basic security scheme',
      rule: 'animal-store/security-scheme-supported',
      pointer: '#/components/securitySchemes/bearerApiKey',
      from: '      scheme: bearer\n',
      to: '      scheme: basic\n',
      names: ['`bearerApiKey`', 'http basic', 'getPet'],
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
    const problems = await lint(mutate(c.from, c.to));
    // Exactly the rule under test fires, at the place that was broken.
    expect(summary(problems)).toEqual([`${c.rule} at ${c.pointer}`]);
    expect(problems[0]?.severity).toBe('error');
    for (const name of c.names ?? []) expect(problems[0]?.message).toContain(name);
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
  ];

  it.each(CLEAN.map((c) => [`${c.name} lints clean`, c] as const))('%s', async (_name, c) => {
    expect(summary(await lint(mutate(c.from, c.to)))).toEqual([]);
  });
});
