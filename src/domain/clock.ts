/** Time comes from here, so tests can move it instead of sleeping. Epoch milliseconds. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests set and advance by hand. */
export class ManualClock implements Clock {
  constructor(private current: number = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.current;
  }
  set(ms: number): void {
    this.current = ms;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

/** A day in milliseconds: UTC days, provider completion windows. */
export const DAY_MS = 86_400_000;

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
