/**
 * The properties every response must have, whatever was sent, all read from the spec: a status
 * the operation declares (or that its `default` response names), never a 5xx, an `Error` body
 * (checked by Ajv 2020 against the spec's own schema) whose `status` is the HTTP status and whose
 * `code` is the one the spec pairs with that status, a 2xx body that matches the declared
 * schema, and the declared headers (required ones present, every present one valid).
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { declaredStatuses, errorCodeStatuses, isDeclaredStatus, responseFor, type ContractSpec, type JsonSchema, type OperationSpec } from './spec.js';
import type { WireResponse } from './wire.js';

// ajv-formats ships CommonJS whose default export TypeScript sees one level deep.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export interface ErrorBody {
  status: number;
  code: string;
  message: string;
  details?: Array<{ in: string; field: string; message: string }>;
}

export class ResponseContract {
  private readonly ajv: Ajv2020;
  private readonly errorSchema: ValidateFunction;
  private readonly codeStatus: Map<string, number[]>;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(contract: ContractSpec) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(this.ajv);
    // The spec's integer formats; int64 ids are bounded by `maximum`, so the format only says "integer".
    this.ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
    this.ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
    this.errorSchema = this.compile(contract.schemaAt('#/components/schemas/Error'));
    this.codeStatus = errorCodeStatuses(contract);
  }

  /** A validator for `schema`, a schema of the contract with its `$ref`s resolved (spec.ts). */
  compile(schema: JsonSchema): ValidateFunction {
    const key = JSON.stringify(schema);
    let fn = this.compiled.get(key);
    if (!fn) {
      fn = this.ajv.compile(schema);
      this.compiled.set(key, fn);
    }
    return fn;
  }

  /** The parsed Error body, if the response is one. */
  errorBody(response: WireResponse): ErrorBody | undefined {
    const parsed = parseJson(response.body);
    return parsed.ok && this.errorSchema(parsed.value) ? (parsed.value as ErrorBody) : undefined;
  }

  /** Every way `response` breaks the contract of `op`; empty when it keeps it. */
  problems(op: OperationSpec, response: WireResponse): string[] {
    const problems: string[] = [];
    const { status } = response;
    if (!isDeclaredStatus(op, status)) {
      const { explicit, viaDefault } = declaredStatuses(op);
      problems.push(`status ${status} is not declared for ${op.operationId} (declared: ${explicit.join(', ')}; default covers ${Array.isArray(viaDefault) ? viaDefault.join(', ') : viaDefault})`);
    }
    if (status >= 500) problems.push(`a 5xx: ${status}`);
    const declared = responseFor(op, status);
    const parsed = parseJson(response.body);
    if (status >= 400 || declared?.schema) {
      const type = response.headers['content-type'] ?? '';
      if (!/^application\/json(;|$)/i.test(type)) problems.push(`content-type ${JSON.stringify(type)}, not application/json`);
      if (!parsed.ok) problems.push(`body is not JSON: ${JSON.stringify(response.body.subarray(0, 200).toString('utf8'))}`);
    }
    if (status >= 400 && parsed.ok) {
      // An Error, or the refusal's own schema where the response declares one (a MediaError, a
      // LimitError: each with the same `status`, and codes of its own enumeration).
      const own = declared?.schema ? this.compile(declared.schema) : undefined;
      if (this.errorSchema(parsed.value)) {
        const body = parsed.value as ErrorBody;
        if (body.status !== status) problems.push(`Error.status ${body.status} differs from the HTTP status ${status}`);
        const paired = this.codeStatus.get(body.code) ?? [];
        if (!paired.includes(status)) problems.push(`Error.code ${body.code} goes with ${paired.join(', ')} in the spec, not ${status}`);
      } else if (own?.(parsed.value)) {
        const body = parsed.value as { status?: unknown };
        if (body.status !== status) problems.push(`${status} body's status ${JSON.stringify(body.status)} differs from the HTTP status`);
      } else problems.push(`body is not an Error${own ? ' nor the schema the response declares' : ''}: ${JSON.stringify(this.errorSchema.errors)}`);
    } else if (declared?.schema && parsed.ok) {
      const validate = this.compile(declared.schema);
      if (!validate(parsed.value)) problems.push(`${status} body does not match its schema: ${JSON.stringify(validate.errors)}`);
    }
    for (const [name, header] of Object.entries(declared?.headers ?? {})) {
      const value = response.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) problems.push(`required header ${name} missing`);
        continue;
      }
      const validate = this.compile(header.schema);
      if (!validate(value)) problems.push(`header ${name}: ${JSON.stringify(value)} does not match its schema: ${JSON.stringify(validate.errors)}`);
    }
    return problems;
  }
}

export function parseJson(body: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    // fatal: a response that is not UTF-8 is itself a defect, not something to paper over.
    return { ok: true, value: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body)) as unknown };
  } catch {
    return { ok: false };
  }
}
