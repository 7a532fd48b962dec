/**
 * The client package as a frontend team meets it (issue 40): `npm run build:client`'s tarball,
 * installed with npm into an empty project outside this repository, its dependencies from the
 * registry. The package is what its manifest says (ESM, exports with types and import, no side
 * effects, openapi-fetch, structured-headers and standardwebhooks only, the contract's version, changelog and
 * document), points nowhere outside itself; the team's TypeScript compiles a right call under
 * `moduleResolution` bundler and node16 and refuses a misspelled field and a wrong path; an editor
 * strikes the deprecated operation through; a browser app calling only listPets pulls at most
 * 12 kB min+gzip from it. The client of a frozen release is rebuilt from spec/released/.
 * Running it: test/processes/clientPackageNode.test.ts (Node, against the server),
 * test/browser/clientPackageBrowser.test.ts (Chromium, against the sandbox). Publishing: npm
 * accepts the very tarball as it is (a dry run, below): what a registry then stores and serves
 * by name is npm's and the registry's doing, not the package's.
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/shared/paths.js';
import { compileCases, compilerOptionsOf } from '../support/compile.js';
import { consumerWithTarball, LIST_PETS_APP, npm, type Consumer } from '../support/clientConsumer.js';
import { copyProject, replaceOnce, runCommand } from '../support/projectCopy.js';

const rootManifest = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
const contractVersion = (JSON.parse(readFileSync(join(projectRoot, 'generated', 'openapi.json'), 'utf8')) as { info: { version: string } }).info.version;

let consumer: Consumer;
let installed: string;

beforeAll(async () => {
  consumer = await consumerWithTarball('animal-store-consumer');
  installed = join(consumer.dir, 'node_modules', '@animal-store', 'client');
}, 300_000);
afterAll(() => consumer?.remove());

/** Every file of a folder, recursively, relative to it. */
const filesUnder = (dir: string) => readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((file) => statSync(join(dir, file)).isFile()).sort();

describe("client/package.json, the package's manifest in this repository", () => {
  it("says the contract's version (npm run release sets both) and the same pins of openapi-fetch, structured-headers and standardwebhooks as the project", () => {
    const manifest = JSON.parse(readFileSync(join(projectRoot, 'client', 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
    expect(manifest.version).toBe(contractVersion);
    expect(manifest.dependencies).toEqual({ 'openapi-fetch': rootManifest.dependencies['openapi-fetch'], 'structured-headers': rootManifest.dependencies['structured-headers'], standardwebhooks: rootManifest.dependencies.standardwebhooks });
    expect(Object.values(manifest.dependencies).filter((range) => !/^\d+\.\d+\.\d+$/.test(range))).toEqual([]);
  });
});

describe('the tarball of npm run build:client, installed into an empty project', () => {
  it(`is @animal-store/client ${contractVersion}, the contract's version: ESM, exports with types and import, no side effects, honest engines`, () => {
    expect(consumer.client.tarball.endsWith(`animal-store-client-${contractVersion}.tgz`)).toBe(true);
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({
      name: '@animal-store/client',
      version: contractVersion,
      type: 'module',
      sideEffects: false,
      exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' } },
      engines: { node: '>=20' },
    });
    // The versions the server's own client code is tested with, pinned the same way.
    expect(manifest.dependencies).toEqual({ 'openapi-fetch': rootManifest.dependencies['openapi-fetch'], 'structured-headers': rootManifest.dependencies['structured-headers'], standardwebhooks: rootManifest.dependencies.standardwebhooks });
    expect(JSON.parse(readFileSync(join(consumer.dir, 'package.json'), 'utf8'))).toMatchObject({ dependencies: { '@animal-store/client': expect.stringMatching(/animal-store-client-.*\.tgz$/) } });
  });

  it('is publishable as it is: not private, and npm publish takes the very tarball (its integrity) as @animal-store/client <version>', () => {
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    // npm refuses to publish a private package (EPRIVATE), which a dry run does not check.
    expect(manifest.private).toBeUndefined();
    expect(manifest.publishConfig).toBeUndefined();
    // A dry run, offline, to a registry that is not there: npm reads and checks the manifest inside
    // the tarball, and says what it would send, without asking a registry anything.
    const report = JSON.parse(npm(consumer.dir, ['publish', '--dry-run', '--offline', '--json', consumer.client.tarball, '--registry', 'http://127.0.0.1:9/'])) as Record<string, { id: string; integrity: string }>;
    const integrity = `sha512-${createHash('sha512').update(readFileSync(consumer.client.tarball)).digest('base64')}`;
    expect(report['@animal-store/client']).toMatchObject({ id: `@animal-store/client@${contractVersion}`, integrity });
  }, 60_000);

  it("carries the contract's document and its changelog section for this version", () => {
    expect(readFileSync(join(installed, 'openapi.json'), 'utf8')).toBe(readFileSync(join(projectRoot, 'generated', 'openapi.json'), 'utf8'));
    const changelog = readFileSync(join(installed, 'CHANGELOG.md'), 'utf8');
    expect(changelog).toMatch(new RegExp(`^## Contract ${contractVersion.replaceAll('.', '\\.')} \\(\\d{4}-\\d{2}-\\d{2}\\)$`, 'm'));
    // This version's section only: none of an older one.
    expect(changelog.match(/^## /gm)).toHaveLength(1);
    expect(changelog).toContain('### Changes by operation');
  });

  it('holds JavaScript and declarations only, and imports nothing outside itself but its two dependencies', () => {
    const shipped = filesUnder(installed).filter((file) => /\.(js|ts)$/.test(file));
    expect(shipped).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'dist/generated/operations.js', 'dist/generated/openapi.d.ts']));
    expect(shipped.filter((file) => !file.startsWith('dist/') || file.endsWith('.test.ts') || (file.endsWith('.ts') && !file.endsWith('.d.ts')))).toEqual([]);
    const outside: string[] = [];
    for (const file of shipped) {
      const text = readFileSync(join(installed, file), 'utf8');
      for (const [, specifier = ''] of text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
        if (specifier.startsWith('.')) {
          const target = resolve(dirname(join(installed, file)), specifier);
          const inside = !relative(installed, target).startsWith('..');
          const exists = [target, target.replace(/\.js$/, '.d.ts')].some((candidate) => existsSync(candidate));
          if (!inside || !exists) outside.push(`${file}: ${specifier}`);
        } else if (!['openapi-fetch', 'structured-headers', 'standardwebhooks'].includes(specifier)) {
          outside.push(`${file}: ${specifier}`);
        }
      }
    }
    expect(outside).toEqual([]);
  });
});

/** Writes a sub-project of the consumer with its own tsconfig.json; node_modules is the consumer's, found by walking up. */
function tsProject(name: string, compilerOptions: Record<string, unknown>): string {
  const dir = join(consumer.dir, name);
  mkdirSync(dir, { recursive: true });
  const options = { target: 'ES2022', lib: ['ES2022', 'DOM'], strict: true, noEmit: true, skipLibCheck: false, types: [], ...compilerOptions };
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: options }, null, 2));
  return dir;
}

const CASES = {
  rightCalls: `${LIST_PETS_APP}
import type { NewPet, Pet } from '@animal-store/client';
export async function addOne(api: ReturnType<typeof import('@animal-store/client').createAnimalStoreClient>): Promise<Pet | undefined> {
  const pet: NewPet = { name: 'Biscuit', categoryId: 2 };
  const created = await api.createPet({ body: pet, params: { header: { 'Idempotency-Key': 'k-1' } } });
  if (created.data) return created.data;
  const code: string | undefined = created.error?.code;
  return code === undefined ? undefined : undefined;
}
`,
  misspelledField: `import { createAnimalStoreClient } from '@animal-store/client';
const api = createAnimalStoreClient({ baseUrl: 'http://localhost:8080/v1', apiKey: 'k' });
export const call = api.createPet({ body: { nmae: 'Biscuit', categoryId: 2 } });
`,
  wrongPath: `import { createAnimalStoreClient } from '@animal-store/client';
const api = createAnimalStoreClient({ baseUrl: 'http://localhost:8080/v1', apiKey: 'k' });
export const call = api.GET('/petz', { params: { query: { limit: 1 } } });
`,
} as const;

describe.each([
  { resolution: 'bundler', options: { module: 'preserve', moduleResolution: 'bundler' } },
  { resolution: 'node16', options: { module: 'node16', moduleResolution: 'node16' } },
])("the team's TypeScript, moduleResolution $resolution (strict, the package's declarations checked too)", ({ resolution, options }) => {
  let dir: string;
  let diagnostics: Map<keyof typeof CASES | 'elsewhere', string[]>;
  beforeAll(() => {
    dir = tsProject(`ts-${resolution}`, options);
    diagnostics = compileCases(dir, join(dir, 'src'), CASES);
  }, 120_000);

  it("resolves @animal-store/client to the installed package's declarations, through its exports", () => {
    const resolved = ts.resolveModuleName('@animal-store/client', join(dir, 'src', 'rightCalls.ts'), compilerOptionsOf(dir), ts.sys).resolvedModule;
    expect(resolved?.resolvedFileName).toBe(join(consumer.dir, 'node_modules', '@animal-store', 'client', 'dist', 'index.d.ts'));
  });

  it('compiles the right calls, with no error anywhere (the package and its dependencies included)', () => {
    expect(diagnostics.get('rightCalls')).toBeUndefined();
    expect(diagnostics.get('elsewhere')).toBeUndefined();
  });

  it('refuses a misspelled body field and a path the contract does not have', () => {
    expect(diagnostics.get('misspelledField')?.join('\n')).toMatch(/TS2353: Object literal may only specify known properties, and 'nmae' does not exist/);
    expect(diagnostics.get('wrongPath')?.join('\n')).toMatch(/TS2345: Argument of type '"\/petz"' is not assignable/);
  });
});

describe("the team's editor", () => {
  it("strikes api.getPet through (suggestion 6385) and says on hover when it goes and what replaces it; listPets is not struck", () => {
    const dir = tsProject('editor', { module: 'preserve', moduleResolution: 'bundler' });
    const file = join(dir, 'calls.ts');
    const text = `import { createAnimalStoreClient } from '@animal-store/client';
const api = createAnimalStoreClient({ baseUrl: 'http://localhost:8080/v1', apiKey: 'k' });
export const old = api.getPet({ params: { path: { petId: 1 } } });
export const current = api.listPets();
`;
    writeFileSync(file, text);
    const options = compilerOptionsOf(dir);
    const host: ts.LanguageServiceHost = {
      getScriptFileNames: () => [file],
      getScriptVersion: () => '1',
      getScriptSnapshot: (name) => {
        const content = ts.sys.readFile(name);
        return content === undefined ? undefined : ts.ScriptSnapshot.fromString(content);
      },
      getCurrentDirectory: () => dir,
      getCompilationSettings: () => options,
      getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
      fileExists: ts.sys.fileExists,
      readFile: ts.sys.readFile,
      readDirectory: ts.sys.readDirectory,
      directoryExists: ts.sys.directoryExists,
      getDirectories: ts.sys.getDirectories,
    };
    const service = ts.createLanguageService(host, ts.createDocumentRegistry());
    try {
      expect(service.getSemanticDiagnostics(file)).toEqual([]);
      const deprecated = service
        .getSuggestionDiagnostics(file)
        .filter((d) => d.reportsDeprecated)
        .map((d) => ({ code: d.code, marked: text.slice(d.start, d.start + d.length) }));
      expect(deprecated).toEqual([{ code: 6385, marked: 'getPet' }]);
      const info = service.getQuickInfoAtPosition(file, text.indexOf('getPet') + 1);
      expect(info?.tags?.map((tag) => `@${tag.name} ${ts.displayPartsToString(tag.text)}`)).toEqual(['@deprecated Removed on 2030-12-05 (x-sunset): use GET /pets with the status filter instead.']);
    } finally {
      service.dispose();
    }
  }, 120_000);
});

describe('a browser app that calls only listPets', () => {
  it('pulls at most 12 kB, minified and gzipped, from the package and its dependencies (esbuild metafile)', async () => {
    const entry = join(consumer.dir, 'size-app.ts');
    writeFileSync(entry, `${LIST_PETS_APP}\nlistPets('https://api.animal-store.example/v1', 'k').then((r) => console.log(r.names));\n`);
    const result = await build({ absWorkingDir: consumer.dir, entryPoints: [entry], bundle: true, minify: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, metafile: true, logLevel: 'silent' });
    const [output] = Object.values(result.metafile.outputs);
    const inputs = Object.entries(output?.inputs ?? {});
    const fromPackages = inputs.filter(([file]) => file.startsWith('node_modules/'));
    const byPackage = new Map<string, number>();
    for (const [file, input] of fromPackages) {
      const name = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1] ?? file;
      byPackage.set(name, (byPackage.get(name) ?? 0) + input.bytesInOutput);
    }
    const code = result.outputFiles[0]?.contents ?? new Uint8Array();
    const gzipped = gzipSync(code).length;
    const ownApp = inputs.filter(([file]) => !file.startsWith('node_modules/')).reduce((sum, [, input]) => sum + input.bytesInOutput, 0);
    console.log(`listPets-only browser app: ${code.length} B minified, ${gzipped} B min+gzip (its own code ${ownApp} B minified); from the packages, minified: ${[...byPackage].map(([name, bytes]) => `${name} ${bytes} B`).join(', ')}`);
    expect([...byPackage.keys()].sort()).toEqual(['@animal-store/client', 'openapi-fetch', 'structured-headers']);
    // The whole bundle, the app's few bytes included: what the app pulls in is at most this.
    expect(gzipped).toBeLessThanOrEqual(12_000);
  }, 60_000);
});

describe('an app that imports one helper', () => {
  it("bundles only that helper's modules: sideEffects false lets a bundler drop openapi-fetch, structured-headers and the operation table", async () => {
    const entry = join(consumer.dir, 'helper-app.ts');
    writeFileSync(entry, `import { nextLink } from '@animal-store/client';\nconsole.log(nextLink('</v1/pets?cursor=a>; rel="next"'));\n`);
    const result = await build({ absWorkingDir: consumer.dir, entryPoints: [entry], bundle: true, minify: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, metafile: true, logLevel: 'silent' });
    const [output] = Object.values(result.metafile.outputs);
    const fromPackages = Object.entries(output?.inputs ?? {}).filter(([file, input]) => file.startsWith('node_modules/') && input.bytesInOutput > 0).map(([file]) => file);
    expect(fromPackages.sort()).toEqual(['node_modules/@animal-store/client/dist/index.js', 'node_modules/@animal-store/client/dist/linkHeader.js']);
  }, 60_000);
});

describe('the client of a frozen release', () => {
  it('is rebuilt from spec/released/<x.y.z>.json by npm run build:client -- --release: its version, its contract, its changelog section', () => {
    const out = mkdtempSync(join(tmpdir(), 'animal-store-client-release-'));
    try {
      execFileSync(join(projectRoot, 'node_modules', '.bin', 'tsx'), ['scripts/buildClient.ts', '--release', '1.1.0', '--out', out], { cwd: projectRoot, encoding: 'utf8' });
      const tarball = join(out, 'animal-store-client-1.1.0.tgz');
      const read = (file: string) => execFileSync('tar', ['-xzOf', tarball, `package/${file}`], { encoding: 'utf8' });
      expect(JSON.parse(read('package.json'))).toMatchObject({ name: '@animal-store/client', version: '1.1.0' });
      expect(read('openapi.json')).toBe(readFileSync(join(projectRoot, 'spec', 'released', '1.1.0.json'), 'utf8'));
      expect(read('CHANGELOG.md')).toMatch(/^## Contract 1\.1\.0 \(2026-11-25\)$/m);
      // 1.2.0 added GoneError (getPet's 410); the types of 1.1.0's client do not have it.
      expect(read('dist/generated/openapi.d.ts')).not.toContain('GoneError');
      expect(readFileSync(join(installed, 'dist', 'generated', 'openapi.d.ts'), 'utf8')).toContain('GoneError');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('npm run build:client on a working contract with unreleased changes', () => {
  it('refuses, naming the release to make, and writes no tarball: a package version names one contract', async () => {
    const copy = copyProject('animal-store-client-unreleased-');
    try {
      copy.edit('spec/openapi.yaml', (text) => replaceOnce(text, 'summary: List animals', 'summary: List the animals', "listPets' summary"));
      const generate = await runCommand(copy.bin('tsx'), ['scripts/generate.ts'], { cwd: copy.dir });
      expect(generate.code, generate.stderr).toBe(0);
      const build = await runCommand(copy.bin('tsx'), ['scripts/buildClient.ts'], { cwd: copy.dir });
      expect(build.code).toBe(1);
      expect(build.stderr).toContain(`the working contract (generated/openapi.json, version ${contractVersion}) is not the frozen release spec/released/${contractVersion}.json`);
      expect(build.stderr).toContain('npm run release -- <x.y.z>');
      expect(existsSync(copy.path('dist', 'client'))).toBe(false);
      // The frozen releases still build.
      const release = await runCommand(copy.bin('tsx'), ['scripts/buildClient.ts', '--release', contractVersion], { cwd: copy.dir });
      expect(release.code, release.stderr).toBe(0);
      expect(existsSync(copy.path('dist', 'client', `animal-store-client-${contractVersion}.tgz`))).toBe(true);
    } finally {
      copy.remove();
    }
  }, 120_000);
});
