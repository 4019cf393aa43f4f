/** The mailbox's result envelope (GET /cargo/{id}/result) as the HTTP and pipeline tests expect it. */

/** Its keys, in the order the API sends them. */
export const RESULT_ENVELOPE_KEYS = ['cargo_id', 'success', 'response', 'error_message', 'created_at', 'metadata'];
