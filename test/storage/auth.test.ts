import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/shared/logger.js';
import { startServer } from '../../src/server.js';
import { countPets, describeEachTarget, testConfig } from '../support/server.js';

const REVOCATION_BOUND_MS = 5000;

async function until(condition: () => Promise<boolean>, withinMs: number): Promise<number> {
  const started = Date.now();
  while (!(await condition())) {
    if (Date.now() - started > withinMs) throw new Error(`not within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - started;
}

describeEachTarget('authentication: bearer API keys', (t) => {
  it('§5 the scheme name is case-insensitive; the token is not', async () => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      expect((await t().request('/pets', { headers: { Authorization: `${scheme} ${t().key}` } })).status).toBe(200);
    }
    expect((await t().request('/pets', { headers: { Authorization: `Bearer ${t().key.toUpperCase()}` } })).status).toBe(401);
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['scheme alone', 'Bearer'],
    ['not a key', 'Bearer hunter2'],
    ['well-formed but unknown', `Bearer ask_${'A'.repeat(43)}`],
    ['two tokens', 'Bearer a b'],
  ])('§5 401 with WWW-Authenticate: Bearer when the key is %s', async (_case, header) => {
    const headers: Record<string, string> = header === undefined ? {} : { Authorization: header };
    const response = await t().request('/pets', { auth: false, headers });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="animal-store"/);
    expect(await response.json()).toEqual({ code: 'unauthorized', message: 'A valid API key is required.', status: 401 });
  });

  it('a bad key is refused before the body is read: no 400, 413 or 415 leaks through, nothing stored', async () => {
    const bodies: Array<[string, string]> = [
      ['{"name":', 'application/json'],
      [JSON.stringify({ name: 'x'.repeat(200_000), categoryId: 1 }), 'application/json'],
      ['name=x', 'text/plain'],
      ['{"name":"Sneaky","categoryId":1}', 'application/json'],
    ];
    // Every page, and a failed listing throws: "nothing stored" cannot hold vacuously.
    const before = await countPets(t());
    for (const [body, type] of bodies) {
      const response = await t().request('/pets', { method: 'POST', auth: false, body, headers: { 'Content-Type': type, Authorization: 'Bearer wrong' } });
      expect(response.status).toBe(401);
    }
    expect(await countPets(t())).toBe(before);
  });

  it('key lifecycle: a new key works, list never shows keys, a revoked key stops working on every instance within 5 s', async () => {
    const { keys } = t().server;
    const { info, key } = await keys.create('lifecycle');
    expect(key).toMatch(/^ask_[A-Za-z0-9_-]{43}$/);
    // A second instance on the same database: revocation must reach it too.
    const other = await startServer({ config: testConfig(), logger: createLogger('silent'), database: t().server.database, bootstrapKey: false });
    try {
      const viaOther = () => fetch(`${other.origin}/v1/pets`, { headers: { Authorization: `Bearer ${key}` } });
      const viaFirst = () => t().request('/pets', { headers: { Authorization: `Bearer ${key}` } });
      await until(async () => (await viaFirst()).status === 200 && (await viaOther()).status === 200, REVOCATION_BOUND_MS);
      const listed = await keys.list();
      expect(listed.find((k) => k.id === info.id)).toEqual({ id: info.id, name: 'lifecycle', createdAt: expect.any(String), revokedAt: null });
      expect(JSON.stringify(listed)).not.toContain(key);

      expect(await keys.revoke(info.id)).toBe(true);
      const tookMs = await until(async () => (await viaFirst()).status === 401 && (await viaOther()).status === 401, REVOCATION_BOUND_MS);
      console.log(`revocation reached both instances in ${tookMs} ms (bound ${REVOCATION_BOUND_MS} ms)`);
      expect((await keys.list()).find((k) => k.id === info.id)?.revokedAt).toEqual(expect.any(String));
      expect(await keys.revoke(999_999)).toBe(false);
      expect(other.violations).toEqual([]);
    } finally {
      await other.close();
    }
  });
});
