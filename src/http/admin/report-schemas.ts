/** Shapes of the admin API's reports: a project's usage by day and model, and the providers of this deployment. */
import { type Static, Type } from 'typebox';
import { UsageResponse } from '../routes/get-usage.js';

/** What GET /usage answers, with the range it covers (the defaults resolved): the days a chart spans. */
export const AdminUsageBody = Type.Object(
  {
    from: Type.String({ description: 'The first day covered, YYYY-MM-DD (UTC), included.' }),
    to: Type.String({ description: 'The last day covered, YYYY-MM-DD (UTC), included.' }),
    ...UsageResponse.properties,
  },
  {
    examples: ((UsageResponse as { examples?: object[] }).examples ?? []).map((example) => ({
      from: '2026-11-21',
      to: '2026-11-22',
      ...example,
    })),
  },
);

export const ProviderBody = Type.Object({
  name: Type.Union(
    [
      Type.Literal('anthropic'),
      Type.Literal('openai'),
      Type.Literal('bedrock'),
      Type.Literal('mock'),
      Type.Literal('openai-compatible'),
    ],
    {
      description: 'As model routes name it (`mock`: svc-mock).',
    },
  ),
  enabled: Type.Boolean({ description: 'Whether this deployment sends batches to it.' }),
  enabled_by: Type.Array(Type.String(), {
    description: 'The settings that enable it, all of them needed (empty: always enabled).',
  }),
  batches_in_flight: Type.Integer({ description: 'Its batches not yet ended: being submitted, or with it.' }),
  last_error: Type.Union(
    [
      Type.Object({
        message: Type.String({ description: 'Why the last try to submit or poll one of its batches failed.' }),
        at: Type.String({ description: 'When, ISO 8601, UTC.' }),
        batch_id: Type.String(),
      }),
      Type.Null(),
    ],
    {
      description:
        "The newest error a batch of it holds; null: none. A batch's error is cleared once a later try succeeds.",
    },
  ),
});

export const ProviderListBody = Type.Object(
  { data: Type.Array(ProviderBody) },
  {
    examples: [
      {
        data: [
          {
            name: 'anthropic',
            enabled: true,
            enabled_by: ['ANTHROPIC_API_KEY'],
            batches_in_flight: 3,
            last_error: {
              message: 'overloaded_error: Overloaded',
              at: '2026-11-22T10:14:03.000Z',
              batch_id: 'bat_01jd5q4a0b1c2d3e4f5g6h7j8k',
            },
          },
          { name: 'openai', enabled: false, enabled_by: ['OPENAI_API_KEY'], batches_in_flight: 0, last_error: null },
          {
            name: 'bedrock',
            enabled: false,
            enabled_by: ['BARGE_BEDROCK_ROLE_ARN', 'BARGE_BEDROCK_S3_URI'],
            batches_in_flight: 0,
            last_error: null,
          },
          { name: 'mock', enabled: true, enabled_by: [], batches_in_flight: 0, last_error: null },
        ],
      },
    ],
  },
);

export type AdminUsageJson = Static<typeof AdminUsageBody>;
export type ProviderJson = Static<typeof ProviderBody>;
