/**
 * The compile-time completeness guarantees of src/contract.ts, proven with the TypeScript compiler.
 *
 * Each case is a small module written to a temporary folder inside the project (so its relative
 * imports resolve exactly as handlers/ do), type-checked with the project's own tsconfig.json
 * options, and judged by the diagnostics reported for that file. One Program checks all cases.
 * The baseline case must compile cleanly, which proves the harness reports only real errors; it
 * also holds a correct twin of every broken case, so each broken case fails for its one defect.
 *
 * The folder is named `.vitest-typecheck-*`: git ignores it (.gitignore has `.vitest-*` folders) and `tsc -p`
 * skips it (dot-folders are not matched by `include`), so a concurrent `tsc` never sees the cases.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const tmpDir = join(root, 'test', `.vitest-typecheck-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);

// The real map (handlers/index.ts), so an operation added to the spec and the map changes no case here.
const IMPORTS = `import type { Handler, Handlers } from '../../src/contract.js';
import { handlers } from '../../handlers/index.js';
const { getPet, ...allButGetPet } = handlers;
`;

const CLIENT = `import { createAnimalStoreClient } from '../../client/index.js';
const api = createAnimalStoreClient({ baseUrl: 'http://localhost:8080/v1', apiKey: 'ask_x' });
`;

const aPet = `{ id: 1, name: 'Biscuit', categoryId: 2, status: 'available' as const }`;

const CASES = {
  baseline: `${IMPORTS}
export const map = { ...allButGetPet, getPet } satisfies Handlers;
// The correct twins of the broken cases below.
export const fullPet: Handler<'getPet'> = async () => ({ status: 200, body: ${aPet} });
export const declared404: Handler<'getPet'> = async () => ({ status: 404, body: { code: 'not_found', message: 'No such animal.', status: 404 } });
export const withLocation: Handler<'createPet'> = async () => ({ status: 201, body: ${aPet}, headers: { Location: '/v1/pets/1' } });
`,
  missingHandler: `${IMPORTS}
export const map = { ...allButGetPet } satisfies Handlers;
void getPet;
`,
  incompleteBody: `${IMPORTS}
export const partialPet: Handler<'getPet'> = async () => ({ status: 200, body: { id: 1, name: 'x' } });
void [allButGetPet, getPet];
`,
  undeclaredStatus: `${IMPORTS}
export const teapot: Handler<'getPet'> = async () => ({ status: 418, body: { code: 'not_found', message: 'No such animal.', status: 418 } });
void [allButGetPet, getPet];
`,
  missingLocation: `${IMPORTS}
export const noLocation: Handler<'createPet'> = async () => ({ status: 201, body: ${aPet} });
void [allButGetPet, getPet];
`,
  extraHandler: `${IMPORTS}
export const map = { ...allButGetPet, getPet, notAnOperationOfAnySpec: getPet } satisfies Handlers;
`,
  clientBaseline: `${CLIENT}
import type { ApiError, Pet } from '../../client/index.js';
export const calls = [
  api.GET('/pets', { params: { query: { limit: 10, status: 'sold' } } }),
  api.GET('/pets/{petId}', { params: { path: { petId: 1 } } }),
  api.POST('/pets', { body: { name: 'Biscuit', categoryId: 2 } }),
  api.GET('/pets'),
  api.GET('/pets', { params: { query: { limit: 5, status: 'sold' } }, signal: AbortSignal.timeout(1000) }),
];
// The correct twins of the misspelled calls below, and what the results are inferred to be.
export async function inferred() {
  const listed = await api.GET('/pets', { params: { query: { limit: 5, status: 'sold' } } });
  const pets: Pet[] | undefined = listed.data;
  const created = await api.POST('/pets', { body: { name: 'A', categoryId: 2, status: 'sold' } });
  const pet: Pet | undefined = created.data;
  const failure: ApiError | undefined = created.error;
  const text = await api.GET('/pets', { parseAs: 'text' });
  const raw: string | undefined = text.data;
  // @ts-expect-error data is Pet, not a number: the result is typed, not any
  const notANumber: number | undefined = created.data;
  return { pets, pet, failure, raw, notANumber };
}
`,
  clientWrongParameter: `${CLIENT}
export const call = api.GET('/pets', { params: { query: { size: 10 } } });
`,
  clientWrongBodyField: `${CLIENT}
export const call = api.POST('/pets', { body: { name: 'Biscuit', category: 2 } });
`,  clientMisspelledQueryParameter: `${CLIENT}
export const call = api.GET('/pets', { params: { query: { limit: 5, staus: 'sold' } } });
`,
  clientMisspelledBodyField: `${CLIENT}
export const call = api.POST('/pets', { body: { name: 'A', categoryId: 2, stauts: 'sold' } });
`,
  clientExtraPathParameter: `${CLIENT}
export const call = api.GET('/pets/{petId}', { params: { path: { petId: 1, id: 1 } } });
`,
  clientMisspelledOption: `${CLIENT}
export const call = api.GET('/pets', { parms: { query: { limit: 5 } } });
`,
} as const;

type CaseName = keyof typeof CASES;

const diagnostics = new Map<CaseName | 'elsewhere', string[]>();

function fileOf(name: CaseName): string {
  return join(tmpDir, `${name}.ts`);
}

beforeAll(() => {
  mkdirSync(tmpDir, { recursive: true });
  for (const [name, text] of Object.entries(CASES)) writeFileSync(fileOf(name as CaseName), text);

  const configPath = join(root, 'tsconfig.json');
  const read = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, root, undefined, configPath);
  if (parsed.errors.length > 0) throw new Error(parsed.errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('\n'));

  const program = ts.createProgram({ rootNames: Object.keys(CASES).map((n) => fileOf(n as CaseName)), options: parsed.options });
  const byFile = new Map<string, CaseName>(Object.keys(CASES).map((n) => [ts.sys.resolvePath(fileOf(n as CaseName)), n as CaseName]));
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const owner = (d.file && byFile.get(ts.sys.resolvePath(d.file.fileName))) || 'elsewhere';
    const where = d.file && d.start !== undefined ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: ` : '';
    diagnostics.set(owner, [...(diagnostics.get(owner) ?? []), `${where}TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`]);
  }
}, 120_000);

afterAll(() => {
  rmSync(tmpDir, { recursive: true, force: true });
});

const errorsOf = (name: CaseName | 'elsewhere') => diagnostics.get(name) ?? [];

describe('the handler contract is enforced by the compiler', () => {
  it('a. the complete map of the real handlers (and the correct twins) compiles with zero diagnostics', () => {
    expect(errorsOf('baseline')).toEqual([]);
    expect(errorsOf('elsewhere')).toEqual([]);
  });

  it('b. a handler map without getPet is a compile error naming getPet', () => {
    const errors = errorsOf('missingHandler');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("Property 'getPet' is missing");
  });

  it("c. a getPet 200 whose Pet body lacks categoryId and status is a compile error", () => {
    const errors = errorsOf('incompleteBody');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/is missing the following properties from type .*: categoryId, status$/m);
  });

  it('d. a status the spec does not declare for the operation (418) is a compile error', () => {
    const errors = errorsOf('undeclaredStatus');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("Type '418' is not assignable");
  });

  it('e. a createPet 201 without the required Location header is a compile error', () => {
    const errors = errorsOf('missingLocation');
    expect(errors).toHaveLength(1);
    // Location is required; Idempotent-Replayed (sent only on a replay) is optional.
    expect(errors[0]).toMatch(/Property 'headers' is missing .* required in type '\{ headers: \{ Location: string; "Idempotent-Replayed"\?: "true" \| undefined; \}; \}'/);
  });

  it('f. a handler map with a key that is not an operation of the spec is a compile error', () => {
    const errors = errorsOf('extraHandler');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("'notAnOperationOfAnySpec' does not exist in type 'Handlers'");
  });
});

describe('the typed client is checked by the compiler', () => {
  it('correct calls of all three operations compile with zero diagnostics, data and error typed from the spec', () => {
    expect(errorsOf('clientBaseline')).toEqual([]);
  });

  it('a query parameter the operation does not have (size) is a compile error', () => {
    const errors = errorsOf('clientWrongParameter');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("'size' does not exist");
  });

  it('a body field the contract does not have (category for categoryId) is a compile error', () => {
    const errors = errorsOf('clientWrongBodyField');
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(errors.join('\n')).toMatch(/'category' does not exist|categoryId/);
  });

  // openapi-fetch alone accepts all four below: it infers the init argument as a type parameter,
  // so an undeclared key next to a declared one is never excess (client/index.ts says more).
  it('a misspelled query parameter next to a correct one (limit, staus) is a compile error', () => {
    const errors = errorsOf('clientMisspelledQueryParameter');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("'staus' does not exist");
  });

  it('a misspelled body field next to correct ones (stauts) is a compile error', () => {
    const errors = errorsOf('clientMisspelledBodyField');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("'stauts' does not exist");
  });

  it('a path parameter the operation does not have, next to petId, is a compile error', () => {
    const errors = errorsOf('clientExtraPathParameter');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("'id' does not exist");
  });

  it('a misspelled top-level option (parms for params) is a compile error', () => {
    const errors = errorsOf('clientMisspelledOption');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("'parms' does not exist");
  });
});
