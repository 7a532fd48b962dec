/**
 * The README's spec loop for an operation that needs the store to do something new, on a copy of
 * the project: the README's example is `deletePet` (DELETE /pets/{petId}); this adds the same
 * operation under made-up names no spec will plausibly take (`retirePetExample`, DELETE
 * /retire-pet-example/{petId}, store method `retireExample`: 204, or 404 when there is no such
 * animal), so it still adds something new once the real spec has a deletePet. It goes exactly as
 * "Edit the spec, regenerate" says: the spec, `npm run generate` (the stub, listed in the handler
 * map), the handler, then the store method in the one file the README names, the resource's store
 * module (src/store/resources/pets.ts: the `PetStore` interface and its implementation). Nothing
 * else is edited: then `npm run lint` passes, the
 * copy's own tests that touch operations, the store and its fake pass unchanged, and the copy's
 * server deletes. Each edit finds its place by structure or by one line that a new field or
 * operation does not move, and names the file and the anchor when it cannot.
 */
import { parseDocument } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startProcess, stopProcess, waitForHttp, type RunningProcess } from '../scripts/lib/processes.js';
import { copyProject, replaceOnce, runCommand, type CommandResult, type ProjectCopy } from './support/projectCopy.js';

const HOST = '127.0.0.1';
const OPERATION_ID = 'retirePetExample';
const PATH = '/retire-pet-example/{petId}';
const STORE_METHOD = 'retireExample';
const THIS_FILE = 'test/storeMethodLoop.test.ts';

const OPERATION = {
  delete: {
    operationId: OPERATION_ID,
    summary: 'Retire an animal',
    description: 'Removes one animal by its identifier. Answers 204 without a body, or 404 when there is no such animal.',
    tags: ['Pets'],
    parameters: [{ $ref: '#/components/parameters/PetId' }],
    responses: {
      '204': { description: 'Retired.' },
      '400': { $ref: '#/components/responses/InvalidPetId' },
      '401': { $ref: '#/components/responses/Unauthorized' },
      '404': { $ref: '#/components/responses/NotFound' },
      '429': { $ref: '#/components/responses/TooManyRequests' },
      '500': { $ref: '#/components/responses/InternalError' },
      default: { $ref: '#/components/responses/UnexpectedError' },
    },
  },
};

/** README step 1: the operation at the end of `paths`, kept in the spec's own formatting. */
function addOperation(specText: string): string {
  const doc = parseDocument(specText);
  if (doc.errors.length > 0) throw new Error(`the copy's spec/openapi.yaml does not parse: ${doc.errors.map((e) => e.message).join('; ')}`);
  if (doc.hasIn(['paths', PATH])) throw new Error(`spec/openapi.yaml already has the path ${PATH}: pick another made-up path in ${THIS_FILE}`);
  if (new RegExp(`operationId:\\s*${OPERATION_ID}\\b`).test(specText)) throw new Error(`spec/openapi.yaml already has an operation ${OPERATION_ID}: pick another made-up name in ${THIS_FILE}`);
  doc.setIn(['paths', PATH], doc.createNode(OPERATION));
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}

const HANDLER = `import type { Handler } from '../src/contract.js';
import { errorBody } from '../src/contract.js';

/** ${OPERATION_ID}: DELETE ${PATH}. */
export const ${OPERATION_ID}: Handler<'${OPERATION_ID}'> = async ({ path }, { pets }) => {
  if (!(await pets.${STORE_METHOD}(path.petId))) return { status: 404, body: errorBody(404, 'not_found', \`No animal has id \${path.petId}.\`) };
  return { status: 204, body: undefined };
};
`;

/** The copy's environment for its own commands: none of this run's vitest state, no PostgreSQL. */
function copyEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('VITEST') && name !== 'NODE_ENV') env[name] = value;
  return { ...env, DATABASE_URL: '', REDIS_URL: '', ...extra };
}

const output = (result: CommandResult) => `exit ${String(result.code)}\n${result.stdout}\n${result.stderr}`;

describe(`an operation that needs a new store method, through the documented loop: ${OPERATION_ID} on a copy`, () => {
  let copy: ProjectCopy;
  let generate: CommandResult;
  let lint: CommandResult;
  let suite: CommandResult;
  let server: RunningProcess | undefined;

  beforeAll(async () => {
    copy = copyProject('animal-store-store-method-');
    // 1. The spec: a DELETE on a path of its own.
    copy.edit('spec/openapi.yaml', addOperation);
    // 3. npm run generate: the types, the bundled contract, and a 501 stub for the operation.
    generate = await runCommand(copy.bin('tsx'), ['scripts/generate.ts'], { cwd: copy.dir, env: copyEnv() });
    if (generate.code !== 0) throw new Error(`npm run generate failed in the copy:\n${output(generate)}`);
    // 5. The handler; the store method in the resource's module, its interface and its implementation.
    copy.write(`handlers/${OPERATION_ID}.ts`, HANDLER);
    const store = 'src/store/resources/pets.ts';
    copy.edit(store, (text) => {
      if (new RegExp(`\\b${STORE_METHOD}\\(`).test(text)) throw new Error(`${store} already has a ${STORE_METHOD} method: pick another made-up name in ${THIS_FILE}`);
      const declared = replaceOnce(
        text,
        'export interface PetStore {\n',
        `export interface PetStore {\n  /** Removes the animal; false when there was none. */\n  ${STORE_METHOD}(id: number): Promise<boolean>;\n`,
        `${store} (the PetStore interface)`,
      );
      return replaceOnce(
        declared,
        '    async get(id) {\n',
        `    async ${STORE_METHOD}(id) {\n      const result = await db.deleteFrom('pets').where('id', '=', id).executeTakeFirst();\n      return result.numDeletedRows > 0n;\n    },\n\n    async get(id) {\n`,
        `${store} (the store object, at its get method)`,
      );
    });

    // npm run lint and the copy's own tests of operations, the store and its fake, at once. About a
    // minute on an idle machine; the bounds are for a CI machine busy with other suites.
    [lint, suite] = await Promise.all([
      runCommand(copy.bin('tsx'), ['scripts/lint.ts'], { cwd: copy.dir, env: copyEnv(), timeoutMs: 600_000 }),
      runCommand(copy.bin('vitest'), ['run', '--project', 'quick', 'test/contract', 'test/errors.test.ts', 'test/typecheck.test.ts', 'test/getPet.test.ts', 'test/architecture.test.ts'], {
        cwd: copy.dir,
        env: copyEnv({ CONTRACT_TARGET: 'sqlite,mock' }),
        timeoutMs: 600_000,
      }),
    ]);
  }, 900_000);

  afterAll(async () => {
    if (server) await stopProcess(server);
    copy?.remove();
  });

  it(`npm run generate scaffolded handlers/${OPERATION_ID}.ts, and npm run lint passes with it written (Redocly, Spectral, the gate, tsc)`, () => {
    expect(output(generate)).toContain(`handlers/${OPERATION_ID}.ts`);
    expect(lint.code, output(lint)).toBe(0);
  });

  it("the copy's tests of the contract, the errors (its fake store), the handler types, getPet and the architecture pass unchanged", () => {
    expect(suite.code, output(suite)).toBe(0);
  });

  it("the copy's server deletes: 204, then getPet and a second delete are 404, and the other pets stay", async () => {
    const port = await freePort(HOST);
    server = startProcess(copy.bin('tsx'), ['src/main.ts'], { cwd: copy.dir, env: copyEnv({ PORT: String(port), HOST, SQLITE_PATH: copy.path('data', 'delete.sqlite'), NODE_ENV: 'test', LOG_LEVEL: 'silent' }) });
    await waitForHttp(`http://${HOST}:${port}/healthz`, server);
    const key = /^\s*(ask_[A-Za-z0-9_-]{43})\s*$/m.exec(server.output())?.[1];
    expect(key, server.output()).toBeDefined();
    const api = `http://${HOST}:${port}/v1`;
    const auth = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const create = async (name: string) => (await (await fetch(`${api}/pets`, { method: 'POST', headers: auth, body: JSON.stringify({ name, categoryId: 1 }) })).json()) as { id: number };
    const [kept, doomed] = [await create('Kept'), await create('Doomed')];

    const retire = (id: number, headers: Record<string, string>) => fetch(`${api}${PATH.replace('{petId}', String(id))}`, { method: 'DELETE', headers });
    const deleted = await retire(doomed.id, auth);
    expect(deleted.status).toBe(204);
    expect(await deleted.text()).toBe('');
    expect((await fetch(`${api}/pets/${doomed.id}`, { headers: auth })).status).toBe(404);
    const again = await retire(doomed.id, auth);
    expect(again.status).toBe(404);
    expect(await again.json()).toMatchObject({ code: 'not_found', status: 404 });
    expect((await retire(doomed.id, {})).status).toBe(401);
    const listed = (await (await fetch(`${api}/pets`, { headers: auth })).json()) as { id: number }[];
    expect(listed.map((pet) => pet.id)).toEqual([kept.id]);
  });
});
