import type { ValidateFunction } from 'ajv/dist/2020.js';
import type { OpenAPIBackend } from 'openapi-backend';
import type { Logger } from '../shared/logger.js';
import { BinaryBody, JsonText } from '../shared/schemas.js';
import type { OpenApiDocument } from '../shared/spec.js';
import { inRange, kindOf } from './bodies/mediaType.js';
import { newAjv } from '../shared/ajv.js';
import { PROBLEM_JSON, PROBLEM_XML } from './shapes/problems.js';
import { declaredResponse, type DeclaredResponses } from './shapes/declared.js';

/** The bodies the server writes from a value: JSON and XML (./shapes/representations.ts). */
const WRITTEN_KINDS: ReadonlySet<string> = new Set(['json', 'xml']);

/** Ajv's errors as a reader wants them: `<where> <what>` each, not the error objects' JSON. */
function ajvText(errors: ReadonlyArray<{ instancePath?: string; message?: string; params?: unknown }> | null | undefined): string {
  if (!errors || errors.length === 0) return 'no detail';
  return errors
    .slice(0, 5)
    .map((e) => `${e.instancePath ? e.instancePath : '(the body)'} ${e.message ?? 'is invalid'}${e.params && typeof e.params === 'object' && 'additionalProperty' in e.params ? ` (${String((e.params as { additionalProperty: unknown }).additionalProperty)})` : ''}`)
    .join('; ');
}

export interface ContractViolation {
  request: string;
  operationId: string | undefined;
  status: number;
  problems: string[];
}

/**
 * The schemas the contract's error responses (4xx, 5xx, default) use, from openapi-backend's
 * dereferenced operations: `Error`, and `LimitError` for 1.1.0's 409, 422 and 429. An error
 * body, even one no operation declares (an unknown path's 404), must be one of them.
 */
function errorBodySchemas(backend: OpenAPIBackend): object[] {
  const schemas = new Map<string, object>();
  for (const operation of backend.getOperations()) {
    const responses = (operation.responses ?? {}) as Record<string, { content?: Record<string, { schema?: object }> } | undefined>;
    for (const [status, response] of Object.entries(responses)) {
      if (status !== 'default' && !/^[45]/.test(status)) continue;
      // Ours (Error and its kin) and RFC 9457 Problem Details (./shapes/problems.ts).
      for (const type of ['application/json', PROBLEM_JSON, 'application/xml', PROBLEM_XML]) {
        const schema = response?.content?.[type]?.schema;
        if (schema) schemas.set(JSON.stringify(schema), schema);
      }
    }
  }
  return [...schemas.values()];
}

/**
 * In test and dev, checks each response against the spec before it is sent: the status is
 * declared for the operation, the body matches its schema, the declared headers are present, and
 * every error body is one of the contract's error bodies whose `status` equals the HTTP status.
 * A mismatch is logged as an error and recorded, and the caller answers 500 instead, so no test
 * can pass over it.
 */
export class ResponseChecker {
  readonly violations: ContractViolation[] = [];
  private readonly errorSchema: ValidateFunction | undefined;
  private readonly declared = new Map<string, Set<string>>();
  private readonly representationSchemas = new WeakMap<object, ValidateFunction>();

  constructor(
    document: OpenApiDocument,
    private readonly backend: OpenAPIBackend,
    readonly enabled: boolean,
    private readonly logger: Logger,
  ) {
    // Compiled only when checking is on: production starts without paying for it.
    this.errorSchema = enabled ? newAjv().compile({ anyOf: errorBodySchemas(backend) }) : undefined;
    for (const item of Object.values(document.paths ?? {})) {
      for (const op of Object.values(item ?? {})) {
        if (op && typeof op === 'object' && 'responses' in op && 'operationId' in op && typeof op.operationId === 'string') {
          this.declared.set(op.operationId, new Set(Object.keys(op.responses ?? {})));
        }
      }
    }
  }

  private declaredResponse(operationId: string, status: number): { headers?: Record<string, { required?: boolean }>; content?: object } | undefined {
    return declaredResponse(this.backend.router.getOperation(operationId)?.responses as DeclaredResponses<{ headers?: Record<string, { required?: boolean }>; content?: object }> | undefined, status);
  }

  /**
   * The body's schema errors: openapi-backend checks against a status's `application/json` schema
   * only, so a body written in another representation (XML, Problem Details) is checked against
   * its own, compiled once.
   */
  private bodyErrors(operationId: string, status: number, body: unknown, content: Record<string, unknown> | undefined, mediaType: string | undefined): Parameters<typeof ajvText>[0] {
    const entry = mediaType === undefined || mediaType === 'application/json' ? undefined : content?.[mediaType];
    const schema = typeof entry === 'object' && entry !== null && 'schema' in entry ? (entry.schema as object) : undefined;
    if (schema === undefined) return this.backend.validateResponse(body, operationId, status).errors;
    let validate = this.representationSchemas.get(schema);
    if (validate === undefined) this.representationSchemas.set(schema, (validate = newAjv().compile(schema)));
    return validate(body) ? undefined : validate.errors;
  }

  private requiredHeaders(operationId: string, status: number): string[] {
    const response = this.declaredResponse(operationId, status);
    return Object.entries(response?.headers ?? {})
      .filter(([, header]) => header.required === true)
      .map(([name]) => name);
  }

  /**
   * A handler answered properties the spec marks writeOnly (src/http/shapes/views.ts): the client's to
   * send, never to be answered. The server drops them; in test and dev it is a broken contract.
   */
  writeOnlyAnswered(operationId: string | undefined, status: number, removed: readonly string[], request: string): ContractViolation | undefined {
    if (!this.enabled) return undefined;
    const problems = [`${operationId ?? request} ${status}: the handler answered ${removed.map((pointer) => `\`${pointer}\``).join(', ')}, which the spec marks writeOnly (the client's to send, never answered): leave it out of the answer (in production the server drops it)`];
    return this.record({ request, operationId, status, problems });
  }

  private record(violation: ContractViolation): ContractViolation {
    this.violations.push(violation);
    this.logger.error({ violation }, 'response breaks the contract');
    return violation;
  }

  /** `mediaType`: the representation the body is written in (./shapes/representations.ts), when one was chosen. */
  check(operationId: string | undefined, status: number, sent: unknown, headers: Record<string, string>, request: string, mediaType?: string): ContractViolation | undefined {
    if (!this.enabled || !this.errorSchema) return undefined;
    // What the client will parse: text the database serialised is checked as that.
    const body = sent instanceof JsonText ? (JSON.parse(sent.text) as unknown) : sent;
    const problems: string[] = [];
    // Each problem names the operation, the status and what to change (the spec or the handler):
    // it is read in a failing test's output or a dev server's log, far from this code.
    const where = `${operationId ?? request} ${status}`;
    if (status >= 400) {
      if (!this.errorSchema(body)) {
        problems.push(`${where}: the body is not an Error body of the contract (${ajvText(this.errorSchema.errors)}); answer an Error body with status ${status} (errorBody in src/domain/contract.ts), and declare the response in the spec as an Error, e.g. \`$ref: '#/components/responses/NotFound'\``);
      } else if ((body as { status: number }).status !== status) problems.push(`${where}: Error.status ${(body as { status: number }).status} differs from the HTTP status ${status}`);
    }
    if (operationId) {
      const statuses = this.declared.get(operationId);
      if (!statuses?.has(String(status)) && !statuses?.has('default')) problems.push(`${where}: the spec declares no ${status} (nor a default) for ${operationId}: declare it in spec/openapi.yaml, or answer one of ${[...(statuses ?? [])].join(', ')}`);
      // A response declared without content (a 204) is sent without a body; openapi-backend's
      // validator for it would want `null`.
      const content = this.declaredResponse(operationId, status)?.content as Record<string, unknown> | undefined;
      const declaresContent = content !== undefined;
      const mediaTypes = Object.keys(content ?? {});
      if (body === undefined) {
        if (declaresContent) problems.push(`${where}: no body, but the spec declares content for this status: return its body from the handler`);
      } else if (body instanceof BinaryBody) {
        // Bytes: their media type is what the contract promises; a binary string's schema says nothing more of them.
        if (!mediaTypes.some((range) => inRange(body.mediaType, range.toLowerCase()))) {
          problems.push(`${where}: the body is ${body.mediaType}, which the spec does not declare for this status (${mediaTypes.join(', ') || 'no content'}): declare it under \`content\`, or answer one of those`);
        }
      } else {
        if (declaresContent && !mediaTypes.some((type) => WRITTEN_KINDS.has(kindOf(type.toLowerCase())))) problems.push(`${where}: a JSON body was sent, but the spec declares ${mediaTypes.join(', ')} for this status: answer a BinaryBody of one of them`);
        const errors = this.bodyErrors(operationId, status, body, content, mediaType);
        if (errors) problems.push(`${where}: the body does not match the spec's schema${mediaType === undefined ? '' : ` for ${mediaType}`}: ${ajvText(errors)}`);
        if (!declaresContent) problems.push(`${where}: a body was sent, but the spec declares no content for this status: declare \`content: application/json\` with a schema (an Error one for a 4xx or 5xx), or answer without a body`);
      }
      // 'any' checks the headers that are present; openapi-backend's stricter modes ignore `required`.
      const headerResult = this.backend.validateResponseHeaders(headers, operationId, { statusCode: status, setMatchType: 'any' as never });
      if (headerResult.errors) problems.push(`${where}: headers do not match the spec: ${ajvText(headerResult.errors)}`);
      const sent = new Set(Object.keys(headers).map((h) => h.toLowerCase()));
      for (const name of this.requiredHeaders(operationId, status)) {
        if (!sent.has(name.toLowerCase())) problems.push(`${where}: the required header ${name} is missing: return it in the handler's headers, or declare it required: false`);
      }
    }
    if (problems.length === 0) return undefined;
    return this.record({ request, operationId, status, problems });
  }
}
