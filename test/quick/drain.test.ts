/**
 * The drain before a stop (src/transport/drain.ts), in process: SHUTDOWN_DRAIN_MS as configuration,
 * the rule that drains only a server something probes, and what a draining server answers
 * (/readyz a 503 Error, everything else served with `Connection: close`). The same under real
 * load and a real balancer: test/robust/rollingRestart.test.ts.
 */
import { Agent, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/shared/env.js';
import { loadConfig } from '../../src/config.js';
import { createReadiness, DEFAULT_DRAIN_MS, planDrain, PROBED_WITHIN_MS } from '../../src/transport/drain.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface Answer {
  status: number;
  connection: string | undefined;
  body: unknown;
}

/** A client's keep-alive pool: it asks to keep connections, so `Connection: close` is the server's word. */
let agent = new Agent({ keepAlive: true });

function get(url: string, key?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: key === undefined ? {} : { authorization: `Bearer ${key}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('SHUTDOWN_DRAIN_MS', () => {
  it('is unset by default (the server drains when probed), and takes a whole number of ms from 0 to 300000', () => {
    expect(loadConfig({}).shutdownDrainMs).toBeUndefined();
    expect(loadConfig({ SHUTDOWN_DRAIN_MS: '' }).shutdownDrainMs).toBeUndefined();
    expect(loadConfig({ SHUTDOWN_DRAIN_MS: '0' }).shutdownDrainMs).toBe(0);
    expect(loadConfig({ SHUTDOWN_DRAIN_MS: '8000' }).shutdownDrainMs).toBe(8000);
    for (const bad of ['-1', '1.5', '5s', '300001']) {
      expect(() => loadConfig({ SHUTDOWN_DRAIN_MS: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ SHUTDOWN_DRAIN_MS: bad }), bad).toThrow(/SHUTDOWN_DRAIN_MS must be a whole number from 0 to 300000/);
    }
  });
});

describe('planDrain: unset, only a server something probes drains; set, it says how long', () => {
  const probed = { ...createReadiness(), lastProbeAt: 1_000_000 };

  it('unset and never probed: no drain', () => {
    expect(planDrain(createReadiness(), undefined, 1_000_000)).toEqual({ drainMs: 0, why: 'not probed', probedAgoMs: undefined });
  });

  it('unset and probed within the last minute: the default window (5 s); longer ago: none', () => {
    expect(DEFAULT_DRAIN_MS).toBe(5_000);
    expect(planDrain(probed, undefined, 1_000_000 + 1_500)).toEqual({ drainMs: DEFAULT_DRAIN_MS, why: 'probed', probedAgoMs: 1_500 });
    expect(planDrain(probed, undefined, 1_000_000 + PROBED_WITHIN_MS)).toEqual({ drainMs: DEFAULT_DRAIN_MS, why: 'probed', probedAgoMs: PROBED_WITHIN_MS });
    expect(planDrain(probed, undefined, 1_000_000 + PROBED_WITHIN_MS + 1)).toEqual({ drainMs: 0, why: 'not probed', probedAgoMs: PROBED_WITHIN_MS + 1 });
  });

  it('set: that window, probed or not (a balancer that never asks /readyz); 0: never', () => {
    expect(planDrain(createReadiness(), 8_000, 1_000_000)).toEqual({ drainMs: 8_000, why: 'configured', probedAgoMs: undefined });
    expect(planDrain(probed, 8_000, 1_000_000 + 1_500)).toEqual({ drainMs: 8_000, why: 'configured', probedAgoMs: 1_500 });
    expect(planDrain(probed, 0, 1_000_000 + 1_500)).toEqual({ drainMs: 0, why: 'disabled', probedAgoMs: 1_500 });
  });
});

describe('shutdown(): what SIGTERM and SIGINT do', () => {
  let t: TestServer | undefined;
  afterEach(async () => {
    expect(t?.server.violations.splice(0) ?? [], 'responses that broke the contract').toEqual([]);
    await t?.close();
    t = undefined;
    agent.destroy();
    agent = new Agent({ keepAlive: true });
  });

  it('probed: /readyz answers a 503 Error at once, every other request is still served with Connection: close, the listener stays open until the window ends', async () => {
    // The default window, which no test waits for: close() ends the drain.
    t = await startTestServer('sqlite');
    const ready = await get(`${t.origin}/readyz`);
    expect(ready).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(ready.connection).not.toBe('close');

    const stopping = t.server.shutdown();
    expect(t.server.http.listening, 'still accepting during the drain').toBe(true);
    const draining = await get(`${t.origin}/readyz`);
    expect(draining).toMatchObject({ status: 503, connection: 'close', body: { status: 503, code: 'service_unavailable' } });
    expect((draining.body as { message: string }).message).toMatch(/shutting down/);
    const list = await get(`${t.api}/pets`, t.key);
    expect(list).toMatchObject({ status: 200, connection: 'close' });
    expect(Array.isArray(list.body)).toBe(true);
    expect(await get(`${t.origin}/healthz`)).toMatchObject({ status: 200, connection: 'close', body: { status: 'ok' } });

    await t.server.close();
    await stopping;
    expect(t.server.http.listening).toBe(false);
  });

  it('never probed (a developer, the sandbox, a test): the listener closes at once', async () => {
    t = await startTestServer('sqlite');
    expect((await get(`${t.origin}/healthz`)).status).toBe(200);
    const stopping = t.server.shutdown();
    expect(t.server.http.listening, 'closed in the same turn as the call').toBe(false);
    await stopping;
  });

  it('SHUTDOWN_DRAIN_MS=0: no drain even when probed', async () => {
    t = await startTestServer('sqlite', { shutdownDrainMs: 0 });
    expect((await get(`${t.origin}/readyz`)).status).toBe(200);
    const stopping = t.server.shutdown();
    expect(t.server.http.listening).toBe(false);
    await stopping;
  });

  it('SHUTDOWN_DRAIN_MS set: a drain though nothing probed', async () => {
    t = await startTestServer('sqlite', { shutdownDrainMs: 60_000 });
    const stopping = t.server.shutdown();
    expect(t.server.http.listening, 'still accepting during the drain').toBe(true);
    expect(await get(`${t.api}/pets`, t.key)).toMatchObject({ status: 200, connection: 'close' });
    await t.server.close();
    await stopping;
  });
});
