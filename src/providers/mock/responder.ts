/**
 * svc-mock's model: deterministic (the same input gives the same message), well-formed, and
 * honouring max_tokens and stop_sequences. One word counts as one output token. It takes the whole
 * request surface (decisions.md, "The full request surface"):
 * - it echoes the last user turn's text, its tool results' text included; each image or document
 *   counts 1,000 input tokens;
 * - with `tool_choice` `any` or `tool` it answers one `tool_use` block (the named tool, else the
 *   first) whose input is the smallest instance of the tool's `input_schema` (schema-instance.ts),
 *   with `output_config.format` a text that is the smallest JSON instance of that schema; neither
 *   is cut by max_tokens;
 * - with `thinking` `enabled` or `adaptive`, a `thinking` block (its words within `budget_tokens`,
 *   counted as output tokens, a signature from the input's digest) comes before the answer;
 * - prompt caching: the words up to and including the last `cache_control` mark are cache tokens,
 *   written by the first request of a batch with that prefix and read by the others (the caller
 *   keeps the batch's prefixes: CachedPrefixes).
 *
 * Trigger phrases in the last user message exercise failure paths:
 * - `svc-mock:fail`   → the request errors with a provider-style invalid_request_error;
 * - `svc-mock:expire` → the request expires as if the batch's completion window closed first.
 */
import { hash } from 'node:crypto';
import type { ModelContentBlock, ModelMessage } from '../../domain/model-message.js';
import { REQUEST_EXPIRED_ERROR } from '../../domain/records.js';
import { schemaInstance } from './schema-instance.js';

export const TRIGGERS = Object.freeze({ fail: 'svc-mock:fail', expire: 'svc-mock:expire' });

export type MockOutcome =
  | { success: true; response: ModelMessage }
  | { success: false; kind: 'errored' | 'expired'; error: string };

/**
 * The cached prefixes of one batch, by digest: the first request with a prefix writes it, the
 * others read it. One per batch, as a provider's cache would be warm only within it.
 */
export type CachedPrefixes = Set<string>;

/** What svc-mock reads of a stored request: the Messages API's create parameters, read tolerantly. */
interface MockInput {
  max_tokens: number;
  messages: MockMessage[];
  system?: string | Block[];
  stop_sequences?: string[];
  tools?: Tool[];
  tool_choice?: { type: string; name?: string };
  output_config?: { format?: { type: string; schema?: unknown } };
  thinking?: { type: string; budget_tokens?: number };
}

interface MockMessage {
  role: string;
  content: string | Block[];
}

/** Any content block; svc-mock reads only these fields. */
interface Block {
  type: string;
  text?: string;
  thinking?: string;
  content?: string | Block[];
  input?: unknown;
  cache_control?: { ttl?: string } | null;
}

interface Tool {
  name: string;
  description?: string;
  input_schema?: unknown;
  cache_control?: { ttl?: string } | null;
}

const FILLER = (
  'batch results arrive within the completion window and every cargo is delivered by webhook object ' +
  'or mailbox while the service keeps each step in the database so nothing is lost'
).split(' ');

/** What an image or a document counts, in input tokens. */
const MEDIA_TOKENS = 1000;

/**
 * Answers one request, given as its model input's JSON text (as stored and sent to providers);
 * `cached` holds the prompt-cache prefixes its batch has written so far.
 */
export function mockRespond(model: string, inputJson: string, cached: CachedPrefixes = new Set()): MockOutcome {
  const input = JSON.parse(inputJson) as MockInput;
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
  // arrays. Cache marks are looked for only in a request whose text has one.
  const digest = hash('sha256', model + inputJson, 'buffer');
  const measure = measureInput(input, inputJson.includes('"cache_control"'));
  const usage: ModelMessage['usage'] = { input_tokens: measure.inputTokens, output_tokens: 0 };
  if (measure.prefix !== null) Object.assign(usage, cacheUsage(measure.prefix, cached));
  const thought = thinkingOf(input, digest);
  const message = (
    content: ModelContentBlock[],
    stopReason: ModelMessage['stop_reason'],
    stopSequence: string | null,
    outputTokens: number,
  ): MockOutcome => ({
    success: true,
    response: {
      id: `msg_mock_${digest.toString('hex', 0, 12)}`,
      type: 'message',
      role: 'assistant',
      content: thought ? [thought.block, ...content] : content,
      model,
      stop_reason: stopReason,
      stop_sequence: stopSequence,
      usage: { ...usage, output_tokens: outputTokens + (thought?.tokens ?? 0) },
    },
  });

  const tool = forcedTool(input);
  if (tool) {
    const toolInput = schemaInstance(tool.input_schema) as Record<string, unknown>;
    const id = `toolu_mock_${digest.toString('hex', 12, 24)}`;
    return message(
      [{ type: 'tool_use', id, name: tool.name, input: toolInput }],
      'tool_use',
      null,
      jsonTokens(toolInput),
    );
  }
  const format = input.output_config?.format;
  if (format?.type === 'json_schema') {
    const json = JSON.stringify(schemaInstance(format.schema));
    return message([{ type: 'text', text: json }], 'end_turn', null, jsonTokens(json));
  }

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
  // The thinking's tokens come out of max_tokens first (as a model's do).
  const room = input.max_tokens - (thought?.tokens ?? 0);
  if (outputTokens > room) {
    text = text.split(' ').filter(Boolean).slice(0, room).join(' ');
    stopReason = 'max_tokens';
    stopSequence = null;
    outputTokens = room;
  }
  return message([{ type: 'text', text }], stopReason, stopSequence, outputTokens);
}

/**
 * The thinking block of a request that enables thinking: a fixed opening and digest-picked words,
 * at most `budget_tokens` and always leaving one token of max_tokens for the answer.
 */
function thinkingOf(input: MockInput, digest: Buffer): { block: ModelContentBlock; tokens: number } | null {
  const type = input.thinking?.type;
  if (type !== 'enabled' && type !== 'adaptive') return null;
  const wanted = THINKING_OPENING.length + ((digest[2] as number) % 16);
  const tokens = Math.min(wanted, input.thinking?.budget_tokens ?? wanted, input.max_tokens - 1);
  if (tokens < 1) return null;
  const words = THINKING_OPENING.slice(0, tokens);
  for (let i = words.length; i < tokens; i++)
    words.push(FILLER[(digest[i % digest.length] as number) % FILLER.length] as string);
  return {
    block: { type: 'thinking', thinking: `${words.join(' ')}.`, signature: digest.toString('base64') },
    tokens,
  };
}

/** The tool a `tool_choice` of `any` or `tool` forces: the named one, else the first. */
function forcedTool(input: MockInput): Tool | undefined {
  const choice = input.tool_choice;
  const tools = input.tools ?? [];
  if (choice?.type === 'tool') return tools.find((t) => t.name === choice.name) ?? tools[0];
  return choice?.type === 'any' ? tools[0] : undefined;
}

/** About four characters a token, as for the prompt. */
function jsonTokens(value: unknown): number {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return Math.max(1, Math.ceil(text.length / 4));
}

/** The text of a user turn: its text blocks and its tool results' text, one line each. */
function messageText(message: MockMessage): string {
  if (typeof message.content === 'string') return message.content;
  const parts: string[] = [];
  for (const block of message.content) {
    if (block.type === 'text') parts.push(block.text ?? '');
    else if (block.type === 'tool_result') parts.push(toolResultText(block));
  }
  return parts.join('\n');
}

function toolResultText(block: Block): string {
  const { content } = block;
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  return content
    .filter((b) => b.type === 'text')
    .map((b) => b.text ?? '')
    .join('\n');
}

function lastUserText(messages: MockMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === 'user') return messageText(message);
  }
  return '';
}

/** The prompt-cache prefix of a request: its digest, and its tokens (those up to the last 1-hour mark apart). */
interface CachePrefix {
  digest: string;
  tokens: number;
  oneHourTokens: number;
}

/**
 * Input tokens: about four characters a token, plus a few per message, like real tokenizers on
 * English text, and MEDIA_TOKENS per image or document. With cache marks (`withCache`), what is
 * up to the last one (tools, then system, then messages, Anthropic's order) is the cache prefix
 * instead, counted in words; `input_tokens` is what follows it.
 */
function measureInput(input: MockInput, withCache: boolean): { inputTokens: number; prefix: CachePrefix | null } {
  let chars = 0;
  let media = 0;
  let words = 0;
  // The parts read so far, as JSON (only with cache marks): the prefix's digest is of these.
  const parts: string[] = [];
  let mark: { chars: number; media: number; words: number; parts: number } | null = null;
  let oneHourWords = 0;
  const add = (text: string | undefined, part: unknown, cacheControl: Block['cache_control']) => {
    if (text !== undefined) chars += text.length;
    if (!withCache) return;
    if (text !== undefined) words += countWordsIn(text);
    parts.push(JSON.stringify(part));
    if (cacheControl) {
      mark = { chars, media, words, parts: parts.length };
      if (cacheControl.ttl === '1h') oneHourWords = words;
    }
  };
  const addBlock = (block: Block) => {
    if (block.type === 'image' || block.type === 'document') {
      media++;
      if (withCache) words += MEDIA_TOKENS;
      add(undefined, block, block.cache_control);
    } else if (block.type === 'tool_result') {
      const inner = typeof block.content === 'string' ? [] : (block.content ?? []);
      for (const b of inner) if (b.type === 'image') media++;
      if (withCache) words += inner.filter((b) => b.type === 'image').length * MEDIA_TOKENS;
      add(toolResultText(block), block, block.cache_control);
    } else if (block.type === 'tool_use') {
      add(JSON.stringify(block.input ?? null), block, block.cache_control);
    } else {
      add(block.text ?? block.thinking ?? '', block, block.cache_control);
    }
  };
  for (const tool of input.tools ?? []) {
    add(
      `${tool.name} ${tool.description ?? ''} ${JSON.stringify(tool.input_schema ?? null)}`,
      tool,
      tool.cache_control,
    );
  }
  if (typeof input.system === 'string') add(input.system, input.system, null);
  else for (const block of input.system ?? []) addBlock(block);
  for (const message of input.messages) {
    if (typeof message.content === 'string') add(message.content, message, null);
    else {
      if (withCache) parts.push(message.role);
      for (const block of message.content) addBlock(block);
    }
  }
  const overhead = 3 * input.messages.length;
  const at = mark as { chars: number; media: number; words: number; parts: number } | null;
  if (at === null) return { inputTokens: Math.ceil(chars / 4) + media * MEDIA_TOKENS + overhead, prefix: null };
  return {
    inputTokens: Math.ceil((chars - at.chars) / 4) + (media - at.media) * MEDIA_TOKENS + overhead,
    prefix: {
      digest: hash('sha256', parts.slice(0, at.parts).join('\n'), 'base64'),
      tokens: at.words,
      oneHourTokens: oneHourWords,
    },
  };
}

/** The cache counts of a request with a cache prefix: written by the batch's first request with it, read by the rest. */
function cacheUsage(prefix: CachePrefix, cached: CachedPrefixes): Partial<ModelMessage['usage']> {
  const written = !cached.has(prefix.digest);
  if (written) cached.add(prefix.digest);
  const oneHour = written ? prefix.oneHourTokens : 0;
  return {
    cache_creation_input_tokens: written ? prefix.tokens : 0,
    cache_read_input_tokens: written ? 0 : prefix.tokens,
    cache_creation: {
      ephemeral_5m_input_tokens: (written ? prefix.tokens : 0) - oneHour,
      ephemeral_1h_input_tokens: oneHour,
    },
  };
}

const REPLY_OPENING = 'Synthetic reply from svc-mock. You said:';
const THINKING_OPENING = 'svc-mock thinks the request over before it answers:'.split(' ');
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

/** The words of any text: runs of characters other than whitespace. */
function countWordsIn(text: string): number {
  let count = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const space = c === 32 || (c >= 9 && c <= 13);
    if (!space && !inWord) count++;
    inWord = !space;
  }
  return count;
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
