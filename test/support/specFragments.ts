/**
 * Pastes fragments of a spec (test/fixtures/spec-loop/*.yaml: `paths`, `components`, `tags`) into a
 * copy's spec/openapi.yaml, as a user would, keeping the spec's text and formatting. Shared by the
 * tests that run the spec loop on a copy of the project (test/loop/spec-loop.test.ts,
 * test/loop/storeRecipes.test.ts), so the operations a fixture adds stay what it says whatever the
 * spec gains:
 *
 * - a component the spec has already (`Owner`, `Tag`, a scheme `api_key`) is added under a free
 *   name (`OwnerSpecLoop`), its `$ref`s and security requirements renamed with it;
 * - an operationId the spec has already is an error naming the fixture, unless the fragment is
 *   pasted with `renameTakenOperationIds` (the Swagger Petstore's own names: a spec may well have
 *   a `deletePet` of its own, as docs/architecture.md's recipes suggest), which adds it as `<id>Petstore`;
 * - a path the spec has already is an error naming the fixture;
 * - a tag the spec lacks is added to its top-level list.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml, parseDocument, type Document } from 'yaml';
import { join, relative as relativePath } from 'node:path';
import { projectRoot } from './projectCopy.js';

type Components = Record<string, Record<string, unknown>>;
interface Fragment {
  paths: Record<string, unknown>;
  /** What the server sends (OpenAPI 3.1's `webhooks`): pasted as they are, never renamed. */
  webhooks?: Record<string, unknown>;
  components?: Components;
  tags?: Array<{ name: string }>;
}

export interface FragmentFile {
  file: string;
  /** Give an operationId the spec already has the suffix `Petstore` instead of failing. */
  renameTakenOperationIds?: boolean;
}

const FIXTURES = join(projectRoot, 'test', 'fixtures', 'spec-loop');

/** What test/loop/spec-loop.test.ts pastes (and test/loop/storeRecipes.test.ts, for its copy's quick suite): its fixtures, the Petstore's names kept where free. */
export const SPEC_LOOP_FRAGMENTS: readonly FragmentFile[] = [
  { file: join(FIXTURES, 'operations.yaml') },
  { file: join(FIXTURES, 'bodies.yaml') },
  { file: join(FIXTURES, 'petstore-pets.yaml'), renameTakenOperationIds: true },
  { file: join(FIXTURES, 'real-api.yaml') },
];

export interface Pasted {
  text: string;
  /** Each pasted operation's operationId as the fixture spells it → as it is in the spec. */
  operationIds: Map<string, string>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const isNode = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The operations of a fragment's paths: [path, method, operation]. */
function operationsOf(paths: Record<string, unknown>): Array<[string, string, Record<string, unknown>]> {
  return Object.entries(paths).flatMap(([path, item]) => (isNode(item) ? METHODS.filter((m) => isNode(item[m])).map((m): [string, string, Record<string, unknown>] => [path, m, item[m] as Record<string, unknown>]) : []));
}

/** The operationIds a fixture file declares, in its order. */
export function fixtureOperationIds(file: string): string[] {
  const fragment = parseYaml(readFileSync(file, 'utf8')) as Fragment;
  return operationsOf(fragment.paths).map(([, , operation]) => String(operation.operationId));
}

/** Every fragment's components under a name the spec does not have, their `$ref`s and security requirements renamed too. */
function withFreeComponentNames(doc: Document, additions: Fragment): Fragment {
  const renamed = new Map<string, string>();
  const components: Components = {};
  for (const [section, entries] of Object.entries(additions.components ?? {})) {
    components[section] = {};
    for (const [name, value] of Object.entries(entries)) {
      let free = name;
      for (let n = 1; doc.hasIn(['components', section, free]); n += 1) free = `${name}SpecLoop${n === 1 ? '' : n}`;
      if (free !== name) renamed.set(`#/components/${section}/${name}`, `#/components/${section}/${free}`);
      components[section][free] = value;
    }
  }
  const schemes = new Map([...renamed].filter(([from]) => from.startsWith('#/components/securitySchemes/')).map(([from, to]) => [from.split('/').at(-1) as string, to.split('/').at(-1) as string]));
  const rename = (node: unknown, key?: string): unknown => {
    if (Array.isArray(node)) return key === 'security' ? node.map((requirement: Record<string, unknown>) => Object.fromEntries(Object.entries(requirement).map(([scheme, scopes]) => [schemes.get(scheme) ?? scheme, scopes]))) : node.map((item) => rename(item));
    if (node === null || typeof node !== 'object') return node;
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' ? (renamed.get(v) ?? v) : rename(v, k)]));
  };
  return { ...(rename({ paths: additions.paths, webhooks: additions.webhooks ?? {}, components }) as Fragment), tags: additions.tags ?? [] };
}

/** `specText` with every fragment's paths, components and tags added (see the module's comment). */
export function pasteFragments(specText: string, files: readonly FragmentFile[]): Pasted {
  const doc = parseDocument(specText);
  const taken = new Set([...specText.matchAll(/operationId:\s*([A-Za-z0-9_]+)/g)].map((m) => m[1]));
  const operationIds = new Map<string, string>();
  const merged: Fragment = { paths: {}, webhooks: {}, components: {}, tags: [] };
  for (const { file, renameTakenOperationIds = false } of files) {
    const fragment = parseYaml(readFileSync(file, 'utf8')) as Fragment;
    const where = relativePath(projectRoot, file);
    for (const [path, , operation] of operationsOf(fragment.paths)) {
      const id = String(operation.operationId);
      if (operationIds.has(id)) throw new Error(`${where}: operationId ${id} is pasted twice`);
      if (doc.hasIn(['paths', path])) throw new Error(`the spec already has the path ${path}: rename it in ${where}`);
      let actual = id;
      if (taken.has(id)) {
        if (!renameTakenOperationIds) throw new Error(`the spec already has an operation ${id}: rename it in ${where}`);
        actual = `${id}Petstore`;
        if (taken.has(actual)) throw new Error(`the spec already has operations ${id} and ${actual}: rename them in ${where}`);
        operation.operationId = actual;
      }
      operationIds.set(id, actual);
    }
    for (const [path, item] of Object.entries(fragment.paths)) {
      if (Object.hasOwn(merged.paths, path)) throw new Error(`${where}: the path ${path} is in another fixture too`);
      merged.paths[path] = item;
    }
    for (const [name, item] of Object.entries(fragment.webhooks ?? {})) {
      if (doc.hasIn(['webhooks', name])) throw new Error(`the spec already has the webhook ${name}: rename it in ${where}`);
      (merged.webhooks ??= {})[name] = item;
    }
    for (const [section, entries] of Object.entries(fragment.components ?? {})) {
      const into = ((merged.components as Components)[section] ??= {});
      for (const [name, value] of Object.entries(entries)) {
        if (Object.hasOwn(into, name)) throw new Error(`${where}: components.${section}.${name} is in another fixture too`);
        into[name] = value;
      }
    }
    merged.tags?.push(...(fragment.tags ?? []));
  }
  const additions = withFreeComponentNames(doc, merged);
  for (const [path, item] of Object.entries(additions.paths)) doc.setIn(['paths', path], doc.createNode(item));
  for (const [name, item] of Object.entries(additions.webhooks ?? {})) doc.setIn(['webhooks', name], doc.createNode(item));
  for (const [section, entries] of Object.entries(additions.components ?? {})) {
    for (const [name, value] of Object.entries(entries)) doc.setIn(['components', section, name], doc.createNode(value));
  }
  const tags = doc.get('tags');
  const existing = new Set(((doc.toJS() as { tags?: Array<{ name?: string }> }).tags ?? []).map((tag) => tag.name));
  for (const tag of additions.tags ?? []) {
    if (existing.has(tag.name)) continue;
    if (!tags || typeof tags !== 'object' || !('add' in tags)) throw new Error('the spec has no top-level tags list');
    (tags as { add(node: unknown): void }).add(doc.createNode(tag));
  }
  return { text: doc.toString({ lineWidth: 0, flowCollectionPadding: false }), operationIds };
}
