/**
 * The request surface: what `params` and each record's `modelInput` accept (decisions.md, "The full
 * request surface"). The Messages API's create parameters as `@anthropic-ai/sdk` types them, limited
 * to the pinned list: one TypeBox definition that validates the body, documents it in
 * /openapi.json, and gives the types the rest of barge works with. What a schema cannot say (base64,
 * cache marks, tool names, the thinking budget, nesting depth) is request-rules.ts.
 */
import { type Static, type TSchema, Type } from 'typebox';

/** Bounds of a request's parts, generous for real use, stated in README's "Request body". */
export const SURFACE_LIMITS = Object.freeze({
  maxMessages: 10_000,
  /** Blocks of one message, of `system`, and of one tool_result's content. */
  maxContentBlocks: 1_000,
  maxTools: 128,
  toolDescriptionMaxLength: 100_000,
  /** Nesting of a JSON value given by the client: a tool's input_schema, an output schema, a tool_use input. */
  maxJsonDepth: 32,
  /** Anthropic's limit, tools, system and messages together. */
  maxCacheMarks: 4,
  minThinkingBudget: 1024,
  maxStopSequences: 16,
  stopSequenceMaxLength: 256,
  maxTokensLimit: 1_000_000,
  topKLimit: 1_000_000,
  idMaxLength: 256,
  urlMaxLength: 8192,
});

const closed = { additionalProperties: false } as const;

/**
 * A union told apart by a tag: validation errors then name the fields of the shape the tag picks
 * (Ajv's `discriminator`), and /openapi.json shows every shape.
 */
function tagged<T extends TSchema[]>(tag: string, shapes: [...T], description: string) {
  return Type.Unsafe<Static<T[number]>>({
    type: 'object',
    oneOf: shapes,
    discriminator: { propertyName: tag },
    description,
  });
}

const CacheControl = Type.Object(
  { type: Type.Literal('ephemeral'), ttl: Type.Optional(Type.Enum(['5m', '1h'])) },
  {
    ...closed,
    description: 'A prompt-cache breakpoint: everything up to this part is cached (at most 4 in a request).',
  },
);
const cacheControl = { cache_control: Type.Optional(CacheControl) };

/** A JSON object given by the client and passed on as it is (its depth is checked by the rules). */
const JsonObject = (description: string) => Type.Unsafe<Record<string, unknown>>({ type: 'object', description });

/** A JSON Schema describing an object: a tool's input, a structured output. */
const ObjectSchema = (description: string) =>
  Type.Unsafe<{ type: 'object'; [keyword: string]: unknown }>({
    type: 'object',
    properties: { type: { const: 'object' } },
    required: ['type'],
    description,
  });

export const TextBlock = Type.Object(
  { type: Type.Literal('text'), text: Type.String({ minLength: 1 }), ...cacheControl },
  closed,
);

const base64Data = Type.String({ minLength: 1, description: 'Base64 (standard alphabet, padded).' });
const sourceUrl = Type.String({
  minLength: 1,
  maxLength: SURFACE_LIMITS.urlMaxLength,
  description: 'Fetched by the provider, never by barge.',
});

const ImageBlock = Type.Object(
  {
    type: Type.Literal('image'),
    source: tagged(
      'type',
      [
        Type.Object(
          {
            type: Type.Literal('base64'),
            media_type: Type.Enum(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
            data: base64Data,
          },
          closed,
        ),
        Type.Object({ type: Type.Literal('url'), url: sourceUrl }, closed),
      ],
      'The image: `base64` data or a `url`.',
    ),
    ...cacheControl,
  },
  closed,
);

const DocumentBlock = Type.Object(
  {
    type: Type.Literal('document'),
    source: tagged(
      'type',
      [
        Type.Object(
          { type: Type.Literal('base64'), media_type: Type.Literal('application/pdf'), data: base64Data },
          closed,
        ),
        Type.Object(
          { type: Type.Literal('text'), media_type: Type.Literal('text/plain'), data: Type.String({ minLength: 1 }) },
          closed,
        ),
        Type.Object({ type: Type.Literal('url'), url: sourceUrl }, closed),
      ],
      'The document: a base64 PDF, plain text, or a PDF `url`.',
    ),
    title: Type.Optional(Type.String({ minLength: 1 })),
    context: Type.Optional(Type.String({ minLength: 1 })),
    citations: Type.Optional(Type.Object({ enabled: Type.Optional(Type.Boolean()) }, closed)),
    ...cacheControl,
  },
  closed,
);

const ToolUseBlock = Type.Object(
  {
    type: Type.Literal('tool_use'),
    id: Type.String({ minLength: 1, maxLength: SURFACE_LIMITS.idMaxLength }),
    name: Type.String({ minLength: 1, maxLength: 128 }),
    input: JsonObject('The tool input the model gave.'),
    ...cacheControl,
  },
  closed,
);

const ThinkingBlock = Type.Object(
  { type: Type.Literal('thinking'), thinking: Type.String(), signature: Type.String() },
  closed,
);

const RedactedThinkingBlock = Type.Object(
  { type: Type.Literal('redacted_thinking'), data: Type.String({ minLength: 1 }) },
  closed,
);

const ToolResultBlock = Type.Object(
  {
    type: Type.Literal('tool_result'),
    tool_use_id: Type.String({ minLength: 1, maxLength: SURFACE_LIMITS.idMaxLength }),
    content: Type.Optional(
      Type.Union([
        Type.String(),
        Type.Array(tagged('type', [TextBlock, ImageBlock], 'A text or image block.'), {
          maxItems: SURFACE_LIMITS.maxContentBlocks,
        }),
      ]),
    ),
    is_error: Type.Optional(Type.Boolean()),
    ...cacheControl,
  },
  closed,
);

/**
 * A turn. Which blocks a role may hold (tool_use and thinking in assistant turns, tool_result in
 * user turns) is a rule (request-rules.ts), so that a wrong role and a wrong content are both named.
 */
export const Message = Type.Object(
  {
    role: Type.Enum(['user', 'assistant']),
    content: Type.Union(
      [
        Type.String({ minLength: 1 }),
        Type.Array(
          tagged(
            'type',
            [TextBlock, ImageBlock, DocumentBlock, ToolUseBlock, ThinkingBlock, RedactedThinkingBlock, ToolResultBlock],
            '`text`, `image`, `document`, `tool_result` (user turns), `tool_use`, `thinking`, `redacted_thinking` (assistant turns).',
          ),
          { minItems: 1, maxItems: SURFACE_LIMITS.maxContentBlocks },
        ),
      ],
      { description: 'A non-empty string, or a non-empty list of blocks.' },
    ),
  },
  closed,
);

const CustomTool = Type.Object(
  {
    type: Type.Optional(Type.Literal('custom')),
    name: Type.String({ pattern: '^[a-zA-Z0-9_-]{1,128}$', description: 'Unique among the tools.' }),
    description: Type.Optional(Type.String({ maxLength: SURFACE_LIMITS.toolDescriptionMaxLength })),
    input_schema: ObjectSchema('A JSON Schema whose `type` is `"object"`.'),
    strict: Type.Optional(Type.Boolean()),
    ...cacheControl,
  },
  closed,
);

/**
 * A server tool (web search, code execution, computer use, ...): matched only so that the rules can
 * refuse it by name; barge takes custom tools only.
 */
const ServerTool = Type.Object(
  { type: Type.String({ not: { const: 'custom' } }), name: Type.Optional(Type.String()) },
  { description: 'A server tool: refused (400 naming the tool).' },
);

export const Tool = Type.Union([CustomTool, ServerTool]);

const parallel = { disable_parallel_tool_use: Type.Optional(Type.Boolean()) };

const ToolChoice = tagged(
  'type',
  [
    Type.Object({ type: Type.Literal('auto'), ...parallel }, closed),
    Type.Object({ type: Type.Literal('any'), ...parallel }, closed),
    Type.Object({ type: Type.Literal('none') }, closed),
    Type.Object({ type: Type.Literal('tool'), name: Type.String({ minLength: 1 }), ...parallel }, closed),
  ],
  '`auto`, `any`, `none`, or `tool` with the `name` of one of `tools`.',
);

export const Thinking = tagged(
  'type',
  [
    Type.Object(
      {
        type: Type.Literal('enabled'),
        budget_tokens: Type.Integer({
          minimum: SURFACE_LIMITS.minThinkingBudget,
          maximum: SURFACE_LIMITS.maxTokensLimit,
          description: 'At least 1,024 and below `max_tokens`.',
        }),
      },
      closed,
    ),
    Type.Object({ type: Type.Literal('adaptive') }, closed),
    Type.Object({ type: Type.Literal('disabled') }, closed),
  ],
  'Extended thinking: `enabled` with a `budget_tokens`, `adaptive` or `disabled`.',
);

const OutputConfig = Type.Object(
  {
    effort: Type.Optional(Type.Enum(['low', 'medium', 'high', 'xhigh', 'max'])),
    format: Type.Optional(
      Type.Object(
        { type: Type.Literal('json_schema'), schema: ObjectSchema('The JSON Schema the answer follows.') },
        closed,
      ),
    ),
  },
  closed,
);

/** Every setting of a request but `model` and `messages`: shared in `params`, or a record's own. */
const modelSettings = {
  max_tokens: Type.Integer({ minimum: 1, maximum: SURFACE_LIMITS.maxTokensLimit, description: 'Default 1024.' }),
  system: Type.Union([Type.String(), Type.Array(TextBlock, { maxItems: SURFACE_LIMITS.maxContentBlocks })], {
    description: 'System prompt: a string, or text blocks (which may carry `cache_control`).',
  }),
  temperature: Type.Number({ minimum: 0, maximum: 1 }),
  top_p: Type.Number({ minimum: 0, maximum: 1 }),
  top_k: Type.Integer({ minimum: 0, maximum: SURFACE_LIMITS.topKLimit }),
  stop_sequences: Type.Array(Type.String({ minLength: 1, maxLength: SURFACE_LIMITS.stopSequenceMaxLength }), {
    maxItems: SURFACE_LIMITS.maxStopSequences,
  }),
  tools: Type.Array(Tool, {
    maxItems: SURFACE_LIMITS.maxTools,
    description: 'Custom tools `{name, description?, input_schema, cache_control?, strict?}`.',
  }),
  tool_choice: ToolChoice,
  thinking: Thinking,
  output_config: OutputConfig,
};

export const optionalModelSettings = Object.fromEntries(
  Object.entries(modelSettings).map(([name, schema]) => [name, Type.Optional(schema)]),
) as { [K in keyof typeof modelSettings]: ReturnType<typeof Type.Optional<(typeof modelSettings)[K]>> };

export const Messages = Type.Array(Message, { minItems: 1, maxItems: SURFACE_LIMITS.maxMessages });

/** A record's request: its messages and any setting of its own (over the shared ones of `params`). */
export const ModelInputSchema = Type.Object({ messages: Messages, ...optionalModelSettings }, closed);

export type Message = Static<typeof Message>;
export type ContentBlock = Exclude<Message['content'], string>[number];
export type TextBlock = Static<typeof TextBlock>;
export type Tool = Static<typeof CustomTool>;
export type ModelSettings = { [K in keyof typeof modelSettings]?: Static<(typeof modelSettings)[K]> };

/** The model parameters of one request, as stored and as the provider will see them (model excluded). */
export type ModelInput = ModelSettings & { max_tokens: number; messages: Message[] };
