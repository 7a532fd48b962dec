/** Types of ./webhookHeaders.js (plain JavaScript, so that Redocly's plugin can import it too). */
export declare const SENDERS_OWN: ReadonlySet<string>;
export declare function fixedHeaderValue(schema: unknown): string | undefined;
