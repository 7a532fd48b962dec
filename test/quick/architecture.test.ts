/**
 * The framework and the drivers are adapters at the edge: handlers know neither HTTP nor SQL,
 * and each library is imported by the one folder that adapts it. The layers import downward
 * only, and no module imports itself through others: dependency-cruiser reads the import graph
 * as TypeScript sees it (type-only imports included, `./x.js` resolved to `./x.ts`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { cruise, type ICruiseResult, type IForbiddenRuleType } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { beforeAll, describe, expect, it } from 'vitest';

const root = process.cwd();

/** A feature's tests sit in its folder (src/features/<name>/*.test.ts) but are not part of the server. */
const TEST_FILE = /\.test\.ts$/;

/** The server's modules under `dir`: its .ts files but the tests beside them. */
function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !TEST_FILE.test(e.name))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  // Static imports and dynamic import('…'): a driver loaded lazily is still imported.
  return [...text.matchAll(/^\s*import\s[^'"]*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm)].map((m) => m[1] ?? m[2] ?? '');
}

const runtime = [...sources('src'), ...sources('handlers')];

/**
 * The layers, lowest first: each is a folder, and which layers it may import (its own always).
 * The composition root is the files directly in src/ (src/server.ts, src/main.ts).
 */
const LAYERS: ReadonlyArray<{ layer: string; folder: string; mayImport: readonly string[] }> = [
  // The spec's types and the Error bodies' builders, configuration, logging, reading the spec, which errors mean an outage.
  { layer: 'shared', folder: 'src/shared', mayImport: [] },
  // The error catalog: every code's status, body, headers and wording, and the one Refusal.
  { layer: 'errors', folder: 'src/errors', mayImport: ['shared'] },
  // The handler contract and what it hands to handlers (cursors, merge patch); API keys' format.
  { layer: 'domain', folder: 'src/domain', mayImport: ['shared', 'errors'] },
  { layer: 'handlers', folder: 'handlers', mayImport: ['domain'] },
  { layer: 'store', folder: 'src/store', mayImport: ['shared', 'domain'] },
  { layer: 'auth', folder: 'src/auth', mayImport: ['shared', 'domain'] },
  // The request path's building blocks: the exchange, the body readers, the responder, Express.
  { layer: 'http', folder: 'src/http', mayImport: ['shared', 'errors', 'domain', 'auth'] },
  // The listener, its connections, node:http's own refusals, the drain at shutdown.
  { layer: 'transport', folder: 'src/transport', mayImport: ['shared', 'errors', 'http'] },
  // The stages, their runner and their order (src/pipeline/requestPath.ts).
  { layer: 'pipeline', folder: 'src/pipeline', mayImport: ['shared', 'errors', 'domain', 'auth', 'http', 'transport', 'features'] },
  // Features, one folder each (src/features/feature.ts: settings, a start into stages and a close) with their tables; the stage contract is http's, so no feature imports the pipeline.
  { layer: 'features', folder: 'src/features', mayImport: ['shared', 'errors', 'domain', 'auth', 'http', 'store'] },
];
const COMPOSITION = /^src\/[^/]+\.ts$/;

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const under = (folders: readonly string[]) => `^(${folders.map(escape).join('|')})/`;

/**
 * One dependency-cruiser rule per layer: from its folder, nothing outside its own and the folders
 * it may import. `base` puts the same folders under another root (the fixture below).
 */
function layerRules(base = ''): IForbiddenRuleType[] {
  const folderOf = (name: string) => `${base}${LAYERS.find((l) => l.layer === name)?.folder ?? name}`;
  return LAYERS.map(({ layer, mayImport }) => ({
    name: `layer-${layer}`,
    severity: 'error',
    from: { path: under([folderOf(layer)]) },
    to: { pathNot: under([layer, ...mayImport].map(folderOf)) },
  }));
}

/**
 * The import graph of the modules under `folders` (paths relative to the project), with
 * dependency-cruiser's `no-circular` rule and the layers' rules applied. Type-only imports are
 * kept (`tsPreCompilationDeps`): the compiler erases them, but they tie layers together all the same.
 */
async function importGraph(folders: readonly string[], rules: IForbiddenRuleType[] = layerRules()): Promise<ICruiseResult> {
  const { output } = await cruise(
    [...folders],
    {
      baseDir: root,
      tsPreCompilationDeps: true,
      includeOnly: under(folders),
      exclude: { path: TEST_FILE.source },
      validate: true,
      ruleSet: { forbidden: [{ name: 'no-circular', severity: 'error', from: {}, to: { circular: true } }, ...rules] },
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

describe('architecture', () => {
  it('handlers import nothing but the typed contract (no Express, no SQL, no drivers)', () => {
    for (const file of sources('handlers')) {
      for (const spec of importsOf(file)) {
        expect(spec, `${file} imports ${spec}`).toMatch(/^(\.\/[A-Za-z]+\.js|\.\.\/src\/domain\/contract\.js)$/);
      }
      expect(readFileSync(join(root, file), 'utf8'), file).not.toMatch(/\b(select|insert|update|delete)\s+(\*|into|from)\b/i);
    }
  });

  it('one way to refuse: only the error catalog builds an Error body or a Refusal, and only respond.ts answers a thrown error', () => {
    const runtimeSources = sources('src');
    const read = (file: string) => readFileSync(join(root, file), 'utf8');
    // schemas.ts defines the body builders; src/errors/refusal.ts is the one caller.
    const builders = runtimeSources.filter((file) => /\b(errorBody|limitErrorBody|goneErrorBody|mediaErrorBody)\(/.test(read(file)));
    expect(builders.sort()).toEqual(['src/errors/refusal.ts', 'src/shared/schemas.ts']);
    const constructed = [...runtimeSources, ...sources('handlers')].filter((file) => /\bnew Refusal\(/.test(read(file)));
    expect(constructed).toEqual(['src/errors/refusal.ts']);
    // A second Error-shaped type or class in the request path is how six shapes grew before.
    const shapes = runtimeSources.filter((file) => /^(export )?(class|interface|type)\s+\w*(Refusal|NotFound|Rejection|Failure)\w*\b/m.test(read(file)));
    expect(shapes).toEqual(['src/errors/refusal.ts']);
    const answerers = sources('src/http').filter((file) => /\bisDatabaseUnavailable\(/.test(read(file)));
    expect(answerers).toEqual(['src/http/respond.ts']);
  });

  it('one writer: no answer is written outside src/http/respond.ts (Express sends only the docs and the contract)', () => {
    const read = (file: string) => readFileSync(join(root, file), 'utf8');
    // What writes an answer's head or body on node:http, Express or a bare socket: writeHead, a
    // write or an end with something to send, Express's send, sendFile and json. A socket ended
    // with the writer's own bytes (node:http's refusals, src/transport/clientError.ts) is the writer's answer.
    const WRITES = /(?<=[\w)\]])\.(writeHead|sendFile|send|json)\(|(?<=[\w)\]])(?<!process\.stdout)\.(write|end)\((?!\s*\)|refusalBytes\()/g;
    const writers = runtime.flatMap((file) => [...read(file).matchAll(WRITES)].map((m) => `${file}: ${m[0]}`));
    // Sanity: the pattern sees the responder's own writes.
    expect(writers.filter((w) => w.startsWith('src/http/respond.ts'))).not.toEqual([]);
    // Express's routes send the contract's JSON and the docs' pages and files; its refusals go to the responder.
    // The webhooks' sender ends the request it sends to a receiver: a request, not an answer.
    const allowed = (w: string) => w.startsWith('src/http/respond.ts:') || /^src\/http\/express\.ts: \.(send|sendFile)\($/.test(w) || w === 'src/features/webhooks/send.ts: .end(';
    expect(writers.filter((w) => !allowed(w))).toEqual([]);
  });

  /** Each library and the folders (or files) that adapt it: nothing else may import it. */
  const owners: Array<[string, readonly string[]]> = [
    ['express', ['src/http/']],
    // The router and validators, and the contract's operations CORS derives its lists from.
    ['openapi-backend', ['src/http/', 'src/pipeline/', 'src/features/feature.ts', 'src/features/cors/', 'src/features/exactlyOnce/']],
    // The webhooks' sender: a client of receivers, pinned to the address its check resolved.
    ['node:http', ['src/http/', 'src/transport/', 'src/pipeline/', 'src/features/feature.ts', 'src/features/metrics/', 'src/features/sandbox/', 'src/features/webhooks/send.ts']],
    ['node:net', ['src/http/', 'src/transport/', 'src/features/webhooks/address.ts', 'src/features/webhooks/send.ts']],
    ['raw-body', ['src/http/']],
    ['content-type', ['src/http/']],
    ['busboy', ['src/http/bodies/multipart.ts']],
    // A feature that keeps records (exactly-once, the deprecated calls, the webhooks' endpoints and deliveries) or empties them (the sandbox's reset) holds its own queries, as a resource's store module does.
    ['kysely', ['src/store/', 'src/features/exactlyOnce/', 'src/features/deprecation/', 'src/features/sandbox/', 'src/features/webhooks/']],
    ['better-sqlite3', ['src/store/database.ts']],
    ['pg', ['src/store/database.ts']],
    ['pino', ['src/shared/logger.ts']],
    ['prom-client', ['src/features/metrics/metrics.ts']],
    // OpenTelemetry, loaded only when traces are on: it fills the hooks the request path and the store offer.
    ['@opentelemetry', ['src/features/tracing/tracing.ts']],
  ];
  it.each(owners)('%s is imported only where it is adapted', (library, owner) => {
    const users = runtime.filter((file) => importsOf(file).some((s) => s === library || s.startsWith(`${library}/`)));
    expect(users.length).toBeGreaterThan(0);
    expect(users.filter((file) => !owner.some((place) => (place.endsWith('/') ? file.startsWith(place) : file === place))), `imports ${library}`).toEqual([]);
  });

  it('no folder of src/ or scripts/ holds more than 12 source files side by side (a folder says what lives in it)', () => {
    const counts = new Map<string, number>();
    for (const file of [...sources('src'), ...sources('scripts')]) {
      const folder = file.slice(0, file.lastIndexOf('/'));
      counts.set(folder, (counts.get(folder) ?? 0) + 1);
    }
    expect(counts.size).toBeGreaterThan(10);
    expect([...counts].filter(([, count]) => count > 12)).toEqual([]);
  });

  it("the server imports none of the tests beside its features, nor test/'s helpers", () => {
    const users = runtime.filter((file) => importsOf(file).some((spec) => /\.test\.js$|(^|\/)test\//.test(spec)));
    expect(users).toEqual([]);
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

    it('every module is in a layer folder (or is the composition root), and imports only from the layers its own may import', () => {
      const homeless = graph.modules.map((m) => m.source).filter((source) => !COMPOSITION.test(source) && !LAYERS.some(({ folder }) => source.startsWith(`${folder}/`)));
      expect(homeless).toEqual([]);
      const misplaced = graph.summary.violations.filter((v) => v.rule.name.startsWith('layer-')).map((v) => `${v.from} (${v.rule.name}) imports ${v.to}`);
      expect(misplaced).toEqual([]);
    });

  });

  // generated/ is outside the graph: it lists the modules of a folder (`npm run generate`), and
  // reaches a layer only the way the one that imports it may.
  it('the generated lists import only their folder, and the handler contract takes the stores as types alone', () => {
    const lists: Array<[string, RegExp]> = [
      ['generated/handlers.ts', /^(\.\.\/handlers\/[A-Za-z0-9_$]+\.js|\.\.\/src\/domain\/contract\.js)$/],
      ['generated/stores.ts', /^\.\.\/src\/store\/(resources\/[A-Za-z0-9]+|resource)\.js$/],
      // The served ids are the spec's alone: no import at all.
      ['generated/operationIds.ts', /(?!)/],
      // The store's migrations and each feature's, beside its code.
      ['generated/migrations.ts', /^\.\.\/src\/(store\/migrations\/\d{4}_[a-z0-9_]+|features\/[A-Za-z]+\/migrations\/\d{4}_[a-z0-9_]+|store\/migrationSql)\.js$/],
    ];
    for (const [file, allowed] of lists) for (const spec of importsOf(file)) expect(spec, `${file} imports ${spec}`).toMatch(allowed);
    expect(readFileSync(join(root, 'src/domain/contract.ts'), 'utf8')).toMatch(/^import type \{ Stores \} from '\.\.\/\.\.\/generated\/stores\.js';$/m);
    const users = runtime.filter((file) => importsOf(file).some((spec) => spec.endsWith('/generated/stores.js')));
    expect(users.sort()).toEqual(['src/domain/contract.ts', 'src/server.ts']);
  });

  it('the same layer rules report an import against the layers (test/fixtures/architecture/layers: src/shared/ importing src/domain/) and pass the one along them', async () => {
    const base = 'test/fixtures/architecture/layers/';
    const fixture = await importGraph([base.slice(0, -1)], layerRules(base));
    expect(fixture.modules).toHaveLength(3);
    expect(fixture.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)).toEqual([`layer-shared: ${base}src/shared/spec.ts → ${base}src/domain/contract.ts`]);
  });

  it('the same cycle check reports a cycle closed by type-only imports with .js specifiers (test/fixtures/architecture/cycle)', async () => {
    const fixture = await importGraph(['test/fixtures/architecture/cycle']);
    expect(fixture.modules).toHaveLength(4);
    expect(cyclesIn(fixture)).toEqual(['test/fixtures/architecture/cycle/a.ts → test/fixtures/architecture/cycle/b.ts → test/fixtures/architecture/cycle/c.ts → test/fixtures/architecture/cycle/a.ts']);
  });
});
