/**
 * Spend budgets (decisions.md, "Model policy and spend budgets"): the estimate a cargo reserves at
 * submit, the budgets a project has, and the periods they count. Amounts are integers of nano-USD
 * (1e-9 USD): sums and comparisons are exact, so a budget is reached exactly, and a single token
 * at the cheapest prices is still worth several units.
 */
import { DAY_MS } from './clock.js';
import type { ModelPrices } from './model-catalog.js';

export const NANO_PER_USD = 1e9;

export const usdToNano = (usd: number): number => Math.round(usd * NANO_PER_USD);
export const nanoToUsd = (nano: number): number => Math.round(nano) / NANO_PER_USD;

/** Input tokens counted for each image or document. */
const MEDIA_TOKENS = 1000;
/** Bytes counted as one input token. */
const BYTES_PER_TOKEN = 4;

/** Fields that name or tag a part of a request, not text the model reads. */
const NOT_TEXT = new Set(['type', 'role', 'id', 'tool_use_id', 'cache_control', 'media_type']);

/**
 * The input tokens a request is estimated at: the UTF-8 bytes of every text in it (system,
 * messages, tool definitions and tool inputs as JSON) ÷ 4 rounded up, plus 1,000 for each image
 * or document.
 */
export function estimateInputTokens(modelInput: Record<string, unknown>): number {
  let bytes = 0;
  let media = 0;
  const walk = (value: unknown): void => {
    if (typeof value === 'string') bytes += Buffer.byteLength(value);
    else if (Array.isArray(value)) for (const item of value) walk(item);
    else if (typeof value === 'object' && value !== null) {
      const part = value as Record<string, unknown>;
      if (part.type === 'image' || part.type === 'document') {
        media++;
        return;
      }
      for (const [key, inner] of Object.entries(part)) {
        if (NOT_TEXT.has(key)) continue;
        // A tool's definition and a tool call's input are read as JSON.
        if (key === 'input' || key === 'input_schema') bytes += Buffer.byteLength(JSON.stringify(inner));
        else walk(inner);
      }
    }
  };
  walk(modelInput.system);
  walk(modelInput.messages);
  if (modelInput.tools !== undefined) bytes += Buffer.byteLength(JSON.stringify(modelInput.tools));
  return Math.ceil(bytes / BYTES_PER_TOKEN) + MEDIA_TOKENS * media;
}

/**
 * What a cargo reserves: each of its requests' estimated input at the batch input price, and its
 * max_tokens at the batch output price; rounded up to a whole nano-USD.
 */
export function estimateNano(
  prices: ModelPrices,
  requests: readonly { modelInput: Record<string, unknown> & { max_tokens: number } }[],
): number {
  let input = 0;
  let output = 0;
  for (const { modelInput } of requests) {
    input += estimateInputTokens(modelInput);
    output += modelInput.max_tokens;
  }
  // Prices are USD per million tokens: nano-USD per token is price × 1,000.
  return Math.ceil(input * prices.batch_input * 1000 + output * prices.batch_output * 1000);
}

export type BudgetPeriod = 'month' | 'day';

/** A project's spend setting as stored: the default, none, or its own budgets (USD). */
export interface SpendSetting {
  mode: 'default' | 'none' | 'own';
  monthlyUsd: number | null;
  dailyUsd: number | null;
}

/** The budgets that apply, in nano-USD (null: none for that period). */
export interface Budgets {
  month: number | null;
  day: number | null;
}

export function budgetsOf(setting: SpendSetting, defaultMonthlyUsd: number | null): Budgets {
  if (setting.mode === 'none') return { month: null, day: null };
  if (setting.mode === 'default') {
    return { month: defaultMonthlyUsd === null ? null : usdToNano(defaultMonthlyUsd), day: null };
  }
  return {
    month: setting.monthlyUsd === null ? null : usdToNano(setting.monthlyUsd),
    day: setting.dailyUsd === null ? null : usdToNano(setting.dailyUsd),
  };
}

export const hasBudget = (budgets: Budgets): boolean => budgets.month !== null || budgets.day !== null;

/** The start of the UTC day and of the UTC calendar month `at` falls in (epoch ms). */
export function periodStarts(at: number): { day: number; month: number } {
  const date = new Date(at);
  return { day: at - (at % DAY_MS), month: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) };
}

/** A project's spend as counted: reserved by unfinished cargo, and spent this month and today (nano-USD). */
export interface Spend {
  reserved: number;
  month: number;
  day: number;
  /** The period starts these sums are for. */
  monthStart: number;
  dayStart: number;
}

/** The first budget `estimate` more would pass, with what it counts; null when every one has room. */
export function budgetPassed(
  budgets: Budgets,
  spend: Spend,
  estimate: number,
): { period: BudgetPeriod; budget: number; spent: number; reserved: number } | null {
  for (const period of ['month', 'day'] as const) {
    const budget = budgets[period];
    if (budget === null) continue;
    const spent = spend[period];
    if (spent + spend.reserved + estimate > budget) return { period, budget, spent, reserved: spend.reserved };
  }
  return null;
}

/** The thresholds of a budget that alert, in percent. */
export const ALERT_THRESHOLDS = [50, 80, 100] as const;
