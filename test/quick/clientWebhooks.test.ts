/**
 * The client's webhook receiver helper (client/webhooks.ts, re-exported by client/index.ts):
 * deliveries signed as the server signs them (standardwebhooks' `Webhook.sign`) verify and come
 * back as the contract's event types; a tampered body, another secret, a stale or future
 * timestamp, a missing header, a body that is not an event are refused with
 * WebhookVerificationError, whose message never holds the secret; during a secret rotation a
 * delivery signed by both secrets verifies with either. Headers as a fetch `Headers`, as a plain
 * object in any case, and as node:http's `req.headers` (the README's receiver, run for real).
 * The types are checked by `tsc` (expectTypeOf, @ts-expect-error), not at run time.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buffer } from 'node:stream/consumers';
import { Webhook } from 'standardwebhooks';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { components, webhooks } from '../../client/generated/openapi.js';
import { verifyWebhook, webhookId, WebhookVerificationError, type Pet, type WebhookEvent, type WebhookHeaders, type WebhookName } from '../../client/index.js';

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;
const SECRET = newSecret();

const aPet: Pet = { id: 7, name: 'Biscuit', categoryId: 2, status: 'available' };
const created = JSON.stringify({ type: 'pet.created', timestamp: '2026-12-05T10:00:00.000Z', data: aPet });
const updated = JSON.stringify({ type: 'pet.updated', timestamp: '2026-12-05T10:00:01.000Z', data: { pet: { ...aPet, status: 'sold' }, changed: ['status'] } });

/** The three Standard Webhooks headers of a delivery of `body`, signed with each secret (space-separated), sent at `date`. */
function signed(body: string, secrets: readonly string[] = [SECRET], date = new Date(), id = `msg_${randomBytes(8).toString('hex')}`): Record<string, string> {
  const signature = secrets.map((secret) => new Webhook(secret).sign(id, date, body)).join(' ');
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(date.getTime() / 1000)), 'webhook-signature': signature };
}

/** The WebhookVerificationError `verify` throws (failing when it throws nothing or something else). */
function refusal(verify: () => unknown): WebhookVerificationError {
  try {
    verify();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return error as WebhookVerificationError;
  }
  throw new Error('expected a WebhookVerificationError, verified instead');
}

/**
 * The Animal Store's events: the members of WebhookEvent told apart by `type`. A webhook a user's
 * spec adds may have no `type` (its body is the spec's to shape), so the tests narrow to these first.
 */
type PetEvent = Extract<WebhookEvent, { type: string }>;
function verifyPet(...args: Parameters<typeof verifyWebhook>): PetEvent {
  const event = verifyWebhook(...args);
  if (typeof (event as { type?: unknown }).type !== 'string') throw new Error('not an event with a type');
  return event as PetEvent;
}

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);

describe('verifyWebhook: a delivery signed with the secret', () => {
  it('returns the body as the contract event, narrowed by type', () => {
    const event = verifyPet(SECRET, signed(updated), updated);
    expect(event).toEqual(JSON.parse(updated));
    expectTypeOf(verifyWebhook(SECRET, signed(updated), updated)).not.toBeAny();
    expectTypeOf(verifyWebhook(SECRET, signed(updated), updated)).toEqualTypeOf<WebhookEvent>();
    if (event.type !== 'pet.updated') throw new Error(`expected pet.updated, got ${event.type}`);
    expectTypeOf(event.data.changed).toEqualTypeOf<components['schemas']['PetField'][]>();
    expect(event.data.changed).toEqual(['status']);
    expect(event.data.pet.status).toBe('sold');

    const first = verifyPet(SECRET, signed(created), created);
    if (first.type === 'pet.created') {
      expectTypeOf(first.data).toEqualTypeOf<components['schemas']['Pet']>();
      expect(first.data.name).toBe('Biscuit');
    } else {
      throw new Error(`expected pet.created, got ${first.type}`);
    }
  });

  it('has the types of the generated webhooks: every name, each JSON body, nothing else', () => {
    expectTypeOf<WebhookName>().toEqualTypeOf<keyof webhooks>();
    expectTypeOf<'petCreated' | 'petUpdated' | 'petDeleted'>().toExtend<WebhookName>();
    expectTypeOf<'pet.created' | 'pet.updated' | 'pet.deleted'>().toExtend<PetEvent['type']>();
    expectTypeOf<Extract<WebhookEvent, { type: 'pet.deleted' }>>().toEqualTypeOf<components['schemas']['PetDeletedEvent']>();
    expectTypeOf<Extract<WebhookEvent, { type: 'pet.created' }>>().toEqualTypeOf<webhooks['petCreated']['post']['requestBody']['content']['application/json']>();
    expectTypeOf(verifyWebhook).returns.toEqualTypeOf<WebhookEvent>();
    expectTypeOf<IncomingHttpHeaders>().toExtend<WebhookHeaders>();
    // @ts-expect-error no webhook sends 'pet.adopted' (an `any` event type would accept it)
    const unknownType: PetEvent['type'] = 'pet.adopted';
    void unknownType;
  });

  it('reads the headers from a fetch Headers, and from a plain object in any case (of an array, the first value)', () => {
    const headers = signed(created);
    expect(verifyPet(SECRET, new Headers(headers), created).type).toBe('pet.created');
    const shouted = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
    expect(verifyPet(SECRET, shouted, created).type).toBe('pet.created');
    const arrays = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.replace(/^w/, 'W'), [value, 'v1,bm90IGl0']]));
    expect(verifyPet(SECRET, arrays, created).type).toBe('pet.created');
    expect(webhookId(new Headers(headers))).toBe(headers['webhook-id']);
    expect(webhookId(arrays)).toBe(headers['webhook-id']);
    expect(webhookId({})).toBeUndefined();
  });

  it('takes the body as bytes (a Uint8Array, a Buffer) as well as a string', () => {
    const headers = signed(created);
    expect(verifyPet(SECRET, headers, new TextEncoder().encode(created)).type).toBe('pet.created');
    expect(verifyPet(SECRET, headers, Buffer.from(created)).type).toBe('pet.created');
  });

  it('accepts a timestamp within toleranceSeconds either way, and refuses a tolerance the library would not keep', () => {
    expect(verifyPet(SECRET, signed(created, [SECRET], minutesAgo(4)), created).type).toBe('pet.created');
    expect(verifyPet(SECRET, signed(created, [SECRET], minutesAgo(-4)), created).type).toBe('pet.created');
    expect(verifyPet(SECRET, signed(created, [SECRET], minutesAgo(0.5)), created, { toleranceSeconds: 60 }).type).toBe('pet.created');
    expect(() => verifyPet(SECRET, signed(created), created, { toleranceSeconds: 600 })).toThrow(RangeError);
    expect(() => verifyPet(SECRET, signed(created), created, { toleranceSeconds: -1 })).toThrow(RangeError);
  });
});

describe('verifyWebhook refuses with WebhookVerificationError', () => {
  const messages: string[] = [];
  const refused = (verify: () => unknown) => {
    const error = refusal(verify);
    messages.push(error.message);
    return error;
  };

  it('a tampered body', () => {
    const headers = signed(created);
    expect(refused(() => verifyPet(SECRET, headers, created.replace('Biscuit', 'Biscuits'))).message).toMatch(/signature/i);
    expect(refused(() => verifyPet(SECRET, headers, `${created} `)).message).toMatch(/signature/i);
  });

  it('a delivery signed with another secret, or an id or timestamp changed after signing', () => {
    expect(refused(() => verifyPet(newSecret(), signed(created), created)).message).toMatch(/signature/i);
    expect(refused(() => verifyPet(SECRET, { ...signed(created), 'webhook-id': 'msg_other' }, created)).message).toMatch(/signature/i);
    const headers = signed(created, [SECRET], minutesAgo(1));
    expect(refused(() => verifyPet(SECRET, { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) + 1) }, created)).message).toMatch(/signature/i);
  });

  it('a timestamp older or newer than the tolerance (five minutes by default), however well signed', () => {
    expect(refused(() => verifyPet(SECRET, signed(created, [SECRET], minutesAgo(6)), created)).message).toMatch(/too old/);
    expect(refused(() => verifyPet(SECRET, signed(created, [SECRET], minutesAgo(-6)), created)).message).toMatch(/too new/);
    expect(refused(() => verifyPet(SECRET, signed(created, [SECRET], minutesAgo(2)), created, { toleranceSeconds: 60 })).message).toMatch(/too old/);
    expect(refused(() => verifyPet(SECRET, { ...signed(created), 'webhook-timestamp': 'yesterday' }, created)).message).toMatch(/timestamp/);
  });

  it('a missing or empty header', () => {
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const { [name]: _dropped, ...rest } = signed(created);
      expect(refused(() => verifyPet(SECRET, rest, created)).message).toMatch(/Missing required headers/);
      expect(refused(() => verifyPet(SECRET, { ...signed(created), [name]: '' }, created)).message).toMatch(/Missing required headers/);
      expect(refused(() => verifyPet(SECRET, { ...signed(created), [name]: undefined }, created)).message).toMatch(/Missing required headers/);
    }
    expect(refused(() => verifyPet(SECRET, new Headers(), created)).message).toMatch(/Missing required headers/);
  });

  it('a well-signed body that is not a JSON event', () => {
    for (const body of ['', 'not json', '[1,2]', 'null', '"pet.created"']) {
      expect(refused(() => verifyWebhook(SECRET, signed(body), body)).message).toMatch(/not (JSON|an event)/);
    }
    // An object is an event: what tells a contract's webhooks apart is the contract's (the Animal Store's say `type`).
    expect(verifyWebhook(SECRET, signed('{"data":{}}'), '{"data":{}}')).toEqual({ data: {} });
    const invalidUtf8 = new Uint8Array([0x7b, 0xff, 0x7d]);
    const id = 'msg_bytes';
    const date = new Date();
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(date.getTime() / 1000)), 'webhook-signature': new Webhook(SECRET).sign(id, date, invalidUtf8) };
    expect(refused(() => verifyPet(SECRET, headers, invalidUtf8)).message).toMatch(/not JSON/);
  });

  it('a secret that is not a whsec_ Base64 key', () => {
    refused(() => verifyPet('whsec_not base64!', signed(created), created));
    refused(() => verifyPet('whsec_', signed(created), created));
  });

  it('and no message holds the secret (nor its key)', () => {
    const odd = 'whsec_not base64!';
    messages.push(refusal(() => verifyPet(odd, signed(created), created)).message);
    expect(messages.length).toBeGreaterThan(10);
    for (const message of messages) {
      for (const secret of [SECRET, SECRET.slice('whsec_'.length), odd, odd.slice('whsec_'.length)]) expect(message).not.toContain(secret);
    }
  });
});

describe('verifyWebhook during a secret rotation', () => {
  it('verifies a delivery signed by the old and the new secret (space-separated) with either, and with no third', () => {
    const [oldSecret, rotated] = [newSecret(), newSecret()];
    const headers = signed(updated, [oldSecret, rotated]);
    expect(headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
    expect(verifyPet(oldSecret, headers, updated).type).toBe('pet.updated');
    expect(verifyPet(rotated, headers, updated).type).toBe('pet.updated');
    expect(verifyPet(rotated, new Headers(headers), updated).type).toBe('pet.updated');
    expect(verifyPet(oldSecret, signed(updated, [rotated, oldSecret]), updated).type).toBe('pet.updated');
    refusal(() => verifyPet(newSecret(), headers, updated));
  });
});

describe("the README's node:http receiver", () => {
  it("verifies node:http's req.headers and the raw body: 204 for a signed delivery, 400 for a tampered one", async () => {
    const received: WebhookEvent[] = [];
    const server = createServer(async (req, res) => {
      const body = await buffer(req);
      try {
        received.push(verifyPet(SECRET, req.headers, body));
        res.writeHead(204).end();
      } catch (error) {
        res.writeHead(error instanceof WebhookVerificationError ? 400 : 500).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const post = (headers: Record<string, string>, body: string) => fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
      const headers = signed(created);
      expect((await post(headers, created)).status).toBe(204);
      expect((await post(headers, created.replace('7', '8'))).status).toBe(400);
      expect(received).toEqual([JSON.parse(created)]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
