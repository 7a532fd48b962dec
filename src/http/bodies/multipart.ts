/**
 * A `multipart/form-data` body, streamed through busboy (the parser @fastify/multipart uses):
 * text fields gathered by their schema (coerced later, by validation), file parts read into an
 * Upload each, within their own limit. Every limit is checked as the bytes arrive, and the first
 * one crossed refuses the request at once, with nothing past it kept: the whole body (declared
 * Content-Length or counted), one part, the number of parts. A malformed body (no boundary, a
 * boundary that never closes, a broken part header), a part without a name, a file where a text
 * field is declared or the reverse: a 400 naming it. A file part whose media type its
 * `encoding.contentType` does not list: a 415. A field whose encoding is JSON is parsed as JSON.
 */
import busboy from 'busboy';
import { invalidFields, refuse, type Refusal } from '../../errors/refusal.js';
import type { Exchange } from '../exchange.js';
import { MAX_BODY_BYTES, MAX_PARTS, type DeclaredBody } from './declared.js';
import { FieldSet } from './fields.js';
import { inRange } from './mediaType.js';

/** busboy's wording of the problems it finds, as a client reads them. */
function problemOf(message: string): string {
  if (/boundary not found/i.test(message)) return 'its Content-Type has no boundary';
  if (/unexpected end of (form|file)/i.test(message)) return 'it ends before its closing boundary';
  if (/malformed part header/i.test(message)) return 'a part header is malformed';
  return message.replace(/^multipart: /i, '').toLowerCase();
}

/** A field whose encoding is JSON: its text parsed (a 400 naming it when it is not JSON). */
function jsonField(name: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalidFields([{ in: 'body', field: name, message: 'is not valid JSON (its encoding is application/json)' }]);
  }
}

export function readMultipart(exchange: Exchange, declared: DeclaredBody): Promise<Record<string, unknown>> {
  const { req } = exchange;
  let maxParts = 0;
  for (const rule of declared.parts.values()) maxParts += rule.maxItems;
  maxParts = Math.min(Math.max(maxParts, 1), MAX_PARTS);
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // busboy says 'partsLimit' once `parts` parts have been read: one more than allowed means too many.
      parser = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { fieldSize: MAX_BODY_BYTES, fieldNameSize: 200, parts: maxParts + 1, headerPairs: 20 } });
    } catch (error) {
      reject(refuse('validation_failed', 'malformedMultipart', problemOf(error instanceof Error ? error.message : String(error))));
      return;
    }
    const fields = new FieldSet(declared.parts);
    let settled = false;
    let received = 0;
    const count = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > declared.limit) fail(refuse('payload_too_large', 'body', declared.limit));
    };
    const fail = (refusal: Refusal): void => {
      if (settled) return;
      settled = true;
      // Nothing more is parsed or kept; what still arrives is the answer's to drain (./unread.ts).
      req.off('data', count);
      req.unpipe(parser);
      req.pause();
      if (req.complete || req.readableEnded) exchange.body = 'read';
      reject(refusal);
    };
    const guard = (work: () => void): void => {
      try {
        work();
      } catch (error) {
        fail(error as Refusal);
      }
    };

    parser.on('field', (name, value, info) =>
      guard(() => {
        if (!name) throw refuse('validation_failed', 'namelessPart');
        if (info.valueTruncated) throw refuse('payload_too_large', 'part', name, MAX_BODY_BYTES);
        const rule = declared.parts.get(name);
        if (rule?.binary) throw invalidFields([{ in: 'body', field: name, message: 'must be a file part (a part with a filename)' }]);
        fields.add(name, rule?.json ? jsonField(name, value) : value);
      }),
    );
    parser.on('file', (name, stream, info) => {
      stream.on('error', () => undefined); // the parser reports the same problem
      guard(() => {
        if (!name) throw refuse('validation_failed', 'namelessPart');
        const rule = declared.parts.get(name);
        // A JSON field may come as a part with a filename: a browser's FormData sends a Blob so.
        if (rule !== undefined && !rule.binary && !rule.json) throw invalidFields([{ in: 'body', field: name, message: 'must be a text field, not a file part' }]);
        const mediaType = info.mimeType.toLowerCase();
        if (rule?.contentTypes !== undefined && !rule.contentTypes.some((range) => inRange(mediaType, range))) throw refuse('unsupported_media_type', 'partType', name, mediaType, rule.contentTypes);
        const limit = rule?.limit ?? MAX_BODY_BYTES;
        const chunks: Buffer[] = [];
        let size = 0;
        stream.on('data', (chunk: Buffer) => {
          if (settled) return;
          size += chunk.length;
          if (size > limit) {
            // Dropped before the Refusal is made: its stack trace keeps this closure, and so the
            // chunks, alive for as long as the answer is (a lingering connection's, up to 30 s).
            chunks.length = 0;
            fail(refuse('payload_too_large', 'part', name, limit));
          } else chunks.push(chunk);
        });
        stream.on('end', () =>
          guard(() => {
            const bytes = Buffer.concat(chunks, size);
            fields.add(name, rule?.json ? jsonField(name, bytes.toString('utf8')) : { bytes, size, mediaType, fileName: info.filename });
          }),
        );
      });
      // A refused part is not read, but the parser needs its bytes consumed to go on to the end.
      if (settled) stream.resume();
    });
    const tooMany = () => fail(refuse('payload_too_large', 'tooManyParts', maxParts));
    parser.on('partsLimit', tooMany);
    parser.on('error', (error: Error) => fail(refuse('validation_failed', 'malformedMultipart', problemOf(error.message))));
    parser.on('close', () => {
      if (settled) return;
      settled = true;
      exchange.body = 'read';
      resolve(fields.values);
    });
    req.on('aborted', () => fail(refuse('invalid_json', 'clientGone')));
    req.on('data', count);
    req.pipe(parser);
  });
}
