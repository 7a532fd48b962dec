/**
 * What the server puts in a header a webhook declares, shared by Redocly's plugin (./rules.js:
 * webhook-header-value) and the dispatcher (src/features/webhooks/headers.ts), so that lint warns of
 * exactly the headers deliveries go without.
 */

/** Set by the dispatcher and the sender for every delivery: a declaration never replaces them. */
export const SENDERS_OWN = new Set(['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type', 'content-length', 'user-agent', 'host']);

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value a header's schema (its `$ref`s followed) fixes, as text: `const`, an `enum` of one value, or a `default`; undefined when it leaves it open. */
export function fixedHeaderValue(schema) {
  if (!isObject(schema)) return undefined;
  const one = 'const' in schema ? schema.const : Array.isArray(schema.enum) && schema.enum.length === 1 ? schema.enum[0] : schema.default;
  return typeof one === 'string' || typeof one === 'number' || typeof one === 'boolean' ? String(one) : undefined;
}
