/**
 * `npm run webhooks -- listen`: a receiver on 127.0.0.1, subscribed to the running server's events
 * (on its database, as `add` does) or the sandbox's (through its own route), that verifies each
 * delivery's signature with the client's verifier and prints the event, as `stripe listen` does;
 * with --forward-to, each delivery is passed on, headers and body unchanged, to the developer's
 * own receiver, and its answer is the listener's. Unsubscribed on Ctrl-C.
 */
import { createServer, type IncomingMessage } from 'node:http';
import { once } from 'node:events';
import { verifyWebhook, WebhookVerificationError } from '../../client/index.js';
import { createEndpointStore } from '../../src/features/webhooks/endpoints.js';
import { SANDBOX_WEBHOOKS_PATH } from '../../src/features/sandbox/sandbox.js';
import { fail } from '../lib/commandLine.js';
import { openOperatorDatabase } from './database.js';

export interface ListenOptions {
  events: string[] | undefined;
  forwardTo: string | undefined;
  port: number;
  /** The sandbox's origin, when it is the sandbox's events to hear. */
  sandbox: string | undefined;
  usage(message: string): never;
}

/** The largest delivery read: an event is small; more is not one of ours. */
const MAX_BODY_BYTES = 1024 * 1024;

interface Subscription {
  id: number;
  secret: string;
  remove(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Subscribes through the sandbox's route (its store is a temp file no command opens). */
async function subscribeToSandbox(origin: string, url: string, events: string[] | undefined): Promise<Subscription> {
  const query = new URLSearchParams({ url, ...(events ? { events: events.join(',') } : {}) });
  const answer = await fetch(`${origin.replace(/\/+$/, '')}${SANDBOX_WEBHOOKS_PATH}?${query.toString()}`, { method: 'POST' }).catch((error: unknown) => fail(`No sandbox answers at ${origin} (${error instanceof Error ? error.message : String(error)}): start it with \`npm run sandbox\`.`));
  if (answer.status !== 201) fail(`The sandbox at ${origin} refused the subscription: ${answer.status} ${await answer.text()}`);
  const { id, secret } = (await answer.json()) as { id: number; secret: string };
  return { id, secret, remove: async () => void (await fetch(`${origin.replace(/\/+$/, '')}${SANDBOX_WEBHOOKS_PATH}/${id}`, { method: 'DELETE' }).catch(() => undefined)) };
}

/** Subscribes on the configured database, as `add` does (the receiver is on this machine: no address check). */
async function subscribeOnDatabase(url: string, events: string[] | undefined, usage: (message: string) => never): Promise<Subscription> {
  const { database, failOnDatabase } = await openOperatorDatabase(usage);
  const endpoints = createEndpointStore(database.db);
  const { id, secret } = await endpoints.add(url, events).catch(failOnDatabase);
  return {
    id,
    secret,
    remove: async () => {
      await endpoints.remove(id).catch(() => undefined);
      await database.close();
    },
  };
}

export async function listen({ events, forwardTo, port, sandbox, usage }: ListenOptions): Promise<void> {
  if (forwardTo !== undefined && !/^https?:\/\//.test(forwardTo)) usage('--forward-to takes an http:// or https:// URL');
  let secret = '';
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      if (body === undefined) {
        console.log(`${new Date().toISOString()}  refused: a body over ${MAX_BODY_BYTES} bytes`);
        res.writeHead(413).end();
        return;
      }
      let event;
      try {
        event = verifyWebhook(secret, req.headers, body);
      } catch (error) {
        if (!(error instanceof WebhookVerificationError)) throw error;
        console.log(`${new Date().toISOString()}  NOT VERIFIED (${error.message}): answered 400`);
        res.writeHead(400).end();
        return;
      }
      // The Animal Store's events say their `type` (Standard Webhooks' advice); another contract's may not.
      const { type, data } = event as { type?: unknown; data?: unknown };
      const typed = typeof type === 'string' && data !== undefined;
      console.log(`${new Date().toISOString()}  ${typed ? `${type}  ` : ''}${String(req.headers['webhook-id'])}  ${JSON.stringify(typed ? data : event)}`);
      if (forwardTo === undefined) {
        res.writeHead(204).end();
        return;
      }
      const headers = Object.fromEntries(['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature'].flatMap((name) => (typeof req.headers[name] === 'string' ? [[name, req.headers[name]]] : [])));
      const forwarded = await fetch(forwardTo, { method: 'POST', headers, body: new Uint8Array(body), redirect: 'manual', signal: AbortSignal.timeout(15_000) }).then(
        (answer) => answer.status,
        (error: unknown) => error instanceof Error ? error.message : String(error),
      );
      console.log(`  -> ${forwardTo}: ${forwarded}`);
      res.writeHead(typeof forwarded === 'number' ? forwarded : 502).end();
    })().catch((error: unknown) => {
      console.error(error);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening').catch((error: unknown) => fail(`Cannot listen on 127.0.0.1:${port}: ${error instanceof Error ? error.message : String(error)}`));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the receiver has no port');
  const url = `http://127.0.0.1:${address.port}/`;
  const subscription = sandbox === undefined ? await subscribeOnDatabase(url, events, usage) : await subscribeToSandbox(sandbox, url, events);
  ({ secret } = subscription);
  console.log(`Listening on ${url} for ${events?.join(', ') ?? 'every event'} (endpoint ${subscription.id}${sandbox === undefined ? '' : ` of the sandbox at ${sandbox}`}); each delivery is verified and printed. Ctrl-C to stop.`);
  if (sandbox === undefined) console.log('The server delivers to a loopback receiver only when it runs with WEBHOOKS_ALLOW_PRIVATE=true.');
  const stop = () => {
    void subscription
      .remove()
      .finally(() => server.close())
      .finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
