/**
 * The concurrency key of a webhook receiver: the address its host name resolves to, and the port.
 * Names are free (wildcard DNS gives a tenant any number), addresses are not: eight names that
 * resolve to one server share that server's per-host limit. The SSRF check is not made here; it
 * stays on the address the socket connects to (http-client.ts).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { rememberBounded } from '../../bounded-map.js';

/** Every address a host name resolves to (the system resolver by default; tests inject one). */
export type AddressLookup = (hostname: string) => Promise<string[]>;

const systemLookup: AddressLookup = async (hostname) =>
  (await dnsLookup(hostname, { all: true })).map((a) => a.address);

/** A resolved name is kept this long, like a short DNS TTL. */
const TTL_MS = 30_000;
/** Names kept at most; the oldest go first. */
const MAX_NAMES = 10_000;

export class HostAddresses {
  private readonly names = new Map<string, { expires: number; address: Promise<string | null> }>();
  /** Callback URLs taken apart, by URL: every due delivery's key is asked for at every claim. */
  private readonly urls = new Map<string, { host: string; port: string } | null>();

  constructor(
    private readonly lookup: AddressLookup = systemLookup,
    /** Monotonic milliseconds, for the cache's expiry. */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** `address:port` of a callback URL (`name:host:port` when the name does not resolve; '' when no URL). */
  async key(callbackUrl: string | null): Promise<string> {
    const target = this.hostAndPort(callbackUrl ?? '');
    if (target === null) return '';
    const { host, port } = target;
    if (isIP(host) !== 0) return `${host}:${port}`;
    const address = await this.resolve(host);
    return address === null ? `name:${host}:${port}` : `${address}:${port}`;
  }

  private hostAndPort(callbackUrl: string): { host: string; port: string } | null {
    let target = this.urls.get(callbackUrl);
    if (target !== undefined) return target;
    try {
      const url = new URL(callbackUrl);
      target = {
        host: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || (url.protocol === 'https:' ? '443' : '80'),
      };
    } catch {
      target = null;
    }
    rememberBounded(this.urls, callbackUrl, target, MAX_NAMES);
    return target;
  }

  private resolve(host: string): Promise<string | null> {
    const now = this.now();
    const known = this.names.get(host);
    if (known && known.expires > now) return known.address;
    // The lowest address of the answer, so one name keys the same however the resolver orders it.
    const address = this.lookup(host).then(
      (all) => [...all].sort()[0] ?? null,
      () => null,
    );
    rememberBounded(this.names, host, { expires: now + TTL_MS, address }, MAX_NAMES);
    return address;
  }
}
