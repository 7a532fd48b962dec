/**
 * `npm run release -- <x.y.z>`: releases the working contract as version x.y.z, in one command
 * instead of five hand steps that could each be forgotten. It sets `info.version` in
 * spec/openapi.yaml and `version` in package.json and package-lock.json, regenerates generated/,
 * freezes the bundled contract as spec/released/<x.y.z>.json, and turns the changelog's
 * "Unreleased" notes into the version's entry, followed by the changes computed from the newest
 * release to this one (scripts/lib/contractChanges.ts).
 *
 * It refuses, writing nothing, when the version is not x.y.z, not above the newest release, a new
 * major (a /v2 contract is a new contract, not a release of this one), when the spec does not lint,
 * or when the breaking-change gate finds a break. Every new file is built first, the generated
 * ones in a throwaway copy of the project, and the working tree is written only once all is ready.
 *
 * Exit status: 0 released, 1 refused, 2 usage error.
 */
import { main } from './lib/releaseCommand.js';

const code = await main(process.argv.slice(2), { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) });
if (code !== 0) process.exit(code);
