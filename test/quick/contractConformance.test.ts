/**
 * The suite's own response checker must reject what breaks the contract, or every target would
 * pass by checking nothing.
 */
import { describe, expect, it } from 'vitest';
import { createConformance, type ObservedResponse } from '../contract/conformance.js';

const conformance = await createConformance();
const response = (status: number, headers: Record<string, string>, text: string): ObservedResponse => ({ status, headers: new Headers(headers), text });
const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };
const PET = '{"id":1,"name":"Rex","categoryId":3,"status":"available"}';
const DEPRECATION = { deprecation: '@1795219200', sunset: 'Thu, 05 Dec 2030 00:00:00 GMT', link: '</docs#tag/Pets/operation/getPet>; rel="deprecation"; type="text/html"' };
const ETAG = { etag: '"8sYgmzbigBeDN4Eg9Ts4Ld"' };

describe('contract conformance checker', () => {
  it('accepts responses the contract allows', () => {
    expect(conformance.check('getPet', response(200, { ...JSON_TYPE, ...DEPRECATION, ...ETAG }, PET))).toEqual([]);
    expect(conformance.check('listPets', response(200, { ...JSON_TYPE, ...ETAG, link: '</v1/pets?limit=1&cursor=abc.d>; rel="next"' }, `[${PET}]`))).toEqual([]);
    // A 304 has no body and no content type.
    expect(conformance.check('getPet', response(304, { ...DEPRECATION, ...ETAG }, ''))).toEqual([]);
    expect(conformance.check('listPets', response(304, ETAG, ''))).toEqual([]);
    expect(conformance.check('createPet', response(201, { ...JSON_TYPE, location: '/v1/pets/1' }, PET))).toEqual([]);
  });

  it.each([
    ['a body field of the wrong type', 'getPet', response(200, { ...JSON_TYPE, ...DEPRECATION, ...ETAG }, '{"id":"1","name":"Rex","categoryId":3,"status":"available"}'), /body\/id must be integer/],
    ['an extra body field', 'getPet', response(200, { ...JSON_TYPE, ...DEPRECATION, ...ETAG }, PET.replace('}', ',"x":1}')), /additional properties/],
    ['a header against its pattern', 'getPet', response(200, { ...JSON_TYPE, ...DEPRECATION, ...ETAG, deprecation: 'true' }, PET), /header Deprecation must match pattern/],
    ['a 200 without its ETag', 'getPet', response(200, { ...JSON_TYPE, ...DEPRECATION }, PET), /required header ETag is missing/],
    ['a 304 without its ETag', 'listPets', response(304, {}, ''), /required header ETag is missing/],
    ['an ETag that is not an entity tag', 'listPets', response(200, { ...JSON_TYPE, etag: 'abc' }, '[]'), /header ETag must match pattern/],
    ['a missing required header', 'createPet', response(201, JSON_TYPE, PET), /required header Location is missing/],
    ['an optional header against its pattern', 'listPets', response(200, { ...JSON_TYPE, link: '<https://x/pets>; rel="next"' }, '[]'), /header Link must match pattern/],
    ['an undeclared content type', 'listPets', response(400, { 'content-type': 'application/problem+json' }, '{}'), /content type "application\/problem\+json" is not declared/],
    ['a body that is not JSON', 'listPets', response(200, JSON_TYPE, 'nope'), /body is not JSON/],
    ['an error body that is not an Error', 'listPets', response(401, { ...JSON_TYPE, 'www-authenticate': 'Bearer realm="animal-store"' }, '{"error":{"code":"invalid_json"}}'), /required property 'code'/],
  ] as const)('rejects %s', (_case, operationId, observed, problem) => {
    expect(conformance.check(operationId, observed).join('\n')).toMatch(problem);
  });
});
