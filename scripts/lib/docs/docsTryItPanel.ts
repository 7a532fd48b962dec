/**
 * The docs' "Try it" panel, as it runs in the reader's browser (scripts/lib/docs/docsPage.ts
 * bundles this file with esbuild into each Redoc page). It reads the operations from the page's
 * `#try-it-config` block (./docsTryIt.ts derives them from the contract), shows a form for the
 * chosen operation, sends the call with fetch and shows the answer: status, the headers the
 * server lets a page read, and the body.
 *
 * Where a call may go: the server that serves the page (same origin; only on a page the API's
 * own server serves) or a sandbox on this machine (`npm run sandbox`, CORS open). The page's
 * Content-Security-Policy allows nothing else (connect-src), so a typo cannot send a key afar.
 *
 * The credential is sent as the scheme the reader picks among those the operation takes (a key as
 * a bearer token, as basic's user name or in its own header; an access token). It lives in the
 * field and in sessionStorage (this tab only, gone when it closes), one key and one token per
 * server, so the sandbox's key is never sent to the real server or the other way round. It never
 * goes into the address, the page's text or the console.
 */
import type { TryItBody, TryItConfig, TryItCredential, TryItOperation, TryItParameter } from './docsTryIt.js';

/** What the chosen body sends: the payload, its Content-Type (none for a FormData: the browser writes it with the boundary), and how the request shows it. */
interface BuiltBody {
  payload: string | Blob | FormData | URLSearchParams;
  type?: string;
  shown: string;
}

type ServerChoice = 'this' | 'sandbox';

const STORAGE_PREFIX = 'animal-store-docs.';
/** The sandbox's one documented key (`npm run sandbox` prints it): a starting value, not a secret. */
const SANDBOX_KEY = 'sandbox';
const LOOPBACK = new Set(['localhost', '127.0.0.1']);

function stored(name: string): string | undefined {
  try {
    return sessionStorage.getItem(STORAGE_PREFIX + name) ?? undefined;
  } catch {
    return undefined; // storage off (a file: page in some browsers): the field alone keeps it
  }
}

function store(name: string, value: string): void {
  try {
    sessionStorage.setItem(STORAGE_PREFIX + name, value);
  } catch {
    // as above
  }
}

function element<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

/** Base64 of the UTF-8 bytes of `text` (btoa takes Latin-1 alone). */
function base64(text: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}

/** The header a credential travels in, and its value. */
function credentialHeader(credential: TryItCredential, value: string): [string, string] {
  if (credential.as === 'header' && credential.header !== undefined) return [credential.header, value];
  return ['Authorization', credential.as === 'basic' ? `Basic ${base64(`${value}:`)}` : `Bearer ${value}`];
}

/** A Headers' fields, names in lower case, in order. */
function entries(headers: Headers): [string, string][] {
  const all: [string, string][] = [];
  headers.forEach((value, name) => all.push([name, value]));
  return all;
}

function readConfig(): TryItConfig | undefined {
  const block = document.getElementById('try-it-config');
  if (!block?.textContent) return undefined;
  return JSON.parse(block.textContent) as TryItConfig;
}

/** The operation a Redoc address points at (`#tag/Pets/operation/getPet`, or Redoc 3's `#/pets/getpet`). */
function operationInHash(hash: string, operations: TryItOperation[]): TryItOperation | undefined {
  const lower = hash.toLowerCase();
  return operations.find((operation) => lower.endsWith(`/${operation.operationId.toLowerCase()}`));
}

/** What a sandbox URL must be: http on this machine, as the page's CSP allows. */
function sandboxBase(value: string): string | Error {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return new Error(`"${value}" is not a URL; the sandbox is at http://localhost:4011/v1 by default.`);
  }
  if (url.protocol !== 'http:' || !LOOPBACK.has(url.hostname)) return new Error('The sandbox runs on this machine: http://localhost:<port>/v1 or http://127.0.0.1:<port>/v1.');
  return url.href.replace(/\/$/, '');
}

function parameterField(parameter: TryItParameter): { row: HTMLElement; input: HTMLInputElement | HTMLSelectElement } {
  const id = `try-it-${parameter.in}-${parameter.name}`;
  let input: HTMLInputElement | HTMLSelectElement;
  if (parameter.values) {
    input = element('select', { id, name: parameter.name }, element('option', { value: '' }, '(not sent)'));
    for (const value of parameter.values) input.append(element('option', { value }, value));
    // A required choice starts on the example; an optional one is not sent until picked.
    if (parameter.required && parameter.example !== undefined) input.value = parameter.example;
  } else {
    input = element('input', { id, name: parameter.name, type: 'text', autocomplete: 'off', spellcheck: 'false' });
    if (parameter.example !== undefined) {
      if (parameter.required) input.value = parameter.example;
      else input.placeholder = parameter.example;
    }
  }
  const label = element('label', { for: id }, element('code', {}, parameter.name), ` ${parameter.in}${parameter.required ? ', required' : ''}`);
  const row = element('div', { class: 'try-it-field' }, label, input);
  if (parameter.description) row.append(element('small', {}, parameter.description));
  return { row, input };
}

/** Fills `panel` with the form; returns what selects the operation the address points at. */
function build(config: TryItConfig, panel: HTMLElement): () => void {
  const operationSelect = element('select', { id: 'try-it-operation' });
  for (const operation of config.operations) {
    operationSelect.append(element('option', { value: operation.operationId }, `${operation.method} ${operation.path}: ${operation.summary}${operation.deprecated ? ' (deprecated)' : ''}`));
  }

  // Server choice: this server only where it serves the API too.
  const servers = element('fieldset', { class: 'try-it-servers' }, element('legend', {}, 'Send to'));
  const radios = new Map<ServerChoice, HTMLInputElement>();
  const sandboxUrl = element('input', { id: 'try-it-sandbox-url', type: 'url', autocomplete: 'off', spellcheck: 'false' });
  sandboxUrl.value = stored('sandbox-url') ?? config.sandbox;
  const addChoice = (choice: ServerChoice, ...label: (Node | string)[]) => {
    const radio = element('input', { type: 'radio', name: 'try-it-server', value: choice, id: `try-it-server-${choice}` });
    radios.set(choice, radio);
    servers.append(element('div', {}, radio, element('label', { for: radio.id }, ...label)));
  };
  if (config.sameOrigin) addChoice('this', 'This server ', element('code', {}, `${location.origin}${config.basePath}`));
  addChoice('sandbox', 'The sandbox (', element('code', {}, 'npm run sandbox'), ')');
  servers.append(sandboxUrl);
  const initial = (stored('server') as ServerChoice | undefined) ?? (config.sameOrigin ? 'this' : 'sandbox');
  (radios.get(initial) ?? radios.get('sandbox'))!.checked = true;
  const choice = (): ServerChoice => ([...radios].find(([, radio]) => radio.checked)?.[0] ?? 'sandbox');

  const key = element('input', { id: 'try-it-key', type: 'password', autocomplete: 'off', spellcheck: 'false' });
  const keyHint = element('small', {});
  const keyLabel = element('label', { for: key.id }, 'API key (bearer)');
  // The schemes the chosen operation takes, when there are several: the reader picks one.
  const credentialSelect = element('select', { id: 'try-it-credential' });
  const credentialField = element('div', { class: 'try-it-field' }, element('label', { for: credentialSelect.id }, 'Send as'), credentialSelect);
  const credential = (): TryItCredential | undefined => {
    const credentials = config.operations.find((candidate) => candidate.operationId === operationSelect.value)?.credentials ?? [];
    return credentials.find((each) => each.scheme === credentialSelect.value) ?? credentials[0];
  };
  const slot = () => `${credential()?.holds ?? 'key'}.${choice()}`;
  const loadKey = () => {
    const server = choice();
    const holds = credential()?.holds ?? 'key';
    keyLabel.textContent = credential()?.label ?? 'API key (bearer)';
    key.value = stored(slot()) ?? (server === 'sandbox' && holds === 'key' ? SANDBOX_KEY : '');
    keyHint.textContent =
      holds === 'token' ? "An access token of the API's issuer, as your OAuth client obtained it." : server === 'sandbox' ? `The sandbox's key is "${SANDBOX_KEY}".` : 'An API key of this server (npm run keys -- create <name>).';
    sandboxUrl.disabled = server !== 'sandbox';
  };
  key.addEventListener('input', () => store(slot(), key.value));
  credentialSelect.addEventListener('change', loadKey);
  sandboxUrl.addEventListener('input', () => store('sandbox-url', sandboxUrl.value));
  for (const radio of radios.values()) {
    radio.addEventListener('change', () => {
      store('server', choice());
      loadKey();
    });
  }
  loadKey();

  const fields = element('div', { id: 'try-it-fields' });
  const send = element('button', { id: 'try-it-send', type: 'button' }, 'Send');
  const requestLine = element('pre', { id: 'try-it-request', 'data-testid': 'try-it-request' });
  const status = element('p', { id: 'try-it-status', 'data-testid': 'try-it-status', role: 'status' });
  const headers = element('pre', { id: 'try-it-headers', 'data-testid': 'try-it-headers' });
  const body = element('pre', { id: 'try-it-body', 'data-testid': 'try-it-body' });
  const headersNote = element('small', {});
  const answer = element('section', { class: 'try-it-answer', 'aria-label': 'Answer' }, element('h3', {}, 'Request'), requestLine, element('h3', {}, 'Answer'), status, element('h4', {}, 'Headers'), headersNote, headers, element('h4', {}, 'Body'), body);
  answer.hidden = true;

  let inputs: { parameter: TryItParameter; input: HTMLInputElement | HTMLSelectElement }[] = [];
  /** The body the form holds now, an Error saying what is missing, or undefined for none. */
  let bodyOf: () => BuiltBody | Error | undefined = () => undefined;

  /** The inputs of one body kind, put in `area`; sets bodyOf to read them. */
  const showBody = (chosen: TryItBody, area: HTMLElement) => {
    area.replaceChildren();
    if (chosen.kind === 'json') {
      const text = chosen.example ?? '';
      const input = element('textarea', { id: 'try-it-request-body', rows: String(Math.min(12, text.split('\n').length + 1)), spellcheck: 'false' });
      input.value = text;
      area.append(element('div', { class: 'try-it-field' }, element('label', { for: input.id }, `Body (${chosen.mediaType})`), input));
      bodyOf = () => (input.value.trim() === '' ? undefined : { payload: input.value, type: chosen.mediaType, shown: input.value });
    } else if (chosen.kind === 'file') {
      const input = element('input', { id: 'try-it-request-file', type: 'file', accept: chosen.mediaType });
      area.append(element('div', { class: 'try-it-field' }, element('label', { for: input.id }, `Body: a file, sent as ${chosen.mediaType}`), input));
      bodyOf = () => {
        const file = input.files?.[0];
        return file === undefined ? new Error('Choose a file to send as the body.') : { payload: file, type: chosen.mediaType, shown: `(${file.name}: ${file.size} bytes)` };
      };
    } else {
      const multipart = chosen.mediaType.toLowerCase() === 'multipart/form-data';
      const fieldInputs = (chosen.fields ?? []).map((field) => {
        const id = `try-it-form-${field.name}`;
        const input = element('input', field.file ? { id, type: 'file', accept: field.file.accept } : { id, type: 'text', autocomplete: 'off', spellcheck: 'false' });
        if (!field.file && field.example !== undefined) input.value = field.example;
        area.append(element('div', { class: 'try-it-field' }, element('label', { for: id }, element('code', {}, field.name), ` ${field.file ? 'file' : 'field'}${field.required ? ', required' : ''}`), input));
        return { field, input };
      });
      bodyOf = () => {
        const form = multipart ? new FormData() : new URLSearchParams();
        const shown: string[] = [];
        for (const { field, input } of fieldInputs) {
          const file = field.file ? input.files?.[0] : undefined;
          if (field.file ? file === undefined : input.value === '') {
            if (field.required) return new Error(`${field.name} (body) is required.`);
            continue;
          }
          if (file !== undefined && form instanceof FormData) {
            form.append(field.name, file, file.name);
            shown.push(`${field.name}: (${file.name}: ${file.size} bytes)`);
          } else {
            form.append(field.name, input.value);
            shown.push(`${field.name}: ${input.value}`);
          }
        }
        return multipart ? { payload: form, shown: shown.join('\n') } : { payload: form, type: chosen.mediaType, shown: form.toString() };
      };
    }
  };
  const operation = (): TryItOperation => config.operations.find((candidate) => candidate.operationId === operationSelect.value) ?? config.operations[0]!;
  const showOperation = () => {
    const current = operation();
    fields.replaceChildren();
    inputs = current.parameters.map((parameter) => {
      const { row, input } = parameterField(parameter);
      fields.append(row);
      return { parameter, input };
    });
    bodyOf = () => undefined;
    const bodies: TryItBody[] = current.bodies ?? (current.body !== undefined ? [{ mediaType: 'application/json', kind: 'json', example: current.body }] : []);
    const first = bodies[0];
    if (first !== undefined) {
      const area = element('div', { id: 'try-it-body-fields' });
      if (bodies.length > 1) {
        const typeSelect = element('select', { id: 'try-it-body-type' });
        for (const body of bodies) typeSelect.append(element('option', { value: body.mediaType }, body.mediaType));
        typeSelect.addEventListener('change', () => showBody(bodies.find((body) => body.mediaType === typeSelect.value) ?? first, area));
        fields.append(element('div', { class: 'try-it-field' }, element('label', { for: typeSelect.id }, 'Body as'), typeSelect));
      }
      fields.append(area);
      showBody(first, area);
    }
    if (current.cookies.length > 0) fields.append(element('small', {}, `Cookies (${current.cookies.join(', ')}) cannot be set from a page; they are not sent.`));
    credentialSelect.replaceChildren(...current.credentials.map((each) => element('option', { value: each.scheme }, each.label)));
    credentialField.hidden = current.credentials.length < 2;
    key.disabled = current.credentials.length === 0;
    loadKey();
  };
  operationSelect.addEventListener('change', showOperation);

  const followHash = () => {
    const target = operationInHash(location.hash, config.operations);
    if (target && target.operationId !== operationSelect.value) {
      operationSelect.value = target.operationId;
      showOperation();
    }
  };
  window.addEventListener('hashchange', followHash);

  send.addEventListener('click', () => {
    void call();
  });

  async function call(): Promise<void> {
    const current = operation();
    answer.hidden = false;
    headers.textContent = '';
    body.textContent = '';
    const fail = (message: string) => {
      status.textContent = message;
      status.dataset.outcome = 'error';
    };
    const base = choice() === 'this' ? `${location.origin}${config.basePath}` : sandboxBase(sandboxUrl.value);
    if (base instanceof Error) return fail(base.message);
    let path = current.path;
    const query = new URLSearchParams();
    const sent = new Headers();
    for (const { parameter, input } of inputs) {
      const value = input.value.trim();
      if (value === '') {
        if (parameter.required) return fail(`${parameter.name} (${parameter.in}) is required.`);
        continue;
      }
      if (parameter.in === 'path') path = path.replace(`{${parameter.name}}`, encodeURIComponent(value));
      else if (parameter.in === 'query' && parameter.repeated) for (const item of value.split(',')) query.append(parameter.name, item.trim());
      else if (parameter.in === 'query') query.append(parameter.name, value);
      else sent.set(parameter.name, value);
    }
    const using = credential();
    if (using !== undefined && key.value.trim() !== '') sent.set(...credentialHeader(using, key.value.trim()));
    const built = bodyOf();
    if (built instanceof Error) return fail(built.message);
    const payload = built?.payload;
    if (built?.type !== undefined) sent.set('Content-Type', built.type);
    const search = query.toString();
    const url = `${base}${path}${search === '' ? '' : `?${search}`}`;
    // The credential is shown as dots: the request as the reader can share it.
    const secret = (using?.as === 'header' ? using.header : 'Authorization')?.toLowerCase();
    const shownHeaders = entries(sent).map(([name, value]) => `${name}: ${name !== secret ? value : name === 'authorization' ? `${value.split(' ')[0] ?? ''} ••••••` : '••••••'}`);
    requestLine.textContent = [`${current.method} ${url}`, ...shownHeaders, ...(built !== undefined ? ['', built.shown] : [])].join('\n');
    status.textContent = 'Sending…';
    delete status.dataset.outcome;
    send.disabled = true;
    try {
      // no-store: the browser would otherwise answer a repeated read itself, from its cache.
      const response = await fetch(url, { method: current.method, headers: sent, body: payload, cache: 'no-store', credentials: 'omit', referrerPolicy: 'no-referrer' });
      status.textContent = `${response.status} ${response.statusText}`.trim();
      status.dataset.outcome = response.ok ? 'ok' : 'refused';
      headers.textContent = entries(response.headers).map(([name, value]) => `${name}: ${value}`).join('\n');
      // A browser shows a page of another origin only the headers the server exposes to it (CORS).
      headersNote.textContent = new URL(url).origin === location.origin ? '' : 'The headers the server exposes to pages of other origins (CORS); the others are hidden from the page.';
      const type = response.headers.get('content-type') ?? '';
      const bytes = await response.arrayBuffer();
      // Bytes that are not text (an image) are described, not shown as mojibake.
      const text = bytes.byteLength === 0 || /json|^text\//i.test(type) || type === '' ? new TextDecoder().decode(bytes) : undefined;
      if (text === undefined) body.textContent = `(${bytes.byteLength} bytes of ${type})`;
      else {
        try {
          body.textContent = /json/i.test(type) ? JSON.stringify(JSON.parse(text), null, 2) : text;
        } catch {
          body.textContent = text;
        }
        if (text === '') body.textContent = '(no body)';
      }
    } catch (error) {
      fail(
        `No answer: ${error instanceof Error ? error.message : String(error)}. Is the server running and reachable from this page` +
          (choice() === 'sandbox' ? ' (npm run sandbox)?' : '?') +
          ' A page may call only this server and the sandbox on this machine.',
      );
    } finally {
      send.disabled = false;
    }
  }

  const keyField = element('div', { class: 'try-it-field' }, keyLabel, key, keyHint);
  const operationField = element('div', { class: 'try-it-field' }, element('label', { for: operationSelect.id }, 'Operation'), operationSelect);
  panel.append(element('h2', {}, 'Try it'), operationField, servers, credentialField, keyField, fields, send, answer);

  showOperation();
  return followHash;
}

/**
 * The button opens and closes the panel. The form is built when first opened: until the reader
 * asks for it, the page is Redoc's alone (its text, its search, its focus order).
 */
function mount(): void {
  const toggle = document.getElementById('try-it-toggle');
  const panel = document.getElementById('try-it');
  const config = readConfig();
  if (!toggle || !panel || !config || config.operations.length === 0) {
    toggle?.remove();
    return;
  }
  let followHash: (() => void) | undefined;
  toggle.addEventListener('click', () => {
    followHash ??= build(config, panel);
    panel.hidden = !panel.hidden;
    toggle.setAttribute('aria-expanded', String(!panel.hidden));
    if (!panel.hidden) followHash();
  });
}

mount();
