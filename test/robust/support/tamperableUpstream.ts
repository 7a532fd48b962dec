/**
 * A pass-through HTTP relay between Prism and the real server that can be told to answer the
 * next request itself with a chosen (contract-breaking) response. It exists so the Prism proxy
 * test can prove, on the very pipeline it trusts, that a bad response is actually reported.
 */
import { createServer, request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeResponse {
  status: number;
  headers: OutgoingHttpHeaders;
  body: string;
}

export interface TamperableUpstream {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** The next request that reaches the relay gets `response` instead of the server's answer. */
  answerNextWith(response: FakeResponse): void;
  /** Whether an answer set with answerNextWith is still waiting for its request. */
  pending(): boolean;
  close(): Promise<void>;
}

export async function startTamperableUpstream(target: string): Promise<TamperableUpstream> {
  const { hostname, port } = new URL(target);
  const queued: FakeResponse[] = [];
  const server = createServer((req, res) => {
    const fake = queued.shift();
    if (fake) {
      req.resume();
      res.writeHead(fake.status, fake.headers);
      res.end(fake.body);
      return;
    }
    const forwarded = httpRequest({ host: hostname, port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`relay: ${error.message}`);
    });
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    answerNextWith: (response) => queued.push(response),
    pending: () => queued.length > 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
