/**
 * The headers a webhook declares beyond Standard Webhooks' three, with the value its schema fixes
 * (`const`, an `enum` of one value, or a `default`): sent with every delivery of that event, as a
 * receiver written from the spec expects them. A declared header whose value the spec leaves open
 * has nothing the server could put in it, so it is not sent (docs/operations.md says so; lint
 * warns of a required one: spec/lint/rules.js, webhook-header-value).
 */
import { fixedHeaderValue, SENDERS_OWN } from '../../../spec/lint/webhookHeaders.js';
import { followLocalRef, type OpenApiDocument } from '../../shared/spec.js';

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Each webhook's fixed headers, by its name in the spec's `webhooks` (the event a handler emits). */
export function declaredHeaders(document: OpenApiDocument): Map<string, Record<string, string>> {
  const byEvent = new Map<string, Record<string, string>>();
  const webhooks = (document as { webhooks?: unknown }).webhooks;
  if (!isNode(webhooks)) return byEvent;
  for (const [event, item] of Object.entries(webhooks)) {
    const pathItem = followLocalRef(document, item);
    if (!isNode(pathItem)) continue;
    const operation = followLocalRef(document, pathItem.post);
    const parameters = [...(Array.isArray(pathItem.parameters) ? pathItem.parameters : []), ...(isNode(operation) && Array.isArray(operation.parameters) ? operation.parameters : [])];
    const headers: Record<string, string> = {};
    for (const declared of parameters.map((parameter) => followLocalRef(document, parameter))) {
      if (!isNode(declared) || declared.in !== 'header' || typeof declared.name !== 'string') continue;
      const name = declared.name.toLowerCase();
      const value = fixedHeaderValue(followLocalRef(document, declared.schema));
      if (!SENDERS_OWN.has(name) && value !== undefined) headers[name] = value;
    }
    if (Object.keys(headers).length > 0) byEvent.set(event, headers);
  }
  return byEvent;
}
