/**
 * One contract suite, run on every selected target: the real server on SQLite, on PostgreSQL
 * (DATABASE_URL) and the Prism mock. Pick targets with CONTRACT_TARGET=sqlite,postgres,mock.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defineContractSuite } from '../contract/suite.js';
import { PROFILES, selectTargets, startTarget, type StartedTarget } from '../contract/targets.js';

const selection = selectTargets();

for (const { name, reason } of selection.skipped) {
  console.warn(`contract suite: the ${name} target is skipped: ${reason}.`);
  describe(`contract [${name}]`, () => {
    it.skip(`skipped: ${reason}`, () => {});
  });
}

for (const name of selection.run) {
  describe(`target ${name}`, () => {
    let started: StartedTarget | undefined;

    beforeAll(async () => {
      const began = Date.now();
      started = await startTarget(name);
      console.info(`contract suite [${name}]: ${started.connection.baseUrl} ready in ${Date.now() - began} ms`);
    });

    afterAll(async () => {
      await started?.stop();
    });

    // The real server also checks its own responses; anything it flagged fails the check that caused it.
    afterEach(() => {
      expect(started?.takeServerViolations() ?? [], 'responses the server itself flagged').toEqual([]);
    });

    defineContractSuite(PROFILES[name], () => {
      if (!started) throw new Error(`the ${name} target did not start`);
      return started.connection;
    });
  });
}
