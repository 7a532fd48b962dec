/**
 * The contract's calendar (scripts/lib/contract/sunsets.ts), called directly: which day
 * CONTRACT_DATE names, the `sunset calendar` step of `npm run lint` on the working
 * spec/openapi.yaml around getPet's sunset (2030-12-05T00:00:00Z), and which changes the
 * breaking-change gate excuses for an operation removed after its sunset. How the scripts wire them
 * is tested in test/tools/breaking.test.ts and test/tools/lint.test.ts.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ContractDateError, checkSunsetCalendar, contractDay, sunsetRemovals } from '../../scripts/lib/contract/sunsets.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const on = (date: string) => contractDay({ CONTRACT_DATE: date });
const calendar = (date: string) => checkSunsetCalendar(join(root, 'spec', 'openapi.yaml'), on(date), 'spec/openapi.yaml');

describe('CONTRACT_DATE', () => {
  it('names a UTC day; without it, the day is today in UTC', () => {
    expect(on('2030-12-06')).toEqual({ date: '2030-12-06', start: Date.parse('2030-12-06T00:00:00Z') });
    expect(contractDay({}, Date.parse('2026-11-26T23:59:59Z'))).toEqual({ date: '2026-11-26', start: Date.parse('2026-11-26T00:00:00Z') });
    expect(contractDay({ CONTRACT_DATE: '' }, Date.parse('2026-11-27T00:00:00Z')).date).toBe('2026-11-27');
  });

  it.each(['2030-12-32', '2030-02-30', '2030-13-01', '06/12/2030', '2030-12-6', '2030-12-06T00:00:00Z', 'tomorrow'])('refuses %s, naming the variable and the form', (value) => {
    expect(() => contractDay({ CONTRACT_DATE: value })).toThrow(ContractDateError);
    expect(() => contractDay({ CONTRACT_DATE: value })).toThrow(`CONTRACT_DATE must be a calendar date in the form YYYY-MM-DD (a UTC day, e.g. 2030-12-06), not ${JSON.stringify(value)}.`);
  });
});

describe('the sunset calendar of spec/openapi.yaml (getPet: x-sunset 2030-12-05T00:00:00Z)', () => {
  it('passes today (2026-11-26) with no warning', async () => {
    const report = await calendar('2026-11-26');
    expect(report.warnings).toEqual([]);
    expect(report.errors).toEqual([]);
    expect(report.summary).toContain('getPet 2030-12-05');
  });

  it('warns, and passes, within 90 days of the sunset (2030-10-01), naming getPet and the date', async () => {
    const report = await calendar('2030-10-01');
    expect(report.errors).toEqual([]);
    expect(report.warnings).toEqual([
      'warning: getPet (GET /pets/{petId}) reaches its sunset on 2030-12-05, 65 days after 2030-10-01: the server answers it 410 Gone from then on; remove it from spec/openapi.yaml on 2030-12-05 or later (the breaking-change gate allows it from that day).',
    ]);
  });

  it('starts warning 90 days before the sunset, and still warns the day before it', async () => {
    const [before, first, last] = await Promise.all([calendar('2030-09-05'), calendar('2030-09-06'), calendar('2030-12-04')]);
    expect(before.warnings).toEqual([]);
    expect(first.warnings).toHaveLength(1);
    expect(first.warnings[0]).toContain('90 days after 2030-09-06');
    expect(last.warnings[0]).toContain('1 day after 2030-12-04');
    expect([...first.errors, ...last.errors]).toEqual([]);
  });

  it('fails from the sunset day on (2030-12-05, 2030-12-06) while getPet is still in the spec, naming it', async () => {
    for (const date of ['2030-12-05', '2030-12-06']) {
      const report = await calendar(date);
      expect(report.warnings).toEqual([]);
      expect(report.errors).toEqual([
        `getPet (GET /pets/{petId}) reached its sunset at 2030-12-05T00:00:00Z and is still in spec/openapi.yaml on ${date}: remove it from the contract now; the server already answers it 410 Gone.`,
      ]);
    }
  });
});

describe('what the gate excuses: an operation removed after its sunset', () => {
  const NOON = '2030-12-05T12:00:00Z';
  const op = (operationId: string, markers: Record<string, unknown> = {}) => ({ operationId, responses: { '200': { description: 'ok' } }, ...markers });
  const deprecated = (operationId: string, sunset: string) => op(operationId, { deprecated: true, 'x-sunset': sunset });
  const released = {
    paths: {
      '/a/{id}': { parameters: [{ name: 'id', in: 'path' }], get: deprecated('getA', NOON), delete: op('deleteA') },
      '/b': { summary: 'b', get: deprecated('getB', NOON) },
      '/c': { get: op('getC', { 'x-sunset': '2020-01-01T00:00:00Z' }) },
    },
  };
  const working = { paths: { '/a/{id}': { parameters: [{ name: 'id', in: 'path' }], delete: op('deleteA') } } };

  it('counts a sunset later than 00:00 UTC from the next day: none of it on the sunset day itself', () => {
    const removals = sunsetRemovals(released, working, on('2030-12-05'));
    expect(removals.excused).toEqual([]);
    expect(removals.early.map((o) => o.operationId)).toEqual(['getA', 'getB']);
    expect(removals.excuses(['paths', '/a/{id}', 'get'])).toBe(false);
  });

  it('excuses the removed operation, and a path item that went with it, and nothing else', () => {
    const removals = sunsetRemovals(released, working, on('2030-12-06'));
    expect(removals.excused.map((o) => o.operationId)).toEqual(['getA', 'getB']);
    expect(removals.excuses(['paths', '/a/{id}', 'get'])).toBe(true);
    expect(removals.excuses(['paths', '/a/{id}', 'get', 'responses', '200'])).toBe(true);
    expect(removals.excuses(['paths', '/b', 'summary'])).toBe(true);
    // deleteA stays, so the path's own parameters still concern it.
    expect(removals.excuses(['paths', '/a/{id}', 'parameters'])).toBe(false);
    expect(removals.excuses(['paths', '/a/{id}', 'delete'])).toBe(false);
    // getC has an x-sunset but was never deprecated: the server never answered it 410.
    expect(removals.excuses(['paths', '/c', 'get'])).toBe(false);
    expect(removals.excuses(['components', 'schemas', 'A'])).toBe(false);
  });
});
