/**
 * `npm run conformance -- --server <base URL> --key <key> [--write]`: checks a running deployment
 * against the contract with Redocly Respect, which runs the Arazzo workflows of conformance/ and
 * checks every response against generated/openapi.json (status code, content type, body schema)
 * besides the workflows' own success criteria (the headers, and what the answers mean).
 *
 * Two Respect runs, because an Arazzo runtime expression cannot take the cursor out of a Link
 * header: the first runs the workflows (write.arazzo.yaml first with --write, so that a page of
 * one has a next page), and this script reads the Link of its page of one from Respect's JSON
 * report; the second (paging.arazzo.yaml) follows it with that cursor as an input.
 *
 * The key reaches Respect as an input in REDOCLY_CLI_RESPECT_INPUT, never on a command line; the
 * workflows declare it `format: password`, so Respect masks it, and everything this script prints
 * is masked again here in case a Respect version does not.
 */
import { main } from './lib/conformance/conformanceCommand.js';

const code = await main(process.argv.slice(2), { stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text), env: process.env, isTTY: process.stdout.isTTY === true });
process.exit(code);
