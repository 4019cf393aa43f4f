/**
 * The delivered object (interface document 6.3). Built from the stored JSON texts without parsing
 * them again, so every attempt writes the same bytes and a response of any size is written whole.
 */
export interface DeliveredResult {
  cargoId: string;
  success: boolean;
  /** JSON text of the stored response, or null. */
  responseJson: string | null;
  errorMessage: string | null;
  /** JSON text of the submitted metadata, or null. */
  metadataJson: string | null;
  /** Where the stored result can be fetched (GET /cargo/{id}/result). */
  resultUrl: string;
}

/**
 * `{cargo_id, success, response, error_message?, response_truncated, result_url, metadata}`:
 * `error_message` only when the cargo failed; `response_truncated` is always false, since object
 * delivery never truncates.
 */
export function deliveredObjectJson(result: DeliveredResult): string {
  return (
    `{"cargo_id":${JSON.stringify(result.cargoId)}` +
    `,"success":${result.success}` +
    `,"response":${result.responseJson ?? 'null'}` +
    (result.success ? '' : `,"error_message":${JSON.stringify(result.errorMessage ?? 'failed')}`) +
    ',"response_truncated":false' +
    `,"result_url":${JSON.stringify(result.resultUrl)}` +
    `,"metadata":${result.metadataJson ?? 'null'}}`
  );
}

/** The user metadata of a delivered object (sent as `x-amz-meta-svc-cargo-id` / `-svc-success`). */
export function deliveredObjectMetadata(cargoId: string, success: boolean): Record<string, string> {
  return { 'svc-cargo-id': cargoId, 'svc-success': success ? 'true' : 'false' };
}

/** The capability check's object: consumers must skip it. */
export const VERIFICATION_BODY = '{"convoy_verification":true}';

export function resultUrl(publicBaseUrl: string, cargoId: string): string {
  return `${publicBaseUrl}/cargo/${encodeURIComponent(cargoId)}/result`;
}
