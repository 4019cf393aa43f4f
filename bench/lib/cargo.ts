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

/**
 * The kinds of request bench:submit compares per byte: the typical text request; a 20 KB system
 * prefix marked for prompt caching with a forced tool (a classification over a long instruction);
 * a 1 MB base64 image (an extraction from a scan).
 */
export type BodyKind = 'text' | 'cached' | 'image';

/** 20 KB of instruction: the shared prefix a batch of classifications caches. */
const LONG_INSTRUCTION = `${SYSTEM} `.repeat(Math.ceil(20_480 / (SYSTEM.length + 1))).slice(0, 20_480);

/** 1 MB of base64 (the bytes are not a real PNG: barge checks the encoding, never the picture). */
const IMAGE_DATA = Buffer.alloc(786_432, 0x5a).toString('base64');

function paramsOf(kind: BodyKind): Record<string, unknown> {
  if (kind === 'cached') {
    return {
      ...MODEL_INPUT,
      system: [{ type: 'text', text: LONG_INSTRUCTION, cache_control: { type: 'ephemeral' } }],
      tools: [
        {
          name: 'classify',
          description: 'The ticket category',
          input_schema: {
            type: 'object',
            properties: { category: { type: 'string', enum: ['shipping', 'billing', 'other'] } },
            required: ['category'],
          },
        },
      ],
      tool_choice: { type: 'tool', name: 'classify' },
    };
  }
  if (kind === 'image') {
    return {
      ...MODEL_INPUT,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: IMAGE_DATA } },
            { type: 'text', text: USER_TEXT },
          ],
        },
      ],
    };
  }
  return MODEL_INPUT;
}

/** The POST /cargo/load body; with no callback URL, the results wait in the mailbox. */
export function submissionBody(callbackUrl: string | null, kind: BodyKind = 'text'): string {
  return JSON.stringify({
    params: { model: 'svc-mock', ...paramsOf(kind) },
    ...(callbackUrl === null ? {} : { callback_url: callbackUrl }),
    metadata: METADATA,
  });
}
