/**
 * Validation with openapi-backend's compiled validators (Ajv 2020-12: src/http/validation.ts),
 * in place: parameters are converted to their types and defaults are filled in, so the handler
 * gets what the spec declares. A request that breaks the contract is a 400 naming each field.
 */
import type { OpenAPIBackend, Operation } from 'openapi-backend';
import type { Detail } from '../errors/catalog.js';
import { invalidFields } from '../errors/refusal.js';
import { detailsOf } from '../http/validation.js';
import type { Stage } from './stage.js';

/** Header details with the names the spec gives them (`Idempotency-Key`): the validators see node:http's lower-case names. */
function spelledAsDeclared(operation: Operation, details: Detail[]): Detail[] {
  const declared = new Map<string, string>();
  for (const parameter of operation.parameters ?? []) if ('in' in parameter && parameter.in === 'header') declared.set(parameter.name.toLowerCase(), parameter.name);
  return details.map((detail) => (detail.in === 'header' ? { ...detail, field: declared.get(detail.field.toLowerCase()) ?? detail.field } : detail));
}

export function validateStage(backend: OpenAPIBackend): Stage {
  const { validator } = backend;
  return {
    name: 'validate',
    run(exchange) {
      const { operation, request } = exchange;
      if (operation === undefined || request === undefined) throw new Error('validate: the request was not routed');
      const validation = validator.validateRequest(request, operation, request);
      if (validation.errors) throw invalidFields(spelledAsDeclared(operation, detailsOf(validation.errors)));
      return undefined;
    },
  };
}
