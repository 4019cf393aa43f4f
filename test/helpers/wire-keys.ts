/** The key orders of what barge sends, as the tests pin them (the interface document's field order). */

/** The mailbox's result envelope (GET /cargo/{id}/result). */
export const RESULT_ENVELOPE_KEYS = ['cargo_id', 'success', 'response', 'error_message', 'created_at', 'metadata'];

/** A webhook's JSON body. */
export const WEBHOOK_PAYLOAD_KEYS = ['cargo_id', 'success', 'response', 'error', 'error_message', 'metadata'];
