/** How the dashboard writes times, numbers and money: every time in UTC, said so. */

/** `2026-11-22 10:00:31 UTC`; seconds only when asked. */
export function utc(iso: string | null | undefined, options: { seconds?: boolean } = {}): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const text = date.toISOString().replace('T', ' ');
  return `${options.seconds ? text.slice(0, 19) : text.slice(0, 16)} UTC`;
}

/** `2026-11-22 10:00:31.250 UTC`: a timeline's precision. */
export function utcPrecise(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : `${date.toISOString().replace('T', ' ').slice(0, 23)} UTC`;
}

/** "in 3 minutes", "2 hours ago": beside a UTC time, never instead of it. */
export function relative(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return '';
  const ms = new Date(iso).getTime() - now;
  const abs = Math.abs(ms);
  const units: [number, string][] = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1000, 'second'],
  ];
  for (const [size, name] of units) {
    if (abs >= size || name === 'second') {
      const n = Math.max(1, Math.round(abs / size));
      const unit = `${n} ${name}${n === 1 ? '' : 's'}`;
      return ms >= 0 ? `in ${unit}` : `${unit} ago`;
    }
  }
  return '';
}

const integer = new Intl.NumberFormat('en-US');
export const count = (n: number) => integer.format(n);

/** Dollars with cents, and finer below a cent (batch prices make small amounts). */
export function usd(n: number | null | undefined): string {
  if (n === null || n === undefined) return 'unpriced';
  const digits = n !== 0 && Math.abs(n) < 0.01 ? 4 : 2;
  return `$${n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })}`;
}

export function bytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/** YYYY-MM-DD of a time in UTC. */
export const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export const DAY_MS = 86_400_000;

/** Every UTC day from `from` to `to`, both included (YYYY-MM-DD). */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  const end = Date.parse(`${to}T00:00:00Z`);
  for (let t = Date.parse(`${from}T00:00:00Z`); t <= end && days.length < 1000; t += DAY_MS) days.push(utcDay(t));
  return days;
}
