/**
 * Validation with openapi-backend's compiled validators (Ajv 2020-12: src/http/openapiBackend.ts),
 * in place: parameters are converted to their types and defaults are filled in, so the handler
 * gets what the spec declares. openapi-backend compiles one body schema per operation, its
 * `application/json` one; a body of any other media type is checked against its own schema
 * (bodyCheck: a `+json` body as JSON, a form's, an XML or a multipart body's text fields coerced as text).
 * A request that breaks the contract is a 400 naming each field.
 */
import type { ErrorObject } from 'ajv/dist/2020.js';
import type { OpenAPIBackend, Operation } from 'openapi-backend';
import type { Detail } from '../errors/catalog.js';
import { invalidFields } from '../errors/refusal.js';
import { bodyCheck, detailsOf } from '../http/openapiBackend.js';
import type { Stage } from '../http/stage.js';

/** Header details with the names the spec gives them (`Idempotency-Key`): the validators see node:http's lower-case names. */
function spelledAsDeclared(operation: Operation, details: Detail[]): Detail[] {
  const declared = new Map<string, string>();
  for (const parameter of operation.parameters ?? []) if ('in' in parameter && parameter.in === 'header') declared.set(parameter.name.toLowerCase(), parameter.name);
  return details.map((detail) => (detail.in === 'header' ? { ...detail, field: declared.get(detail.field.toLowerCase()) ?? detail.field } : detail));
}

/** openapi-backend's "requestBody is required", for a body it was not given because another validator checks it. */
const isBodyRequired = (error: ErrorObject) => error.keyword === 'required' && error.instancePath === '' && (error.params as { missingProperty?: unknown }).missingProperty === 'requestBody';

export function validateStage(backend: OpenAPIBackend): Stage {
  const { validator } = backend;
  return {
    name: 'validate',
    run(exchange, next) {
      const { operation, request, declaredBody } = exchange;
      if (operation === undefined || request === undefined) throw new Error('validate: the request was not routed');
      if (declaredBody === undefined || declaredBody.mediaType === 'application/json') {
        const validation = validator.validateRequest(request, operation, request);
        if (validation.errors) throw invalidFields(spelledAsDeclared(operation, detailsOf(validation.errors)));
        return next(exchange);
      }
      const value: unknown = request.requestBody;
      request.requestBody = undefined;
      const errors = (validator.validateRequest(request, operation, request).errors ?? []).filter((error) => !isBodyRequired(error));
      const check = bodyCheck(declaredBody);
      const wrapped = { requestBody: value };
      if (check !== undefined) errors.push(...check(wrapped));
      // Coerced and defaulted in place: a form's "3" is 3 now.
      request.requestBody = wrapped.requestBody;
      if (errors.length > 0) throw invalidFields(spelledAsDeclared(operation, detailsOf(errors)));
      return next(exchange);
    },
  };
}
