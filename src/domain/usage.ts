/**
 * Usage and cost (decisions.md, "Usage and cost"): the tokens a result used, what they cost at a
 * model's batch prices and at its real-time ("standard") prices, and the UTC days a usage report
 * covers. Pure: the collector, the store query and GET /usage all count with these.
 */
import { DAY_MS } from './clock.js';
import type { CargoModel, ModelPrices } from './model-catalog.js';

/** The prices a cargo's results are costed at (model-catalog.ts, pricesForCargo), or null when none are known. */
export type PriceLookup = (cargo: CargoModel) => ModelPrices | null;

/**
 * What a response used, as the Messages API counts it: `input_tokens` are the input tokens that
 * were neither written to nor read from the prompt cache; thinking tokens are output tokens.
 */
export interface Tokens {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens written to the prompt cache (`cache_creation_input_tokens`), 1-hour writes included. */
  cacheCreationTokens: number;
  /** Of those, the 1-hour writes (`cache_creation.ephemeral_1h_input_tokens`); the rest are priced as 5-minute writes. */
  cacheCreation1hTokens: number;
  /** Input tokens read from the prompt cache (`cache_read_input_tokens`). */
  cacheReadTokens: number;
}

export const NO_TOKENS: Tokens = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cacheCreationTokens: 0,
  cacheCreation1hTokens: 0,
  cacheReadTokens: 0,
});

/** What a stored result used: tokens, and their cost (null: no price was known). */
export interface Usage extends Tokens {
  /** At the batch prices: what the result cost. */
  costUsd: number | null;
  /** The same tokens at the real-time prices. */
  standardCostUsd: number | null;
}

/**
 * The tokens of a model message's `usage` (every provider's response has the Messages API's shape
 * once translated): `input_tokens`, `output_tokens`, `cache_creation_input_tokens` (with its split
 * `cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens` where the provider
 * gives one) and `cache_read_input_tokens`. Anything else counts 0, so a message without usage
 * never fails a collection.
 */
export function usageOfMessage(message: unknown): Tokens {
  const usage = isObject(message) ? message.usage : undefined;
  if (!isObject(usage)) return NO_TOKENS;
  const split = isObject(usage.cache_creation) ? usage.cache_creation : {};
  const oneHour = count(split.ephemeral_1h_input_tokens);
  // The total as reported; a provider that gives only the split has written their sum.
  const created =
    usage.cache_creation_input_tokens === undefined || usage.cache_creation_input_tokens === null
      ? count(split.ephemeral_5m_input_tokens) + oneHour
      : count(usage.cache_creation_input_tokens);
  return {
    inputTokens: count(usage.input_tokens),
    outputTokens: count(usage.output_tokens),
    cacheCreationTokens: created,
    cacheCreation1hTokens: Math.min(oneHour, created),
    cacheReadTokens: count(usage.cache_read_input_tokens),
  };
}

export function addTokens(a: Tokens, b: Tokens): Tokens {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheCreationTokens: a.cacheCreationTokens + b.cacheCreationTokens,
    cacheCreation1hTokens: a.cacheCreation1hTokens + b.cacheCreation1hTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
  };
}

/** The cost of `tokens` at the batch and at the real-time prices; null costs when no prices are known. */
export function costOf(
  prices: ModelPrices | null,
  tokens: Tokens,
): { costUsd: number | null; standardCostUsd: number | null } {
  const { costUsd, standardCostUsd } = usageOf(prices, tokens);
  return { costUsd, standardCostUsd };
}

/**
 * The tokens with their cost. One object a result, nothing built on the way: it runs for every
 * cargo a collection stores.
 */
export function usageOf(prices: ModelPrices | null, tokens: Tokens): Usage {
  const { inputTokens, outputTokens, cacheCreationTokens, cacheCreation1hTokens, cacheReadTokens } = tokens;
  if (prices === null) {
    return {
      inputTokens,
      outputTokens,
      cacheCreationTokens,
      cacheCreation1hTokens,
      cacheReadTokens,
      costUsd: null,
      standardCostUsd: null,
    };
  }
  // A write not known to be a 1-hour one is a 5-minute one.
  const fiveMinuteWrites = cacheCreationTokens - cacheCreation1hTokens;
  return {
    inputTokens,
    outputTokens,
    cacheCreationTokens,
    cacheCreation1hTokens,
    cacheReadTokens,
    costUsd:
      (inputTokens * prices.batch_input +
        outputTokens * prices.batch_output +
        fiveMinuteWrites * prices.batch_cache_write +
        cacheCreation1hTokens * prices.batch_cache_write_1h +
        cacheReadTokens * prices.batch_cache_read) /
      1_000_000,
    standardCostUsd:
      (inputTokens * prices.input +
        outputTokens * prices.output +
        fiveMinuteWrites * prices.cache_write +
        cacheCreation1hTokens * prices.cache_write_1h +
        cacheReadTokens * prices.cache_read) /
      1_000_000,
  };
}

/**
 * A sum of dollars as reported: rounded to 1e-10 USD, which removes binary noise from the sums
 * (0.1 + 0.2) and keeps the cost of a single token at the cheapest prices (about 1e-8 USD).
 */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e10) / 1e10;
}

/**
 * The longest range one usage report covers, in days: the work of a request stays bounded (it
 * reads every result of the range). A year and a day, so any calendar year fits.
 */
export const MAX_USAGE_DAYS = 366;

/** The days a report covers when none are given: the last 30, today (UTC) included. */
const DEFAULT_USAGE_DAYS = 30;

/** A UTC day `YYYY-MM-DD` as the number of days since 1970-01-01, or null when it is not one. */
export function parseUtcDay(text: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const ms = Date.UTC(year, month - 1, day);
  const date = new Date(ms);
  // Date.UTC rolls 2026-02-30 over into March: a day that does not exist comes back different.
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
  return ms / DAY_MS;
}

/** A day number (days since 1970-01-01) as `YYYY-MM-DD`. */
export function formatUtcDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** The UTC day an epoch-millisecond time falls on, as a day number. */
function utcDayOf(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** The days a report covers, as day numbers, both included. */
export interface UsageRange {
  fromDay: number;
  toDay: number;
}

/** A range refused: the parameter at fault (`from` or `to`), the value given, and what is wrong. */
export interface UsageRangeProblem {
  name: 'from' | 'to';
  value: string;
  problem: string;
}

/**
 * The days of a usage report from its `from` and `to` (UTC days, both included): `to` defaults to
 * today, `from` to the 30th day up to `to`. Refuses what is not a day, `from` after `to`, and
 * ranges longer than MAX_USAGE_DAYS.
 */
export function usageRange(input: { from?: string; to?: string }, now: number): UsageRange | UsageRangeProblem {
  const notADay = (name: 'from' | 'to', value: string): UsageRangeProblem => ({
    name,
    value,
    problem: 'use a UTC day as YYYY-MM-DD',
  });
  const toDay = input.to === undefined ? utcDayOf(now) : parseUtcDay(input.to);
  if (toDay === null) return notADay('to', input.to ?? '');
  const fromDay = input.from === undefined ? toDay - (DEFAULT_USAGE_DAYS - 1) : parseUtcDay(input.from);
  if (fromDay === null) return notADay('from', input.from ?? '');
  const from = input.from ?? formatUtcDay(fromDay);
  if (fromDay > toDay) return { name: 'from', value: from, problem: `is after to (${formatUtcDay(toDay)})` };
  const days = toDay - fromDay + 1;
  if (days > MAX_USAGE_DAYS) {
    return {
      name: 'from',
      value: from,
      problem: `the range to ${formatUtcDay(toDay)} is ${days} days; one report covers at most ${MAX_USAGE_DAYS}`,
    };
  }
  return { fromDay, toDay };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}
