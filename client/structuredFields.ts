/**
 * The part of RFC 8941 (Structured Field Values for HTTP) that the RateLimit headers use: a List
 * of Items, each a String or Token with Parameters (`"per-key";r=42;t=17`). Integers, decimals,
 * booleans, strings and tokens are read as parameter values; inner lists and byte sequences are
 * not, and make the whole field unparseable, as RFC 8941 §4.2 says a parse failure does.
 */

export type BareItem = string | number | boolean;
export interface ListMember {
  item: BareItem;
  params: Readonly<Record<string, BareItem>>;
}

/** A cursor over the field value; every read either advances it or returns undefined. */
class Input {
  position = 0;
  constructor(readonly text: string) {}
  get done(): boolean {
    return this.position >= this.text.length;
  }
  peek(): string {
    return this.text[this.position] ?? '';
  }
  skip(pattern: RegExp): void {
    while (!this.done && pattern.test(this.peek())) this.position++;
  }
  /** Consumes a match of `pattern` (sticky) at the cursor, or returns undefined. */
  take(pattern: RegExp): string | undefined {
    const sticky = new RegExp(pattern.source, 'y');
    sticky.lastIndex = this.position;
    const match = sticky.exec(this.text);
    if (!match) return undefined;
    this.position += match[0].length;
    return match[0];
  }
}

function parseString(input: Input): string | undefined {
  const quoted = input.take(/"(?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\["\\])*"/);
  return quoted === undefined ? undefined : quoted.slice(1, -1).replace(/\\(["\\])/g, '$1');
}

function parseBareItem(input: Input): BareItem | undefined {
  const first = input.peek();
  if (first === '"') return parseString(input);
  if (first === '?') {
    const flag = input.take(/\?[01]/);
    return flag === undefined ? undefined : flag === '?1';
  }
  const numeral = input.take(/-?[0-9]{1,12}\.[0-9]{1,3}(?![0-9.])|-?[0-9]{1,15}(?![0-9.])/);
  if (numeral !== undefined) return Number(numeral);
  return input.take(/[A-Za-z*][!#$%&'*+\-.^_`|~0-9A-Za-z:/]*/);
}

function parseParams(input: Input): Record<string, BareItem> | undefined {
  const params: Record<string, BareItem> = {};
  while (input.peek() === ';') {
    input.position++;
    input.skip(/ /);
    const key = input.take(/[a-z*][a-z0-9_\-.*]*/);
    if (key === undefined) return undefined;
    let value: BareItem | undefined = true;
    if (input.peek() === '=') {
      input.position++;
      value = parseBareItem(input);
      if (value === undefined) return undefined;
    }
    // RFC 8941 §4.2.3.2: a repeated key keeps its last value.
    params[key] = value;
  }
  return params;
}

/** The members of a List field, or undefined when the value is not one. */
export function parseList(field: string): ListMember[] | undefined {
  const input = new Input(field);
  const members: ListMember[] = [];
  input.skip(/[ \t]/);
  while (!input.done) {
    const item = parseBareItem(input);
    if (item === undefined) return undefined;
    const params = parseParams(input);
    if (params === undefined) return undefined;
    members.push({ item, params });
    input.skip(/[ \t]/);
    if (input.done) break;
    if (input.peek() !== ',') return undefined;
    input.position++;
    input.skip(/[ \t]/);
    // A trailing comma is a parse failure.
    if (input.done) return undefined;
  }
  return members;
}
