/**
 * The operations of the contract as a test that walks them needs them: each one's request built
 * from what the spec declares (path parameters from their examples, else their schema), and what
 * the spec says may come back. A test over every operation takes its inputs from here and expects
 * only what the spec declares, so an operation added to the spec, a stub included, passes it
 * untouched.
 */
import { dereference, loadDocument, sampleValue, type Json } from './roundTrip.js';

export interface SpecOperation {
  operationId: string;
  method: string;
  /** The path as the spec writes it (`/pets/{petId}`). */
  template: string;
  /** The path with each path parameter replaced by a value the spec allows. */
  path: string;
  /** True when the operation needs an API key (its own `security`, else the document's). */
  secured: boolean;
  /** The statuses it declares (`default` included). */
  statuses: string[];
  /** The response headers it declares, per status, in lower case. */
  headers: Record<string, string[]>;
}

const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A value for a parameter: its own example, else one its schema allows (the round trip's sampleValue). */
function sampleOf(parameter: Json, where: string): unknown {
  if (parameter.example !== undefined) return parameter.example;
  const named = isRecord(parameter.examples) ? Object.values(parameter.examples).find((e) => isRecord(e) && e.value !== undefined) : undefined;
  if (isRecord(named)) return named.value;
  return sampleValue(isRecord(parameter.schema) ? parameter.schema : {}, where);
}

/** Every operation of the contract (the bundled one unless given), in the spec's order. */
export function specOperations(document: Json = loadDocument()): SpecOperation[] {
  const spec = dereference(document);
  const globalSecurity = Array.isArray(spec.security) ? spec.security : [];
  const operations: SpecOperation[] = [];
  for (const [template, item] of Object.entries(spec.paths as Record<string, Json>)) {
    for (const method of ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']) {
      const op = item[method] as Json | undefined;
      if (!isRecord(op)) continue;
      const parameters = [...((item.parameters as Json[] | undefined) ?? []), ...((op.parameters as Json[] | undefined) ?? [])];
      const path = template.replace(/\{([^}]+)\}/g, (_all, name: string) => {
        const declared = parameters.find((p) => p.in === 'path' && p.name === name);
        if (!declared) throw new Error(`${String(op.operationId)}: path parameter {${name}} is not declared`);
        return encodeURIComponent(String(sampleOf(declared, `${String(op.operationId)} {${name}}`)));
      });
      const security = Array.isArray(op.security) ? op.security : globalSecurity;
      const responses = (op.responses ?? {}) as Record<string, Json>;
      operations.push({
        operationId: String(op.operationId),
        method,
        template,
        path,
        secured: security.some((requirement: unknown) => isRecord(requirement) && Object.keys(requirement).length > 0),
        statuses: Object.keys(responses),
        headers: Object.fromEntries(Object.entries(responses).map(([status, response]) => [status, Object.keys(isRecord(response.headers) ? response.headers : {}).map((h) => h.toLowerCase())])),
      });
    }
  }
  return operations;
}

/** Whether the operation declares `status` (a 501 or 503 from a stub or an outage falls under `default`). */
export function declares(op: SpecOperation, status: number): boolean {
  return op.statuses.includes(String(status)) || op.statuses.includes(`${String(status)[0]}XX`) || op.statuses.includes('default');
}
