/**
 * `npm run webhooks -- <command>`: the endpoints the spec's webhooks are delivered to, on the
 * configured database (the SQLite file by default, or DATABASE_URL), as `npm run keys` manages keys.
 * Every running instance delivers to what is stored here (src/features/webhooks/). `listen`
 * subscribes a receiver of its own and prints each verified event (scripts/operators/listen.ts).
 */
import { checkEndpointUrl, EndpointRefused, resolveDeliveryAddress } from '../../src/features/webhooks/address.js';
import { readWebhookSettings } from '../../src/features/webhooks/config.js';
import { createEndpointStore } from '../../src/features/webhooks/endpoints.js';
import { loadBundledSpec } from '../../src/shared/spec.js';
import { fail, printTable, usageError } from '../lib/commandLine.js';
import { runOnOperatorDatabase } from './database.js';
import { listen } from './listen.js';

const HELP = `Usage: npm run webhooks -- <command>

  add <url> [--events <a,b>]
                  subscribe an endpoint to the events named (the spec's webhooks:
                  petCreated, …), or to every event; the last line is its signing secret
                  (whsec_…), shown once. https only, and never a private, loopback or
                  link-local address, unless WEBHOOKS_ALLOW_PRIVATE=true
  list            every endpoint: id, events, state, last success and failure, pending
                  deliveries (never a secret)
  remove <id>     stop delivering to it; its pending deliveries go with it
  rotate <id>     a new secret (the last line); the old one signs beside it for 24 hours
  deliveries <id> its last attempts: event, status or error, time, duration
  replay <event-id>
                  deliver that event (msg_…) again to every enabled endpoint it went to
  listen [--events <a,b>] [--forward-to <url>] [--port <n>] [--sandbox <origin>]
                  subscribe a receiver on 127.0.0.1 to the running server's events (or the
                  sandbox's, at its origin), verify each signature and print each event;
                  with --forward-to, pass each on to your own receiver. Removed on Ctrl-C.
                  The server must allow loopback endpoints (WEBHOOKS_ALLOW_PRIVATE=true;
                  the sandbox always does)

Uses DATABASE_URL when set (postgres://…), otherwise the SQLite file (SQLITE_PATH,
default data/animal-store.sqlite).`;

const usage = (message: string): never => usageError(HELP, message);

const [command, ...rest] = process.argv.slice(2);
if (!command || command === '--help' || command === '-h' || command === 'help') {
  console.log(HELP);
  process.exit(command ? 0 : 2);
}

const declared = Object.keys((loadBundledSpec() as { webhooks?: object }).webhooks ?? {});

/** The value after `--flag`, and the arguments without both. */
function option(args: string[], flag: string): { value: string | undefined; others: string[] } {
  const at = args.indexOf(flag);
  if (at === -1) return { value: undefined, others: args };
  const value = args[at + 1];
  if (value === undefined || value.startsWith('--')) usage(`${flag} needs a value`);
  return { value, others: [...args.slice(0, at), ...args.slice(at + 2)] };
}

/** `--events a,b` as webhook names of the spec; undefined for every event. */
function eventsOf(listed: string | undefined): string[] | undefined {
  if (listed === undefined) return undefined;
  const events = listed.split(/[\s,]+/).filter((name) => name.length > 0);
  const unknown = events.filter((name) => !declared.includes(name));
  if (events.length === 0 || unknown.length > 0) usage(`--events takes the spec's webhooks (${declared.join(', ') || 'none declared'}); unknown: ${unknown.join(', ') || '(none given)'}`);
  return [...new Set(events)];
}

const idArgument = (args: string[], what: string): number => {
  const [id] = args;
  if (!id || !/^\d{1,15}$/.test(id) || args.length !== 1) usage(`${what} needs one endpoint id (see \`list\`)`);
  return Number(id);
};

const when = (ms: number | undefined): string => (ms === undefined ? '-' : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z'));

if (command === 'listen') {
  const { value: events, others: a } = option(rest, '--events');
  const { value: forwardTo, others: b } = option(a, '--forward-to');
  const { value: port, others: c } = option(b, '--port');
  const { value: sandbox, others: d } = option(c, '--sandbox');
  if (d.length > 0) usage(`listen takes no argument ${d[0] ?? ''}`);
  if (port !== undefined && (!/^\d{1,5}$/.test(port) || Number(port) > 65535)) usage('--port takes a port number (0 to 65535)');
  await listen({ events: eventsOf(events), forwardTo, port: port === undefined ? 0 : Number(port), sandbox, usage });
} else {
  await runOnOperatorDatabase(usage, async ({ database }) => {
    const endpoints = createEndpointStore(database.db);
    const { allowPrivate } = readWebhookSettings(process.env);
    let exitCode = 0;
    const none = (id: number) => {
      console.error(`No endpoint has id ${id}.`);
      exitCode = 1;
    };
    switch (command) {
      case 'add': {
        const { value, others } = option(rest, '--events');
        const events = eventsOf(value);
        if (others.length !== 1 || others[0] === undefined) usage('add needs one URL');
        const raw = others[0] as string;
        try {
          await resolveDeliveryAddress(checkEndpointUrl(raw, { allowPrivate }), { allowPrivate });
        } catch (error) {
          if (error instanceof EndpointRefused) {
            // The hint only where the setting would let the URL through: not for a password, a scheme, a bad URL.
            const lifted = error.reason === 'insecure' || error.reason === 'address' || error.reason === 'localhost';
            fail(`The endpoint is refused: ${error.message}${allowPrivate || !lifted ? '' : ' (WEBHOOKS_ALLOW_PRIVATE=true allows http and internal addresses, for development only)'}.`, 2);
          }
          // The lookup failed: a name that does not resolve (yet) is refused, not stored to fail every attempt.
          const code = (error as { code?: unknown }).code;
          if (typeof code === 'string') fail(`The endpoint's host does not resolve (${code}): add it once its DNS name answers.`, 2);
          throw error;
        }
        const { id, secret } = await endpoints.add(raw, events);
        console.error(`Added endpoint ${id} for ${events?.join(', ') ?? 'every event'} on ${database.location}; running servers deliver to it from the next event. Its signing secret, shown once:`);
        console.log(secret);
        break;
      }
      case 'list': {
        if (rest.length > 0) usage('list takes no arguments');
        const all = await endpoints.list();
        if (all.length === 0) console.log('No endpoints. Add one with `npm run webhooks -- add <url>`.');
        else {
          printTable(
            ['id', 'url', 'events', 'state', 'last success', 'last failure', 'pending'],
            all.map((e) => [String(e.id), e.url, e.events?.join(',') ?? '(every event)', e.disabled ? `disabled ${when(e.disabled.at)}: ${e.disabled.reason}` : e.failingSince === undefined ? 'enabled' : `failing since ${when(e.failingSince)}`, when(e.lastSuccessAt), when(e.lastFailureAt), String(e.pending)]),
          );
        }
        break;
      }
      case 'remove': {
        const id = idArgument(rest, 'remove');
        if (await endpoints.remove(id)) console.log(`Removed endpoint ${id}: nothing more is delivered to it.`);
        else none(id);
        break;
      }
      case 'rotate': {
        const id = idArgument(rest, 'rotate');
        const secret = await endpoints.rotate(id);
        if (secret === undefined) none(id);
        else {
          console.error(`Rotated the secret of endpoint ${id}: deliveries carry a signature by each secret for 24 hours, then by the new one alone. The new secret, shown once:`);
          console.log(secret);
        }
        break;
      }
      case 'deliveries': {
        const id = idArgument(rest, 'deliveries');
        const attempts = await endpoints.attempts(id, 50);
        if (attempts === undefined) none(id);
        else if (attempts.length === 0) console.log(`No attempts yet for endpoint ${id}.`);
        else printTable(['time', 'event', 'id', 'status', 'error', 'ms'], attempts.map((a) => [when(a.attemptedAt), a.event, a.eventId, a.status === undefined ? '-' : String(a.status), a.error ?? '-', String(a.durationMs)]));
        break;
      }
      case 'replay': {
        const [eventId] = rest;
        if (!eventId || !/^msg_[0-9A-Za-z]{26}$/.test(eventId) || rest.length !== 1) usage('replay needs one event id (msg_…, as `deliveries` shows it)');
        const queued = await endpoints.replay(eventId as string);
        if (queued === undefined) {
          console.error(`No event has id ${eventId}.`);
          exitCode = 1;
        } else console.log(`Queued ${queued} deliver${queued === 1 ? 'y' : 'ies'} of ${eventId}: running servers send within ${readWebhookSettings(process.env).pollMs / 1000} s.`);
        break;
      }
      default:
        usage(`Unknown command: ${command}`);
    }
    return exitCode;
  });
}
