/**
 * A header added to the spec, on a copy of the project: `npm run generate -- --check` fails until it
 * is regenerated, then the typed client types and reads it with no code of its own. In the loop
 * suite (`npm run test:loop`) with the other project copies; the client's other header tests are
 * in test/quick/clientHeaders.test.ts.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compile, diagnosticText as text } from '../support/compile.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('a header added to the spec, on a copy of the project', () => {
  let copy = '';
  const run = promisify(execFile);
  const tsx = (...args: string[]) => run(join(root, 'node_modules', '.bin', 'tsx'), args, { cwd: copy });
  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), 'animal-store-headers-'));
    for (const entry of ['package.json', 'tsconfig.json', 'redocly.yaml', 'spec', 'generated', 'handlers', 'src', 'scripts', 'client']) {
      cpSync(join(root, entry), join(copy, entry), { recursive: true });
    }
    symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  it('makes --check fail on client/generated/operations.ts, and once regenerated the client types and parses it', async () => {
    const specPath = join(copy, 'spec/openapi.yaml');
    const anchor = "        '200':\n          description: A page of animals. It may be empty.\n          headers:\n";
    const spec = readFileSync(specPath, 'utf8');
    expect(spec).toContain(anchor);
    const added = [
      '            X-Request-ID:',
      '              description: The id the service logged this request under.',
      '              schema: { type: string }',
      '            X-Total-Count:',
      '              description: How many animals match, over every page.',
      '              required: true',
      '              schema: { type: integer, minimum: 0 }',
      '',
    ].join('\n');
    writeFileSync(specPath, spec.replace(anchor, anchor + added));
    await expect(tsx('scripts/generate.ts', '--check')).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('client/generated/operations.ts') });
    await tsx('scripts/generate.ts');
    await tsx('scripts/generate.ts', '--check');

    const use = join(copy, 'use.ts');
    writeFileSync(
      use,
      `import { createAnimalStoreClient } from './client/index.js';
const api = createAnimalStoreClient({
  baseUrl: 'http://api.test/v1',
  apiKey: 'ask_x',
  fetch: async () => new Response('[]', { headers: { 'Content-Type': 'application/json', ETag: '"t"', 'X-Request-ID': 'req-7', 'X-Total-Count': '12' } }),
});
const listed = await api.listPets();
if (listed.data) {
  const total: number = listed.headers.xTotalCount;
  const requestId: string | undefined = listed.headers.xRequestId;
  console.log(JSON.stringify({ total, requestId }));
}
`,
    );
    expect(compile(copy, [use]).map((d) => text(d))).toEqual([]);
    const { stdout } = await tsx('use.ts');
    expect(JSON.parse(stdout)).toEqual({ total: 12, requestId: 'req-7' });
  }, 180_000);
});
