/**
 * The delivery scheduler's slot policy, pure: no I/O, no clock of its own (every time is passed
 * in). It decides which due deliveries start now, which are leased ahead for a busy fast host,
 * which are pushed back, and which leased-ahead deliveries start as slots free.
 *
 * Three limits hold at once: the process's attempts in flight, a receiving host's (its resolved
 * address and port, or a bucket), and a project's fair share. A project may always take slots
 * up to `maxInFlight / projects with work`, and beyond it only while more than a reserve (an
 * eighth of the slots) stays free, so a project whose receivers all hang can never hold every
 * slot and a newcomer starts at once. A host whose attempts keep timing out is parked: one probe
 * at a time, its other deliveries pushed back, until it answers again.
 */

export interface SlotLimits {
  /** Attempts in flight at once in this process. */
  maxInFlight: number;
  /** Attempts in flight at once to one host. */
  maxPerHost: number;
}

/** A due delivery as the policy sees it: where it goes and whose it is. */
export interface SlotCandidate {
  id: string;
  /** The concurrency key: the channel and a host's resolved address and port, or a bucket. */
  key: string;
  projectId: string;
}

export interface SlotPlan {
  /** To lease and start at once. */
  start: SlotCandidate[];
  /** To lease and hold for a busy host that frees slots quickly. */
  ahead: SlotCandidate[];
  /** To push back to `until` (epoch ms), so the deliveries behind them come into view. */
  defer: { id: string; until: number }[];
  /** Projects none of whose candidates could be leased: the next look may skip past them. */
  blockedProjects: string[];
  /** Candidates wait for a slot that frees any moment: a finished attempt wakes the loop. */
  waitingForSlot: boolean;
  /** Candidates had a host slot but the process had none: a finished attempt wakes the loop. */
  roomExhausted: boolean;
}

/** How an attempt ended, as far as its host's health goes. */
export type HostAnswer = 'answered' | 'timeout' | 'unreachable';

/** A host whose oldest open attempt is younger than this frees a slot any moment. */
const FAST_HOST_MS = 250;
/**
 * Deliveries leased ahead for a busy fast host, in rounds of maxPerHost, topped up when half have
 * started: one claim then serves many attempts, and the host's slots never wait for a claim.
 */
export const LEASE_AHEAD_ROUNDS = 6;
/** The longest a slow host's (or a full project's) due deliveries are pushed back at a time. */
export const SLOW_DEFER_MS = 1000;
/** Timeouts in a row, with no answer between, that park a host. */
export const PARK_AFTER_TIMEOUTS = 3;
/** A parked host's due deliveries are pushed back this long while its probe runs. */
export const PARKED_DEFER_MS = 5000;
/** A parked host with no timeout for this long is forgotten (and gets full concurrency again). */
const PARK_FORGET_MS = 10 * 60_000;
/** A delivery leased ahead starts within this of its lease, or is given back. */
export const WAIT_MAX_MS = 10_000;

interface Waiting<T> {
  candidate: SlotCandidate;
  item: T;
  leasedAt: number;
}

interface Host<T> {
  /** Start times of the attempts open now, oldest first. */
  open: number[];
  waiting: Waiting<T>[];
  /** Timeouts in a row since the host last answered. */
  timeouts: number;
  lastTimeoutAt: number;
}

/** What may start now that slots freed, and what waited too long and is to be given back. */
export interface Freed<T> {
  start: { candidate: SlotCandidate; item: T }[];
  stale: T[];
}

/**
 * The slots of one process. `T` is whatever the caller holds for a leased delivery; the policy
 * only stores and returns it. Times named `at` are monotonic milliseconds (durations), `now` is
 * epoch milliseconds (due times in the database).
 */
export class DeliverySlots<T> {
  private readonly hosts = new Map<string, Host<T>>();
  /** Start times of each project's open attempts. */
  private readonly projects = new Map<string, number[]>();
  private inFlight = 0;
  private waitingCount = 0;

  constructor(private readonly limits: SlotLimits) {}

  /** Attempts open and deliveries leased ahead, now. */
  get counts(): { inFlight: number; waiting: number; hosts: number; parked: number } {
    let parked = 0;
    for (const host of this.hosts.values()) if (this.parked(host)) parked++;
    return { inFlight: this.inFlight, waiting: this.waitingCount, hosts: this.hosts.size, parked };
  }

  /** True when no attempt may start at all. */
  get full(): boolean {
    return this.inFlight >= this.limits.maxInFlight;
  }

  /** Decides for due candidates, oldest first; changes nothing until they are admitted. */
  plan(candidates: readonly SlotCandidate[], now: number, at: number): SlotPlan {
    const { maxInFlight, maxPerHost } = this.limits;
    const plan: SlotPlan = {
      start: [],
      ahead: [],
      defer: [],
      blockedProjects: [],
      waitingForSlot: false,
      roomExhausted: false,
    };
    const hostPlanned = new Map<string, number>();
    const projectPlanned = new Map<string, number>();
    const leasedFor = new Set<string>();
    let starts = 0;
    let aheadRoom = maxInFlight - this.waitingCount;
    const share = this.share(new Set([...this.projects.keys(), ...candidates.map((c) => c.projectId)]).size);
    const lease = (c: SlotCandidate, into: SlotCandidate[]) => {
      into.push(c);
      hostPlanned.set(c.key, (hostPlanned.get(c.key) ?? 0) + 1);
      leasedFor.add(c.projectId);
      if (into === plan.start) {
        starts++;
        projectPlanned.set(c.projectId, (projectPlanned.get(c.projectId) ?? 0) + 1);
      }
    };

    /** Decides for one candidate; false when only its project's share stood in the way. */
    const decide = (c: SlotCandidate, beyondShare: boolean): boolean => {
      const host = this.hosts.get(c.key);
      const open = host?.open.length ?? 0;
      const hostTaken = open + (host?.waiting.length ?? 0) + (hostPlanned.get(c.key) ?? 0);
      const projectTaken = (this.projects.get(c.projectId)?.length ?? 0) + (projectPlanned.get(c.projectId) ?? 0);
      const projectRoom =
        projectTaken < share || (beyondShare && this.aboveShareMayTake(maxInFlight - this.inFlight - starts));
      const processRoom = this.inFlight + starts < maxInFlight;

      if (host && this.parked(host, at)) {
        // One probe at a time; the rest waits out the probe.
        if (hostTaken === 0 && projectRoom && processRoom) lease(c, plan.start);
        else if (hostTaken === 0 && !projectRoom && !beyondShare) return false;
        else plan.defer.push({ id: c.id, until: now + PARKED_DEFER_MS });
        return true;
      }
      if (hostTaken < maxPerHost && projectRoom) {
        if (processRoom) lease(c, plan.start);
        else plan.roomExhausted = true;
        return true;
      }
      if (!projectRoom && !beyondShare) return false;
      // The project is at its share, or the host at its limit: whichever frees a slot later decides.
      const hostWaited = hostTaken >= maxPerHost ? waitedOf(host?.open, at) : 0;
      const projectWaited = projectRoom ? 0 : waitedOf(this.projects.get(c.projectId), at);
      const waited = Math.max(hostWaited, projectWaited);
      if (waited >= FAST_HOST_MS) {
        plan.defer.push({ id: c.id, until: now + Math.min(SLOW_DEFER_MS, Math.ceil(waited)) });
      } else if (
        projectRoom &&
        open > 0 &&
        (host?.waiting.length ?? 0) <= this.refillBelow() &&
        hostTaken < (1 + LEASE_AHEAD_ROUNDS) * maxPerHost &&
        aheadRoom > 0
      ) {
        // A busy host that turns requests over quickly, and half of what it had leased ahead has
        // started: lease ahead again, a batch at once.
        aheadRoom--;
        lease(c, plan.ahead);
      } else plan.waitingForSlot = true;
      return true;
    };

    // Every project up to its share first, oldest first; then, with what is left, beyond it.
    const beyond = candidates.filter((c) => !decide(c, false));
    for (const c of beyond) decide(c, true);
    plan.blockedProjects = [...new Set(candidates.map((c) => c.projectId))].filter((p) => !leasedFor.has(p));
    return plan;
  }

  /**
   * A leased delivery: true when it starts now (its slot is taken), false when it waits for a
   * slot of its host (a finished attempt starts it, or it goes stale).
   */
  admit(candidate: SlotCandidate, item: T, at: number): boolean {
    const host = this.host(candidate.key);
    if (this.mayStart(candidate, host, at)) {
      this.open(candidate, host, at);
      return true;
    }
    host.waiting.push({ candidate, item, leasedAt: at });
    this.waitingCount++;
    return false;
  }

  /**
   * An attempt is over (its request answered, failed or timed out; recording comes after): its
   * slots are free, the host's health is updated, and deliveries leased ahead may start.
   */
  finish(candidate: SlotCandidate, startedAt: number, answer: HostAnswer, at: number): Freed<T> {
    const host = this.hosts.get(candidate.key);
    if (host) {
      remove(host.open, startedAt);
      if (answer === 'timeout') {
        host.timeouts++;
        host.lastTimeoutAt = at;
      } else if (answer === 'answered') host.timeouts = 0;
    }
    const project = this.projects.get(candidate.projectId);
    if (project) {
      remove(project, startedAt);
      if (project.length === 0) this.projects.delete(candidate.projectId);
    }
    this.inFlight--;
    return this.freed(at);
  }

  /** Deliveries leased ahead that may start now, and those that waited too long. */
  freed(at: number): Freed<T> {
    const out: Freed<T> = { start: [], stale: [] };
    for (const [key, host] of this.hosts) {
      while (host.waiting.length > 0) {
        const next = host.waiting[0] as Waiting<T>;
        if (at - next.leasedAt > WAIT_MAX_MS) out.stale.push(next.item);
        else if (this.mayStart(next.candidate, host, at)) {
          this.open(next.candidate, host, at);
          out.start.push({ candidate: next.candidate, item: next.item });
        } else break;
        host.waiting.shift();
        this.waitingCount--;
      }
      if (host.open.length === 0 && host.waiting.length === 0 && !this.parked(host, at) && host.timeouts === 0) {
        this.hosts.delete(key);
      }
    }
    return out;
  }

  /** The host has no more than half of its lease-ahead waiting: a claim may top it up. */
  wantsMore(key: string): boolean {
    return (this.hosts.get(key)?.waiting.length ?? 0) <= this.refillBelow();
  }

  /** Every delivery leased ahead, taken out (stopping: their leases are given back). */
  takeWaiting(): T[] {
    const all: T[] = [];
    for (const host of this.hosts.values()) {
      for (const w of host.waiting.splice(0)) all.push(w.item);
    }
    this.waitingCount = 0;
    return all;
  }

  /** A fast host is leased ahead for again once no more than this waits for it. */
  private refillBelow(): number {
    return (LEASE_AHEAD_ROUNDS / 2) * this.limits.maxPerHost;
  }

  /**
   * A project's share of the slots: an equal part among the projects with work, never more than
   * all but the reserve, so one project alone leaves it free for a newcomer.
   */
  private share(activeProjects: number): number {
    const { maxInFlight } = this.limits;
    return Math.max(1, Math.min(Math.floor(maxInFlight / Math.max(1, activeProjects)), maxInFlight - this.reserve()));
  }

  /** An eighth of the slots, kept free for projects below their share. */
  private reserve(): number {
    return Math.ceil(this.limits.maxInFlight / 8);
  }

  /** Above its share, a project may take a slot only while more than the reserve stays free. */
  private aboveShareMayTake(free: number): boolean {
    return free > this.reserve();
  }

  private mayStart(candidate: SlotCandidate, host: Host<T>, at: number): boolean {
    if (this.inFlight >= this.limits.maxInFlight) return false;
    const hostLimit = this.parked(host, at) ? 1 : this.limits.maxPerHost;
    if (host.open.length >= hostLimit) return false;
    const active = this.projects.size + (this.projects.has(candidate.projectId) ? 0 : 1);
    const taken = this.projects.get(candidate.projectId)?.length ?? 0;
    return taken < this.share(active) || this.aboveShareMayTake(this.limits.maxInFlight - this.inFlight);
  }

  private parked(host: Host<T>, at?: number): boolean {
    if (host.timeouts < PARK_AFTER_TIMEOUTS) return false;
    if (at !== undefined && at - host.lastTimeoutAt > PARK_FORGET_MS) {
      host.timeouts = 0;
      return false;
    }
    return true;
  }

  private open(candidate: SlotCandidate, host: Host<T>, at: number): void {
    host.open.push(at);
    let project = this.projects.get(candidate.projectId);
    if (!project) {
      project = [];
      this.projects.set(candidate.projectId, project);
    }
    project.push(at);
    this.inFlight++;
  }

  private host(key: string): Host<T> {
    let host = this.hosts.get(key);
    if (!host) {
      host = { open: [], waiting: [], timeouts: 0, lastTimeoutAt: 0 };
      this.hosts.set(key, host);
    }
    return host;
  }
}

/** How long the oldest of these open attempts has run (0 when none is open). */
function waitedOf(open: readonly number[] | undefined, at: number): number {
  const oldest = open?.[0];
  return oldest === undefined ? 0 : at - oldest;
}

function remove(list: number[], value: number): void {
  const i = list.indexOf(value);
  if (i >= 0) list.splice(i, 1);
}
