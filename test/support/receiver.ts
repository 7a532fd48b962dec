/**
 * A webhook receiver of a test's own: a real HTTP server on 127.0.0.1 that records every delivery
 * (its headers, body and time) and answers as the test says, and can go down and come back on the
 * same port, as a receiver being redeployed does.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { once } from 'node:events';

export interface Delivery {
  id: string;
  timestamp: string;
  signature: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** When it arrived (ms since the epoch). */
  at: number;
}

/** How to answer the nth delivery (0 for the first): a status, after a delay, with headers. */
export type Answer = { status: number; delayMs?: number; headers?: Record<string, string> };

export interface Receiver {
  url: string;
  port: number;
  deliveries: Delivery[];
  /** Distinct webhook-ids received. */
  ids(): Set<string>;
  answer: (delivery: Delivery, nth: number) => Answer;
  /** Stops listening (connections refused) until `up`. */
  down(): Promise<void>;
  up(): Promise<void>;
  /** Resolves once `predicate` holds on what was received (polled), or rejects after `timeoutMs`. */
  until(predicate: (deliveries: Delivery[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const header = (headers: IncomingHttpHeaders, name: string): string => {
  const value = headers[name];
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
};

export async function startReceiver(answer: Receiver['answer'] = () => ({ status: 204 })): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  let server: Server | undefined;
  let port = 0;
  const receiver: Receiver = {
    url: '',
    port: 0,
    deliveries,
    answer,
    ids: () => new Set(deliveries.map((d) => d.id)),
    async down() {
      const closing = server;
      server = undefined;
      if (!closing) return;
      closing.closeAllConnections();
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
    async up() {
      const next = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const delivery: Delivery = { id: header(req.headers, 'webhook-id'), timestamp: header(req.headers, 'webhook-timestamp'), signature: header(req.headers, 'webhook-signature'), headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
          const nth = deliveries.length;
          deliveries.push(delivery);
          const { status, delayMs = 0, headers = {} } = receiver.answer(delivery, nth);
          setTimeout(() => {
            if (!res.destroyed) res.writeHead(status, headers).end();
          }, delayMs);
        });
      });
      next.listen(port, '127.0.0.1');
      await once(next, 'listening');
      const address = next.address();
      if (address === null || typeof address === 'string') throw new Error('the receiver has no port');
      port = address.port;
      receiver.port = port;
      receiver.url = `http://127.0.0.1:${port}/hooks`;
      server = next;
    },
    async until(predicate, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(deliveries)) {
        if (Date.now() > deadline) throw new Error(`the receiver did not get what was awaited in ${timeoutMs} ms (it has ${deliveries.length} deliveries)`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    close: () => receiver.down(),
  };
  await receiver.up();
  return receiver;
}
