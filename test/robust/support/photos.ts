/**
 * The photo operations of contract 1.3.0 as the robust proofs call them: putPetPhoto
 * (`PUT /pets/{petId}/photo`, the image's bytes as image/png, image/jpeg or image/webp, at most
 * 5,242,880, answered 204) and getPetPhoto (`GET /pets/{petId}/photo`: 200 with the bytes and an
 * ETag, 304 to a matching If-None-Match, 206 to a Range, 416 to one past the end, 404 without a
 * photo); and what a read-back must show for a photo to count as whole.
 */
import type { Agent } from 'node:http';
import { isErrorBody, sendBytes, sha256, type BytesResponse } from './uploads.js';

export const PHOTO_LIMIT = 5_242_880;

export const photoUrl = (base: string, petId: number): string => `${base}/pets/${petId}/photo`;

export function putPhoto(base: string, key: string, petId: number, bytes: Buffer, type = 'image/png', agent?: Agent, timeoutMs = 15_000): Promise<BytesResponse> {
  return sendBytes(photoUrl(base, petId), { method: 'PUT', key, body: bytes, headers: { 'content-type': type }, agent, timeoutMs });
}

export function getPhoto(base: string, key: string, petId: number, headers: Record<string, string> = {}): Promise<BytesResponse> {
  return sendBytes(photoUrl(base, petId), { key, headers });
}

/** `count` pets made with createPet (JSON), their ids in order. */
export async function createPets(base: string, key: string, count: number, prefix: string): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const body = Buffer.from(JSON.stringify({ name: `${prefix} ${i}`, categoryId: 1 + (i % 5) }));
    const response = await sendBytes(`${base}/pets`, { method: 'POST', key, body, headers: { 'content-type': 'application/json' } });
    if (response.status !== 201) throw new Error(`createPet answered ${response.status}: ${response.body.toString()}`);
    ids.push((JSON.parse(response.body.toString()) as { id: number }).id);
  }
  return ids;
}

/**
 * A version of a pet's photo a client sent: its bytes, their hash and media type, and how it was
 * answered: `stored` (204), `unanswered` (the connection died first: it may or may not have been
 * stored), `refused` (any other answer: it must not have been).
 */
export interface SentPhoto {
  sha: string;
  bytes: Buffer;
  type: string;
  outcome: 'stored' | 'unanswered' | 'refused';
}

export const sentPhoto = (bytes: Buffer, type: string, outcome: SentPhoto['outcome']): SentPhoto => ({ sha: sha256(bytes), bytes, type, outcome });

/**
 * What a pet's photo may read back as after a crash or a refusal, given what was sent to it in
 * order: the last stored version, or any unanswered one sent after it (it may have committed);
 * with none stored, no photo (404) too. Never anything else: a refused one, a mix of two, a
 * prefix of one, an older one.
 */
export function allowedVersions(sent: readonly SentPhoto[]): { photos: SentPhoto[]; noneAllowed: boolean } {
  let last = -1;
  sent.forEach((version, i) => {
    if (version.outcome === 'stored') last = i;
  });
  const after = sent.slice(last + 1).filter((v) => v.outcome === 'unanswered');
  return { photos: last === -1 ? after : [sent[last]!, ...after], noneAllowed: last === -1 };
}

/**
 * Reads a pet's photo back the ways getPetPhoto serves it and says what is wrong (empty: it is
 * whole and one of `allowed`, or absent where absence is allowed): the full read's bytes and
 * Content-Type; its ETag answered 304; a Range of its first 100 bytes answered 206 with exactly
 * them; a Range past its end answered 416.
 */
export async function photoProblems(base: string, key: string, petId: number, allowed: { photos: readonly SentPhoto[]; noneAllowed: boolean }): Promise<{ problems: string[]; read?: SentPhoto }> {
  const what = `pet ${petId}`;
  const full = await getPhoto(base, key, petId);
  if (full.status === 404) {
    const body: unknown = JSON.parse(full.body.toString());
    const problems = allowed.noneAllowed ? [] : [`${what}: 404, but its photo ${allowed.photos[0]?.sha.slice(0, 12)} was acknowledged`];
    if (!isErrorBody(body, 404)) problems.push(`${what}: a 404 without an Error body`);
    return { problems };
  }
  if (full.status !== 200) return { problems: [`${what}: GET answered ${full.status}: ${full.body.toString().slice(0, 200)}`] };
  const sha = sha256(full.body);
  const read = allowed.photos.find((v) => v.sha === sha);
  if (!read) return { problems: [`${what}: read back ${full.body.length} bytes (sha ${sha.slice(0, 12)}) that are none of the photos it may hold (${allowed.photos.map((v) => `${v.sha.slice(0, 12)}, ${v.bytes.length} bytes`).join('; ') || 'none'}): torn, mixed or lost`] };
  const problems: string[] = [];
  if (full.headers['content-type'] !== read.type) problems.push(`${what}: Content-Type ${full.headers['content-type']}, sent as ${read.type}`);
  const etag = full.headers.etag;
  if (typeof etag !== 'string') problems.push(`${what}: no ETag`);
  else {
    const again = await getPhoto(base, key, petId, { 'if-none-match': etag });
    if (again.status !== 304) problems.push(`${what}: If-None-Match its own ETag answered ${again.status}`);
  }
  const head = await getPhoto(base, key, petId, { range: 'bytes=0-99' });
  if (head.status !== 206 || !head.body.equals(read.bytes.subarray(0, 100)) || head.headers['content-range'] !== `bytes 0-99/${read.bytes.length}`) {
    problems.push(`${what}: Range bytes=0-99 answered ${head.status}, Content-Range ${head.headers['content-range']}, ${head.body.length} bytes${head.body.equals(read.bytes.subarray(0, 100)) ? '' : ' that are not its first 100'}`);
  }
  const past = await getPhoto(base, key, petId, { range: `bytes=${read.bytes.length + 10}-` });
  if (past.status !== 416) problems.push(`${what}: a Range past its end answered ${past.status}`);
  return { problems, read };
}
