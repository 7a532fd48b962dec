/**
 * The framework and the drivers are adapters at the edge: handlers know neither HTTP nor SQL,
 * and each library is imported by the one folder that adapts it. The layers import downward
 * only, and no module imports itself through others: dependency-cruiser reads the import graph
 * as TypeScript sees it (type-only imports included, `./x.js` resolved to `./x.ts`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { beforeAll, describe, expect, it } from 'vitest';

const root = process.cwd();

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  // Static imports and dynamic import('…'): a driver loaded lazily is still imported.
  return [...text.matchAll(/^\s*import\s[^'"]*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm)].map((m) => m[1] ?? m[2] ?? '');
}

const runtime = [...sources('src'), ...sources('handlers')];

/**
 * The import graph of the modules under `folders` (paths relative to the project), with
 * dependency-cruiser's `no-circular` rule applied. Type-only imports are kept
 * (`tsPreCompilationDeps`): the compiler erases them, but they tie layers together all the same.
 */
async function importGraph(folders: readonly string[]): Promise<ICruiseResult> {
  const { output } = await cruise(
    [...folders],
    {
      baseDir: root,
      tsPreCompilationDeps: true,
      includeOnly: `^(${folders.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})/`,
      validate: true,
      ruleSet: { forbidden: [{ name: 'no-circular', severity: 'error', from: {}, to: { circular: true } }] },
    },
    {},
    { tsConfig: extractTSConfig(join(root, 'tsconfig.json')) },
  );
  if (typeof output === 'string') throw new Error('dependency-cruiser returned a report, not a graph');
  return output;
}

/** Each import cycle once, as `a.ts → b.ts → a.ts`, starting from its first module in name order. */
function cyclesIn(graph: ICruiseResult): string[] {
  const cycles = new Set<string>();
  for (const violation of graph.summary.violations) {
    if (violation.rule.name !== 'no-circular' || !violation.cycle) continue;
    // The cycle dependency-cruiser reports runs from `violation.from` round to it again.
    const members = violation.cycle.map((step) => step.name);
    const first = members.indexOf([...members].sort()[0] ?? '');
    const rotated = [...members.slice(first), ...members.slice(0, first)];
    cycles.add([...rotated, rotated[0]].join(' → '));
  }
  return [...cycles].sort();
}

/**
 * The layers, and which each may import (its own included). A module is in the first layer whose
 * pattern matches its path; test 'every module is in a layer' keeps the table complete.
 */
const LAYERS: ReadonlyArray<{ layer: string; files: RegExp; mayImport: readonly string[] }> = [
  // The spec's types, configuration, logging, reading the spec, and which errors mean an outage.
  // src/http/bodies/mergePatch.ts: RFC 7396 for handlers (through src/contract.ts); it imports nothing.
  { layer: 'shared', files: /^src\/((paths|config|logger|spec|schemas|unavailable|instant|images)|http\/bodies\/mergePatch)\.ts$/, mayImport: ['shared'] },
  // The error catalog: every code's status, body, headers and wording, and the one Refusal.
  { layer: 'errors', files: /^src\/errors\//, mayImport: ['shared', 'errors'] },
  // The handler contract and what it hands to handlers: the store's interface, cursors; API keys' format.
  { layer: 'core', files: /^src\/(contract|cursor|store\/types|auth\/apiKey)\.ts$/, mayImport: ['shared', 'errors', 'core'] },
  { layer: 'handlers', files: /^handlers\//, mayImport: ['core', 'handlers'] },
  { layer: 'store', files: /^src\/store\//, mayImport: ['shared', 'core', 'store'] },
  { layer: 'auth', files: /^src\/auth\//, mayImport: ['shared', 'core', 'auth'] },
  // Transport and the request path's building blocks: the exchange, the body reader, the responder, Express.
  { layer: 'http', files: /^src\/http\//, mayImport: ['shared', 'errors', 'core', 'auth', 'http'] },
  // The listener, its connections, node:http's own refusals, the drain at shutdown.
  { layer: 'transport', files: /^src\/transport\//, mayImport: ['shared', 'errors', 'http', 'transport'] },
  // The stages, their runner and their order (src/pipeline/requestPath.ts).
  { layer: 'pipeline', files: /^src\/pipeline\//, mayImport: ['shared', 'errors', 'core', 'auth', 'http', 'transport', 'features', 'pipeline'] },
  // Optional guarantees, one folder each, with their stage: the list puts them in (and the stage type is the pipeline's).
  { layer: 'features', files: /^src\/features\//, mayImport: ['shared', 'errors', 'core', 'auth', 'http', 'pipeline', 'store', 'features'] },
  // Composes everything: the only modules that may import every layer.
  { layer: 'composition', files: /^src\/(server|main)\.ts$/, mayImport: ['shared', 'errors', 'core', 'handlers', 'store', 'auth', 'http', 'transport', 'pipeline', 'features', 'composition'] },
];

function layerOf(file: string): (typeof LAYERS)[number] | undefined {
  return LAYERS.find((l) => l.files.test(file));
}

describe('architecture', () => {
  it('handlers import nothing but the typed contract (no Express, no SQL, no drivers)', () => {
    for (const file of sources('handlers')) {
      for (const spec of importsOf(file)) {
        expect(spec, `${file} imports ${spec}`).toMatch(/^(\.\/[A-Za-z]+\.js|\.\.\/src\/contract\.js)$/);
      }
      expect(readFileSync(join(root, file), 'utf8'), file).not.toMatch(/\b(select|insert|update|delete)\s+(\*|into|from)\b/i);
    }
  });

  it('one way to refuse: only the error catalog builds an Error body or a Refusal, and only respond.ts answers a thrown error', () => {
    const runtimeSources = sources('src');
    const read = (file: string) => readFileSync(join(root, file), 'utf8');
    // schemas.ts defines the body builders; src/errors/refusal.ts is the one caller.
    const builders = runtimeSources.filter((file) => /\b(errorBody|limitErrorBody|goneErrorBody|mediaErrorBody)\(/.test(read(file)));
    expect(builders.sort()).toEqual(['src/errors/refusal.ts', 'src/schemas.ts']);
    const constructed = [...runtimeSources, ...sources('handlers')].filter((file) => /\bnew Refusal\(/.test(read(file)));
    expect(constructed).toEqual(['src/errors/refusal.ts']);
    // A second Error-shaped type or class in the request path is how six shapes grew before.
    const shapes = runtimeSources.filter((file) => /^(export )?(class|interface|type)\s+\w*(Refusal|NotFound|Rejection|Failure)\w*\b/m.test(read(file)));
    expect(shapes).toEqual(['src/errors/refusal.ts']);
    const answerers = sources('src/http').filter((file) => /\bisDatabaseUnavailable\(/.test(read(file)));
    expect(answerers).toEqual(['src/http/respond.ts']);
  });

  const owners: Array<[string, RegExp]> = [
    ['express', /^src\/http\//],
    // The router and validators, and the contract's operations CORS derives its lists from.
    ['openapi-backend', /^src\/(http|pipeline|features\/(cors|exactlyOnce))\//],
    ['node:http', /^src\/(http|transport|pipeline|features\/(metrics|sandbox))\//],
    ['node:net', /^src\/(http|transport)\//],
    ['raw-body', /^src\/http\//],
    ['content-type', /^src\/http\//],
    ['busboy', /^src\/http\/bodies\/multipart\.ts$/],
    // A feature that keeps records (exactly-once, the deprecated calls) holds its own queries, as a resource's store module does.
    ['kysely', /^src\/(store|features\/(exactlyOnce|deprecation))\//],
    ['better-sqlite3', /^src\/store\/database\.ts$/],
    ['pg', /^src\/store\/database\.ts$/],
    ['pino', /^src\/logger\.ts$/],
    ['prom-client', /^src\/features\/metrics\/metrics\.ts$/],
    // OpenTelemetry, loaded only when traces are on: it fills the hooks the request path and the store offer.
    ['@opentelemetry', /^src\/features\/tracing\/tracing\.ts$/],
  ];
  it.each(owners)('%s is imported only where it is adapted', (library, owner) => {
    const users = runtime.filter((file) => importsOf(file).some((s) => s === library || s.startsWith(`${library}/`)));
    expect(users.length).toBeGreaterThan(0);
    for (const file of users) expect(file, `${file} imports ${library}`).toMatch(owner);
  });

  describe('the import graph of src/ and handlers/ (dependency-cruiser)', () => {
    let graph: ICruiseResult;
    beforeAll(async () => {
      graph = await importGraph(['src', 'handlers']);
    });

    it('holds every module, with every import resolved (so no check below can pass by missing one)', () => {
      expect(graph.modules.map((m) => m.source).sort()).toEqual([...runtime].sort());
      const unresolved = graph.modules.flatMap((m) => m.dependencies.filter((d) => d.couldNotResolve).map((d) => `${m.source} imports ${d.module}`));
      expect(unresolved).toEqual([]);
      // Type-only imports are in the graph: server.ts takes the server's configuration as a type alone.
      const server = graph.modules.find((m) => m.source === 'src/server.ts');
      expect(server?.dependencies.find((d) => d.resolved === 'src/config.ts')?.dependencyTypes).toContain('type-only');
    });

    it('has no import cycle, type-only imports included', () => {
      expect(cyclesIn(graph)).toEqual([]);
    });

    it('every module is in a layer, and imports only from the layers its own may import', () => {
      const misplaced: string[] = [];
      for (const module of graph.modules) {
        const from = layerOf(module.source);
        if (!from) {
          misplaced.push(`${module.source} is in no layer`);
          continue;
        }
        for (const dependency of module.dependencies) {
          const to = layerOf(dependency.resolved);
          if (!to || !from.mayImport.includes(to.layer)) misplaced.push(`${module.source} (${from.layer}) imports ${dependency.resolved} (${to?.layer ?? 'no layer'})`);
        }
      }
      expect(misplaced).toEqual([]);
    });
  });

  // generated/ is outside the graph: it lists the modules of a folder (`npm run generate`), and
  // reaches a layer only the way the one that imports it may.
  it('the generated lists import only their folder, and the handler contract takes the stores as types alone', () => {
    const lists: Array<[string, RegExp]> = [
      ['generated/handlers.ts', /^(\.\.\/handlers\/[A-Za-z0-9]+\.js|\.\.\/src\/contract\.js)$/],
      ['generated/stores.ts', /^\.\.\/src\/store\/(resources\/[A-Za-z0-9]+|resource)\.js$/],
      ['generated/migrations.ts', /^\.\.\/src\/store\/(migrations\/\d{4}_[a-z0-9_]+|migrationSql)\.js$/],
    ];
    for (const [file, allowed] of lists) for (const spec of importsOf(file)) expect(spec, `${file} imports ${spec}`).toMatch(allowed);
    expect(readFileSync(join(root, 'src/contract.ts'), 'utf8')).toMatch(/^import type \{ Stores \} from '\.\.\/generated\/stores\.js';$/m);
    const users = runtime.filter((file) => importsOf(file).some((spec) => spec.endsWith('/generated/stores.js')));
    expect(users.sort()).toEqual(['src/contract.ts', 'src/server.ts']);
  });

  it('the same cycle check reports a cycle closed by type-only imports with .js specifiers (test/fixtures/architecture/cycle)', async () => {
    const fixture = await importGraph(['test/fixtures/architecture/cycle']);
    expect(fixture.modules).toHaveLength(4);
    expect(cyclesIn(fixture)).toEqual(['test/fixtures/architecture/cycle/a.ts → test/fixtures/architecture/cycle/b.ts → test/fixtures/architecture/cycle/c.ts → test/fixtures/architecture/cycle/a.ts']);
  });
});
