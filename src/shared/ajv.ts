/**
 * The one Ajv set-up for the contract's schemas (JSON Schema 2020-12, as OpenAPI 3.1 writes them):
 * openapi-backend's validators (src/http/openapiBackend.ts) and the check of an event's body
 * before it is stored (src/store/resources/webhooks.ts).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats ships CommonJS whose default export TypeScript sees one level deep.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 };

/** Ajv for JSON Schema 2020-12 (OpenAPI 3.1) with the formats the spec uses. */
export function newAjv(options: Record<string, unknown> = {}): Ajv2020 {
  // validateSchema: false skips compiling the 2020-12 meta-schema (about 0.4 s of start-up):
  // the schemas come from a spec that `redocly lint` has already checked.
  // logger: false: a format it does not know is an annotation (JSON Schema 2020-12), which Ajv
  // would otherwise announce on the console at every compile; `npm run lint` names it once.
  const ajv = new Ajv2020({ ...options, strict: false, allErrors: true, validateSchema: false, logger: false });
  addFormats(ajv);
  ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= INT32.min && n <= INT32.max });
  // int64 ids are bounded by `maximum` in the spec; the format itself accepts any integer.
  ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isInteger(n) });
  ajv.addFormat('float', { type: 'number', validate: () => true });
  ajv.addFormat('double', { type: 'number', validate: () => true });
  return ajv;
}

