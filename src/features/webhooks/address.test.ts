/**
 * A webhook endpoint cannot point the store at its own network: the URL kinds refused when one is
 * registered, the address ranges refused as literals (IPv4, IPv6, IPv4 inside IPv6), what
 * `allowPrivate` lets through, and a name that resolves into a refused range refused at delivery.
 */
import { promises as dnsPromises, type LookupAddress } from 'node:dns';
import { describe, expect, it, vi } from 'vitest';
import { checkEndpointUrl, EndpointRefused, isRefusedAddress, resolveDeliveryAddress, type UnsafeUrlReason } from './address.js';

const publicOnly = { allowPrivate: false };
const anything = { allowPrivate: true };

function refusal(url: string): EndpointRefused {
  try {
    checkEndpointUrl(url, publicOnly);
  } catch (error) {
    if (error instanceof EndpointRefused) return error;
    throw error;
  }
  throw new Error(`${url} was accepted`);
}

describe('checkEndpointUrl', () => {
  it('accepts a public https URL, as parsed', () => {
    const url = checkEndpointUrl('https://hooks.example.com:8443/in?topic=pets', publicOnly);
    expect(url.href).toBe('https://hooks.example.com:8443/in?topic=pets');
    expect(checkEndpointUrl('https://93.184.215.14/in', publicOnly).hostname).toBe('93.184.215.14');
    expect(checkEndpointUrl('https://[2606:4700::1111]/in', publicOnly).hostname).toBe('[2606:4700::1111]');
  });

  it.each<[string, UnsafeUrlReason]>([
    ['not a url', 'invalid'],
    ['/relative/path', 'invalid'],
    ['ftp://files.example.com/in', 'scheme'],
    ['javascript:alert(1)', 'scheme'],
    ['file:///etc/passwd', 'scheme'],
    ['http://hooks.example.com/in', 'insecure'],
    ['https://user:secret@hooks.example.com/in', 'credentials'],
    ['https://token@hooks.example.com/in', 'credentials'],
    [`https://hooks.example.com/${'a'.repeat(2048)}`, 'length'],
    ['https://localhost/in', 'localhost'],
    ['https://LOCALHOST./in', 'localhost'],
    ['https://api.localhost:3000/in', 'localhost'],
  ])('refuses %s (%s)', (url, reason) => {
    expect(refusal(url).reason).toBe(reason);
  });

  it('accepts a URL of exactly 2048 characters', () => {
    const base = 'https://hooks.example.com/';
    expect(() => checkEndpointUrl(`${base}${'a'.repeat(2048 - base.length)}`, publicOnly)).not.toThrow();
  });

  it("never puts the URL's credentials or query string in the message", () => {
    for (const url of ['https://alice:hunter2@hooks.example.com/in?key=s3cret', 'http://alice:hunter2@10.0.0.1/in?key=s3cret', 'http://hooks.example.com/in?key=s3cret', 'https://10.0.0.1/in?key=s3cret', 'gopher://alice:hunter2@x/?key=s3cret', 'https://alice:hunter2@[::1/?key=s3cret']) {
      const { message } = refusal(url);
      expect(message).not.toMatch(/hunter2|alice|s3cret/);
    }
  });

  it.each([
    '0.0.0.0',
    '0.1.2.3',
    '10.0.0.1',
    '10.255.255.255',
    '100.64.0.1',
    '100.127.255.254',
    '127.0.0.1',
    '127.53.0.1',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.0.0.8',
    '192.0.2.1',
    '192.168.1.1',
    '198.18.0.1',
    '198.19.255.255',
    '198.51.100.7',
    '203.0.113.9',
    '224.0.0.1',
    '239.255.255.250',
    '240.0.0.1',
    '255.255.255.255',
  ])('refuses the IPv4 address %s', (address) => {
    expect(refusal(`https://${address}/in`).reason).toBe('address');
    expect(isRefusedAddress(address)).toBe(true);
  });

  it.each(['0x7f.1', '2130706433', '0177.0.0.1', '10.1'])('refuses %s, which the URL parser reads as a refused IPv4 address', (host) => {
    expect(refusal(`https://${host}/in`).reason).toBe('address');
  });

  it.each([
    '::',
    '::1',
    '0:0:0:0:0:0:0:1',
    '::127.0.0.1',
    'fc00::1',
    'fd12:3456:789a::1',
    'fe80::1',
    'febf::1',
    'fec0::1',
    'ff02::1',
    '2001:db8::1',
    '64:ff9b:1::a00:1',
    // IPv4-mapped, judged by the address inside, in both spellings.
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '0:0:0:0:0:ffff:c0a8:101',
    // NAT64, likewise.
    '64:ff9b::10.0.0.1',
    '64:ff9b::a9fe:a9fe',
  ])('refuses the IPv6 address %s', (address) => {
    expect(refusal(`https://[${address}]/in`).reason).toBe('address');
    expect(isRefusedAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '100.63.255.255', '100.128.0.0', '172.15.255.255', '172.32.0.0', '192.169.0.1', '198.20.0.1', '223.255.255.255', '2606:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8', '::ffff:808:808', '64:ff9b::8.8.8.8', 'fe00::1'])(
    'accepts %s, outside every refused range',
    (address) => {
      const host = address.includes(':') ? `[${address}]` : address;
      expect(() => checkEndpointUrl(`https://${host}/in`, publicOnly)).not.toThrow();
      expect(isRefusedAddress(address)).toBe(false);
    },
  );

  it("judges a resolver's link-local answer with its zone by the address", () => {
    expect(isRefusedAddress('fe80::1%eth0')).toBe(true);
    expect(isRefusedAddress('not an address')).toBe(true);
  });

  it('lets private addresses, localhost and plain http through with allowPrivate', () => {
    for (const url of ['http://localhost:3000/in', 'http://127.0.0.1:3000/in', 'https://10.0.0.1/in', 'http://[::1]:8080/in', 'https://[::ffff:192.168.1.1]/in', 'http://dev.localhost/in']) {
      expect(checkEndpointUrl(url, anything).protocol).toMatch(/^https?:$/);
    }
  });

  it('still refuses with allowPrivate what is never a delivery URL: another scheme, credentials, a long URL', () => {
    const kinds = ['ftp://localhost/in', 'http://user:pass@localhost/in', `http://localhost/${'a'.repeat(2048)}`].map((url) => {
      try {
        checkEndpointUrl(url, anything);
        return 'accepted';
      } catch (error) {
        return error instanceof EndpointRefused ? error.reason : 'other error';
      }
    });
    expect(kinds).toEqual(['scheme', 'credentials', 'length']);
  });
});

describe('resolveDeliveryAddress', () => {
  it('refuses a name that resolves into a refused range (localhost here), and lets it through with allowPrivate', async () => {
    // `localhost` stands for any name whose DNS answer is private; the URL check alone would stop this one.
    const url = new URL('http://localhost:8080/in');
    const error: unknown = await resolveDeliveryAddress(url, publicOnly).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EndpointRefused);
    expect((error as EndpointRefused).reason).toBe('address');

    const resolved = await resolveDeliveryAddress(url, anything);
    expect(['127.0.0.1', '::1']).toContain(resolved.address);
    expect(resolved.family).toBe(resolved.address === '::1' ? 6 : 4);
  });

  it('refuses a name when any of its addresses is refused, not only the first; else returns the first', async () => {
    // A resolver that answers as a rebinding attacker's would: a public address first, a private one after.
    const answers: Record<string, LookupAddress[]> = {
      'mixed.example': [{ address: '93.184.215.14', family: 4 }, { address: '10.0.0.5', family: 4 }],
      'mapped.example': [{ address: '2606:4700::1111', family: 6 }, { address: '::ffff:169.254.169.254', family: 6 }],
      'public.example': [{ address: '2606:4700::1111', family: 6 }, { address: '93.184.215.14', family: 4 }],
    };
    const lookup = vi.spyOn(dnsPromises, 'lookup').mockImplementation((async (host: string) => answers[host] ?? []) as unknown as typeof dnsPromises.lookup);
    try {
      await expect(resolveDeliveryAddress(new URL('https://mixed.example/in'), publicOnly)).rejects.toBeInstanceOf(EndpointRefused);
      await expect(resolveDeliveryAddress(new URL('https://mapped.example/in'), publicOnly)).rejects.toBeInstanceOf(EndpointRefused);
      expect(await resolveDeliveryAddress(new URL('https://mixed.example/in'), anything)).toEqual({ address: '93.184.215.14', family: 4 });
      expect(await resolveDeliveryAddress(new URL('https://public.example/in'), publicOnly)).toEqual({ address: '2606:4700::1111', family: 6 });
      expect(lookup).toHaveBeenCalledWith('public.example', { all: true, verbatim: true });
    } finally {
      lookup.mockRestore();
    }
  });

  it('uses a literal address as is, without resolving, and checks it', async () => {
    expect(await resolveDeliveryAddress(new URL('https://8.8.8.8/in'), publicOnly)).toEqual({ address: '8.8.8.8', family: 4 });
    expect(await resolveDeliveryAddress(new URL('https://[2606:4700::1111]/in'), publicOnly)).toEqual({ address: '2606:4700::1111', family: 6 });
    await expect(resolveDeliveryAddress(new URL('https://[::ffff:7f00:1]/in'), publicOnly)).rejects.toBeInstanceOf(EndpointRefused);
    expect(await resolveDeliveryAddress(new URL('http://127.0.0.1:8080/in'), anything)).toEqual({ address: '127.0.0.1', family: 4 });
  });

  it("rejects with the resolver's own error for a name that does not exist: a retry, not a refusal", async () => {
    const error: unknown = await resolveDeliveryAddress(new URL('https://no-such-host.invalid/in'), publicOnly).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(EndpointRefused);
  });
});
