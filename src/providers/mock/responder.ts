/**
 * svc-mock's model: deterministic (the same input gives the same message), well-formed, and
 * honouring max_tokens and stop_sequences. One word counts as one output token.
 *
 * Trigger phrases in the last user message exercise failure paths:
 * - `svc-mock:fail`   → the request errors with a provider-style invalid_request_error;
 * - `svc-mock:expire` → the request expires as if the batch's completion window closed first.
 */
import { hash } from 'node:crypto';
import type { ModelMessage } from '../../domain/model-message.js';
import { REQUEST_EXPIRED_ERROR } from '../../domain/records.js';
import type { Message, ModelInput } from '../../domain/request-surface.js';

export const TRIGGERS = Object.freeze({ fail: 'svc-mock:fail', expire: 'svc-mock:expire' });

export type MockOutcome =
  | { success: true; response: ModelMessage }
  | { success: false; kind: 'errored' | 'expired'; error: string };

const FILLER = (
  'batch results arrive within the completion window and every cargo is delivered by webhook object ' +
  'or mailbox while the service keeps each step in the database so nothing is lost'
).split(' ');

/** Answers one request, given as its model input's JSON text (as stored and sent to providers). */
export function mockRespond(model: string, inputJson: string): MockOutcome {
  const input = JSON.parse(inputJson) as ModelInput;
  const prompt = lastUserText(input.messages);
  if (prompt.includes(TRIGGERS.fail)) {
    return {
      success: false,
      kind: 'errored',
      error: `invalid_request_error: svc-mock was asked to fail (the last user message contains '${TRIGGERS.fail}')`,
    };
  }
  if (prompt.includes(TRIGGERS.expire)) {
    return {
      success: false,
      kind: 'expired',
      error: `${REQUEST_EXPIRED_ERROR} ('${TRIGGERS.expire}')`,
    };
  }

  // The service collects every result through this function, so it is written for speed (a batch
  // holds up to 100,000 requests): the digest is of the text as given (not of the input serialised
  // again), its bytes are read directly, and words are counted without splitting the text into
  // arrays.
  const digest = hash('sha256', model + inputJson, 'buffer');
  const fillerWords = 12 + (((digest[0] as number) * 256 + (digest[1] as number)) % 24);
  // The prompt's words, separated by single spaces (what splitting on /\s+/ and joining gives);
  // most prompts already are, and testing costs a fraction of replacing.
  const said = UNEVEN_SPACE.test(prompt) ? prompt.replace(/\s+/g, ' ').trim() : prompt;
  let fullText = said === '' ? REPLY_OPENING : `${REPLY_OPENING} ${said}`;
  for (let i = 0; i < fillerWords; i++) {
    // Each filler word is picked by one byte of the digest, so the text varies with the input.
    fullText += ` ${FILLER[(digest[i % digest.length] as number) % FILLER.length]}`;
  }
  fullText += '.';

  let text = fullText;
  let stopReason: ModelMessage['stop_reason'] = 'end_turn';
  let stopSequence: string | null = null;
  const stop = earliestStop(fullText, input.stop_sequences ?? []);
  if (stop) {
    text = fullText.slice(0, stop.index);
    stopReason = 'stop_sequence';
    stopSequence = stop.sequence;
  }
  // Uncut, the reply's words are known: the opening's, the prompt's (single spaces) and the filler.
  let outputTokens = text === fullText ? OPENING_WORDS + spacedWords(said) + fillerWords : countWords(text);
  if (outputTokens > input.max_tokens) {
    text = text.split(' ').filter(Boolean).slice(0, input.max_tokens).join(' ');
    stopReason = 'max_tokens';
    stopSequence = null;
    outputTokens = input.max_tokens;
  }

  return {
    success: true,
    response: {
      id: `msg_mock_${digest.toString('hex', 0, 12)}`,
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text }],
      model,
      stop_reason: stopReason,
      stop_sequence: stopSequence,
      usage: { input_tokens: inputTokens(input), output_tokens: outputTokens },
    },
  };
}

/** A turn's text: a string, or its text blocks' (other blocks are not echoed). */
function messageText(message: Message): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
}

function systemText(system: ModelInput['system']): string {
  return typeof system === 'string' ? system : (system ?? []).map((block) => block.text).join('\n');
}

function lastUserText(messages: Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === 'user') return messageText(message);
  }
  return '';
}

/** About four characters a token, plus a few per message, like real tokenizers on English text. */
function inputTokens(input: ModelInput): number {
  const chars = systemText(input.system).length + input.messages.reduce((n, m) => n + messageText(m).length, 0);
  return Math.ceil(chars / 4) + 3 * input.messages.length;
}

const REPLY_OPENING = 'Synthetic reply from svc-mock. You said:';
const OPENING_WORDS = spacedWords(REPLY_OPENING);
/** Whitespace other than single spaces between words. */
const UNEVEN_SPACE = /[^\S ]| {2}|^ | $/;

/** The words of a text of words separated by single spaces. */
function spacedWords(text: string): number {
  if (text === '') return 0;
  let words = 1;
  for (let at = text.indexOf(' '); at !== -1; at = text.indexOf(' ', at + 1)) words++;
  return words;
}

/** How many words `text.split(' ').filter(Boolean)` would give, without building the array. */
function countWords(text: string): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const space = text.charCodeAt(i) === 32;
    if (!space && !inWord) count++;
    inWord = !space;
  }
  return count;
}

/**
 * Stop sequences are looked for in the first STOP_SEARCH_CHARS characters of the reply only, so
 * the work is small and linear however long the prompt it echoes (at most 16 sequences of 256
 * characters are accepted at submit).
 */
const STOP_SEARCH_CHARS = 65_536;

function earliestStop(text: string, sequences: string[]): { index: number; sequence: string } | null {
  let best: { index: number; sequence: string } | null = null;
  const searched = text.length > STOP_SEARCH_CHARS ? text.slice(0, STOP_SEARCH_CHARS) : text;
  for (const sequence of sequences) {
    const index = searched.indexOf(sequence);
    if (index >= 0 && (best === null || index < best.index)) best = { index, sequence };
  }
  return best;
}
