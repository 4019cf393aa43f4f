/**
 * The rules of the request surface a schema cannot say (decisions.md, "The full request surface"):
 * base64 `data`, at most 4 cache marks in a request, custom tools only with unique names,
 * `tool_choice` naming one of them, a thinking budget below `max_tokens`, bounded nesting of the
 * JSON values a client gives. It also notes where each part a route may not take appears
 * (route-parts.ts judges them).
 *
 * Linear in the body: every part of `params` and of each record is walked once, and a record's
 * request (its own settings over the shared ones of `params`) is judged from the walks' summaries,
 * so shared tools are not walked again for each of 10,000 records.
 */
import type { FieldError } from './errors.js';
import type { ContentBlock, Message, ModelSettings } from './request-surface.js';
import { SURFACE_LIMITS } from './request-surface.js';

/** Parts of a request that some route cannot take. */
export type RequestPart =
  | 'image_url'
  | 'document_url'
  | 'tools'
  | 'tool_choice'
  | 'tool_use'
  | 'tool_result'
  | 'tool_result_image'
  | 'assistant_media'
  | 'output_format'
  | 'thinking'
  | 'effort'
  | 'top_k';

/** Where a part appears (its first occurrence in `params` or in one record). */
export interface PartSeen {
  part: RequestPart;
  path: string;
}

/** The settings a location gives, as the rules see them. */
type Settings = ModelSettings & { messages?: Message[] };

/** The fields whose blocks may carry cache marks, in the order the provider reads them. */
const MARKED = ['tools', 'system', 'messages'] as const;
type Marked = (typeof MARKED)[number];

/** One walk of a location's settings. */
interface Walk {
  at: string;
  /** Paths of the first few cache marks of each field (enough to name the one past the limit). */
  marks: Record<Marked, string[]>;
  toolNames: Set<string> | undefined;
}

export function checkRequestSurface(input: {
  params: Settings;
  records?: { modelInput: Settings }[];
  defaultMaxTokens: number;
}): { problems: FieldError[]; parts: PartSeen[] } {
  const problems: FieldError[] = [];
  const parts: PartSeen[] = [];
  const shared = walk(input.params, '/params', problems, parts);
  if (!input.records) {
    judge([input.params], [shared], input.defaultMaxTokens, problems);
    return { problems, parts };
  }
  for (const [i, record] of input.records.entries()) {
    const own = walk(record.modelInput, `/records/${i}/modelInput`, problems, parts);
    judge([record.modelInput, input.params], [own, shared], input.defaultMaxTokens, problems);
  }
  // A rule broken by a shared setting is broken for every record alike: it is said once.
  const once = new Map(problems.map((p) => [`${p.path}\u0000${p.message}`, p]));
  return { problems: [...once.values()], parts };
}

/**
 * The rules of one request, whose settings are the first location's that has each field: a
 * record's own over the shared ones.
 */
function judge(locations: Settings[], walks: Walk[], defaultMaxTokens: number, problems: FieldError[]): void {
  const from = <K extends keyof Settings>(field: K) => {
    const i = locations.findIndex((settings) => settings[field] !== undefined);
    return i === -1 ? undefined : { value: locations[i]?.[field] as Settings[K], walk: walks[i] as Walk };
  };

  const marks: string[] = [];
  for (const field of MARKED) marks.push(...(from(field)?.walk.marks[field] ?? []));
  const extra = marks[SURFACE_LIMITS.maxCacheMarks];
  if (extra !== undefined) {
    problems.push({
      path: extra,
      message: `is a cache_control mark past the ${SURFACE_LIMITS.maxCacheMarks} a request may have (tools, system and messages together)`,
    });
  }

  const choice = from('tool_choice');
  if (choice?.value && choice.value.type !== 'auto' && choice.value.type !== 'none') {
    const names = from('tools')?.walk.toolNames;
    const path = `${choice.walk.at}/tool_choice`;
    if (names === undefined || names.size === 0) {
      problems.push({ path, message: `'${choice.value.type}' needs tools, and the request has none` });
    } else if (choice.value.type === 'tool' && !names.has(choice.value.name)) {
      problems.push({ path: `${path}/name`, message: `names '${choice.value.name}', which is not one of the tools` });
    }
  }

  const thinking = from('thinking');
  if (thinking?.value?.type === 'enabled') {
    const maxTokens = from('max_tokens')?.value ?? defaultMaxTokens;
    if (thinking.value.budget_tokens >= maxTokens) {
      problems.push({
        path: `${thinking.walk.at}/thinking/budget_tokens`,
        message: `is ${thinking.value.budget_tokens}; it must be below max_tokens (${maxTokens})`,
      });
    }
  }
}

/** Walks one location's settings once: the rules of its own parts, its marks, its tool names, its parts. */
function walk(settings: Settings, at: string, problems: FieldError[], parts: PartSeen[]): Walk {
  const result: Walk = { at, marks: { tools: [], system: [], messages: [] }, toolNames: undefined };
  const seen = new Set<RequestPart>();
  const note = (part: RequestPart, path: string) => {
    if (!seen.has(part)) {
      seen.add(part);
      parts.push({ part, path });
    }
  };
  const mark = (field: Marked, block: object, path: string) => {
    const list = result.marks[field];
    if ('cache_control' in block && list.length <= SURFACE_LIMITS.maxCacheMarks) {
      list.push(`${path}/cache_control`);
    }
  };

  if (settings.tools) {
    note('tools', `${at}/tools`);
    result.toolNames = new Set();
    for (const [i, tool] of settings.tools.entries()) {
      const path = `${at}/tools/${i}`;
      if (tool.type !== undefined && tool.type !== 'custom') {
        const name = typeof tool.name === 'string' ? `'${tool.name}' ` : '';
        problems.push({ path, message: `is the server tool ${name}(${tool.type}); barge takes custom tools only` });
        continue;
      }
      const custom = tool as Extract<typeof tool, { input_schema: unknown }>;
      if (result.toolNames.has(custom.name)) {
        problems.push({ path: `${path}/name`, message: `duplicates the tool name '${custom.name}'` });
      }
      result.toolNames.add(custom.name);
      checkDepth(custom.input_schema, `${path}/input_schema`, problems);
      mark('tools', custom, path);
    }
  }
  if (Array.isArray(settings.system)) {
    for (const [i, block] of settings.system.entries()) mark('system', block, `${at}/system/${i}`);
  }
  if (settings.tool_choice) note('tool_choice', `${at}/tool_choice`);
  if (settings.thinking && settings.thinking.type !== 'disabled') note('thinking', `${at}/thinking`);
  if (settings.output_config?.format) {
    note('output_format', `${at}/output_config/format`);
    checkDepth(settings.output_config.format.schema, `${at}/output_config/format/schema`, problems);
  }
  if (settings.output_config?.effort) note('effort', `${at}/output_config/effort`);
  if (settings.top_k !== undefined) note('top_k', `${at}/top_k`);

  for (const [m, message] of (settings.messages ?? []).entries()) {
    if (typeof message.content === 'string') continue;
    for (const [b, block] of (message.content as ContentBlock[]).entries()) {
      const path = `${at}/messages/${m}/content/${b}`;
      mark('messages', block, path);
      const turn = ROLE_OF_BLOCK[block.type];
      if (turn !== undefined && turn !== message.role) {
        problems.push({ path: `${path}/type`, message: `'${block.type}' belongs in ${turn} turns` });
      }
      if (message.role === 'assistant' && (block.type === 'image' || block.type === 'document')) {
        note('assistant_media', path);
      }
      switch (block.type) {
        case 'image':
          if (block.source.type === 'url') note('image_url', `${path}/source`);
          else checkBase64(block.source.data, `${path}/source/data`, problems);
          break;
        case 'document':
          if (block.source.type === 'url') note('document_url', `${path}/source`);
          else if (block.source.type === 'base64') checkBase64(block.source.data, `${path}/source/data`, problems);
          break;
        case 'tool_use':
          note('tool_use', path);
          checkDepth(block.input, `${path}/input`, problems);
          break;
        case 'tool_result':
          note('tool_result', path);
          if (Array.isArray(block.content)) {
            for (const [c, inner] of block.content.entries()) {
              const innerPath = `${path}/content/${c}`;
              mark('messages', inner, innerPath);
              if (inner.type !== 'image') continue;
              note('tool_result_image', innerPath);
              if (inner.source.type === 'url') note('image_url', `${innerPath}/source`);
              else checkBase64(inner.source.data, `${innerPath}/source/data`, problems);
            }
          }
          break;
      }
    }
  }
  return result;
}

/** Blocks only one role's turns may hold. */
const ROLE_OF_BLOCK: Partial<Record<ContentBlock['type'], Message['role']>> = {
  tool_use: 'assistant',
  thinking: 'assistant',
  redacted_thinking: 'assistant',
  tool_result: 'user',
};

/** Standard base64 with padding, as the Messages API takes it. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

export function isBase64(text: string): boolean {
  return text.length % 4 === 0 && BASE64.test(text);
}

function checkBase64(data: string, path: string, problems: FieldError[]): void {
  if (!isBase64(data)) problems.push({ path, message: 'must be base64 (standard alphabet, padded)' });
}

/**
 * Objects and arrays nested deeper than the limit, found without recursion and without looking
 * past it. Only objects are stacked, with their depths beside them (no pair allocated per value):
 * a tool schema of 400,000 keys took 0.7 s, the stack of pairs most of it.
 */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const nodes: object[] = [value];
  const depths: number[] = [1];
  for (let node = nodes.pop(); node !== undefined; node = nodes.pop()) {
    const depth = depths.pop() as number;
    if (depth > limit) return true;
    // Object.keys, not Object.values: on an object of 100,000s of keys it costs a third as much.
    const keys = Array.isArray(node) ? null : Object.keys(node);
    const count = keys === null ? (node as unknown[]).length : keys.length;
    for (let i = 0; i < count; i++) {
      const child: unknown =
        keys === null ? (node as unknown[])[i] : (node as Record<string, unknown>)[keys[i] as string];
      if (child !== null && typeof child === 'object') {
        nodes.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

function checkDepth(value: unknown, path: string, problems: FieldError[]): void {
  if (nestedDeeperThan(value, SURFACE_LIMITS.maxJsonDepth)) {
    problems.push({ path, message: `is nested more than ${SURFACE_LIMITS.maxJsonDepth} levels deep` });
  }
}
