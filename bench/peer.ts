/**
 * The bench's Fastify peer (issue 21): the same contract, from the same bundled spec, written
 * the way a Fastify user would write it. fastify-openapi-glue routes each operationId to the
 * service object below and checks the bearer key through its security handler; Fastify validates
 * and serialises from the spec's schemas; plain better-sqlite3 statements read and write the
 * store. Its answers carry the headers ours do (security headers, request id, Cache-Control, a
 * strong ETag and 304, Deprecation and Sunset, Link, Location), so that the bench compares like
 * with like. Run by the bench as a child on its own copy of the seeded SQLite store (SQLITE_PATH,
 * PORT); never a production path. Idempotency-Key is answered 501: the bench never sends one.
 */
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import SQLite from 'better-sqlite3';
import Fastify, { type FastifyError, type FastifyReply, type FastifyRequest } from 'fastify';
import openapiGlue from 'fastify-openapi-glue';
import { SECURITY_HEADERS } from '../src/http/securityHeaders.js';

type Status = 'available' | 'pending' | 'sold';
interface Pet { id: number; name: string; categoryId: number; status: Status }
interface Detail { in: string; field: string; message: string }
type Operation = { operationId?: string; 'x-deprecated-at'?: string; 'x-sunset'?: string };
interface Spec { paths: Record<string, Record<string, Operation>> }

const spec = JSON.parse(readFileSync(new URL('../generated/openapi.json', import.meta.url), 'utf8')) as Spec;
const BASE = '/v1';
const REVALIDATE = 'private, no-cache';

// The spec marks deprecated operations with x-deprecated-at and x-sunset: their answers say so.
const deprecations = new Map<string, Record<string, string>>();
for (const op of Object.values(spec.paths).flatMap((path) => Object.values(path))) {
  if (op.operationId && op['x-deprecated-at'] && op['x-sunset']) {
    deprecations.set(op.operationId, { Deprecation: `@${Date.parse(op['x-deprecated-at']) / 1000}`, Sunset: new Date(op['x-sunset']).toUTCString() });
  }
}

const db = new SQLite(process.env.SQLITE_PATH ?? 'data/animal-store.sqlite');
for (const pragma of ['journal_mode = WAL', 'synchronous = FULL', 'busy_timeout = 5000']) db.pragma(pragma);
const PET = 'id, name, category_id AS categoryId, status';
const byId = db.prepare<[number], Pet>(`SELECT ${PET} FROM pets WHERE id = ?`);
const page = db.prepare<[number, number], Pet>(`SELECT ${PET} FROM pets WHERE id > ? ORDER BY id LIMIT ?`);
const pageWithStatus = db.prepare<[Status, number, number], Pet>(`SELECT ${PET} FROM pets WHERE status = ? AND id > ? ORDER BY id LIMIT ?`);
const insert = db.prepare<[string, number, Status, string], Pet>(`INSERT INTO pets (name, category_id, status, created_at) VALUES (?, ?, ?, ?) RETURNING ${PET}`);
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
    const pet = insert.get(req.body.name, req.body.categoryId, req.body.status, new Date().toISOString());
    if (!pet) throw new Error('INSERT … RETURNING returned no row');
    reply.code(201).header('Location', `${BASE}/pets/${pet.id}`);
    return pet;
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
  if (deprecation && reply.statusCode !== 401) reply.headers(deprecation);
  if (req.method !== 'GET' || reply.statusCode !== 200 || typeof payload !== 'string') return payload;
  const link = reply.getHeader('link');
  const etag = `"${createHash('sha256').update(typeof link === 'string' ? `${payload}\nLink: ${link}` : payload).digest('base64url').slice(0, 22)}"`;
  reply.header('ETag', etag);
  const tags = req.headers['if-none-match']?.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
  if (!tags?.some((tag) => tag === etag || tag === '*')) return payload;
  reply.code(304);
  return '';
});
const WHERE: Readonly<Record<string, string>> = { querystring: 'query', params: 'path', headers: 'header', body: 'body' };
const CODES: Readonly<Record<number, string>> = { 400: 'invalid_json', 404: 'not_found', 413: 'payload_too_large', 415: 'unsupported_media_type' };
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
