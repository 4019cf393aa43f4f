/**
 * OpenAI → barge: one line of a Batch input file (`{custom_id, method, url, body}`, `body` a chat
 * completions request) into a cargo's `params` (decisions.md, "Provider-compatible batch
 * endpoints"). `system`/`developer` messages become `system`; `max_completion_tokens` (or
 * `max_tokens`) becomes `max_tokens` (barge's default 1024 when neither is given); `stop` becomes
 * `stop_sequences`; `temperature` and `top_p` are kept. What barge cannot honour is a line error
 * naming the field: `n` other than 1, tools and functions, `response_format` other than text,
 * `logprobs`, audio, image and file parts, and any field not listed here. A few fields that change
 * nothing of the answer are accepted and dropped (IGNORED). Pure: the batch intake calls it.
 */
import type { FieldError } from '../../domain/errors.js';

export const CHAT_COMPLETIONS = '/v1/chat/completions';

/** A custom_id is kept in its cargo's metadata: at most this many characters. */
export const CUSTOM_ID_MAX_LENGTH = 256;

/** An entry of a failed batch's `errors.data` (without its line number). */
export interface LineProblem {
  code: string;
  message: string;
  param: string | null;
}

interface TextBlock {
  type: 'text';
  text: string;
}

/** The cargo params a line becomes (barge's request surface, text only). */
export interface ChatParams {
  model: unknown;
  messages: { role: unknown; content: unknown }[];
  system?: string | TextBlock[];
  max_tokens?: unknown;
  stop_sequences?: unknown;
  temperature?: unknown;
  top_p?: unknown;
}

export type TranslatedLine =
  | {
      ok: true;
      customId: string;
      params: ChatParams;
      /** The body field a barge path (`/params/...`) came from, for naming it in a line error. */
      fieldOf: (path: string) => string;
    }
  | { ok: false; problems: LineProblem[] };

/** Fields that change nothing of the answer: accepted and dropped. */
const IGNORED = new Set(['user', 'store', 'metadata', 'service_tier', 'prompt_cache_key', 'safety_identifier']);

/** Fields that are refused unless they hold the value that asks for nothing (or null). */
const HARMLESS: Record<string, (value: unknown) => boolean> = {
  n: (v) => v === 1,
  stream: (v) => v === false,
  logprobs: (v) => v === false,
  response_format: (v) => isObject(v) && v.type === 'text' && Object.keys(v).length === 1,
  modalities: (v) => Array.isArray(v) && v.length === 1 && v[0] === 'text',
};

const WHY_REFUSED: Record<string, string> = {
  n: 'barge makes one choice per request: n must be 1',
  tools: 'tools are not supported by the batch endpoints of barge',
  tool_choice: 'tools are not supported by the batch endpoints of barge',
  parallel_tool_calls: 'tools are not supported by the batch endpoints of barge',
  functions: 'functions are not supported by the batch endpoints of barge',
  function_call: 'functions are not supported by the batch endpoints of barge',
  response_format: 'response_format is not supported by the batch endpoints of barge (only {"type": "text"})',
  logprobs: 'logprobs are not supported by barge',
  top_logprobs: 'logprobs are not supported by barge',
  audio: 'audio output is not supported by barge',
  modalities: 'only the text modality is supported by barge',
  stream: 'a batch request cannot stream',
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const refused = (field: string, why?: string): LineProblem => ({
  code: 'unsupported_parameter',
  message: `${field}: ${why ?? 'is not supported by barge'}`,
  param: field,
});

/** Checks a line's envelope and translates its body; `endpoint` is the batch's. */
export function translateLine(line: unknown, endpoint: string = CHAT_COMPLETIONS): TranslatedLine {
  if (!isObject(line)) {
    return {
      ok: false,
      problems: [{ code: 'invalid_json_line', message: 'This line is not a JSON object.', param: null }],
    };
  }
  const problems: LineProblem[] = [];
  for (const key of ['custom_id', 'method', 'url', 'body'] as const) {
    if (line[key] === undefined || line[key] === null) {
      problems.push({
        code: 'missing_required_parameter',
        message: `Missing required parameter: '${key}'.`,
        param: key,
      });
    }
  }
  const customId = line.custom_id;
  if (customId !== undefined && customId !== null) {
    if (typeof customId !== 'string' || customId.length === 0 || customId.length > CUSTOM_ID_MAX_LENGTH) {
      problems.push({
        code: 'invalid_value',
        message: `custom_id must be a string of 1 to ${CUSTOM_ID_MAX_LENGTH} characters.`,
        param: 'custom_id',
      });
    }
  }
  if (line.method !== undefined && line.method !== null && line.method !== 'POST') {
    problems.push({ code: 'invalid_method', message: 'The method for this request must be POST.', param: 'method' });
  }
  if (line.url !== undefined && line.url !== null && line.url !== endpoint) {
    problems.push({
      code: 'url_mismatch',
      message: `The URL of this request does not match the batch endpoint ${endpoint}.`,
      param: 'url',
    });
  }
  for (const key of Object.keys(line)) {
    if (!['custom_id', 'method', 'url', 'body'].includes(key))
      problems.push(refused(key, 'is not a field of a batch line'));
  }
  if (line.body !== undefined && line.body !== null && !isObject(line.body)) {
    problems.push({ code: 'invalid_value', message: 'body must be a JSON object.', param: 'body' });
  }
  if (problems.length > 0) return { ok: false, problems };
  const body = translateBody(line.body as Record<string, unknown>);
  if (!body.ok) return body;
  return { ok: true, customId: customId as string, params: body.params, fieldOf: body.fieldOf };
}

type TranslatedBody =
  | { ok: true; params: ChatParams; fieldOf: (path: string) => string }
  | { ok: false; problems: LineProblem[] };

/** A chat completions request into barge's params. */
export function translateBody(body: Record<string, unknown>): TranslatedBody {
  const problems: LineProblem[] = [];
  const params: ChatParams = { model: body.model, messages: [] };
  if (body.model === undefined || body.model === null) {
    problems.push({
      code: 'missing_required_parameter',
      message: "Missing required parameter: 'body.model'.",
      param: 'body.model',
    });
  }
  /** Which `max_tokens` field the request gave, for naming it back. */
  let maxTokensField = 'body.max_completion_tokens';
  for (const [key, value] of Object.entries(body)) {
    const field = `body.${key}`;
    if (key === 'model' || key === 'messages' || IGNORED.has(key) || value === null) continue;
    if (key === 'max_completion_tokens') params.max_tokens = value;
    else if (key === 'max_tokens') {
      if (body.max_completion_tokens === undefined || body.max_completion_tokens === null) {
        params.max_tokens = value;
        maxTokensField = field;
      }
    } else if (key === 'stop') params.stop_sequences = typeof value === 'string' ? [value] : value;
    else if (key === 'temperature') params.temperature = value;
    else if (key === 'top_p') params.top_p = value;
    else if (!HARMLESS[key]?.(value)) problems.push(refused(field, WHY_REFUSED[key]));
  }
  const messages = translateMessages(body.messages, problems);
  if (problems.length > 0 || messages === null) return { ok: false, problems };
  params.messages = messages.turns;
  if (messages.system.length === 1 && messages.systemWasText) params.system = (messages.system[0] as TextBlock).text;
  else if (messages.system.length > 0) params.system = messages.system;
  const fieldOf = (path: string) => {
    const parts = path.split('/').slice(2);
    const [top, index, ...rest] = parts;
    if (top === undefined) return 'body';
    if (top === 'messages' && index !== undefined) {
      const original = messages.indexes[Number(index)];
      return [`body.messages[${original ?? index}]`, ...rest.map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))].join(
        '',
      );
    }
    if (top === 'messages') return 'body.messages';
    if (top === 'system') return `body.messages[${messages.systemIndexes[0] ?? 0}]`;
    if (top === 'max_tokens') return maxTokensField;
    if (top === 'stop_sequences') return 'body.stop';
    return `body.${top}`;
  };
  return { ok: true, params, fieldOf };
}

interface Turns {
  turns: { role: unknown; content: unknown }[];
  /** For each turn, the index of the message it came from. */
  indexes: number[];
  system: TextBlock[];
  systemIndexes: number[];
  /** The one system message was a plain string (it stays one). */
  systemWasText: boolean;
}

function translateMessages(messages: unknown, problems: LineProblem[]): Turns | null {
  if (messages === undefined || messages === null) {
    problems.push({
      code: 'missing_required_parameter',
      message: "Missing required parameter: 'body.messages'.",
      param: 'body.messages',
    });
    return null;
  }
  if (!Array.isArray(messages)) {
    problems.push({ code: 'invalid_value', message: 'body.messages must be an array.', param: 'body.messages' });
    return null;
  }
  const out: Turns = { turns: [], indexes: [], system: [], systemIndexes: [], systemWasText: false };
  messages.forEach((message: unknown, i) => {
    const at = `body.messages[${i}]`;
    if (!isObject(message)) {
      problems.push({ code: 'invalid_value', message: `${at} must be an object.`, param: at });
      return;
    }
    for (const key of Object.keys(message)) {
      if (key === 'tool_calls' || key === 'function_call' || key === 'tool_call_id') {
        if (message[key] !== null) problems.push(refused(`${at}.${key}`, WHY_REFUSED.tools));
      } else if (key === 'audio') {
        if (message[key] !== null) problems.push(refused(`${at}.audio`, WHY_REFUSED.audio));
      } else if (key !== 'role' && key !== 'content' && key !== 'name' && key !== 'refusal') {
        problems.push(refused(`${at}.${key}`));
      }
    }
    const { role } = message;
    if (role === 'system' || role === 'developer') {
      const blocks = textParts(message.content, `${at}.content`, problems);
      if (blocks === null) return;
      out.systemWasText = out.system.length === 0 && typeof message.content === 'string';
      out.system.push(...blocks);
      out.systemIndexes.push(i);
    } else if (role === 'user' || role === 'assistant') {
      const content =
        typeof message.content === 'string' ? message.content : textParts(message.content, `${at}.content`, problems);
      if (content === null) return;
      out.turns.push({ role, content });
      out.indexes.push(i);
    } else if (role === 'tool' || role === 'function') {
      problems.push(refused(`${at}.role`, WHY_REFUSED.tools));
    } else {
      problems.push({
        code: 'invalid_value',
        message: `${at}.role must be one of system, developer, user, assistant.`,
        param: `${at}.role`,
      });
    }
  });
  return out;
}

const REFUSED_PARTS: Record<string, string> = {
  image_url: 'image parts are not supported by the batch endpoints of barge',
  input_audio: 'audio parts are not supported by barge',
  file: 'file parts are not supported by the batch endpoints of barge',
  refusal: 'refusal parts are not supported by barge',
};

/** Text content as text blocks; any other part is a problem naming it. */
function textParts(content: unknown, at: string, problems: LineProblem[]): TextBlock[] | null {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) {
    problems.push({ code: 'invalid_value', message: `${at} must be a string or an array of text parts.`, param: at });
    return null;
  }
  const blocks: TextBlock[] = [];
  const before = problems.length;
  content.forEach((part: unknown, j) => {
    const where = `${at}[${j}]`;
    if (isObject(part) && part.type === 'text' && typeof part.text === 'string') {
      blocks.push({ type: 'text', text: part.text });
      return;
    }
    const type = isObject(part) && typeof part.type === 'string' ? part.type : null;
    problems.push(
      type !== null && REFUSED_PARTS[type] !== undefined
        ? refused(where, REFUSED_PARTS[type])
        : { code: 'invalid_value', message: `${where} must be a text part {"type": "text", "text"}.`, param: where },
    );
  });
  return problems.length > before ? null : blocks;
}

/** A barge problem of a translated line, named by the line's own field. */
export function lineProblemOf(problem: FieldError, fieldOf: (path: string) => string): LineProblem {
  const param = fieldOf(problem.path);
  return { code: 'invalid_value', message: `${param} ${problem.message}`, param };
}
