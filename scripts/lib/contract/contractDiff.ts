/**
 * Two contracts read and compared the one way the breaking-change gate, the sunset calendar and
 * the computed changes (changelog, docs) all use: every $ref resolved first, then api-smart-diff
 * with the gate's rules (./breakingRules.ts).
 */
import $RefParser from '@apidevtools/json-schema-ref-parser';
import { apiCompare, type Diff } from 'api-smart-diff';
import { breakingChangeRules } from './breakingRules.js';

/** Where a change is: keys and list indices from the document's root, as api-smart-diff gives them. */
export type DiffPath = readonly (string | number)[];

/**
 * The document at `file` (YAML or JSON) with every $ref replaced by what it points to: other
 * files too, never URLs (the tools run offline). A recursive schema keeps its $ref, which
 * api-smart-diff follows itself. A component stays one object wherever it is used, which is how
 * componentOf finds it.
 */
export async function loadContract(file: string): Promise<object> {
  return $RefParser.dereference(file, { resolve: { http: false }, dereference: { circular: 'ignore' } });
}

/**
 * Every change from `before` to `after` (both loaded by loadContract), judged. Components are
 * judged where they are used (a shared schema in a request and in a response), each use on its
 * own, so their own diffs are dropped; only security schemes matter on their own. api-smart-diff
 * writes what it normalises back into the documents it is given, so it gets copies (structuredClone
 * keeps what is shared, shared): the documents stay as loaded, for the next comparison and for
 * componentOf.
 */
export function contractDiffs(before: object, after: object): Diff[] {
  const diffs = apiCompare(structuredClone(before), structuredClone(after), { rules: breakingChangeRules() }).diffs;
  return diffs.filter((d) => d.path[0] !== 'components' || d.path[1] === 'securitySchemes');
}

type Node = Record<string | number, unknown>;
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null;

/** Each component object of a loaded contract, by identity, with its name (`components.parameters.IfNoneMatch`). */
const componentNames = new WeakMap<object, Map<unknown, string>>();
function namesOf(document: object): Map<unknown, string> {
  let names = componentNames.get(document);
  if (!names) {
    names = new Map();
    const components = (document as Node).components;
    for (const [kind, group] of Object.entries(isNode(components) ? components : {})) {
      for (const [name, component] of Object.entries(isNode(group) ? group : {})) if (isNode(component)) names.set(component, `components.${kind}.${name}`);
    }
    componentNames.set(document, names);
  }
  return names;
}

/** A change inside a shared component: the component, and where in it. */
export interface ComponentChange {
  /** `components.parameters.IfNoneMatch`. */
  component: string;
  /** The rest of the change's path, inside the component: `schema.maxLength`. */
  inner: DiffPath;
}

/**
 * The innermost shared component that the change at `path` lies inside, or undefined for a change
 * to an operation's own part. `before` is the contract the change was found against (loaded by
 * loadContract, not compared in place): api-smart-diff names an added item's parent by its place
 * there too. A component added, removed or replaced whole at one use is that operation's change,
 * so only the path's parents are looked at. api-smart-diff reads `allOf: [$ref]` as the schema it
 * refers to (it merges allOf), so a key a schema lacks is looked up in its allOf members.
 */
export function componentOf(before: object, path: DiffPath): ComponentChange | undefined {
  const names = namesOf(before);
  let node: unknown = before;
  let found: ComponentChange | undefined;
  for (const [index, key] of path.slice(0, -1).entries()) {
    if (!isNode(node)) break;
    const member = key in node || !Array.isArray(node.allOf) ? undefined : node.allOf.find((m): m is Node => isNode(m) && key in m);
    // The allOf member holds `key`; what `key` names lies inside it.
    for (const [crossed, inner] of [...(member ? [[member, index] as const] : []), [(member ?? node)[key], index + 1] as const]) {
      const component = names.get(crossed);
      if (component !== undefined) found = { component, inner: path.slice(inner) };
    }
    node = (member ?? node)[key];
  }
  return found;
}

/** Every component that `node` of a loaded contract reaches (an operation: its parameters, bodies and responses, all the way down). */
export function componentsUnder(document: object, node: unknown): Set<string> {
  const names = namesOf(document);
  const found = new Set<string>();
  const seen = new Set<unknown>();
  const visit = (value: unknown): void => {
    if (!isNode(value) || seen.has(value)) return;
    seen.add(value);
    const name = names.get(value);
    if (name !== undefined) found.add(name);
    for (const child of Object.values(value)) visit(child);
  };
  visit(node);
  return found;
}
