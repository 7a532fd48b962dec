/**
 * `npm run breaking` (and part of `npm run lint`): the breaking-change gate. The contract may grow,
 * never break; what the gate judges, the sunset calendar (scripts/lib/contract/sunsets.ts), waivers
 * and the exit statuses are its --help (scripts/lib/contract/breakingCommand.ts); how to freeze a
 * release: docs/contract.md, "Releasing the contract and breaking changes". A deliberate break
 * needs a new major version of the API (a /v2 contract): this gate has no switch to let one
 * through.
 *
 * api-smart-diff finds and judges every change, with its rules corrected where they misjudge our
 * clients (scripts/lib/contract/breakingRules.ts). Both documents are dereferenced first, so each
 * change is judged where it is used (a shared schema in a request and in a response), in every
 * operation that uses it: the tool reuses its verdict on a $ref wherever the same $ref appears. A
 * change inside a shared component is also named once, for all those operations, in the words a
 * waiver uses to let it through everywhere (scripts/lib/contract/waivers.ts). Why api-smart-diff
 * and not `redocly diff`: docs/contract.md, measured on the same cases.
 */
import { main } from './lib/contract/breakingCommand.js';

const code = await main(process.argv.slice(2), { out: (text) => console.log(text), err: (text) => console.error(text), env: process.env });
if (code !== 0) process.exit(code);
