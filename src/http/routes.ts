/**
 * The route table of the contract, compiled once: exact paths in a map, templated paths as
 * RegExps built at start. openapi-backend's own `matchOperation` rebuilds its operation list with
 * lodash and a RegExp per template on every request; the matching rules here are the same
 * (base path on a segment boundary, trailing slashes ignored, the most specific template first).
 */
import type { Operation } from 'openapi-backend';

export type RouteMatch<O> =
  | { kind: 'operation'; operation: O; params: Record<string, string> }
  /** The path exists, but not with this method: `allow` lists the methods it has. */
  | { kind: 'method'; allow: string[] }
  | { kind: 'none' };

interface Template<O> {
  pattern: RegExp;
  names: string[];
  /** Literal characters: more means more specific. */
  weight: number;
  methods: Map<string, O>;
}

export interface Routes<O> {
  /** `method` in any case; `path` relative to the base path, without the query string. */
  match(method: string, path: string): RouteMatch<O>;
}

const PARAM = /\{([^}]+)\}/g;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    // Not valid percent-encoding: leave it as sent, so validation names the field.
    return segment;
  }
}

export function compileRoutes<O extends Pick<Operation, 'path' | 'method'>>(operations: readonly O[]): Routes<O> {
  const exact = new Map<string, Map<string, O>>();
  const templates: Template<O>[] = [];
  for (const operation of operations) {
    const method = operation.method.toUpperCase();
    if (!operation.path.includes('{')) {
      const methods = exact.get(operation.path) ?? new Map<string, O>();
      methods.set(method, operation);
      exact.set(operation.path, methods);
      continue;
    }
    let template = templates.find((t) => t.pattern.source === patternOf(operation.path).source);
    if (!template) {
      template = {
        pattern: patternOf(operation.path),
        names: [...operation.path.matchAll(PARAM)].map((m) => m[1] ?? ''),
        weight: operation.path.replace(PARAM, '').length,
        methods: new Map(),
      };
      templates.push(template);
    }
    template.methods.set(method, operation);
  }
  templates.sort((a, b) => b.weight - a.weight);

  return {
    match(rawMethod, rawPath) {
      const method = rawMethod.toUpperCase();
      let path = rawPath;
      while (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
      const methods = exact.get(path);
      if (methods) {
        const operation = methods.get(method);
        return operation ? { kind: 'operation', operation, params: {} } : { kind: 'method', allow: [...methods.keys()] };
      }
      let allow: string[] | undefined;
      for (const template of templates) {
        const found = template.pattern.exec(path);
        if (!found) continue;
        const operation = template.methods.get(method);
        if (!operation) {
          allow ??= [...template.methods.keys()];
          continue;
        }
        const params: Record<string, string> = {};
        template.names.forEach((name, i) => {
          params[name] = decode(found[i + 1] ?? '');
        });
        return { kind: 'operation', operation, params };
      }
      return allow ? { kind: 'method', allow } : { kind: 'none' };
    },
  };
}

function patternOf(path: string): RegExp {
  return new RegExp(`^${path.split(PARAM).map((part, i) => (i % 2 === 1 ? '([^/]+)' : escapeRegExp(part))).join('')}$`);
}
