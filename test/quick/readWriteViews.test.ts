/**
 * Read and write views of one schema (src/http/shapes/views.ts): a made-up booking whose `id` and
 * `status` are readOnly and whose card `number` and `cvc` are writeOnly, all required, in one
 * schema used by the request and the answer, as the public APIs we pasted write it. Through the
 * whole list of stages, in process, response checking on (as in tests and dev).
 */
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { $Read, $Write, Readable } from '../../generated/openapi.js';
import { handlers } from '../../generated/handlers.js';
import type { Handlers, Received } from '../../src/domain/contract.js';
import { answerView, stripMarked, validationViews } from '../../src/http/shapes/views.js';
import { loadBundledSpec, type OpenApiDocument } from '../../src/shared/spec.js';
import { injectable, type Injectable } from '../support/inject.js';

const BOOKING = {
  type: 'object',
  required: ['id', 'status', 'name', 'payment'],
  additionalProperties: false,
  properties: {
    id: { type: 'integer', format: 'int64', minimum: 1, maximum: 1000, readOnly: true },
    status: { type: 'string', enum: ['pending', 'confirmed'], readOnly: true },
    name: { type: 'string', maxLength: 40 },
    payment: { $ref: '#/components/schemas/BookingPaymentExample' },
  },
};
const PAYMENT = {
  type: 'object',
  required: ['number', 'cvc', 'last4'],
  additionalProperties: false,
  properties: {
    number: { type: 'string', pattern: '^[0-9]{16}$', writeOnly: true },
    cvc: { type: 'string', pattern: '^[0-9]{3}$', writeOnly: true },
    last4: { type: 'string', pattern: '^[0-9]{4}$', readOnly: true },
  },
};

function withBookings(): OpenApiDocument {
  const document = structuredClone(loadBundledSpec()) as unknown as { paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } };
  document.components.schemas.BookingExample = BOOKING;
  document.components.schemas.BookingPaymentExample = PAYMENT;
  const json = { 'application/json': { schema: { $ref: '#/components/schemas/BookingExample' } } };
  document.paths['/examples/bookings'] = {
    post: {
      operationId: 'createBookingExample',
      summary: 'Book',
      tags: ['Pets'],
      requestBody: { required: true, content: json },
      responses: {
        '201': { description: 'Booked.', content: json },
        '400': { $ref: '#/components/responses/BadRequest' },
        '401': { $ref: '#/components/responses/Unauthorized' },
        default: { $ref: '#/components/responses/UnexpectedError' },
      },
    },
  };
  return document as unknown as OpenApiDocument;
}

type Booking = { id?: number; status?: string; name: string; payment: { number?: string; cvc?: string; last4?: string } };
let received: unknown[] = [];
let t: Injectable;
beforeAll(async () => {
  // Echoes what it got, with what the server sets, card number included: a handler that leaks.
  const createBookingExample = async ({ body }: { body: Booking }) => {
    received.push(structuredClone(body));
    return { status: 201, body: { ...body, id: 7, status: 'pending', payment: { ...body.payment, last4: body.payment.number?.slice(-4) ?? '0000' } } };
  };
  t = await injectable({ document: withBookings(), handlers: { ...handlers, createBookingExample } as unknown as Handlers });
});
afterAll(() => t.close());

const book = (body: unknown) => t.inject({ method: 'POST', url: '/v1/examples/bookings', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
const CARD = { number: '4242424242424242', cvc: '123' };

describe('read and write views of one schema', () => {
  it('a request need not send the required readOnly fields; those it sends back are dropped before the handler, whatever their value', async () => {
    received = [];
    expect((await book({ name: 'Ada', payment: CARD })).statusCode).not.toBe(400);
    expect((await book({ id: 'not even a number', status: 'confirmed', name: 'Ada', payment: { ...CARD, last4: '9999' } })).statusCode).not.toBe(400);
    expect(received).toEqual([
      { name: 'Ada', payment: CARD },
      { name: 'Ada', payment: CARD },
    ]);
  });

  it('a required writeOnly field is required in the request', async () => {
    const refused = await book({ name: 'Ada', payment: { number: CARD.number } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ code: 'validation_failed', details: [{ in: 'body', field: 'payment.cvc' }] });
  });

  it('a handler that echoes writeOnly fields breaks the contract in tests and dev (a 500 naming them); in production they are dropped', async () => {
    const leaked = await book({ name: 'Ada', payment: CARD });
    expect(leaked.statusCode).toBe(500);
    expect(leaked.body).toContain('/payment/number');
    expect(leaked.body).toContain('writeOnly');
    expect(leaked.body).not.toContain(CARD.number);
    const violation = t.app.violations.at(-1);
    expect(violation?.problems.join(' ')).toMatch(/`\/payment\/number`, `\/payment\/cvc`/);
  });

  it('the answer without them is what production sends: the read view, where the required writeOnly fields are not required', () => {
    const document = validationViews(withBookings()) as unknown as { paths: Record<string, { post: { responses: Record<string, { content: Record<string, { schema: { $ref: string } }> }> } }>; components: { schemas: Record<string, { required?: string[] }> } };
    expect(document.paths['/examples/bookings']?.post.responses['201']?.content['application/json']?.schema.$ref).toBe('#/components/schemas/BookingExample.read');
    expect(document.components.schemas['BookingExample.read']?.required).toEqual(['id', 'status', 'name', 'payment']);
    expect(document.components.schemas['BookingPaymentExample.read']?.required).toEqual(['last4']);
    expect(document.components.schemas['BookingExample.write']?.required).toEqual(['name', 'payment']);
    expect(document.components.schemas['BookingPaymentExample.write']?.required).toEqual(['number', 'cvc']);
    const responses = { '201': { content: { 'application/json': { schema: { properties: { name: {}, payment: { properties: { number: { writeOnly: true }, cvc: { writeOnly: true }, last4: {} } } } } } } } };
    const sent = { name: 'Ada', payment: { ...CARD, last4: '4242' } };
    expect(answerView(responses, 201, sent)).toEqual({ body: { name: 'Ada', payment: { last4: '4242' } }, removed: ['/payment/number', '/payment/cvc'] });
    expect(sent.payment.number).toBe(CARD.number); // the handler's own value is left alone
  });

  it("handlers' types follow (checked by tsc in npm run lint): a request body has no readOnly field, an answer no writeOnly one", () => {
    type Generated = { id: $Read<number>; name: string; payment: { number: $Write<string>; last4: $Read<string> } };
    expectTypeOf<Received<Generated>>().toEqualTypeOf<{ name: string; payment: { number: string } }>();
    expectTypeOf<Readable<Generated>>().toEqualTypeOf<{ id: number; name: string; payment: { last4: string } }>();
  });

  it('a spec without readOnly or writeOnly is validated as it is; the pets, which have none, not a byte changes', () => {
    const plain = { openapi: '3.1.0', info: { title: 't', version: '1' }, paths: { '/a': { post: { requestBody: { content: { 'application/json': { schema: { type: 'object', required: ['a'], properties: { a: { type: 'string' } } } } } }, responses: {} } } } } as unknown as OpenApiDocument;
    expect(validationViews(plain)).toBe(plain);
    const document = loadBundledSpec();
    for (const path of ['/pets', '/pets/{petId}', '/pets/{petId}/photo']) expect(validationViews(document).paths?.[path], path).toEqual(document.paths?.[path]);
    expect(stripMarked({ properties: { a: { readOnly: true } } }, 'readOnly', { a: 1, b: 2 })).toEqual(['/a']);
  });
});
