/** Failed authentications counted per client address, so an address that keeps failing is refused before any lookup. */
import { isIPv6 } from 'node:net';
import { rememberBounded } from '../bounded-map.js';

/**
 * Failed authentications per client address, counted in memory before any key lookup. A request
 * with a missing, malformed, unknown, deactivated or expired key costs a database query (or at least
 * a hash) and tells the caller nothing useful, so an address that keeps failing is refused (429)
 * before the lookup once it has failed `max` times in the current window. Keys this process has
 * seen valid are still let through (auth.ts), so a client sharing an address with a prober is held
 * up only until its key is cached.
 *
 * Bounded memory: at most `maxAddresses` entries (about 100 bytes each); past that the oldest
 * entry goes, which can only forgive an address, never block one wrongly. No database write: each
 * process counts on its own, so N API processes allow up to N × max failures per address per window.
 * IPv6 addresses count per /64, the block one host usually holds.
 */
export class AuthFailureLimiter {
  private readonly windows = new Map<string, { start: number; failures: number }>();

  constructor(
    private readonly options: { max: number; windowMs: number; maxAddresses?: number },
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Seconds until the address may try again, or null when it is not over its limit. */
  blockedFor(address: string): number | null {
    const entry = this.current(clientKey(address));
    if (!entry || entry.failures < this.options.max) return null;
    return Math.max(1, Math.ceil((entry.start + this.options.windowMs - this.now()) / 1000));
  }

  fail(address: string): void {
    const key = clientKey(address);
    const entry = this.current(key);
    if (entry) {
      entry.failures++;
      return;
    }
    rememberBounded(this.windows, key, { start: this.now(), failures: 1 }, this.options.maxAddresses ?? 100_000);
  }

  private current(key: string): { start: number; failures: number } | undefined {
    const entry = this.windows.get(key);
    if (entry && this.now() - entry.start >= this.options.windowMs) {
      this.windows.delete(key);
      return undefined;
    }
    return entry;
  }
}

/** The address itself, or for IPv6 its /64 (the first four groups of the expanded form). */
function clientKey(address: string): string {
  if (!isIPv6(address)) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return mapped[1];
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::')
    ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}
