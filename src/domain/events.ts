/**
 * The spec's webhooks as the server sends them: each key of `webhooks` is an event a handler emits
 * (`deps.webhooks.emit`), with the body its `post` declares as JSON, typed from the generated
 * `webhooks`: a name the spec lacks, or a body of another shape, does not compile.
 */
import type { Readable, webhooks } from '../../generated/openapi.js';

/** A webhook of the spec. */
export type WebhookName = keyof webhooks & string;

type JsonBodyOf<Operation> = Operation extends { requestBody: { content: { 'application/json': infer Body } } } ? Body : never;

/** The JSON body the spec declares for webhook N, in its read view (the server sends it). */
export type WebhookBody<N extends WebhookName> = Readable<JsonBodyOf<webhooks[N] extends { post: infer Post } ? Post : never>>;
