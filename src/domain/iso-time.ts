/**
 * ISO 8601 times as people type them (an API key's expiry, a recovery's window): a date, or a
 * date-time to minutes, seconds or a fraction (T or a space), with or without a zone.
 */

// YYYY-MM-DD, optionally a time (T or a space) to minutes, seconds or a fraction, and a zone.
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|([+-])(\d{2}):?(\d{2}))?)?$/;

/**
 * Epoch milliseconds of an ISO 8601 date or date-time that names a real calendar day (2027-02-30
 * is refused, not rolled over to March), or null. Without a zone it is UTC, date-times included:
 * the result never depends on the server's time zone. A date alone is its midnight; a time of
 * 24:00 is the midnight that ends the day.
 */
export function parseIsoTime(raw: string): number | null {
  const match = ISO_8601.exec(raw);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const millis = Number((match[7] ?? '').slice(0, 3).padEnd(3, '0'));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  const endOfDay = hour === 24 && minute === 0 && second === 0 && /^0*$/.test(match[7] ?? '');
  if ((hour > 23 && !endOfDay) || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (match[9] !== undefined) {
    const [offsetHours, offsetMins] = [Number(match[10]), Number(match[11])];
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (match[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second, millis));
  date.setUTCFullYear(year, month - 1, day);
  if (endOfDay) date.setUTCDate(date.getUTCDate() + 1);
  return date.getTime() - offsetMinutes * 60_000;
}

function daysInMonth(year: number, month: number): number {
  const date = new Date(Date.UTC(2000, month, 0));
  date.setUTCFullYear(year, month, 0);
  return date.getUTCDate();
}
