/**
 * Bedrock record ids. Older Bedrock text documents `recordId` as an "11 character alphanumeric
 * string" (providers.md §2.5), which barge's custom ids (up to 64 characters with `_`) are not. A
 * request's record id is therefore its position in the batch as 11 digits; the batch's requests
 * are read in one fixed order (batchRequests), so the position leads back to the custom id.
 */
const DIGITS = 11;
const RECORD_ID = /^\d{11}$/;

export function recordIdOf(position: number): string {
  return String(position).padStart(DIGITS, '0');
}

/** The position a record id stands for, or null when it is not one of barge's. */
export function positionOf(recordId: unknown): number | null {
  return typeof recordId === 'string' && RECORD_ID.test(recordId) ? Number(recordId) : null;
}
