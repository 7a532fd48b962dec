/**
 * Bytes for the mock's binary examples. Prism answers an example's `value` as text, encoded as
 * UTF-8, so an image written in the contract would arrive as other bytes (PNG's first byte 0x89
 * becomes C2 89), and an `externalValue` is not read at all (Prism answers a schema sample). So
 * the contract's binary examples name a file of spec/ (`x-example-file: examples/biscuit.png`),
 * the mock's copy of the contract makes each such example's value a marker naming that file
 * (useExampleFiles), and a small front in front of Prism (exampleFileFront) answers the file's
 * bytes wherever Prism answers a marker. Everything else passes through unchanged, headers
 * included (their case and order too).
 */
import { readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { join, normalize, sep } from 'node:path';
import { isNode, operationsOf, resolveRef } from './operations.js';

/** What Prism answers in place of a file's bytes: this, then the file's path under spec/. */
export const EXAMPLE_FILE_MARKER = 'animal-store-mock-example-file:';
/** Bodies longer than any marker are never markers: they pass through unbuffered. */
const MARKER_MAX = 512;

/**
 * Makes each response example of `document` (the mock's copy, edited in place) that names a file
 * with `x-example-file` answer the marker of that file; the example's own text stays in the docs.
 */
export function useExampleFiles(document: unknown): void {
  for (const { operation } of operationsOf(document)) {
    if (!isNode(operation.responses)) continue;
    for (const raw of Object.values(operation.responses)) {
      const response = resolveRef(document, raw);
      if (!isNode(response) || !isNode(response.content)) continue;
      for (const media of Object.values(response.content)) {
        if (!isNode(media) || !isNode(media.examples)) continue;
        for (const rawExample of Object.values(media.examples)) {
          const example = resolveRef(document, rawExample);
          if (isNode(example) && typeof example['x-example-file'] === 'string') example.value = `${EXAMPLE_FILE_MARKER}${example['x-example-file']}`;
        }
      }
    }
  }
}

/** The bytes a marker names, read from `specDir`; undefined for a body that is not a marker, or names a file outside it. */
export function exampleFileOf(body: Buffer, specDir: string): Buffer | undefined {
  const text = body.toString('latin1');
  if (!text.startsWith(EXAMPLE_FILE_MARKER)) return undefined;
  const file = normalize(join(specDir, text.slice(EXAMPLE_FILE_MARKER.length)));
  if (!file.startsWith(`${normalize(specDir)}${sep}`)) return undefined;
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/** `rawHeaders` (name, value, …) with Content-Length set to `length`. */
function withLength(rawHeaders: readonly string[], length: number): string[] {
  const headers = [...rawHeaders];
  for (let i = 0; i < headers.length; i += 2) if ((headers[i] as string).toLowerCase() === 'content-length') headers[i + 1] = String(length);
  return headers;
}

/** A server that passes every request to Prism at `upstream` and answers a marker with its file's bytes. */
export function exampleFileFront(upstream: { host: string; port: number }, specDir: string): Server {
  return createServer((req, res) => {
    const forward = request({ host: upstream.host, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      const status = answer.statusCode ?? 502;
      const length = Number(answer.headers['content-length'] ?? Number.NaN);
      const type = String(answer.headers['content-type'] ?? '');
      if (!(length > 0 && length <= MARKER_MAX) || /json/i.test(type)) {
        res.writeHead(status, answer.rawHeaders);
        answer.pipe(res);
        return;
      }
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const body = Buffer.concat(chunks);
        const file = exampleFileOf(body, specDir);
        res.writeHead(status, file === undefined ? answer.rawHeaders : withLength(answer.rawHeaders, file.length));
        res.end(file ?? body);
      });
    });
    forward.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(`The mock's Prism did not answer: ${error.message}`);
    });
    req.pipe(forward);
  });
}
