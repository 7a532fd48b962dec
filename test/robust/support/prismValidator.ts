/**
 * A `fetch` that sends the contract suite's traffic through two Prism proxies in front of the
 * real server and collects every contract violation Prism reports.
 *
 * `prism proxy --errors` (strict) is the validator of record. It forwards a valid request and
 * checks the server's response: a response that breaks the contract comes back as a 500
 * problem+json of type VIOLATIONS. But a request that breaks the contract, which the suite sends
 * on purpose to see the server's 400, it never forwards: it answers 422 (or 401 for security)
 * itself. Those requests are replayed once through a `prism proxy` without --errors (lenient),
 * which forwards them and still checks the response, reporting in `sl-violations`. A request is
 * therefore seen by the server once, and every response it gives is checked by Prism, except a
 * malformed JSON body: Prism's HTTP layer parses JSON before anything else and answers such a
 * body itself, so those go straight to the server and are counted apart.
 *
 * Reported as violations: response violations (either proxy), and a 2xx from the server for a
 * request strict Prism rejected (the server accepts what the contract forbids).
 */

export interface PrismViolation {
  request: string;
  reason: string;
  details: unknown;
}

export interface PrismFigures {
  /** Requests whose response Prism validated (through either proxy). */
  checked: number;
  /** Of those, requests strict Prism refused and the lenient proxy replayed. */
  replayed: number;
  /** Requests Prism cannot carry (malformed JSON body), sent to the server directly. */
  direct: number;
  /** Disagreements explained by a documented Prism limitation, not counted as violations. */
  limitations: string[];
}

export interface PrismValidator {
  fetch: typeof fetch;
  violations: PrismViolation[];
  figures: PrismFigures;
}

interface Origins {
  /** prism proxy --errors */
  strict: string;
  /** prism proxy without --errors, same spec and upstream */
  lenient: string;
  /** the server itself */
  direct: string;
}

interface SlViolation {
  location?: unknown[];
  severity?: string;
  code?: unknown;
  message?: string;
}

function slViolations(headers: Headers): SlViolation[] {
  const raw = headers.get('sl-violations');
  if (!raw) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? (parsed as SlViolation[]) : [{ message: raw }];
  } catch {
    // Prism truncates a long list ("Too many violations! ..."): keep it whole as one entry.
    return [{ location: ['response'], severity: 'Error', message: raw }];
  }
}

const isResponseSide = (v: SlViolation) => v.location?.[0] === 'response';

function isJsonType(contentType: string | null): boolean {
  return /^application\/([a-z0-9.+-]*\+)?json\b/i.test(contentType ?? '');
}

function isMalformedJson(contentType: string | null, body: string | undefined): boolean {
  if (body === undefined || body === '' || !isJsonType(contentType)) return false;
  try {
    JSON.parse(body);
    return false;
  } catch {
    return true;
  }
}

interface Sent {
  status: number;
  headers: Headers;
  text: string;
}

export function createPrismValidator(origins: Origins): PrismValidator {
  const violations: PrismViolation[] = [];
  const figures: PrismFigures = { checked: 0, replayed: 0, direct: 0, limitations: [] };

  async function sendTo(origin: string, url: URL, method: string, headers: Headers, body: string | undefined): Promise<Sent> {
    const response = await fetch(`${origin}${url.pathname}${url.search}`, { method, headers, body });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  function recordResponseViolations(request: string, via: string, sent: Sent): void {
    const found = slViolations(sent.headers).filter(isResponseSide);
    if (found.length > 0) violations.push({ request, reason: `${via}: the response breaks the contract`, details: found });
  }

  async function validatingFetch(input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> {
    if (input instanceof Request) throw new Error('the Prism validator takes a URL and init, not a Request');
    if (init.body !== undefined && init.body !== null && typeof init.body !== 'string') throw new Error('the Prism validator carries string bodies only');
    const url = new URL(String(input));
    const method = (init.method ?? 'GET').toUpperCase();
    const headers = new Headers(init.headers);
    const body = init.body ?? undefined;
    const request = `${method} ${url.pathname}${url.search}`;

    let sent: Sent;
    // HEAD is the server's answer to a GET without its body; the contract declares only the GET,
    // so Prism's proxy refuses HEAD (and its refusal, to a HEAD, has no body to read). Sent direct:
    // the GET it mirrors is checked by Prism when the suite sends it.
    if (method === 'HEAD' || isMalformedJson(headers.get('content-type'), body)) {
      figures.direct++;
      sent = await sendTo(origins.direct, url, method, headers, body);
    } else {
      sent = await sendTo(origins.strict, url, method, headers, body);
      figures.checked++;
      const problem = sent.headers.get('content-type')?.startsWith('application/problem+json') ? (JSON.parse(sent.text) as { type?: string; validation?: unknown }) : undefined;
      if (problem?.type?.endsWith('#VIOLATIONS')) {
        violations.push({ request, reason: 'prism --errors: the response breaks the contract', details: problem.validation ?? slViolations(sent.headers) });
      } else if (problem) {
        // Strict Prism answered by itself: the request breaks the contract (or its route is unknown).
        const rejection = { type: problem.type, validation: problem.validation ?? slViolations(sent.headers) };
        figures.replayed++;
        sent = await sendTo(origins.lenient, url, method, headers, body);
        recordResponseViolations(request, 'prism (replay)', sent);
        if (sent.status < 400) {
          const authorization = headers.get('authorization') ?? '';
          if (problem.type?.endsWith('#UNAUTHORIZED') && /^bearer /i.test(authorization) && !authorization.startsWith('Bearer ')) {
            figures.limitations.push(`${request}: Prism matches the "Bearer" scheme case-sensitively; the server (RFC 7235) does not`);
          } else {
            violations.push({ request, reason: `the server answered ${sent.status} to a request Prism rejects`, details: rejection });
          }
        }
      } else {
        recordResponseViolations(request, 'prism --errors', sent);
      }
    }
    return new Response(sent.text === '' ? null : sent.text, { status: sent.status, headers: sent.headers });
  }

  return { fetch: validatingFetch, violations, figures };
}
