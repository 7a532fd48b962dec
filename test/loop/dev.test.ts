/**
 * `npm run dev` as a developer uses it, on a copy of the project (the loop generates at start and
 * reacts to every save: in the real tree it would rewrite generated/ and restart whenever someone
 * else saved). A code edit is served after the restart; a spec edit is generated and served; an
 * invalid spec is reported and the old server keeps answering; a server that fails to start waits
 * for the next save; SIGTERM stops everything with exit 0. Everything waits by polling, with the
 * test's timeout as the only limit: restart times are measured elsewhere (docs/performance.md quotes them).
 */
import { readdirSync, readFileSync, readlinkSync, renameSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, isListening, startProcess, stopProcess, type RunningProcess } from '../../scripts/lib/processes.js';
import { copyProject, replaceOnce, runCommand, type ProjectCopy } from '../support/projectCopy.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Pids of processes running in `dir` (Linux /proc; elsewhere none are found). */
function processesIn(dir: string): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc').filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  } catch {
    return [];
  }
  return names
    .filter((name) => {
      try {
        return readlinkSync(`/proc/${name}/cwd`) === dir;
      } catch {
        return false; // gone meanwhile, or not ours to read
      }
    })
    .map(Number);
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return `${pid} (gone)`;
  }
}

describe('npm run dev', () => {
  let copy: ProjectCopy;
  let dev: RunningProcess;
  let base = '';

  /** Waits until the output printed after `from` matches `pattern`; fails if the loop exits first. */
  async function printed(pattern: RegExp, from: number): Promise<RegExpExecArray> {
    for (;;) {
      const match = pattern.exec(dev.output().slice(from));
      if (match) return match;
      if (!dev.running()) throw new Error(`npm run dev exited before printing ${pattern}:\n${dev.output()}`);
      await sleep(100);
    }
  }

  /** Polls `path` until its body satisfies `ok`; returns that body. */
  async function served(path: string, ok: (body: string) => boolean): Promise<string> {
    for (;;) {
      if (!dev.running()) throw new Error(`npm run dev exited:\n${dev.output()}`);
      try {
        const response = await fetch(base + path, { signal: AbortSignal.timeout(5000) });
        const body = await response.text();
        if (response.status === 200 && ok(body)) return body;
      } catch {
        // restarting: nothing listens for a moment
      }
      await sleep(100);
    }
  }

  beforeAll(async () => {
    copy = copyProject('animal-store-dev-');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // As package.json's `dev` script runs it.
    // As `npm run dev` runs it (exec node --import tsx): the tsx CLI in front of it gives a process
    // 30 ms to say it handles a signal, then kills it and exits 143, which a loaded machine met.
    dev = startProcess(process.execPath, ['--import', 'tsx', 'scripts/dev.ts'], {
      cwd: copy.dir,
      env: { ...process.env, PORT: String(port), SQLITE_PATH: copy.path('dev.sqlite'), DATABASE_URL: '', LOG_LEVEL: 'warn' },
    });
    await served('/healthz', () => true);
    // The generate run at start has finished, so the saves below each start one of their own.
    await printed(/Nothing to do|Wrote:|generate failed/, 0);
  }, 180_000);

  afterAll(async () => {
    if (dev) await stopProcess(dev, 'SIGKILL');
    if (!copy) return;
    // The server's watcher runs in its own process group: a SIGKILLed loop would leave it.
    for (const pid of processesIn(copy.dir)) process.kill(pid, 'SIGKILL');
    copy.remove();
  });

  it('--help says what it watches and exits 0', async () => {
    const result = await runCommand(copy.bin('tsx'), ['scripts/dev.ts', '--help'], { cwd: copy.dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Usage: npm run dev');
    expect(result.stdout).toMatch(/spec\/ +generate runs/);
  }, 60_000);

  it('a saved code edit restarts the server, which serves the new code', async () => {
    expect(JSON.parse(await served('/healthz', () => true))).toEqual({ status: 'ok' });
    copy.edit('src/pipeline/probes.ts', (text) =>
      replaceOnce(text, "'/healthz') {\n        answerJson(exchange, 200, { status: 'ok' });", "'/healthz') {\n        answerJson(exchange, 200, { status: 'ok', edited: true });", 'the /healthz answer in src/pipeline/probes.ts'),
    );
    const body = await served('/healthz', (text) => text.includes('edited'));
    expect(JSON.parse(body)).toEqual({ status: 'ok', edited: true });
  }, 120_000);

  it('a saved spec edit runs generate, and the restarted server serves the new field', async () => {
    const from = dev.output().length;
    copy.edit('spec/openapi.yaml', (text) =>
      replaceOnce(
        text,
        '      description: An animal as returned. It has every field of `NewPet` plus `id`.\n      type: object\n      required: [id, name, categoryId, status]\n      additionalProperties: false\n      properties:\n',
        '      description: An animal as returned. It has every field of `NewPet` plus `id`.\n      type: object\n      required: [id, name, categoryId, status]\n      additionalProperties: false\n      properties:\n        devLoopExampleField:\n          type: string\n',
        "Pet's properties in spec/openapi.yaml",
      ),
    );
    await printed(/Wrote:\n {2}generated\/openapi\.json\n {2}generated\/openapi\.d\.ts/, from);
    expect(copy.read('generated/openapi.d.ts')).toMatch(/devLoopExampleField\?: string/);
    const contract = await served('/openapi.json', (text) => text.includes('"devLoopExampleField"'));
    const pet = (JSON.parse(contract) as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } }).components.schemas.Pet;
    expect(pet?.properties.devLoopExampleField).toEqual({ type: 'string' });
  }, 120_000);

  it('every spec save is served, whether the file was replaced by rename (sed -i, atomic saves) or written in place after that', async () => {
    const description = (n: number) => `devLoopSave${n}`;
    const spec = copy.path('spec/openapi.yaml');
    const original = copy.read('spec/openapi.yaml');
    const titled = (n: number) => replaceOnce(original, 'info:\n  title: Animal Store API\n', `info:\n  title: Animal Store API\n  x-dev-loop-save: ${description(n)}\n`, 'the info title');
    // Replaced by rename first, then twice in place: Node 20's recursive fs.watch missed the two after a rename.
    const saves: Array<[string, () => void]> = [
      ['by rename', () => {
        writeFileSync(`${spec}.tmp`, titled(1));
        renameSync(`${spec}.tmp`, spec);
      }],
      ['in place', () => writeFileSync(spec, titled(2))],
      ['in place again', () => writeFileSync(spec, titled(3))],
    ];
    for (const [index, [, save]] of saves.entries()) {
      save();
      await served('/openapi.json', (text) => text.includes(description(index + 1)));
    }
    copy.write('spec/openapi.yaml', original);
    await served('/openapi.json', (text) => !text.includes('devLoopSave'));
  }, 90_000);

  it('a saved spec edit adding an operation: its stub is scaffolded and listed in the handler map, and the server answers its 501 at once', async () => {
    const from = dev.output().length;
    copy.edit('spec/openapi.yaml', (text) =>
      replaceOnce(
        text,
        '\npaths:\n',
        "\npaths:\n  /species-example:\n    get:\n      operationId: listSpeciesExample\n      summary: List species\n      description: Public.\n      tags: [pets]\n      security: []\n      responses:\n        '200':\n          description: Species.\n          content:\n            application/json:\n              schema:\n                type: array\n                maxItems: 10\n                items:\n                  type: string\n                  maxLength: 20\n              example: [cat]\n        '500':\n          $ref: '#/components/responses/InternalError'\n        default:\n          $ref: '#/components/responses/UnexpectedError'\n",
        'the paths of spec/openapi.yaml',
      ),
    );
    await printed(/handlers\/listSpeciesExample\.ts/, from);
    let reply: { status: number; body: string } = { status: 0, body: '' };
    for (let i = 0; i < 600 && reply.status !== 501; i++) {
      try {
        const response = await fetch(`${base}/v1/species-example`, { signal: AbortSignal.timeout(5000) });
        reply = { status: response.status, body: await response.text() };
      } catch {
        // restarting: nothing listens for a moment
      }
      if (reply.status !== 501) await sleep(100);
    }
    expect(reply.status, reply.body).toBe(501);
    expect(JSON.parse(reply.body)).toMatchObject({ status: 501, code: 'not_implemented', message: 'listSpeciesExample is in the contract but not implemented yet.' });
  }, 120_000);

  it('an invalid spec: the error is shown, nothing is generated, and the old server keeps answering', async () => {
    const spec = copy.read('spec/openapi.yaml');
    const generated = copy.read('generated/openapi.json');
    const from = dev.output().length;
    copy.write('spec/openapi.yaml', `${spec}  broken: [\n`);
    await printed(/generate failed; the server keeps running the previous contract:/, from);
    // Redocly's own message, naming the file (printed in the same write as the line above).
    expect(dev.output().slice(from)).toMatch(/Failed to parse API description at \S*spec\/openapi\.yaml/);
    expect(copy.read('generated/openapi.json')).toBe(generated);
    // The server that answers is the one from before: same contract, no restart since the save.
    expect(await served('/openapi.json', () => true)).toContain('"devLoopExampleField"');
    expect(dev.output().slice(from)).not.toContain('Restarting');

    // Fixed: generate runs again and finds nothing to change.
    const fixedFrom = dev.output().length;
    copy.write('spec/openapi.yaml', spec);
    await printed(/Nothing to do: generated files are up to date\./, fixedFrom);
  }, 120_000);

  it('a server that fails to start is not restarted in a loop; the next save starts it', async () => {
    const main = copy.read('src/main.ts');
    const from = dev.output().length;
    copy.write('src/main.ts', `throw new Error('dev test: broken on purpose');\n${main}`);
    await printed(/Error: dev test: broken on purpose/, from);
    const fixedFrom = dev.output().length;
    copy.write('src/main.ts', main);
    await printed(/Restarting|Rerunning/, fixedFrom);
    await served('/healthz', () => true);
    // One failed start for the one broken save: by now a loop would have printed it again.
    expect(dev.output().slice(from).match(/Error: dev test: broken on purpose/g)).toHaveLength(1);
  }, 120_000);

  it('SIGTERM stops the server cleanly and exits 0, leaving no process behind', async () => {
    const port = Number(new URL(base).port);
    expect(await isListening('127.0.0.1', port)).toBe(true);
    const exit = await stopProcess(dev, 'SIGTERM', 30_000);
    expect(exit, dev.output()).toEqual({ code: 0, signal: null });
    expect(await isListening('127.0.0.1', port)).toBe(false);
    // Helpers (esbuild's service) end when their parent has: give them a moment, then name any left.
    for (let i = 0; i < 100 && processesIn(copy.dir).length > 0; i++) await sleep(100);
    expect(processesIn(copy.dir).map(commandLine)).toEqual([]);
  }, 60_000);
});
