/**
 * The bench's Fastify peer (issue 21): the same contract, from the same bundled spec, written
 * the way a Fastify user would write it. fastify-openapi-glue routes each operationId to the
 * service object below and checks the bearer key through its security handler; Fastify validates
 * and serialises from the spec's schemas; plain better-sqlite3 statements read and write the
 * store. Its answers carry the headers ours do (security headers, request id, Cache-Control, a
 * strong ETag and 304, Deprecation and Sunset, Link, Location), so that the bench compares like
 * with like. Run by the bench as a child on its own copy of the seeded SQLite store (SQLITE_PATH,
 * PORT); never a production path. Idempotency-Key is answered 501: the bench never sends one.
 *
 * Uploads (contract 1.3.0, where the spec has them), as a Fastify user serves them: raw image
 * bodies through a content-type parser of their own (bytes, up to the schema's maxLength),
 * multipart/form-data through @fastify/multipart (fields on the body, the photo part as bytes,
 * within the schema's maxLength). Fastify's JSON Schema validation cannot check bytes, so an
 * onRoute hook takes the binary media types and binary properties out of the body schemas it is
 * given, and the handlers check the bytes (size, the image's signature). Photos go to a table of
 * the peer's own in its copy of the store, one fsync per write like its inserts; reads answer a
 * strong ETag, 304, and a single byte Range (206, 416).
 */
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import SQLite from 'better-sqlite3';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify';
import openapiGlue from 'fastify-openapi-glue';
import { SECURITY_HEADERS } from '../src/http/securityHeaders.js';

type Status = 'available' | 'pending' | 'sold';
interface Pet { id: number; name: string; categoryId: number; status: Status }
interface Detail { in: string; field: string; message: string }
type Operation = { operationId?: string; tags?: string[]; externalDocs?: { url?: string }; 'x-deprecated-at'?: string; 'x-sunset'?: string };
interface Spec { paths: Record<string, Record<string, Operation>> }

const spec = JSON.parse(readFileSync(new URL('../generated/openapi.json', import.meta.url), 'utf8')) as Spec;
const BASE = '/v1';
const REVALIDATE = 'private, no-cache';

// The spec marks deprecated operations with x-deprecated-at and x-sunset: their answers say so,
// with a Link to the operation's docs (RFC 9745), as ours do.
const deprecations = new Map<string, Record<string, string>>();
for (const op of Object.values(spec.paths).flatMap((path) => Object.values(path))) {
  if (op.operationId && op['x-deprecated-at'] && op['x-sunset']) {
    const docs = op.externalDocs?.url ?? `/docs#tag/${encodeURIComponent(op.tags?.[0] ?? '')}/operation/${encodeURIComponent(op.operationId)}`;
    deprecations.set(op.operationId, { Deprecation: `@${Date.parse(op['x-deprecated-at']) / 1000}`, Sunset: new Date(op['x-sunset']).toUTCString(), Link: `<${docs}>; rel="deprecation"; type="text/html"` });
  }
}

const db = new SQLite(process.env.SQLITE_PATH ?? 'data/animal-store.sqlite');
for (const pragma of ['journal_mode = WAL', 'synchronous = FULL', 'busy_timeout = 5000']) db.pragma(pragma);
const PET = 'id, name, category_id AS categoryId, status';
const byId = db.prepare<[number], Pet>(`SELECT ${PET} FROM pets WHERE id = ?`);
const page = db.prepare<[number, number], Pet>(`SELECT ${PET} FROM pets WHERE id > ? ORDER BY id LIMIT ?`);
const pageWithStatus = db.prepare<[Status, number, number], Pet>(`SELECT ${PET} FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`);
const insert = db.prepare<[string, number, Status, string], Pet>(`INSERT INTO pets (name, category_id, status, created_at) VALUES (?, ?, ?, ?) RETURNING ${PET}`);
// The peer's own photo table, in its own copy of the store.
db.exec('CREATE TABLE IF NOT EXISTS bench_peer_photos (pet_id INTEGER PRIMARY KEY, media_type TEXT NOT NULL, etag TEXT NOT NULL, bytes BLOB NOT NULL)');
const putPhotoRow = db.prepare<[number, string, string, Buffer]>('INSERT INTO bench_peer_photos (pet_id, media_type, etag, bytes) VALUES (?, ?, ?, ?) ON CONFLICT (pet_id) DO UPDATE SET media_type = excluded.media_type, etag = excluded.etag, bytes = excluded.bytes');
const photoRow = db.prepare<[number], { media_type: string; etag: string; bytes: Buffer }>('SELECT media_type, etag, bytes FROM bench_peer_photos WHERE pet_id = ?');
const petExists = db.prepare<[number], { one: number }>('SELECT 1 AS one FROM pets WHERE id = ?');
const createWithPhoto = db.transaction((name: string, categoryId: number, status: Status, photo: Upload | undefined) => {
  const pet = insert.get(name, categoryId, status, new Date().toISOString());
  if (!pet) throw new Error('INSERT … RETURNING returned no row');
  if (photo) putPhotoRow.run(pet.id, photo.mimetype, tagOf(photo.bytes), photo.bytes);
  return pet;
});
// The api_keys table keeps a SHA-256 of each key: loaded once, so a check is one hash and one lookup.
const keyHashes = new Set(db.prepare<[], { key_hash: string }>('SELECT key_hash FROM api_keys WHERE revoked_at IS NULL').all().map((row) => row.key_hash));
const secret = db.prepare<[], { value: string }>("SELECT value FROM server_secrets WHERE name = 'cursor'").get()?.value ?? randomUUID();

// Signed cursors, so that a cursor this service did not issue is a 400: base64url JSON, then its HMAC.
const sign = (payload: string) => createHmac('sha256', secret).update(payload).digest().subarray(0, 16);
const encodeCursor = (afterId: number, status: Status | undefined) => {
  const payload = Buffer.from(JSON.stringify(status ? { a: afterId, s: status } : { a: afterId })).toString('base64url');
  return `${payload}.${sign(payload).toString('base64url')}`;
};
function decodeCursor(cursor: string): { a: number; s?: Status } | undefined {
  const [payload = '', signature = ''] = cursor.split('.');
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== 16 || !timingSafeEqual(given, sign(payload))) return undefined;
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { a: number; s?: Status };
}

const problem = (status: number, code: string, message: string, details?: Detail[]) => ({ code, message, status, ...(details && { details }) });
const cursorProblem = problem(400, 'validation_failed', 'The cursor was not issued by this service.', [{ in: 'query', field: 'cursor', message: 'is not a cursor this service issued' }]);

/** A file part as the multipart hook leaves it (onFile below), or a raw body with its media type. */
interface Upload { bytes: Buffer; mimetype: string }
const tagOf = (bytes: Buffer) => `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 22)}"`;
/** The image formats the contract takes, by their first bytes. */
const SIGNATURES: Record<string, (b: Buffer) => boolean> = {
  'image/png': (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  'image/jpeg': (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  'image/webp': (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
};
const notAnImage = (type: string) => problem(415, 'unsupported_media_type', `The photo is not a ${type} image.`);
const mediaTypeOf = (req: FastifyRequest) => (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

/** One `bytes=a-b`, `bytes=a-` or `bytes=-n` range of `size` bytes; null: unsatisfiable; undefined: none or not understood (the whole body). */
function byteRange(header: string | undefined, size: number): { start: number; end: number } | null | undefined {
  const match = header === undefined ? null : /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return undefined;
  const start = match[1] === '' ? Math.max(0, size - Number(match[2])) : Number(match[1]);
  const end = match[1] === '' || match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  return start > end || start >= size ? null : { start, end };
}

const serviceHandlers = {
  async listPets(req: FastifyRequest<{ Querystring: { limit: number; status?: Status; cursor?: string } }>, reply: FastifyReply) {
    const { limit, status, cursor } = req.query;
    const position = cursor === undefined ? { a: 0, s: status } : decodeCursor(cursor);
    if (!position || position.s !== status) return reply.code(400).send(cursorProblem);
    const rows = status ? pageWithStatus.all(status, position.a, limit + 1) : page.all(position.a, limit + 1);
    const pets = rows.slice(0, limit);
    const last = pets.at(-1);
    if (rows.length > limit && last) {
      const next = new URLSearchParams({ limit: String(limit), ...(status && { status }), cursor: encodeCursor(last.id, status) });
      reply.header('Link', `<${BASE}/pets?${next.toString()}>; rel="next"`);
    }
    reply.header('Cache-Control', REVALIDATE);
    return pets;
  },
  async getPet(req: FastifyRequest<{ Params: { petId: number } }>, reply: FastifyReply) {
    const pet = byId.get(req.params.petId);
    if (!pet) return reply.code(404).send(problem(404, 'not_found', `No animal has id ${req.params.petId}.`));
    reply.header('Cache-Control', REVALIDATE);
    return pet;
  },
  async createPet(req: FastifyRequest<{ Body: { name: string; categoryId: number; status: Status } }>, reply: FastifyReply) {
    if (req.headers['idempotency-key'] !== undefined) return reply.code(501).send(problem(501, 'not_implemented', 'Idempotency-Key is not supported here.'));
    const photo = files.get(req)?.photo;
    if (photo && !SIGNATURES[photo.mimetype]?.(photo.bytes)) return reply.code(415).send(notAnImage(photo.mimetype));
    const pet = createWithPhoto(req.body.name, req.body.categoryId, req.body.status ?? 'available', photo);
    reply.code(201).header('Location', `${BASE}/pets/${pet.id}`);
    return pet;
  },
  async putPetPhoto(req: FastifyRequest<{ Params: { petId: number }; Body: Buffer }>, reply: FastifyReply) {
    const type = mediaTypeOf(req);
    if (!Buffer.isBuffer(req.body) || !SIGNATURES[type]?.(req.body)) return reply.code(415).send(notAnImage(type));
    if (!petExists.get(req.params.petId)) return reply.code(404).send(problem(404, 'not_found', `No animal has id ${req.params.petId}.`));
    putPhotoRow.run(req.params.petId, type, tagOf(req.body), req.body);
    return reply.code(204).send();
  },
  async getPetPhoto(req: FastifyRequest<{ Params: { petId: number } }>, reply: FastifyReply) {
    const photo = photoRow.get(req.params.petId);
    if (!photo) return reply.code(404).send(problem(404, 'not_found', `Animal ${req.params.petId} has no photo.`));
    reply.headers({ ETag: photo.etag, 'Cache-Control': REVALIDATE, 'Accept-Ranges': 'bytes' });
    const tags = req.headers['if-none-match']?.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
    if (tags?.some((tag) => tag === photo.etag || tag === '*')) return reply.code(304).send();
    const size = photo.bytes.length;
    const range = byteRange(req.headers.range, size);
    if (range === null) return reply.code(416).header('Content-Range', `bytes */${size}`).send(problem(416, 'range_not_satisfiable', `The photo has ${size} bytes.`));
    reply.header('Content-Type', photo.media_type);
    if (range === undefined) return reply.send(photo.bytes);
    return reply.code(206).header('Content-Range', `bytes ${range.start}-${range.end}/${size}`).send(photo.bytes.subarray(range.start, range.end + 1));
  },
};

const securityHandlers = {
  async bearerApiKey(req: FastifyRequest) {
    const header = req.headers.authorization;
    const token = header?.startsWith('Bearer ') ? header.slice(7) : '';
    if (!keyHashes.has(createHash('sha256').update(token).digest('hex'))) throw new Error('invalid key');
  },
};

// As our server's: the contract's Error bodies (no `removeAdditional`: an unknown field is a 400), 64 KiB bodies.
const app = Fastify({ ajv: { customOptions: { removeAdditional: false } }, bodyLimit: 65536, keepAliveTimeout: 5000 });
// Uploads: raw images as bytes (each route's bodyLimit is set from its schema below), multipart
// fields on the body and file parts as bytes with their media type (limits from the schema below).
const PHOTO_PARTS = /^image\//;
app.addContentTypeParser(PHOTO_PARTS, { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
const files = new WeakMap<FastifyRequest, Record<string, Upload>>();
type Schema = Record<string, unknown>;
const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);
const isBinary = (schema: unknown) => isSchema(schema) && (schema.format === 'binary' || (schema.contentMediaType !== undefined && schema.contentEncoding === undefined));
/** `schema` without its binary properties (in allOf too), and the names and byte limits it had. */
function withoutFiles(schema: Schema, found: Map<string, number>): Schema {
  const copy: Schema = { ...schema };
  if (isSchema(schema.properties)) {
    const properties: Schema = {};
    for (const [name, property] of Object.entries(schema.properties)) {
      const file = resolved(property);
      if (isBinary(file)) found.set(name, typeof (file as Schema).maxLength === 'number' ? ((file as Schema).maxLength as number) : 65536);
      else properties[name] = property;
    }
    copy.properties = properties;
    if (Array.isArray(schema.required)) copy.required = schema.required.filter((name) => !found.has(String(name)));
  }
  if (Array.isArray(schema.allOf)) copy.allOf = schema.allOf.map((part) => (isSchema(part) ? withoutFiles(part, found) : part));
  return copy;
}
/** A local `$ref` (`#/components/…`) resolved in the spec, else the schema itself. */
function resolved(schema: unknown): unknown {
  if (!isSchema(schema) || typeof schema.$ref !== 'string' || !schema.$ref.startsWith('#/')) return schema;
  return resolved(schema.$ref.slice(2).split('/').reduce<unknown>((node, key) => (isSchema(node) ? node[key] : undefined), spec));
}
/** The largest byte limit of any file part of any multipart body in the spec (@fastify/multipart takes one for all routes). */
function largestFilePart(): number {
  let largest = 65536;
  const visit = (schema: unknown): void => {
    const node = resolved(schema);
    if (!isSchema(node)) return;
    if (isSchema(node.properties)) for (const property of Object.values(node.properties)) {
      const file = resolved(property);
      if (isBinary(file) && typeof (file as Schema).maxLength === 'number') largest = Math.max(largest, (file as Schema).maxLength as number);
    }
    if (Array.isArray(node.allOf)) node.allOf.forEach(visit);
  };
  for (const op of Object.values(spec.paths).flatMap((path) => Object.values(path)) as Array<{ requestBody?: { content?: Record<string, { schema?: unknown }> } }>) visit(op.requestBody?.content?.['multipart/form-data']?.schema);
  return largest;
}
app.addHook('onRoute', (route: RouteOptions) => {
  const content = isSchema(route.schema?.body) && isSchema(route.schema.body.content) ? route.schema.body.content : undefined;
  if (!content || !route.schema) return;
  const kept: Schema = {};
  for (const [type, media] of Object.entries(content)) {
    const schema = isSchema(media) ? media.schema : undefined;
    if (PHOTO_PARTS.test(type) || isBinary(schema)) {
      // Bytes: no JSON Schema to check them with; the route's own limit is the schema's maxLength.
      if (isSchema(schema) && typeof schema.maxLength === 'number') route.bodyLimit = Math.max(route.bodyLimit ?? 0, schema.maxLength);
    } else if (type === 'multipart/form-data' && isSchema(resolved(schema))) {
      kept[type] = { schema: withoutFiles(resolved(schema) as Schema, new Map()) };
    } else kept[type] = media;
  }
  route.schema = { ...route.schema, body: { content: kept } };
});
await app.register(multipart, {
  attachFieldsToBody: 'keyValues',
  limits: { fieldSize: 65536, fields: 20, files: 1, parts: 21, fileSize: largestFilePart() },
  async onFile(part) {
    (part as unknown as { value: Upload }).value = { bytes: await part.toBuffer(), mimetype: part.mimetype };
  },
});
// File parts leave the body before validation: the schema Fastify checks has none (onRoute above).
app.addHook('preValidation', async (req) => {
  if (!req.isMultipart() || !isSchema(req.body)) return;
  const body = req.body as Record<string, unknown>;
  const found: Record<string, Upload> = {};
  for (const [name, value] of Object.entries(body)) {
    if (isSchema(value) && Buffer.isBuffer(value.bytes)) {
      found[name] = value as unknown as Upload;
      delete body[name];
    }
  }
  files.set(req, found);
});
const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
app.addHook('onRequest', async (req, reply) => {
  const incoming = req.headers['x-request-id'];
  const sane = typeof incoming === 'string' && REQUEST_ID.test(incoming) && !incoming.includes('ask_');
  reply.headers({ ...SECURITY_HEADERS, 'X-Request-Id': sane ? incoming : randomUUID() });
});
// A strong tag over the bytes sent (and a page's Link), and a 304 when If-None-Match holds it.
app.addHook('onSend', async (req, reply, payload) => {
  const operationId = (req.routeOptions.schema as Operation | undefined)?.operationId;
  const deprecation = operationId === undefined ? undefined : deprecations.get(operationId);
  // The handler's Link (a page's next) is part of the tag; the deprecation's, as in ours, is not.
  const link = reply.getHeader('link');
  if (deprecation && reply.statusCode !== 401) reply.headers(deprecation);
  if (req.method !== 'GET' || reply.statusCode !== 200 || typeof payload !== 'string') return payload;
  const etag = `"${createHash('sha256').update(typeof link === 'string' ? `${payload}\nLink: ${link}` : payload).digest('base64url').slice(0, 22)}"`;
  reply.header('ETag', etag);
  const tags = req.headers['if-none-match']?.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
  if (!tags?.some((tag) => tag === etag || tag === '*')) return payload;
  reply.code(304);
  return '';
});
const WHERE: Readonly<Record<string, string>> = { querystring: 'query', params: 'path', headers: 'header', body: 'body' };
const CODES: Readonly<Record<number, string>> = { 400: 'invalid_json', 404: 'not_found', 406: 'unsupported_media_type', 413: 'payload_too_large', 415: 'unsupported_media_type' };
app.setErrorHandler<FastifyError>(async (error, req, reply) => {
  if (error.validation) {
    const where = WHERE[error.validationContext ?? 'body'] ?? 'body';
    const details = error.validation.map((e) => ({ in: where, field: e.instancePath.slice(1) || String(e.params.missingProperty ?? e.params.additionalProperty ?? ''), message: e.message ?? 'is invalid' }));
    const first = details[0];
    return reply.code(400).send(problem(400, 'validation_failed', `The request is invalid: ${where} field "${first?.field ?? ''}" ${first?.message ?? 'is invalid'}.`, details));
  }
  if (error.statusCode === 401) {
    const challenge = req.headers.authorization === undefined ? 'Bearer realm="animal-store"' : 'Bearer realm="animal-store", error="invalid_token"';
    return reply.code(401).headers({ 'WWW-Authenticate': challenge, Connection: 'close' }).send(problem(401, 'unauthorized', 'A valid API key is required.'));
  }
  const status = error.statusCode !== undefined && CODES[error.statusCode] ? error.statusCode : 500;
  return reply.code(status).send(problem(status, CODES[status] ?? 'internal_error', status === 500 ? 'An unexpected error occurred.' : error.message));
});
app.setNotFoundHandler(async (req, reply) => reply.code(404).send(problem(404, 'not_found', `No route ${req.method} ${req.url.split('?')[0] ?? ''}.`)));
await app.register(openapiGlue, { specification: spec, serviceHandlers, securityHandlers, prefix: BASE });
await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });

process.on('SIGTERM', () => void app.close().then(() => (db.close(), process.exit(0))));
// Never outlive the benchmark, even if it is killed without a chance to clean up.
const parent = Number(process.env.BENCH_PARENT);
if (parent) setInterval(() => process.ppid !== parent && process.exit(0), 1000).unref();
