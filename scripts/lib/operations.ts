/**
 * The one walk over a contract's operations for the scripts (the gate, the sunsets, the
 * changelog, the docs, the mock's copies, the client's header table): every operation of every
 * path item, in the document's order, and a local `$ref` followed to what it names. Each script
 * used to carry its own list of methods and its own `$ref` loop.
 */

/** The methods a path item can hold an operation under (OpenAPI 3.1 §4.8.9). */
export const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type Method = (typeof METHODS)[number];

export type Node = Record<string, unknown>;

export const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);

/** One operation where it stands: its path template, method, path item and the operation object itself. */
export interface OperationAt {
  path: string;
  method: Method;
  item: Node;
  operation: Node;
  /** The operation's `operationId` when it has a string one. */
  operationId: string | undefined;
}

/**
 * Every operation of `document` (any OpenAPI 3 document, bundled or not), path by path and method
 * by method. A path item that is a `$ref` is followed within the document.
 */
export function* operationsOf(document: unknown): Generator<OperationAt> {
  if (!isNode(document) || !isNode(document.paths)) return;
  for (const [path, raw] of Object.entries(document.paths)) {
    const item = resolveRef(document, raw);
    if (!isNode(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!isNode(operation)) continue;
      yield { path, method, item, operation, operationId: typeof operation.operationId === 'string' ? operation.operationId : undefined };
    }
  }
}

/**
 * Every webhook of `document` (OpenAPI 3.1's `webhooks`) as an operation the API sends: `path` is
 * the webhook's name (the event), each method of its path item (`post`, as a rule) one operation.
 */
export function* webhooksOf(document: unknown): Generator<OperationAt> {
  if (!isNode(document) || !isNode(document.webhooks)) return;
  for (const [name, raw] of Object.entries(document.webhooks)) {
    const item = resolveRef(document, raw);
    if (!isNode(item)) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!isNode(operation)) continue;
      yield { path: name, method, item, operation, operationId: typeof operation.operationId === 'string' ? operation.operationId : undefined };
    }
  }
}

/**
 * `value` with its local `$ref`s (`#/components/…`, JSON Pointer escapes undone) followed within
 * `root`, up to 20 hops so a cycle ends; undefined when a reference leads nowhere.
 */
export function resolveRef(root: unknown, value: unknown): unknown {
  let current = value;
  for (let hops = 0; hops < 20 && isNode(current) && typeof current.$ref === 'string'; hops++) {
    const pointer = current.$ref.startsWith('#/') ? current.$ref.slice(2).split('/') : undefined;
    if (pointer === undefined) return undefined;
    current = pointer.reduce<unknown>((node, key) => (isNode(node) ? node[key.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined), root);
  }
  return current;
}
