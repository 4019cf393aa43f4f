/** Finds the batches a create call whose answer was lost may have made, by size and creation time. */
import type Anthropic from '@anthropic-ai/sdk';
import type { MessageBatch } from '@anthropic-ai/sdk/resources/messages/batches';
import type { FoundJob, SubmissionLookup } from '../provider.js';

/** Slack on both ends of the window: created_at is the provider's clock, startedAt/until are barge's. */
const CLOCK_SKEW_MS = 60_000;
/** Batches per list page (the API allows 1–1000). */
export const LIST_PAGE_SIZE = 500;
/**
 * At most this many pages are read: 5,000 batches newer than the window's start is far more than one
 * deployment creates in the minutes between a lost create and its lookup, and the list endpoint
 * counts against the batch API's rate limit.
 */
export const MAX_LIST_PAGES = 10;

/**
 * Anthropic batches carry neither an idempotency key nor metadata (field notes §3.3), so a lost
 * create can only be recognised by what is visible: a batch created within the submission's window
 * (± clock skew) with the same number of requests. Each is a `candidate`; the pipeline adopts one no
 * other batch recorded and cancels the rest. The list is newest first, so paging stops at the first
 * batch older than the window.
 */
export async function findCandidates(
  client: Anthropic,
  lookup: SubmissionLookup,
  pageSize: number = LIST_PAGE_SIZE,
  signal?: AbortSignal,
): Promise<FoundJob[]> {
  const from = lookup.startedAt - CLOCK_SKEW_MS;
  const to = lookup.until + CLOCK_SKEW_MS;
  const found: FoundJob[] = [];
  let page = await client.messages.batches.list({ limit: pageSize }, { signal });
  for (let pages = 1; ; pages++) {
    for (const batch of page.data) {
      const createdAt = Date.parse(batch.created_at);
      if (createdAt < from) return found;
      if (createdAt <= to && requestTotal(batch) === lookup.requestCount) {
        found.push({ jobId: batch.id, state: null, match: 'candidate' });
      }
    }
    if (pages >= MAX_LIST_PAGES || !page.hasNextPage()) return found;
    page = await page.getNextPage();
  }
}

/** Every request is counted in exactly one of these at any time (providers.md §1.5). */
function requestTotal(batch: MessageBatch): number {
  const c = batch.request_counts;
  return c.processing + c.succeeded + c.errored + c.canceled + c.expired;
}
