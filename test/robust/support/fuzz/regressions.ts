/**
 * Server defects the fuzzer found, fixed since, each kept as its minimal reproductions and the
 * answer the contract calls for: fuzz.test.ts replays every one on each run, so none can return
 * unnoticed. (The generators do not draw these inputs; the comments there point here.)
 */
import type { Expectation } from './cases.js';
import type { WireRequest } from './wire.js';

export interface Reproduction {
  operationId: string;
  wire: WireRequest;
  expect: Expectation;
}

export interface Regression {
  id: string;
  title: string;
  reproductions: (key: string, host: string) => Reproduction[];
}

const json = (key: string): Array<readonly [string, string]> => [
  ['Authorization', `Bearer ${key}`],
  ['Content-Type', 'application/json'],
];

const get = (target: string, key: string): WireRequest => ({ method: 'GET', target, headers: [['Authorization', `Bearer ${key}`]], transport: 'http' });

export const REGRESSIONS: readonly Regression[] = [
  {
    id: 'mediaTypeBeforeRouting',
    title: 'a body on a GET, or on a method the path lacks, is routed first: 400 or 405, never an undeclared 415/413',
    reproductions: (key) => [
      { operationId: 'listPets', wire: { ...get('/v1/pets', key), headers: [['Authorization', `Bearer ${key}`], ['Content-Type', 'text/plain']], body: Buffer.from('hello') }, expect: { kind: 'any' } },
      { operationId: 'getPet', wire: { ...get('/v1/pets/1', key), headers: [['Authorization', `Bearer ${key}`], ['Content-Type', 'text/plain']], body: Buffer.from('hello') }, expect: { kind: 'any' } },
      { operationId: 'listPets', wire: { ...get('/v1/pets', key), headers: json(key), body: Buffer.from(`"${'a'.repeat(70_000)}"`) }, expect: { kind: 'any' } },
      // node:http (and other clients) frame a body-less PUT as an empty chunked body.
      { operationId: 'getPet', wire: { method: 'PUT', target: '/v1/pets/1', headers: [['Authorization', `Bearer ${key}`], ['Transfer-Encoding', 'chunked']], body: Buffer.alloc(0), transport: 'http' }, expect: { kind: 'reject', statuses: [405] } },
      { operationId: 'listPets', wire: { method: 'PUT', target: '/v1/pets', headers: [['Authorization', `Bearer ${key}`], ['Content-Type', 'text/plain']], body: Buffer.from('x'), transport: 'http' }, expect: { kind: 'reject', statuses: [405] } },
    ],
  },
  {
    id: 'lenientIntegers',
    title: 'integer parameters take only canonical decimal text: 0x1, 0b1, 1e0, +1, 01, " 1", 1.0, tab+1 are 400s',
    reproductions: (key) => [
      ...['0x1', '0b1', '1e0', '+1', '01', '%201', '1.0', '%091'].map((id) => ({ operationId: 'getPet', wire: get(`/v1/pets/${id}`, key), expect: { kind: 'reject', statuses: [400] } as Expectation })),
      ...['0x10', '1e1', '%2B5', '05', '5.0'].map((limit) => ({ operationId: 'listPets', wire: get(`/v1/pets?limit=${limit}`, key), expect: { kind: 'reject', statuses: [400] } as Expectation })),
    ],
  },
  {
    id: 'invalidUtf8Body',
    title: 'createPet: bytes that are not UTF-8 inside a JSON body are a 400 invalid_json, never replaced with U+FFFD and stored',
    reproductions: (key) =>
      [Buffer.from([0xff]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xc3]), Buffer.from([0xc0, 0xaf])].map((bad) => ({
        operationId: 'createPet',
        wire: { method: 'POST', target: '/v1/pets', headers: json(key), body: Buffer.concat([Buffer.from('{"name":"utf8 '), bad, Buffer.from('","categoryId":1}')]), transport: 'http' as const },
        expect: { kind: 'reject', statuses: [400], code: 'invalid_json' },
      })),
  },
];
