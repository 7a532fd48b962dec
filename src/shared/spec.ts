import { readFileSync } from 'node:fs';
import type { OpenAPIV3_1 } from 'openapi-types';
import { bundledSpecPath } from './paths.js';

export type OpenApiDocument = OpenAPIV3_1.Document;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type HttpMethod = (typeof METHODS)[number];

/** What the rest of the code needs to know about one operation of the contract. */
export interface OperationInfo {
  operationId: string;
  method: HttpMethod;
  /** The path as the spec writes it, relative to the server base (`/pets/{petId}`). */
  path: string;
  summary: string;
  deprecated: boolean;
  /** `x-deprecated-at`, `x-sunset` and `x-replacement`, as the spec gives them. */
  deprecatedAt?: string;
  sunset?: string;
  replacement?: string;
  stability?: string;
  /** The operation's first tag: the rendered docs (Redoc) anchor it at `#tag/<tag>/operation/<operationId>`. */
  tag?: string;
  /** The operation's `externalDocs.url`, when it has one. */
  externalDocsUrl?: string;
}

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What a local `$ref` (`#/components/…`, a JSON Pointer into `root`) names, followed through a
 * reference to a reference; anything else as it is, and undefined where a pointer leads nowhere or
 * the references go round in a circle.
 */
export function followLocalRef(root: unknown, value: unknown): unknown {
  const seen = new Set<string>();
  let current = value;
  while (isNode(current) && typeof current.$ref === 'string' && current.$ref.startsWith('#')) {
    if (seen.has(current.$ref)) return undefined;
    seen.add(current.$ref);
    let target: unknown = root;
    for (const segment of current.$ref.slice(1).split('/')) {
      // Into arrays too (`#/allOf/0`): an index is a key of the array.
      if (segment !== '') target = typeof target === 'object' && target !== null ? (target as Node)[decodeURIComponent(segment).replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    }
    current = target;
  }
  return current;
}

function stringExtension(op: object, key: string): string | undefined {
  const value = (op as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

export function operationsOf(document: OpenApiDocument): OperationInfo[] {
  const result: OperationInfo[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (!item) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      if (!op.operationId) throw new Error(`${method.toUpperCase()} ${path} has no operationId`);
      const info: OperationInfo = {
        operationId: op.operationId,
        method,
        path,
        summary: op.summary ?? '',
        deprecated: op.deprecated === true,
      };
      const deprecatedAt = stringExtension(op, 'x-deprecated-at');
      const sunset = stringExtension(op, 'x-sunset');
      const replacement = stringExtension(op, 'x-replacement');
      const stability = stringExtension(op, 'x-stability');
      if (deprecatedAt) info.deprecatedAt = deprecatedAt;
      if (sunset) info.sunset = sunset;
      if (replacement) info.replacement = replacement;
      if (stability) info.stability = stability;
      if (op.tags?.[0]) info.tag = op.tags[0];
      if (op.externalDocs?.url) info.externalDocsUrl = op.externalDocs.url;
      result.push(info);
    }
  }
  return result;
}

/** The bundled contract the server runs on (generated/openapi.json). */
export function loadBundledSpec(): OpenApiDocument {
  return JSON.parse(readFileSync(bundledSpecPath, 'utf8')) as OpenApiDocument;
}

/** The base path of the API, taken from the first server URL (`/v1`). */
export function basePathOf(document: OpenApiDocument): string {
  const url = document.servers?.[0]?.url;
  if (!url) throw new Error('The spec declares no server');
  return new URL(url).pathname.replace(/\/$/, '');
}
