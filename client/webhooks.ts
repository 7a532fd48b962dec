/**
 * Receiving the API's webhooks: `verifyWebhook` checks a delivery as Standard Webhooks signs it
 * (headers `webhook-id`, `webhook-timestamp`, `webhook-signature`; the endpoint's `whsec_` secret),
 * with the standardwebhooks library, and returns its body as the contract's event type, so that a
 * `switch (event.type)` narrows `event.data` (the Animal Store's events carry a `type`, as
 * Standard Webhooks advises; another contract's webhooks are told apart as their bodies say).
 * Server-side code: the secret never belongs in a browser.
 *
 *   const event = verifyWebhook(secret, req.headers, rawBody); // throws WebhookVerificationError
 *   if (event.type === 'pet.updated') console.log(event.data.changed);
 *
 * Verify the body's bytes exactly as they arrived (not JSON parsed and written again): the
 * signature covers `{webhook-id}.{webhook-timestamp}.{body}`. While a rotated secret is still
 * valid, `webhook-signature` holds a `v1,` signature by each secret, separated by a space; the
 * library accepts the delivery when any one of them matches the secret given.
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { webhooks } from './generated/openapi.js';

export { WebhookVerificationError };

/** The name of each webhook of the contract (`petCreated`, …). */
export type WebhookName = keyof webhooks;

/** The `application/json` request body of an operation; never when it has none. */
type JsonRequestBody<O> = O extends { requestBody?: infer R } ? (NonNullable<R> extends { content: { 'application/json': infer B } } ? B : never) : never;

/**
 * Any event a delivery carries: the union of the JSON bodies of the contract's webhooks (each a
 * POST), the Animal Store's told apart by `type`. A webhook without a JSON body adds nothing to it.
 */
export type WebhookEvent = { [N in WebhookName]: JsonRequestBody<NonNullable<webhooks[N]['post']>> }[WebhookName];

/** A request's headers: a fetch `Headers`, or a plain object such as node:http's `req.headers` (any case; of an array, the first value). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /**
   * How far, in seconds, `webhook-timestamp` may be from this machine's clock, either way (a
   * replayed delivery is refused). Default and largest: 300, the library's five minutes.
   */
  toleranceSeconds?: number;
}

/** The library's own window (standardwebhooks' WEBHOOK_TOLERANCE_IN_SECONDS), which it always applies too. */
const LIBRARY_TOLERANCE_SECONDS = 5 * 60;

const isHeaders = (headers: WebhookHeaders): headers is Headers => typeof headers.get === 'function' && typeof headers.forEach === 'function';

/** A header's value by its name (lower case), whatever case the object spells it in; of an array, the first value. */
function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  if (isHeaders(headers)) return headers.get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) return first;
  }
  return undefined;
}

/**
 * The delivery's `webhook-id`: the same on every attempt to deliver one event, so a receiver that
 * has handled it already can answer 2xx and do nothing. Read it after `verifyWebhook` succeeds
 * (the signature covers it).
 */
export function webhookId(headers: WebhookHeaders): string | undefined {
  return headerValue(headers, 'webhook-id');
}

/**
 * Checks a delivery's signature (any of its space-separated `v1,` signatures, with `secret`, the
 * endpoint's `whsec_…` secret) and its timestamp (within `toleranceSeconds` of now), and returns
 * its JSON body as the contract's event. Throws WebhookVerificationError when any of that fails,
 * or when the body is not a JSON event; its message never holds the secret. `body` is the raw
 * request body (a string, or the bytes: a Buffer is a Uint8Array). A `toleranceSeconds` that is
 * not a number from 0 to 300 is a RangeError.
 */
export function verifyWebhook(secret: string, headers: WebhookHeaders, body: string | Uint8Array, options: VerifyWebhookOptions = {}): WebhookEvent {
  const tolerance = options.toleranceSeconds ?? LIBRARY_TOLERANCE_SECONDS;
  if (!(tolerance >= 0 && tolerance <= LIBRARY_TOLERANCE_SECONDS)) throw new RangeError(`toleranceSeconds must be from 0 to ${LIBRARY_TOLERANCE_SECONDS}, not ${tolerance}`);

  const id = headerValue(headers, 'webhook-id');
  const timestamp = headerValue(headers, 'webhook-timestamp');
  const signature = headerValue(headers, 'webhook-signature');
  if (!id || !timestamp || !signature) throw new WebhookVerificationError('Missing required headers (webhook-id, webhook-timestamp, webhook-signature)');
  if (!/^\d{1,15}$/.test(timestamp)) throw new WebhookVerificationError('Invalid Signature Headers (webhook-timestamp is not whole seconds)');
  const age = Math.floor(Date.now() / 1000) - Number(timestamp);
  if (age > tolerance) throw new WebhookVerificationError('Message timestamp too old');
  if (-age > tolerance) throw new WebhookVerificationError('Message timestamp too new');

  let webhook: Webhook;
  try {
    webhook = new Webhook(secret);
  } catch {
    // The library's own message would not hold the secret either; this one says what to fix.
    throw new WebhookVerificationError('The secret is not a Standard Webhooks secret (whsec_ and Base64)');
  }
  try {
    // Checks the timestamp against its five minutes, then each signature (standardwebhooks' verify).
    webhook.verify(body, { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature }, { jsonParse: false });
  } catch (error) {
    if (error instanceof WebhookVerificationError) throw error;
    throw new WebhookVerificationError('The body is neither a string nor bytes');
  }

  let event: unknown;
  try {
    event = JSON.parse(typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    throw new WebhookVerificationError('The body is not JSON');
  }
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    throw new WebhookVerificationError('The body is not an event (a JSON object)');
  }
  return event as WebhookEvent;
}
