/**
 * Where a webhook may be delivered. A subscriber names the URL, so without a check the store would
 * POST wherever it is told: to its own loopback, the cloud's metadata service (169.254.169.254),
 * a database on the private network. The URL is checked when it is registered
 * (checkEndpointUrl), and every delivery resolves the name again and checks every address it
 * gets (resolveDeliveryAddress): a name that answered with a public address at registration can
 * answer with 10.0.0.5 later (DNS rebinding). The sender then connects to the address that was
 * checked, never to a second lookup's answer (./send.ts pins it).
 *
 * `allowPrivate` lets everything through: a developer's receiver on localhost over plain http.
 */
import { promises as dns } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** Why an endpoint was refused, for a caller that answers each differently. */
export type UnsafeUrlReason = 'invalid' | 'scheme' | 'insecure' | 'credentials' | 'length' | 'address' | 'localhost';

/**
 * An endpoint the store will not deliver to. The message names the host at most: a URL's
 * userinfo and query string can hold secrets, and this message ends up in logs and API answers.
 */
export class EndpointRefused extends Error {
  constructor(
    readonly reason: UnsafeUrlReason,
    message: string,
  ) {
    super(message);
    this.name = 'EndpointRefused';
  }
}

/** The longest URL accepted: what browsers and most servers handle, and plenty for a receiver. */
const MAX_URL_LENGTH = 2048;

/**
 * Addresses that are not the public Internet: this host, private networks, link-local (the cloud
 * metadata services), shared address space (carrier NAT), the benchmarking and documentation
 * ranges, multicast and reserved. IPv4-mapped and NAT64 addresses never reach this list as IPv6:
 * they are judged by the IPv4 address inside (embeddedIPv4).
 */
const REFUSED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  // 240/4 holds 255.255.255.255 (broadcast) too.
  ['240.0.0.0', 4],
] as const) {
  REFUSED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  // The deprecated IPv4-compatible addresses (::a.b.c.d): no receiver has one, and a stack that
  // still routes them would reach the IPv4 address inside.
  ['::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  // Site-local, deprecated (RFC 3879) but still routed inside some networks.
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  // NAT64's local-use prefix (RFC 8215): the translator inside may reach any IPv4 address.
  ['64:ff9b:1::', 48],
] as const) {
  REFUSED.addSubnet(network, prefix, 'ipv6');
}

/** The eight 16-bit groups of a valid IPv6 address (without zone), `::` and a dotted tail expanded. */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  if (tail === undefined) return groups(head);
  const start = groups(head);
  const end = groups(tail);
  return [...start, ...new Array<number>(8 - start.length - end.length).fill(0), ...end];
}

/**
 * The IPv4 address an IPv6 address stands for, when it is IPv4-mapped (::ffff:a.b.c.d: the socket
 * talks IPv4 to a.b.c.d) or in NAT64's well-known prefix (64:ff9b::a.b.c.d: the translator talks
 * to a.b.c.d). NAT64 is judged by its IPv4 address rather than refused: on an IPv6-only network
 * with DNS64 every IPv4-only receiver resolves into that prefix, and RFC 6052 keeps private IPv4
 * addresses out of it only by convention, so the address inside is what must be checked.
 */
function embeddedIPv4(address: string): string | undefined {
  const groups = ipv6Groups(address);
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = groups;
  const mapped = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0xffff;
  const nat64 = g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0;
  if (!mapped && !nat64) return undefined;
  return [g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff].join('.');
}

/** Whether an address (IPv4 or IPv6, a zone allowed) is outside the public Internet; anything unparsable is. */
export function isRefusedAddress(address: string): boolean {
  // A link-local address from the resolver can carry its interface (fe80::1%eth0); the range is the address's.
  const bare = address.split('%')[0] ?? '';
  const version = isIP(bare);
  if (version === 4) return REFUSED.check(bare, 'ipv4');
  if (version !== 6) return true;
  const inside = embeddedIPv4(bare);
  return inside === undefined ? REFUSED.check(bare, 'ipv6') : REFUSED.check(inside, 'ipv4');
}

/** A URL's host as an address or a name: IPv6 without its brackets, as the resolver and node:net take it. */
function bareHost(url: URL): string {
  const host = url.hostname;
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** `localhost.` is `localhost` written as absolute, so the trailing dot does not get it through. */
function isLocalhostName(host: string): boolean {
  const name = host.replace(/\.+$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * The endpoint URL parsed, or EndpointRefused: not http(s); plain http (unless `allowPrivate`);
 * userinfo (a secret the store would store and send in clear); longer than 2048 characters; or
 * (unless `allowPrivate`) a host that is `localhost`, a name under it, or a literal address
 * outside the public Internet. A name is not resolved here: resolveDeliveryAddress checks what
 * it resolves to at each delivery.
 */
export function checkEndpointUrl(url: string, { allowPrivate }: { allowPrivate: boolean }): URL {
  if (url.length > MAX_URL_LENGTH) throw new EndpointRefused('length', `the URL is longer than ${MAX_URL_LENGTH} characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not echoed: an unparsable URL can still hold a password.
    throw new EndpointRefused('invalid', 'not a valid absolute URL');
  }
  // Percent-encoding can lengthen what was sent; the stored form is what must fit.
  if (parsed.href.length > MAX_URL_LENGTH) throw new EndpointRefused('length', `the URL is longer than ${MAX_URL_LENGTH} characters`);
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new EndpointRefused('scheme', `the scheme ${parsed.protocol} is not http: or https:`);
  if (parsed.username !== '' || parsed.password !== '') throw new EndpointRefused('credentials', `the URL for ${parsed.hostname} carries a user name or password`);
  if (allowPrivate) return parsed;
  if (parsed.protocol === 'http:') throw new EndpointRefused('insecure', `the URL for ${parsed.hostname} is plain http: only https: is allowed`);
  const host = bareHost(parsed);
  if (isLocalhostName(host)) throw new EndpointRefused('localhost', `the host ${parsed.hostname} is this machine`);
  if (isIP(host) !== 0 && isRefusedAddress(host)) throw new EndpointRefused('address', `the address ${parsed.hostname} is not on the public Internet`);
  return parsed;
}

/**
 * The address to deliver to now: the URL's literal address, or the first address its name
 * resolves to. Unless `allowPrivate`, EndpointRefused when any address of the answer is outside
 * the public Internet: refusing only the first would let a name that answers with a public and a
 * private address reach the private one through a later connection. A name that does not
 * resolve rejects with the resolver's error (ENOTFOUND, EAI_AGAIN): that is worth a retry, a
 * refusal is not. The caller connects to the returned address, and to no other.
 */
export async function resolveDeliveryAddress(url: URL, { allowPrivate }: { allowPrivate: boolean }): Promise<{ address: string; family: 4 | 6 }> {
  const host = bareHost(url);
  const literal = isIP(host);
  const answers = literal === 0 ? await dns.lookup(host, { all: true, verbatim: true }) : [{ address: host, family: literal }];
  const first = answers[0];
  if (first === undefined) throw Object.assign(new Error(`${host} resolved to no address`), { code: 'ENOTFOUND' });
  if (!allowPrivate) {
    const refused = answers.find((answer) => isRefusedAddress(answer.address));
    if (refused) throw new EndpointRefused('address', `${host} resolves to ${refused.address}, which is not on the public Internet`);
  }
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
