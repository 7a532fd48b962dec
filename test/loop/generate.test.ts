/**
 * `npm run generate` on a copy of the project: idempotent, never overwrites a handler, recreates
 * a deleted one as a 501 stub, and `--check` fails when the spec moved on without regenerating;
 * an operationId as real APIs write it (kebab case) gets a handler named for TypeScript.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = process.cwd();

describe('npm run generate', () => {
  let copy = '';
  const generate = (...args: string[]) => run(join(root, 'node_modules', '.bin', 'tsx'), ['scripts/generate.ts', ...args], { cwd: copy });
  const snapshot = (...files: string[]) => files.map((f) => readFileSync(join(copy, f), 'utf8'));

  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), 'animal-store-gen-'));
    for (const entry of ['package.json', 'tsconfig.json', 'redocly.yaml', 'spec', 'generated', 'client', 'handlers', 'src', 'scripts']) {
      cpSync(join(root, entry), join(copy, entry), { recursive: true });
    }
    symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  // That the committed files are up to date (--check passes) is CI's `npm run check:generated` and
  // lint's "generated files" step, on the checkout itself; so one run here is a second run.
  it('running it on what it generated changes nothing', async () => {
    const files = ['generated/openapi.json', 'generated/openapi.d.ts', 'client/generated/openapi.d.ts', 'client/generated/operations.ts', 'handlers/getPet.ts'];
    const before = snapshot(...files);
    await generate();
    expect(snapshot(...files)).toEqual(before);
  });

  it('a deleted handler is recreated as a typed 501 stub; existing handlers are never overwritten', async () => {
    const listPets = snapshot('handlers/listPets.ts');
    unlinkSync(join(copy, 'handlers/getPet.ts'));
    await expect(generate('--check')).rejects.toMatchObject({ stderr: expect.stringContaining('handlers/getPet.ts') });
    await generate();
    const stub = readFileSync(join(copy, 'handlers/getPet.ts'), 'utf8');
    expect(stub).toContain("Handler<'getPet'>");
    expect(stub).toContain("notImplemented('getPet')");
    expect(snapshot('handlers/listPets.ts')).toEqual(listPets);
  });

  it('editing the spec without regenerating makes --check fail, naming the stale files', async () => {
    const specPath = join(copy, 'spec/openapi.yaml');
    writeFileSync(specPath, readFileSync(specPath, 'utf8').replace('summary: List animals', 'summary: List the animals'));
    const failure = generate('--check');
    await expect(failure).rejects.toMatchObject({ code: 1 });
    await expect(failure).rejects.toMatchObject({ stderr: expect.stringMatching(/generated\/openapi\.json[\s\S]*generated\/openapi\.d\.ts[\s\S]*client\/generated\/openapi\.d\.ts[\s\S]*client\/generated\/operations\.ts/) });
    // The client package's copy of the types is written with the server's, never left behind.
    await generate();
    expect(readFileSync(join(copy, 'client/generated/openapi.d.ts'), 'utf8')).toBe(readFileSync(join(copy, 'generated/openapi.d.ts'), 'utf8'));
    expect(readFileSync(join(copy, 'client/generated/openapi.d.ts'), 'utf8')).toContain('List the animals');
    const { stdout } = await generate('--check');
    expect(stdout).toContain('up to date');
    expect(existsSync(join(copy, 'generated/openapi.json'))).toBe(true);
  });

  it('an operationId in kebab case, as real APIs write them, gets handlers/<name>.ts named for TypeScript (spec/lint/handlerNames.js), keyed by the id in the handler map and the client, and it compiles; a webhook gets no handler', async () => {
    const specPath = join(copy, 'spec/openapi.yaml');
    const operation =
      "  /examples/stations:\n    get:\n      operationId: list-stations-example\n      summary: List the stations\n      responses:\n        '204':\n          description: None.\n        default:\n          $ref: '#/components/responses/UnexpectedError'\n";
    // A webhook is what the server sends: typed for the sender, never a handler it must serve.
    const webhook =
      "  stationOpenedExample:\n    post:\n      operationId: station-opened-example\n      summary: A station opened\n      requestBody:\n        content:\n          application/json:\n            schema:\n              type: object\n      responses:\n        '204':\n          description: Received.\n";
    const spec = readFileSync(specPath, 'utf8');
    expect(spec, 'the spec declares webhooks: this one joins them').toMatch(/^webhooks:\n/m);
    writeFileSync(specPath, spec.replace('  /pets/{petId}:\n', `${operation}  /pets/{petId}:\n`).replace(/^webhooks:\n/m, `webhooks:\n${webhook}`));
    await generate();
    expect(readFileSync(join(copy, 'generated/openapi.d.ts'), 'utf8')).toContain('"station-opened-example": {');
    expect(existsSync(join(copy, 'handlers', 'stationOpenedExample.ts'))).toBe(false);
    expect(readFileSync(join(copy, 'generated/operationIds.ts'), 'utf8')).not.toContain('station-opened-example');
    const stub = readFileSync(join(copy, 'handlers', 'listStationsExample.ts'), 'utf8');
    expect(stub).toContain("export const listStationsExample: Handler<'list-stations-example'> = async () => notImplemented('list-stations-example');");
    expect(readFileSync(join(copy, 'generated/handlers.ts'), 'utf8')).toMatch(/import \{ listStationsExample \} from '\.\.\/handlers\/listStationsExample\.js';[\s\S]*'list-stations-example': listStationsExample[,\s}]/);
    expect(readFileSync(join(copy, 'client/generated/operations.ts'), 'utf8')).toContain('"list-stations-example": { method: "get", path: "/examples/stations" },');
    // The handler map and every handler, stubs included, as the server imports them.
    writeFileSync(join(copy, 'tsconfig.handlers.json'), JSON.stringify({ extends: './tsconfig.json', include: ['handlers', 'generated/handlers.ts'] }));
    await expect(run(join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.handlers.json'], { cwd: copy })).resolves.toBeDefined();
  });

  it("client/generated/operations.ts follows the spec's markers: a newly deprecated operation gets @deprecated, a new operation a route", async () => {
    const specPath = join(copy, 'spec/openapi.yaml');
    const spec = readFileSync(specPath, 'utf8')
      .replace('      operationId: listPets\n', "      operationId: listPets\n      deprecated: true\n      x-deprecated-at: '2027-01-01T00:00:00Z'\n      x-sunset: '2031-06-30T00:00:00Z'\n      x-replacement: GET /animals\n")
      // A made-up operation on a path of its own: a spec with a deletePet of its own still gains one.
      .replace('  /pets/{petId}:\n', "  /retire-pet-example:\n    delete:\n      operationId: retirePetExample\n      summary: Remove an animal\n      responses:\n        '204':\n          description: Removed.\n  /pets/{petId}:\n");
    writeFileSync(specPath, spec);
    await expect(generate('--check')).rejects.toMatchObject({ stderr: expect.stringContaining('client/generated/operations.ts') });
    await generate();
    const operations = readFileSync(join(copy, 'client/generated/operations.ts'), 'utf8');
    expect(operations).toContain('retirePetExample: { method: "delete", path: "/retire-pet-example" },');
    expect(operations).toMatch(/\/\*\* Remove an animal: `DELETE \/retire-pet-example`\. \*\/\n {2}retirePetExample: /);
    expect(operations).toMatch(/: `GET \/pets`\.\n {3}\*\n {3}\* @deprecated Removed on 2031-06-30 \(x-sunset\): use GET \/animals instead\.\n {3}\*\/\n {2}listPets: /);
    expect(operations).toContain('@deprecated Removed on 2030-12-05 (x-sunset): use GET /pets with the status filter instead.');
    expect(operations.match(/@deprecated/g)).toHaveLength(2);
  });
});
