/**
 * One cargo's story: where it stands, its batch and provider job, its result (never the response),
 * a timeline of its status changes and every delivery attempt (with a table view of the same), and
 * redelivery, disabled with the reason while it cannot run. Refreshes itself while the cargo moves.
 */
import { useState } from 'preact/hooks';
import { api, projectPath } from '../api.js';
import {
  Badge,
  Card,
  ErrorNotice,
  Facts,
  Loading,
  PageHeader,
  StatusBadge,
  TableScroll,
  Time,
  Toggle,
} from '../components/ui.js';
import { projectHref } from '../context.js';
import { count, usd, utcPrecise } from '../format.js';
import { useAction, usePolling, useResource } from '../hooks.js';
import type { CargoDetail, Redelivery } from '../types.js';

const SETTLED = new Set(['callback_delivered', 'callback_failed', 'failed', 'canceled', 'completed']);

type Attempt = CargoDetail['attempts'][number];
type Event =
  | { kind: 'status'; at: string; status: CargoDetail['status'] }
  | { kind: 'attempt'; at: string; attempt: Attempt };

function timeline(cargo: CargoDetail): Event[] {
  const events: Event[] = [
    ...cargo.history.map((h) => ({ kind: 'status' as const, at: h.at, status: h.status })),
    ...cargo.attempts.map((a) => ({ kind: 'attempt' as const, at: a.started_at, attempt: a })),
  ];
  // Stable: a status change and an attempt at the same instant keep the order above (history first).
  return events.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
}

function attemptOutcome(a: Attempt): string {
  if (a.error_class === null) return a.status_code === null ? 'delivered' : `delivered (HTTP ${a.status_code})`;
  return a.error_detail ?? (a.status_code === null ? a.error_class : `HTTP ${a.status_code}`);
}

export function CargoDetailPage(props: { slug: string; cargoId: string }) {
  const { slug, cargoId } = props;
  const path = `${projectPath(slug)}/cargo/${encodeURIComponent(cargoId)}`;
  const cargo = useResource(() => api<CargoDetail>('GET', path), [path]);
  const [view, setView] = useState<'timeline' | 'table'>('timeline');
  const { busy: redelivering, error, run } = useAction();
  const [redelivered, setRedelivered] = useState<Redelivery | null>(null);
  const c = cargo.data;
  usePolling(cargo.reload, 3000, c !== undefined && !SETTLED.has(c.status));
  const redeliver = () => {
    setRedelivered(null);
    void run(async () => {
      setRedelivered(await api<Redelivery>('POST', `${path}/redeliver`));
      cargo.reload();
    });
  };
  const reasonId = 'redeliver-reason';
  return (
    <>
      <PageHeader
        title="Cargo"
        description={<span class="mono">{cargoId}</span>}
        actions={
          c && (
            <div class="action-with-reason">
              <button
                type="button"
                class="button button-primary"
                disabled={!c.redeliver.available || redelivering}
                aria-describedby={c.redeliver.available ? undefined : reasonId}
                onClick={redeliver}
              >
                {redelivering ? 'Scheduling…' : 'Redeliver'}
              </button>
              {!c.redeliver.available && c.redeliver.refusal && (
                <span id={reasonId} class="field-hint">
                  {c.redeliver.refusal.message}
                </span>
              )}
            </div>
          )
        }
      />
      <p class="back-link">
        <a href={projectHref(slug, '/cargo')}>← All cargo</a>
      </p>
      {error && <ErrorNotice error={error} title="The redelivery was not scheduled." />}
      {redelivered && (
        <div class="notice notice-success" role="status">
          A fresh delivery was scheduled on {redelivered.channels.join(' and ')}; the attempts appear below as they are
          made.
        </div>
      )}
      {cargo.state === 'failed' && (
        <ErrorNotice error={cargo.error} retry={cargo.reload} title="The cargo could not be loaded." />
      )}
      {cargo.state === 'loading' && !c && <Loading what="the cargo" />}
      {c && (
        <div class="detail-grid">
          <div class="stack">
            <Card title="Where it stands">
              <div class="card-body status-line">
                <StatusBadge status={c.status} />
                <span>{c.status_description}</span>
              </div>
              <Facts
                items={[
                  ['Model', <span class="mono">{c.model}</span>],
                  ['Routed to', <span class="mono">{`${c.provider} · ${c.provider_model}`}</span>],
                  ['Requests', count(c.request_count) + (c.records ? ' (records)' : '')],
                  [
                    'Delivery',
                    c.callback_url ? (
                      <span class="mono wrap">webhook {c.callback_url}</span>
                    ) : c.callback ? (
                      <span class="mono wrap">{JSON.stringify(c.callback)}</span>
                    ) : (
                      <span class="muted">none (the result waits in the mailbox)</span>
                    ),
                  ],
                  [
                    'Metadata',
                    c.metadata === null || c.metadata === undefined ? (
                      <span class="muted">none</span>
                    ) : (
                      <span class="mono wrap">{JSON.stringify(c.metadata)}</span>
                    ),
                  ],
                  ['Created', <Time iso={c.created_at} seconds />],
                  ['Updated', <Time iso={c.updated_at} seconds />],
                ]}
              />
            </Card>
            <Card
              title="History"
              actions={
                <Toggle
                  label="Show the history as"
                  options={[
                    ['timeline', 'Timeline'],
                    ['table', 'Table'],
                  ]}
                  value={view}
                  onChange={setView}
                />
              }
            >
              {c.attempts_omitted > 0 && (
                <p class="card-body muted">
                  {count(c.attempts_omitted)} older attempts are left out: the newest 1,000 are shown.
                </p>
              )}
              {view === 'timeline' ? <Timeline events={timeline(c)} /> : <EventTable events={timeline(c)} />}
            </Card>
          </div>
          <div class="stack">
            <Card title="Batch">
              {c.batch === null ? (
                <p class="card-body muted">Not batched yet: it waits for the next batch of {c.provider_model}.</p>
              ) : (
                <Facts
                  items={[
                    ['Batch', <span class="mono">{c.batch.id}</span>],
                    ['Status', c.batch.status],
                    [
                      'Provider job',
                      c.batch.job_id ? (
                        <span class="mono wrap">{c.batch.job_id}</span>
                      ) : (
                        <span class="muted">not accepted yet</span>
                      ),
                    ],
                    ['Formed', <Time iso={c.batch.created_at} seconds />],
                    ['Submitted', <Time iso={c.batch.submitted_at} seconds never="not yet" />],
                    ['Ended', <Time iso={c.batch.ended_at} seconds never="not yet" />],
                    ...(c.batch.end_reason ? ([['End reason', c.batch.end_reason]] as [string, string][]) : []),
                    ...(c.batch.last_error
                      ? ([['Last error', <span class="text-danger">{c.batch.last_error}</span>]] as [
                          string,
                          preact.ComponentChildren,
                        ][])
                      : []),
                  ]}
                />
              )}
            </Card>
            <Card title="Result">
              {c.result === null ? (
                <p class="card-body muted">No result yet.</p>
              ) : (
                <Facts
                  items={[
                    [
                      'Outcome',
                      c.result.success ? <Badge tone="success">success</Badge> : <Badge tone="danger">failed</Badge>,
                    ],
                    ...(c.result.error_message ? ([['Error', c.result.error_message]] as [string, string][]) : []),
                    ['Tokens', `${count(c.result.input_tokens)} in · ${count(c.result.output_tokens)} out`],
                    ['Cost (batch prices)', usd(c.result.cost_usd)],
                    ['Produced', <Time iso={c.result.created_at} seconds />],
                    [
                      c.result.purged_at ? 'Purged' : 'Kept until',
                      <Time iso={c.result.purged_at ?? c.result.expires_at} />,
                    ],
                  ]}
                />
              )}
            </Card>
            <Card title="Deliveries">
              {c.deliveries.length === 0 ? (
                <p class="card-body muted">
                  {c.callback_url || c.callback
                    ? 'No delivery yet: it starts once the result is stored.'
                    : 'None asked for.'}
                </p>
              ) : (
                <ul class="deliveries">
                  {c.deliveries.map((d) => (
                    <li key={d.id}>
                      <div class="delivery-head">
                        <strong>{d.channel}</strong>
                        <Badge tone={d.status === 'delivered' ? 'success' : d.status === 'failed' ? 'danger' : 'info'}>
                          {d.status}
                        </Badge>
                        <span class="muted">
                          {d.trigger} · {d.attempts} attempt{d.attempts === 1 ? '' : 's'}
                        </span>
                      </div>
                      {d.status === 'pending' && d.next_attempt_at && (
                        <p class="muted">
                          Next attempt <Time iso={d.next_attempt_at} seconds />
                        </p>
                      )}
                      {d.last_error && <p class="text-danger">{d.last_error}</p>}
                    </li>
                  ))}
                </ul>
              )}
            </Card>
          </div>
        </div>
      )}
    </>
  );
}

function Timeline(props: { events: Event[] }) {
  return (
    <ol class="timeline">
      {props.events.map((event, index) =>
        event.kind === 'status' ? (
          <li key={`s${index}`} class="timeline-item timeline-status">
            <span class="timeline-dot" aria-hidden="true" />
            <div class="timeline-content">
              <div class="timeline-title">
                Became <StatusBadge status={event.status} />
              </div>
              <time class="timeline-time" dateTime={event.at}>
                {utcPrecise(event.at)}
              </time>
            </div>
          </li>
        ) : (
          <li
            key={event.attempt.id}
            class={`timeline-item timeline-attempt ${event.attempt.error_class === null ? 'ok' : 'failed'}`}
          >
            <span class="timeline-dot" aria-hidden="true" />
            <div class="timeline-content">
              <div class="timeline-title timeline-sentence">
                {event.attempt.channel} attempt {event.attempt.attempt}
                {event.attempt.trigger !== 'result' && <span class="muted"> ({event.attempt.trigger})</span>}:{' '}
                <span class={event.attempt.error_class === null ? 'text-success' : 'text-danger'}>
                  {attemptOutcome(event.attempt)}
                </span>
              </div>
              <time class="timeline-time" dateTime={event.at}>
                {utcPrecise(event.at)} · {count(event.attempt.duration_ms)} ms
                {event.attempt.error_class && ` · ${event.attempt.error_class}`}
              </time>
              {event.attempt.response_excerpt && <pre class="excerpt">{event.attempt.response_excerpt}</pre>}
            </div>
          </li>
        ),
      )}
    </ol>
  );
}

function EventTable(props: { events: Event[] }) {
  return (
    <TableScroll label="Status changes and delivery attempts">
      <table class="table table-compact">
        <caption class="visually-hidden">Status changes and delivery attempts, oldest first</caption>
        <thead>
          <tr>
            <th scope="col">Time (UTC)</th>
            <th scope="col">Event</th>
            <th scope="col">Outcome</th>
            <th scope="col" class="numeric">
              Duration
            </th>
            <th scope="col">Answer (first bytes)</th>
          </tr>
        </thead>
        <tbody>
          {props.events.map((event, index) =>
            event.kind === 'status' ? (
              <tr key={`s${index}`}>
                <td class="mono nowrap">{utcPrecise(event.at).replace(' UTC', '')}</td>
                <td>status change</td>
                <td>
                  <StatusBadge status={event.status} />
                </td>
                <td />
                <td />
              </tr>
            ) : (
              <tr key={event.attempt.id}>
                <td class="mono nowrap">{utcPrecise(event.at).replace(' UTC', '')}</td>
                <td>
                  {event.attempt.channel} attempt {event.attempt.attempt} ({event.attempt.trigger})
                </td>
                <td class={event.attempt.error_class === null ? 'text-success' : 'text-danger'}>
                  {attemptOutcome(event.attempt)}
                </td>
                <td class="numeric">{count(event.attempt.duration_ms)} ms</td>
                <td class="mono wrap excerpt-cell">{event.attempt.response_excerpt ?? ''}</td>
              </tr>
            ),
          )}
        </tbody>
      </table>
    </TableScroll>
  );
}
