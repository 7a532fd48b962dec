/**
 * The bench's upload scenarios (contract 1.3.0): putPetPhoto with a 1 MiB PNG, getPetPhoto of a
 * 1 MiB PNG stored before the rounds, and createPet as multipart/form-data (NewPet's fields and a
 * 64 KiB photo part). Each is built only when the bundled contract has what it needs, read from
 * generated/openapi.json; otherwise it is skipped with a line saying why, so the bench runs on
 * contracts before 1.3.0 as it did.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { png } from '../scripts/lib/png.js';
import { projectRoot } from '../src/shared/paths.js';
import type { Scenario } from './scenarios.js';
import { auth } from './targets.js';

export const PUT_PHOTO = 'putPetPhoto (1 MiB PNG)';
export const GET_PHOTO = 'getPetPhoto (1 MiB PNG)';
export const CREATE_MULTIPART = 'createPet (multipart, 64 KiB photo)';
export const PHOTO_SCENARIOS = [PUT_PHOTO, GET_PHOTO, CREATE_MULTIPART] as const;

/** The pet putPetPhoto writes over and over, and the one getPetPhoto reads (stored once before the rounds). */
const PUT_PET = 1;
const GET_PET = 2;
const BOUNDARY = 'benchboundary7MA4YWxkTrZu0gW';

interface Operation {
  operationId?: string;
  requestBody?: { content?: Record<string, unknown> };
}
interface Spec {
  servers?: Array<{ url: string }>;
  paths?: Record<string, Record<string, Operation>>;
}

function findOperation(spec: Spec, operationId: string): { method: string; path: string; operation: Operation } | undefined {
  for (const [path, item] of Object.entries(spec.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) if (operation?.operationId === operationId) return { method, path, operation };
  }
  return undefined;
}

/** The API's base path (`/v1`) and an operation's path for `petId`. */
const pathFor = (spec: Spec, path: string, petId: number) => `${new URL(spec.servers?.[0]?.url ?? 'http://x/v1').pathname.replace(/\/$/, '')}${path.replace('{petId}', String(petId))}`;

function multipart(photo: Buffer): Buffer {
  const field = (name: string, value: string) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  return Buffer.concat([
    Buffer.from(`${field('name', 'Bench Biscuit')}${field('categoryId', '3')}--${BOUNDARY}\r\nContent-Disposition: form-data; name="photo"; filename="biscuit.png"\r\nContent-Type: image/png\r\n\r\n`),
    photo,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

/** Stores `photo` as pet `petId`'s through the target's putPetPhoto: getPetPhoto's rounds read it. */
async function storePhoto(url: string, key: string, photo: Buffer): Promise<void> {
  const response = await fetch(url, { method: 'PUT', headers: { ...auth(key), 'Content-Type': 'image/png' }, body: Uint8Array.from(photo) });
  const text = await response.text();
  if (response.status !== 204) throw new Error(`PUT ${new URL(url).pathname} answered ${response.status} (expected 204): ${text.slice(0, 300)}`);
}

/** The upload scenarios the contract allows, and a line for each one skipped. */
export function photoScenarios(specPath = join(projectRoot, 'generated', 'openapi.json')): { scenarios: Scenario[]; skipped: string[] } {
  const spec = JSON.parse(readFileSync(specPath, 'utf8')) as Spec;
  const scenarios: Scenario[] = [];
  const skipped: string[] = [];
  const put = findOperation(spec, 'putPetPhoto');
  const get = findOperation(spec, 'getPetPhoto');
  const create = findOperation(spec, 'createPet');
  const missing = (what: string, why: string) => skipped.push(`${what} skipped: ${why} (contract 1.3.0).`);
  const photo = png(1024 * 1024);
  if (put) {
    const path = pathFor(spec, put.path, PUT_PET);
    scenarios.push({ name: PUT_PHOTO, expected: 204, request: (o, k) => ({ url: `${o}${path}`, method: 'PUT', headers: { ...auth(k), 'Content-Type': 'image/png' }, body: photo }) });
  } else missing(PUT_PHOTO, 'the bundled contract has no putPetPhoto');
  if (get && put) {
    const path = pathFor(spec, get.path, GET_PET);
    const putPath = pathFor(spec, put.path, GET_PET);
    scenarios.push({ name: GET_PHOTO, expected: 200, prepare: (o, k) => storePhoto(`${o}${putPath}`, k, photo), request: (o, k) => ({ url: `${o}${path}`, headers: auth(k) }) });
  } else missing(GET_PHOTO, get ? 'the bundled contract has no putPetPhoto to store the photo it reads' : 'the bundled contract has no getPetPhoto');
  if (create?.operation.requestBody?.content?.['multipart/form-data'] !== undefined) {
    const body = multipart(png(64 * 1024));
    const path = pathFor(spec, create.path, 0);
    scenarios.push({ name: CREATE_MULTIPART, expected: 201, request: (o, k) => ({ url: `${o}${path}`, method: 'POST', headers: { ...auth(k), 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` }, body }) });
  } else missing(CREATE_MULTIPART, 'createPet takes no multipart/form-data in the bundled contract');
  return { scenarios, skipped };
}
