/**
 * The typical submission of bench:submit and bench:pipeline: a system prompt, a few hundred bytes
 * of user text and some metadata, for svc-mock.
 */

const SYSTEM =
  'You are a support assistant for an online bookshop. Answer in two or three sentences, in the language of the question, and never invent order details.';
const USER_TEXT =
  'Hello, I ordered three paperbacks last Tuesday (order 48213) and the tracking page has said "label created" ever since. ' +
  'The confirmation email promised delivery within five working days and I need one of the books for a course that starts on Monday. ' +
  'Could you tell me whether the parcel has actually left the warehouse, and if not, whether I can cancel just that one title and pick it up in a shop instead? Thanks, Maria';
export const METADATA = {
  ticket: 'T-48213',
  customer_id: 'cus_7f3a9c21',
  locale: 'en-GB',
  queue: 'support-tier1',
  attempt: 1,
};

/** The request's parameters, as the service stores them (the model aside). */
export const MODEL_INPUT = {
  max_tokens: 512,
  temperature: 0.2,
  system: SYSTEM,
  messages: [{ role: 'user', content: USER_TEXT }],
};

/** The POST /cargo/load body; with no callback URL, the results wait in the mailbox. */
export function submissionBody(callbackUrl: string | null): string {
  return JSON.stringify({
    params: { model: 'svc-mock', ...MODEL_INPUT },
    ...(callbackUrl === null ? {} : { callback_url: callbackUrl }),
    metadata: METADATA,
  });
}
