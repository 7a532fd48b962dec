/**
 * A contract as the docs render it. Every operation's description ends with its operationId:
 * Redoc 3's search indexes an operation's summary, description, method, path and parameters, not
 * its operationId, so without that line "createPet" finds nothing. A deprecated operation's
 * description also starts with a notice derived from its markers (`x-deprecated-at`, `x-sunset`,
 * `x-replacement`): when it goes away, what to call instead, and the brownouts before that, where
 * a reader meets the operation (Redoc shows only a badge).
 */
import { isoDay } from '../../../src/shared/instant.js';
import { operationsOf } from '../operations.js';

export type DocsDocument = {
  info?: { version?: string };
  servers?: { url: string; description?: string }[];
  paths?: Record<string, Record<string, unknown>>;
};

/** The fields of an operation the docs add to. */
interface DocsOperation {
  operationId?: string;
  description?: string;
  deprecated?: boolean;
  'x-deprecated-at'?: unknown;
  'x-sunset'?: unknown;
  'x-replacement'?: unknown;
}

/** `2030-12-05` for a midnight UTC instant (a sunset is a day), the full instant otherwise; generate's JSDoc says it so too. */
export const day = (value: string): string => (Number.isNaN(Date.parse(value)) ? value : isoDay(Date.parse(value)));
const dayOf = (value: unknown) => (typeof value === 'string' ? day(value) : undefined);

/** A deprecated operation's notice (a Markdown blockquote), from its markers; the server's 410 policy in words. */
function deprecationNotice(op: DocsOperation): string {
  const since = dayOf(op['x-deprecated-at']);
  const sunset = dayOf(op['x-sunset']);
  const replacement = typeof op['x-replacement'] === 'string' ? op['x-replacement'].trim() : '';
  const sentences = [
    `**Deprecated**${since ? ` since ${since}` : ''}.`,
    sunset ? `Removed on ${sunset}: from then on it answers \`410 Gone\`.` : '',
    replacement ? `Use ${replacement} instead.` : '',
    `${sunset ? 'Before that date, the' : 'The'} service may announce brownouts: windows in which it answers \`410 Gone\` (code \`operation_brownout\`) so that callers notice.`,
  ];
  return `> ${sentences.filter(Boolean).join(' ')}`;
}

/** The contract in `json` (a bundled document) as the docs render it. */
export function docsDocument(json: string): DocsDocument {
  const document = JSON.parse(json) as DocsDocument;
  for (const { operation } of operationsOf(document)) {
    const op = operation as DocsOperation;
    const parts = [op.deprecated === true ? deprecationNotice(op) : '', op.description?.trimEnd() ?? '', op.operationId ? `Operation ID: \`${op.operationId}\`` : ''].filter(Boolean);
    if (parts.length > 0) op.description = parts.join('\n\n');
  }
  return document;
}
