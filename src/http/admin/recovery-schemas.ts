/** Shapes of the admin API's bulk recovery: redeliver a project's failed deliveries of a time window, counted first. */
import { type Static, Type } from 'typebox';
import type { RecoveryCount } from '../../operations/count-recovery.js';
import type { Recovery } from '../../operations/create-recovery.js';
import { recoveryCountView, recoveryView } from '../../operations/recovery-view.js';
import { nullableTime, SlugParams, time } from './schemas.js';

export const RecoveryParams = Type.Object({
  ...SlugParams.properties,
  recovery_id: Type.String({ description: 'The recovery id.', examples: ['rcv_01jd5s0a0b1c2d3e4f5g6h7j8k'] }),
});

const RecoveredStatus = Type.Union([Type.Literal('callback_failed'), Type.Literal('callback_delivered')], {
  description:
    'Which cargo: those whose delivery failed (the default), or those delivered (to send them again). A cargo whose result was purged is not counted.',
});

export const RecoveryRequestBody = Type.Object(
  {
    status: Type.Optional(RecoveredStatus),
    since: Type.String({
      description:
        'Cargo created at or after this time. ISO 8601: a date-time with `Z` or an offset, or a date (midnight UTC).',
      examples: ['2026-11-22T09:00:00Z'],
    }),
    until: Type.Optional(
      Type.String({
        description: 'Cargo created before this time (default, and at most: now).',
        examples: ['2026-11-22T12:00:00Z'],
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ status: 'callback_failed', since: '2026-11-22T09:00:00Z', until: '2026-11-22T12:00:00Z' }],
  },
);

export const DryRunBody = Type.Object(
  {
    status: RecoveredStatus,
    since: time('The window starts here (included).'),
    until: time('The window ends here (excluded).'),
    count: Type.Integer({ description: 'The cargo a recovery made now would redeliver.' }),
  },
  {
    examples: [
      {
        status: 'callback_failed',
        since: '2026-11-22T09:00:00.000Z',
        until: '2026-11-22T12:00:00.000Z',
        count: 4812,
      },
    ],
  },
);

export const RecoveryBody = Type.Object({
  id: Type.String(),
  project: Type.String({ description: "The project's slug." }),
  state: Type.Union([Type.Literal('running'), Type.Literal('completed'), Type.Literal('canceled')], {
    description: '`running` until every cargo of its set was handled, or it was canceled.',
  }),
  status: RecoveredStatus,
  since: time('The window starts here (included).'),
  until: time('The window ends here (excluded); never after the recovery was made.'),
  total: Type.Integer({
    description:
      'The cargo of its set when it was made: in the window, in `status` then, with a result. Cargo that reach `status` later are never swept in.',
  }),
  done: Type.Integer({
    description: 'Of them, handled so far: redelivered, or found to have left `status` meanwhile (skipped).',
  }),
  redelivered: Type.Integer({ description: 'Of them, redelivered: each at most once by this recovery.' }),
  created_at: time('When the recovery was made: its set was fixed then.'),
  updated_at: time('When it last made progress or changed.'),
  finished_at: nullableTime('When it completed or was canceled.'),
});

export const recoveryExample = {
  id: 'rcv_01jd5s0a0b1c2d3e4f5g6h7j8k',
  project: 'acme',
  state: 'running',
  status: 'callback_failed',
  since: '2026-11-22T09:00:00.000Z',
  until: '2026-11-22T12:00:00.000Z',
  total: 4812,
  done: 1500,
  redelivered: 1498,
  created_at: '2026-11-22T12:05:00.000Z',
  updated_at: '2026-11-22T12:05:02.310Z',
  finished_at: null,
};

export const RecoveryListBody = Type.Object(
  { data: Type.Array(RecoveryBody, { description: 'The newest 50, newest first.' }) },
  { examples: [{ data: [recoveryExample] }] },
);

export type RecoveryRequestJson = Static<typeof RecoveryRequestBody>;
export type DryRunJson = Static<typeof DryRunBody>;
export type RecoveryJson = Static<typeof RecoveryBody>;

/** The shapes above, as the operations make them for the CLI too (operations/recovery-view.ts). */
export const recoveryJson: (r: Recovery, projectSlug: string) => RecoveryJson = recoveryView;
export const dryRunJson: (c: RecoveryCount) => DryRunJson = recoveryCountView;
