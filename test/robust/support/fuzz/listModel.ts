/**
 * What each listPets query parameter does to the expected page, read from the spec: the store model
 * (model.ts) predicts a page from a page size, a position and equality filters, and every query
 * parameter the spec declares must be one of those, or the valid listPets cases fail loudly,
 * naming it, rather than ignore it and expect the wrong page.
 *
 * - an opaque parameter (its description says so: `cursor`) is a position the server issued;
 * - `limit` is the page size, its default the spec's;
 * - a parameter named like a property of the listed Pet (`status`) keeps the pets whose property
 *   equals its value.
 */
import type { JsonValue } from './jsonText.js';
import type { ContractSpec, OperationSpec, ParameterSpec } from './spec.js';

export type ListRole = { kind: 'pageSize'; default: number } | { kind: 'position' } | { kind: 'filter'; field: string };

/** A position the server issued: the spec describes the cursor as opaque. */
export const isOpaque = (p: ParameterSpec): boolean => /opaque/i.test(p.description ?? '');

export class ListQueryModel {
  readonly roles = new Map<string, ListRole>();
  /** Query parameters of the spec whose effect on the page the model does not know, with why. */
  readonly unknown: string[] = [];

  constructor(contract: ContractSpec, op: OperationSpec) {
    const list = op.responses['200']?.schema;
    const items = list ? contract.resolve(list).items : undefined;
    const fields = Object.keys((items ? contract.resolve(items) : {}).properties ?? {});
    if (fields.length === 0) throw new Error(`${op.operationId}: the 200 response is not a list of objects with properties`);
    for (const p of op.parameters.filter((x) => x.in === 'query')) {
      if (isOpaque(p)) this.roles.set(p.name, { kind: 'position' });
      else if (p.name === 'limit') {
        const fallback = p.schema.default;
        if (typeof fallback === 'number') this.roles.set(p.name, { kind: 'pageSize', default: fallback });
        else this.unknown.push(`"${p.name}" (the page size) has no numeric default in the spec`);
      } else if (fields.includes(p.name)) this.roles.set(p.name, { kind: 'filter', field: p.name });
      else this.unknown.push(`"${p.name}" is neither the page size, an opaque cursor, nor named like a field of the listed items (${fields.join(', ')})`);
    }
    if (![...this.roles.values()].some((r) => r.kind === 'pageSize')) this.unknown.push('the spec has no `limit` page size parameter');
  }

  get defaultLimit(): number {
    for (const role of this.roles.values()) if (role.kind === 'pageSize') return role.default;
    throw new Error('no page size parameter');
  }

  /** The names of the filter parameters. */
  filterNames(): string[] {
    return [...this.roles].filter(([, r]) => r.kind === 'filter').map(([n]) => n);
  }

  /**
   * The page size and filters a valid query stands for. Throws `fail(why)` when the spec declares a
   * query parameter the model cannot predict, or the query holds one the spec does not declare.
   */
  interpret(params: Readonly<Record<string, JsonValue>>, fail: (why: string) => Error): { limit: number; filters: Record<string, JsonValue> } {
    if (this.unknown.length > 0) throw fail(`the store model cannot predict the page for the spec's listPets query parameters: ${this.unknown.join('; ')}. Teach test/robust/support/fuzz/listModel.ts what they do.`);
    let limit = this.defaultLimit;
    const filters: Record<string, JsonValue> = {};
    for (const [name, value] of Object.entries(params)) {
      const role = this.roles.get(name);
      if (!role) throw fail(`query parameter "${name}" is not one the spec declares`);
      if (role.kind === 'pageSize') limit = Number(value);
      else if (role.kind === 'filter') filters[role.field] = value;
      else throw fail(`query parameter "${name}" is a cursor: valid cases carry it as query.cursor`);
    }
    return { limit, filters };
  }

  /** How a next link fails to keep the page size and filters of the request (empty: it keeps them). */
  keptBy(next: URLSearchParams, limit: number, filters: Readonly<Record<string, JsonValue>>): string[] {
    const problems: string[] = [];
    for (const [name, role] of this.roles) {
      const got = next.get(name) ?? undefined;
      if (role.kind === 'pageSize' && got !== String(limit)) problems.push(`${name}=${String(got)}, expected ${limit}`);
      if (role.kind === 'filter') {
        const want = filters[role.field] === undefined ? undefined : String(filters[role.field]);
        if (got !== want) problems.push(`${name}=${String(got)}, expected ${String(want)}`);
      }
    }
    return problems;
  }
}
