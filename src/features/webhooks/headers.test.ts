import { describe, expect, it } from 'vitest';
import { loadBundledSpec, type OpenApiDocument } from '../../shared/spec.js';
import { declaredHeaders } from './headers.js';

/** A webhook as a pasted spec may write it: headers of every kind, one by reference. */
const document = {
  openapi: '3.1.0',
  info: { title: 'Examples', version: '1.0.0' },
  components: {
    parameters: { ExampleTenant: { name: 'X-Example-Tenant', in: 'header', schema: { type: 'string', enum: ['animal-store'] } } },
    schemas: { ExampleVersion: { type: 'integer', const: 2 } },
  },
  webhooks: {
    exampleAdopted: {
      parameters: [{ name: 'X-Example-Source', in: 'header', schema: { type: 'string', default: 'shelter' } }],
      post: {
        parameters: [
          { name: 'X-Example-Event', in: 'header', required: true, schema: { type: 'string', const: 'example.adopted' } },
          { $ref: '#/components/parameters/ExampleTenant' },
          { name: 'X-Example-Version', in: 'header', schema: { $ref: '#/components/schemas/ExampleVersion' } },
          { name: 'X-Example-Open', in: 'header', schema: { type: 'string' } },
          { name: 'webhook-id', in: 'header', schema: { type: 'string', const: 'msg_fixed' } },
          { name: 'Content-Type', in: 'header', schema: { type: 'string', const: 'text/plain' } },
          { name: 'example', in: 'query', schema: { type: 'string', const: 'q' } },
        ],
        responses: { '204': { description: 'Received' } },
      },
    },
    exampleReturned: { post: { responses: { '204': { description: 'Received' } } } },
  },
} as unknown as OpenApiDocument;

describe('declaredHeaders', () => {
  it("sends each header whose value the webhook's schema fixes (const, an enum of one, a default, by reference too), never one the sender sets itself", () => {
    expect(Object.fromEntries(declaredHeaders(document))).toEqual({
      exampleAdopted: { 'x-example-source': 'shelter', 'x-example-event': 'example.adopted', 'x-example-tenant': 'animal-store', 'x-example-version': '2' },
    });
  });

  it("the contract's webhooks declare Standard Webhooks' three only: nothing more is sent", () => {
    expect(declaredHeaders(loadBundledSpec()).size).toBe(0);
  });
});
