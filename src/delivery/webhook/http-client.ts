/** The HTTP agent of webhook deliveries: pooled keep-alive connections, refusing private addresses when told to. */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent } from 'undici';
import { isBlockedAddress } from '../../domain/address-policy.js';

/**
 * The host resolved to a private or reserved address. The message, which the tenant sees in
 * tracking, does not say which: that would map the operator's internal names to addresses. The
 * address is kept for the operator's log.
 */
export class BlockedAddressError extends Error {
  readonly code = 'EBLOCKEDADDRESS';
  constructor(
    host: string,
    readonly address: string,
  ) {
    super(`${host} resolves to a non-public address; production deliveries only go to public addresses`);
    this.name = 'BlockedAddressError';
  }
}

/**
 * A DNS lookup that refuses private and reserved answers. It runs inside the connect step, on the
 * addresses the socket actually connects to, so a name that resolves differently later (DNS
 * rebinding) cannot slip past a check made earlier.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...(options as LookupOptions), all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    const blocked = addresses.find((a) => isBlockedAddress(a.address));
    if (blocked) return callback(new BlockedAddressError(hostname, blocked.address), '', 0);
    if ((options as LookupOptions).all)
      return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0] as LookupAddress;
    callback(null, first.address, first.family);
  });
};

/** True when the URL's host is an IP literal the policy refuses (literals skip the DNS lookup). */
export function blockedLiteral(url: URL): string | null {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) !== 0 && isBlockedAddress(host) ? host : null;
}

export interface WebhookAgentOptions {
  timeoutMs: number;
  /** Keep-alive connections per receiving origin. */
  connectionsPerHost: number;
  blockPrivateAddresses: boolean;
}

/** One pooled, keep-alive HTTP agent for every webhook delivery of the process. */
export function createWebhookAgent(options: WebhookAgentOptions): Agent {
  return new Agent({
    connections: options.connectionsPerHost,
    keepAliveTimeout: 30_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connect: {
      timeout: options.timeoutMs,
      ...(options.blockPrivateAddresses ? { lookup: publicOnlyLookup } : {}),
    },
  });
}
