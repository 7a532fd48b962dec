/**
 * The compile-time completeness guarantees of src/domain/contract.ts and of the typed client, proven with
 * the TypeScript compiler; and what an editor shows on a deprecated operation's client method,
 * asked of TypeScript's language service (the one editors run).
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
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileCases, compilerOptionsOf } from '../support/compile.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tmpDir = join(root, 'test', `.vitest-typecheck-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);

// The real map (generated/handlers.ts), so an operation added to the spec and the map changes no case here.
const IMPORTS = `import type { Handler, Handlers } from '../../src/domain/contract.js';
import { handlers } from '../../generated/handlers.js';
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
  clientOperationsBaseline: `${CLIENT}
import type { Pet } from '../../client/index.js';
export const calls = [
  api.listPets(),
  api.listPets({ params: { query: { limit: 10, status: 'sold' } }, signal: AbortSignal.timeout(1000) }),
  api.createPet({ body: { name: 'Biscuit', categoryId: 2 } }),
  api.getPet({ params: { path: { petId: 1 } } }),
];
// Each method's result is the path method's plus its parsed headers (test/quick/clientHeaders.test.ts),
// so it serves wherever the path method's does; parseAs still picks the type of data.
export async function sameAsPathMethods() {
  let byPath = await api.GET('/pets/{petId}', { params: { path: { petId: 1 } } });
  const byId = await api.getPet({ params: { path: { petId: 1 } } });
  byPath = byId;
  let listedByPath = await api.GET('/pets');
  const listedById = await api.listPets();
  listedByPath = listedById;
  const pet: Pet | undefined = (await api.createPet({ body: { name: 'A', categoryId: 2 } })).data;
  const raw: string | undefined = (await api.listPets({ parseAs: 'text' })).data;
  return { byPath, byId, listedByPath, listedById, pet, raw };
}
`,
  clientMisspelledOperation: `${CLIENT}
export const call = api.getPets({ params: { path: { petId: 1 } } });
`,
  clientOperationMisspelledQueryParameter: `${CLIENT}
export const call = api.listPets({ params: { query: { limit: 5, staus: 'sold' } } });
`,
  clientOperationWithoutRequiredInit: `${CLIENT}
export const call = api.getPet();
`,
} as const;

/**
 * Files judged by the language service's suggestion diagnostics, as an editor shows them (a
 * strike-through on `@deprecated`); the compiler's own diagnostics never include suggestions.
 */
const EDITOR_CASES = {
  editorDeprecatedCall: `${CLIENT}
export const call = api.getPet({ params: { path: { petId: 1 } } });
`,
  editorCurrentCalls: `${CLIENT}
export const calls = [api.listPets({ params: { query: { limit: 5 } } }), api.createPet({ body: { name: 'A', categoryId: 2 } })];
`,
} as const;

type CaseName = keyof typeof CASES;
type EditorCaseName = keyof typeof EDITOR_CASES;

let diagnostics = new Map<CaseName | 'elsewhere', string[]>();
let compilerOptions: ts.CompilerOptions = {};

function fileOf(name: CaseName | EditorCaseName): string {
  return join(tmpDir, `${name}.ts`);
}

beforeAll(() => {
  compilerOptions = compilerOptionsOf(root);
  diagnostics = compileCases(root, tmpDir, CASES, true);
  for (const [name, text] of Object.entries(EDITOR_CASES)) writeFileSync(fileOf(name as EditorCaseName), text);
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

  it('each operation is a method named by its operationId, typed and returning as the path methods do', () => {
    expect(errorsOf('clientOperationsBaseline')).toEqual([]);
  });

  it('a misspelled operation method (getPets) is a compile error that suggests getPet', () => {
    const errors = errorsOf('clientMisspelledOperation');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("Property 'getPets' does not exist on type 'AnimalStoreClient'. Did you mean 'getPet'?");
  });

  it('an operation method checks its init exactly too (limit, staus)', () => {
    const errors = errorsOf('clientOperationMisspelledQueryParameter');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("'staus' does not exist");
  });

  it('an operation method whose operation requires a parameter requires its init', () => {
    const errors = errorsOf('clientOperationWithoutRequiredInit');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('Expected 1 arguments, but got 0');
  });
});

/** The language service over the editor cases, as an editor builds it: files read from disk, the project's options. */
function editorService(): ts.LanguageService {
  const host: ts.LanguageServiceHost = {
    getScriptFileNames: () => Object.keys(EDITOR_CASES).map((n) => fileOf(n as EditorCaseName)),
    getScriptVersion: () => '1',
    getScriptSnapshot: (file) => {
      const text = ts.sys.readFile(file);
      return text === undefined ? undefined : ts.ScriptSnapshot.fromString(text);
    },
    getCurrentDirectory: () => root,
    getCompilationSettings: () => compilerOptions,
    getDefaultLibFileName: (options) => ts.getDefaultLibFilePath(options),
    fileExists: ts.sys.fileExists,
    readFile: ts.sys.readFile,
    readDirectory: ts.sys.readDirectory,
    directoryExists: ts.sys.directoryExists,
    getDirectories: ts.sys.getDirectories,
  };
  return ts.createLanguageService(host, ts.createDocumentRegistry());
}

describe('an editor strikes a deprecated operation method through (language service suggestions)', () => {
  /** The deprecation suggestions of a case: code, the text they mark, and the message. */
  const deprecations = (service: ts.LanguageService, name: EditorCaseName) =>
    service
      .getSuggestionDiagnostics(fileOf(name))
      .filter((d) => d.reportsDeprecated)
      .map((d) => ({ code: d.code, marked: EDITOR_CASES[name].slice(d.start, d.start + d.length), message: ts.flattenDiagnosticMessageText(d.messageText, '\n') }));
  let service: ts.LanguageService;
  beforeAll(() => {
    service = editorService();
  });
  afterAll(() => service?.dispose());

  it("api.getPet(…) gets suggestion 6385, 'getPet' is deprecated, on the method name", () => {
    expect(deprecations(service, 'editorDeprecatedCall')).toEqual([{ code: 6385, marked: 'getPet', message: "'getPet' is deprecated." }]);
  }, 60_000);

  it('the hover on api.getPet names the sunset date and the replacement', () => {
    const text = EDITOR_CASES.editorDeprecatedCall;
    const info = service.getQuickInfoAtPosition(fileOf('editorDeprecatedCall'), text.indexOf('getPet') + 1);
    expect(info?.tags?.map((tag) => `@${tag.name} ${ts.displayPartsToString(tag.text)}`)).toEqual([
      '@deprecated Removed on 2030-12-05 (x-sunset): use GET /pets with the status filter instead.',
    ]);
  });

  it('api.listPets(…) and api.createPet(…) get no deprecation suggestion', () => {
    expect(deprecations(service, 'editorCurrentCalls')).toEqual([]);
    // …and the file is read at all: it compiles cleanly in the same service.
    expect(service.getSemanticDiagnostics(fileOf('editorCurrentCalls'))).toEqual([]);
  });
});
