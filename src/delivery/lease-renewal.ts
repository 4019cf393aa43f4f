/**
 * Keeps the leases of the deliveries this worker holds (attempts in flight, deliveries leased
 * ahead) alive: a delivery lease is BARGE_LEASE_MS like every other lease, renewed every third of
 * it while held, so an attempt may run longer than the lease, and a worker killed mid-attempt lets
 * its deliveries fall due again one lease later (not after the longest possible attempt).
 */
import type { Clock } from '../domain/clock.js';
import type { Logger } from '../ports.js';
import type { Database } from '../store/database.js';
import { extendDeliveryLeases } from '../store/deliveries/claim.js';
import { isDatabaseUnavailable } from '../store/outage.js';

export interface LeaseRenewalDeps {
  database: Database;
  clock: Clock;
  workerId: string;
  leaseMs: number;
  log: Logger;
}

export class LeaseRenewal {
  private readonly held = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private renewing: Promise<void> | null = null;

  constructor(private readonly deps: LeaseRenewalDeps) {}

  hold(ids: readonly string[]): void {
    for (const id of ids) this.held.add(id);
    if (this.timer === null && this.held.size > 0) {
      this.timer = setInterval(() => void this.renew(), Math.max(1, Math.floor(this.deps.leaseMs / 3)));
      this.timer.unref();
    }
  }

  /** This worker leased the delivery and has not recorded it or given it back. */
  holds(id: string): boolean {
    return this.held.has(id);
  }

  /** The delivery is recorded or given back: its lease needs no renewal. */
  release(ids: readonly string[]): void {
    for (const id of ids) this.held.delete(id);
    if (this.held.size === 0) this.stopTimer();
  }

  /** Stops renewing (the leases left are given back by the caller). */
  async stop(): Promise<void> {
    this.held.clear();
    this.stopTimer();
    await this.renewing;
  }

  private stopTimer(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Extends every lease held now (the timer's work; also at once, for a lease that lapsed). */
  renew(): Promise<void> {
    if (this.renewing !== null) return this.renewing;
    if (this.held.size === 0) return Promise.resolve();
    const { database, clock, workerId, leaseMs, log } = this.deps;
    this.renewing = extendDeliveryLeases(database, workerId, [...this.held], clock.now() + leaseMs)
      // An outage is reported once by the store; the next renewal tries again.
      .catch((err: unknown) => {
        if (!isDatabaseUnavailable(err)) log.error({ err }, 'could not renew delivery leases');
      })
      .finally(() => {
        this.renewing = null;
      });
    return this.renewing;
  }
}
