/**
 * The result of a `records` cargo (decisions.md): `{type: "records", records: [...]}` in input
 * order; the envelope succeeds only if every record did, and otherwise says how many failed.
 */
export interface RecordOutcome {
  success: boolean;
  /** JSON text of the model message, or null. */
  responseJson: string | null;
  error: string | null;
}

/** One record's result without its id: `{"success":…,"response":…,"error":…}`. */
export function recordResultJson(outcome: RecordOutcome): string {
  return `{"success":${outcome.success},"response":${outcome.responseJson ?? 'null'},"error":${JSON.stringify(outcome.error)}}`;
}

/** Puts the record id first into a record result built by recordResultJson. */
export function withRecordId(recordId: string, resultJson: string): string {
  return `{"recordId":${JSON.stringify(recordId)},${resultJson.slice(1)}`;
}

export function assembleRecords(
  bodies: string[],
  failed: number,
): {
  success: boolean;
  responseJson: string;
  errorMessage: string | null;
} {
  return {
    success: failed === 0,
    responseJson: `{"type":"records","records":[${bodies.join(',')}]}`,
    errorMessage: failed === 0 ? null : `${failed} of ${bodies.length} records failed`,
  };
}

export const NO_RESULT_ERROR = 'errored: the provider returned no result for this request';
export const EXPIRED_ERROR = 'expired: the batch did not complete within its completion window';
/** A request the provider canceled before it ran, and one it never reached before its window closed: every provider's texts. */
export const CANCELED_ERROR = 'canceled: the batch was canceled before this request ran';
export const REQUEST_EXPIRED_ERROR =
  "expired: the request was not processed before the batch's completion window closed";
