/**
 * Bulk recovery: redeliver every cargo of a project whose delivery failed (or was delivered, to
 * send it again) in a time window. It counts first (a dry run); then the server works through the
 * whole set, fixed when it starts, with its progress shown here and a way to stop it.
 */

import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, projectPath, query } from '../api.js';
import { InactiveNotice } from '../components/project-notice.js';
import { Badge, Card, ErrorNotice, Loading, PageHeader, Time } from '../components/ui.js';
import { UtcTimeField } from '../components/utc-time-field.js';
import { projectHref } from '../context.js';
import { count, DAY_MS, utc } from '../format.js';
import { useAction, usePolling, useResource } from '../hooks.js';
import type { DryRun, Recovery } from '../types.js';

type RecoveredStatus = Recovery['status'];

const STATE_TONES = { running: 'info', completed: 'success', canceled: 'neutral' } as const;

export function RecoveryPage(props: { slug: string }) {
  const { slug } = props;
  const location = useLocation();
  const base = `${projectPath(slug)}/recoveries`;
  const [status, setStatus] = useState<RecoveredStatus>('callback_failed');
  const [since, setSince] = useState(location.query.since || new Date(Date.now() - DAY_MS).toISOString());
  const [until, setUntil] = useState(location.query.until ?? '');
  const [dryRun, setDryRun] = useState<DryRun | null>(null);
  const { busy, error, run: act } = useAction();
  const recoveries = useResource(() => api<{ data: Recovery[] }>('GET', base).then((r) => r.data), [base]);
  const running = recoveries.data?.some((r) => r.state === 'running') ?? false;
  usePolling(recoveries.reload, 1000, running);
  const selection = () => ({ status, since, ...(until ? { until } : {}) });
  const changed = (apply: () => void) => {
    apply();
    setDryRun(null);
  };

  return (
    <>
      <PageHeader
        title="Recover failed deliveries"
        description="After a receiver's outage: redeliver every cargo whose delivery failed in a time window. Count them first; then barge works through the whole set on the server, in bounded chunks, and you can stop it."
      />
      <InactiveNotice slug={slug} />
      <Card title="1. Choose the cargo">
        <form
          class="card-body stack"
          noValidate
          onSubmit={(event) => {
            event.preventDefault();
            void act(async () => setDryRun(await api<DryRun>('POST', `${base}/dry-run`, selection())));
          }}
        >
          <fieldset class="fieldset">
            <legend class="field-label">Which cargo</legend>
            <div class="segmented">
              <label class={`segment ${status === 'callback_failed' ? 'selected' : ''}`}>
                <input
                  type="radio"
                  name="status"
                  checked={status === 'callback_failed'}
                  onChange={() => changed(() => setStatus('callback_failed'))}
                />
                Delivery failed
              </label>
              <label class={`segment ${status === 'callback_delivered' ? 'selected' : ''}`}>
                <input
                  type="radio"
                  name="status"
                  checked={status === 'callback_delivered'}
                  onChange={() => changed(() => setStatus('callback_delivered'))}
                />
                Delivered (send again)
              </label>
            </div>
          </fieldset>
          <div class="form-grid">
            <UtcTimeField label="Created from" value={since} onChange={(v) => changed(() => setSince(v))} required />
            <UtcTimeField
              label="Created before"
              note="optional: now"
              value={until}
              onChange={(v) => changed(() => setUntil(v))}
            />
            <div class="form-actions align-end">
              <button type="submit" class="button button-secondary" disabled={busy || since === ''}>
                Count them (dry run)
              </button>
            </div>
          </div>
          {dryRun && (
            <div class={`notice ${dryRun.count > 0 ? 'notice-info' : 'notice-success'}`} role="status">
              {dryRun.count > 0 ? (
                <>
                  <strong>{count(dryRun.count)} cargo</strong> would be redelivered:{' '}
                  {dryRun.status === 'callback_failed' ? 'delivery failed' : 'delivered'}, created from{' '}
                  {utc(dryRun.since)} to {utc(dryRun.until)}.
                </>
              ) : (
                <>
                  <strong>Nothing to recover</strong> from {utc(dryRun.since)} to {utc(dryRun.until)}.
                </>
              )}
            </div>
          )}
        </form>
      </Card>
      <Card title="2. Redeliver them">
        <div class="card-body stack">
          <p class="muted">
            The set is fixed when the recovery starts: cargo that fail later are not swept in. Each is redelivered at
            most once by it, on every channel it asked for.
          </p>
          <div class="form-actions">
            <button
              type="button"
              class="button button-primary"
              disabled={busy || dryRun === null || dryRun.count === 0}
              aria-describedby="recover-reason"
              onClick={() =>
                act(async () => {
                  await api<Recovery>('POST', base, selection());
                  setDryRun(null);
                  recoveries.reload();
                })
              }
            >
              {dryRun && dryRun.count > 0 ? `Redeliver ${count(dryRun.count)} cargo` : 'Redeliver'}
            </button>
            <span id="recover-reason" class="field-hint">
              {dryRun === null ? 'Count them first.' : dryRun.count === 0 ? 'Nothing to redeliver in this window.' : ''}
            </span>
          </div>
          {error && <ErrorNotice error={error} title="That did not work." />}
        </div>
      </Card>
      <Card
        title="Recoveries"
        actions={<a href={projectHref(slug, `/cargo${query({ status: 'callback_failed' })}`)}>Failed cargo →</a>}
      >
        {recoveries.state === 'failed' && (
          <ErrorNotice error={recoveries.error} retry={recoveries.reload} title="The recoveries could not be loaded." />
        )}
        {recoveries.state === 'loading' && !recoveries.data && <Loading what="recoveries" />}
        {recoveries.data && recoveries.data.length === 0 && (
          <p class="card-body muted">None yet. Count a window above, then redeliver it.</p>
        )}
        {recoveries.data && recoveries.data.length > 0 && (
          <ul class="recoveries">
            {recoveries.data.map((r) => (
              <RecoveryRow
                key={r.id}
                recovery={r}
                onCancel={() =>
                  act(async () => {
                    await api<Recovery>('POST', `${base}/${encodeURIComponent(r.id)}/cancel`);
                    recoveries.reload();
                  })
                }
                busy={busy}
              />
            ))}
          </ul>
        )}
      </Card>
    </>
  );
}

function RecoveryRow(props: { recovery: Recovery; onCancel: () => void; busy: boolean }) {
  const r = props.recovery;
  const percent = r.total === 0 ? 100 : Math.floor((r.done / r.total) * 100);
  const labelId = `recovery-${r.id}`;
  return (
    <li class="recovery">
      <div class="recovery-head">
        <Badge tone={STATE_TONES[r.state]}>{r.state}</Badge>
        <span id={labelId}>
          {r.status === 'callback_failed' ? 'Failed deliveries' : 'Delivered cargo'} created {utc(r.since)} to{' '}
          {utc(r.until)}
        </span>
        {r.state === 'running' && (
          <button
            type="button"
            class="button button-secondary button-small"
            disabled={props.busy}
            onClick={props.onCancel}
          >
            Cancel
          </button>
        )}
      </div>
      <progress
        class="progress"
        max={Math.max(r.total, 1)}
        value={r.total === 0 ? 1 : r.done}
        aria-labelledby={labelId}
        aria-valuetext={`${percent}%`}
      />
      <p class="muted recovery-figures">
        {count(r.done)} of {count(r.total)} handled ({percent}%) · {count(r.redelivered)} redelivered · started{' '}
        <Time iso={r.created_at} seconds />
        {r.finished_at && (
          <>
            {' '}
            · {r.state === 'canceled' ? 'canceled' : 'finished'} <Time iso={r.finished_at} seconds />
          </>
        )}
      </p>
    </li>
  );
}
