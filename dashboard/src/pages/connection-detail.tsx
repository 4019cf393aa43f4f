/**
 * One connection: what to hand the customer (external id, trust and permission policies, ready to
 * paste), the capability check with each capability's result and when the next is allowed, and
 * deleting it.
 */

import { useId, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, projectPath, query } from '../api.js';
import { CopyButton } from '../components/copy-button.js';
import { ConfirmDialog } from '../components/dialog.js';
import { JsonBlock } from '../components/json-block.js';
import { Badge, Card, ErrorNotice, Facts, Loading, PageHeader, Time } from '../components/ui.js';
import { projectHref } from '../context.js';
import { relative, utc } from '../format.js';
import { useAction, useNow, useResource } from '../hooks.js';
import type { CheckReport, ConnectionDetail } from '../types.js';
import { connectionKind } from './connections.js';

export function ConnectionDetailPage(props: { slug: string; connectionId: string }) {
  const { slug, connectionId } = props;
  const { route } = useLocation();
  const [keyPrefix, setKeyPrefix] = useState('');
  const path = `${projectPath(slug)}/connections/${encodeURIComponent(connectionId)}`;
  const connection = useResource(
    () => api<ConnectionDetail>('GET', `${path}${query({ key_prefix: keyPrefix })}`),
    [path, keyPrefix],
  );
  const [deleting, setDeleting] = useState(false);
  const prefixId = useId();
  const c = connection.data;
  return (
    <>
      <PageHeader
        title="Connection"
        description={<span class="mono">{connectionId}</span>}
        actions={
          c && (
            <button type="button" class="button button-danger-outline" onClick={() => setDeleting(true)}>
              Delete connection
            </button>
          )
        }
      />
      <p class="back-link">
        <a href={projectHref(slug, '/connections')}>← All connections</a>
      </p>
      {connection.state === 'failed' && (
        <ErrorNotice error={connection.error} retry={connection.reload} title="The connection could not be loaded." />
      )}
      {connection.state === 'loading' && !c && <Loading what="the connection" />}
      {c && (
        <div class="stack">
          {c.status === 'failed' && (
            <div class="notice notice-danger" role="status">
              <strong>Deliveries through this connection are failing.</strong> {c.last_failure_reason} (since{' '}
              {utc(c.last_failed_at)}). A passing check or delivery ends the incident.
            </div>
          )}
          <Card title="Details">
            <Facts
              items={[
                ['Kind', connectionKind(c)],
                ...(c.role_arn
                  ? ([['Role', <span class="mono wrap">{c.role_arn}</span>]] as [string, preact.ComponentChildren][])
                  : []),
                [
                  'External id',
                  <span class="inline-copy">
                    <code class="mono">{c.external_id}</code>
                    <CopyButton text={c.external_id} label="Copy id" />
                  </span>,
                ],
                ...(c.endpoint_url
                  ? ([['Endpoint', <span class="mono">{c.endpoint_url}</span>]] as [string, preact.ComponentChildren][])
                  : []),
                ['Region', c.region ?? <span class="muted">the service default</span>],
                [
                  'Targets allowed',
                  c.allowed_targets === null ? (
                    <span class="muted">any</span>
                  ) : (
                    <span class="mono wrap">{c.allowed_targets.join(', ')}</span>
                  ),
                ],
                ['Status', <Badge tone={c.status === 'active' ? 'success' : 'danger'}>{c.status}</Badge>],
                ['Created', <Time iso={c.created_at} />],
              ]}
            />
          </Card>
          {c.policies ? (
            <Card title="Policies to hand the customer">
              <div class="card-body stack">
                <p>
                  The customer puts the trust policy on the role, and the permission policy on it as its only grant:
                  barge can then assume it (with the external id) and write or send to the allowed targets, nothing
                  else.
                </p>
                {c.policies.placeholders.length > 0 && (
                  <div class="notice notice-warning">
                    <strong>Fill in before pasting:</strong> {c.policies.placeholders.join('; ')}.
                  </div>
                )}
                <div class="inline-field">
                  <label for={prefixId}>Key prefix of bucket deliveries</label>
                  <input
                    id={prefixId}
                    class="input mono input-narrow"
                    placeholder="convoy/"
                    value={keyPrefix}
                    onChange={(event) => setKeyPrefix(event.currentTarget.value)}
                  />
                </div>
                <div class="two-columns">
                  <JsonBlock title="Trust policy" value={c.policies.trust_policy} />
                  <JsonBlock title="Permission policy" value={c.policies.permission_policy} />
                </div>
              </div>
            </Card>
          ) : (
            <Card title="Permissions">
              <p class="card-body">
                Static credentials: give their key <code>PutObject</code> on the bucket in the store's own policy
                language.
              </p>
            </Card>
          )}
          <CapabilityCheck path={path} connection={c} onChecked={connection.reload} />
        </div>
      )}
      {deleting && (
        <ConfirmDialog
          title="Delete this connection?"
          confirmLabel="Delete connection"
          danger
          onConfirm={async () => {
            await api('DELETE', path);
            route(projectHref(slug, '/connections'));
          }}
          onClose={() => setDeleting(false)}
        >
          <p>
            Its pending deliveries fail at once (<code>connection_not_found</code>), and cargo naming it are refused
            from now on. The customer's role is untouched.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}

type TargetKind = 'bucket' | 'queue' | 'topic' | 'bus';

const TARGETS: Record<TargetKind, { label: string; field: string; placeholder: string }> = {
  bucket: { label: 'S3 bucket', field: 'bucket_arn', placeholder: 'arn:aws:s3:::customer-results' },
  queue: {
    label: 'SQS queue',
    field: 'queue_url',
    placeholder: 'https://sqs.eu-west-1.amazonaws.com/444455556666/results',
  },
  topic: { label: 'SNS topic', field: 'topic_arn', placeholder: 'arn:aws:sns:eu-west-1:444455556666:results' },
  bus: {
    label: 'EventBridge bus',
    field: 'event_bus_arn',
    placeholder: 'arn:aws:events:eu-west-1:444455556666:event-bus/results',
  },
};

const CAPABILITY_NAMES: Record<string, string> = {
  assume_role: 'Assume the role',
  put_object: 'Write an object',
  encryption_key: 'Use the encryption key',
  send: 'Send a message',
};

const STATUS_TONES = { ok: 'success', failed: 'danger', skipped: 'neutral', not_used: 'neutral' } as const;

function CapabilityCheck(props: { path: string; connection: ConnectionDetail; onChecked: () => void }) {
  const [kind, setKind] = useState<TargetKind>('bucket');
  const [target, setTarget] = useState(
    props.connection.allowed_targets?.find((t) => t.startsWith('arn:aws:s3:::')) ?? '',
  );
  const [keyPrefix, setKeyPrefix] = useState('');
  const [roleOnly, setRoleOnly] = useState(false);
  const { busy, error, run } = useAction();
  const [report, setReport] = useState<CheckReport | null>(null);
  const nextCheckAt = report?.next_check_at ?? props.connection.next_check_at;
  const now = useNow(nextCheckAt);
  const waiting = !roleOnly && nextCheckAt !== null && Date.parse(nextCheckAt) > now;
  const ids = { kind: useId(), target: useId(), prefix: useId(), reason: useId() };
  const check = (event: Event) => {
    event.preventDefault();
    const body: Record<string, unknown> = { [TARGETS[kind].field]: target.trim() };
    if (kind === 'bucket' && keyPrefix.trim()) body.key_prefix = keyPrefix.trim();
    if (roleOnly) body.role_only = true;
    void run(async () => {
      setReport(await api<CheckReport>('POST', `${props.path}/check`, body));
      props.onChecked();
    });
  };
  return (
    <Card title="Capability check">
      <form class="card-body stack" onSubmit={check} noValidate>
        <p>
          Tries each thing a delivery needs, against a real target: assume the role, then write a small verification
          object (a bucket) or send one message marked <code>barge_verification</code>. One that writes or sends may run
          once a minute.
        </p>
        <div class="form-grid">
          <div>
            <label class="field-label" for={ids.kind}>
              Target
            </label>
            <select
              id={ids.kind}
              class="input select"
              value={kind}
              onChange={(e) => setKind(e.currentTarget.value as TargetKind)}
            >
              {(Object.keys(TARGETS) as TargetKind[]).map((k) => (
                <option key={k} value={k}>
                  {TARGETS[k].label}
                </option>
              ))}
            </select>
          </div>
          <div class="grow">
            <label class="field-label" for={ids.target}>
              {kind === 'queue' ? 'Queue URL' : `${TARGETS[kind].label} ARN`}
            </label>
            <input
              id={ids.target}
              class="input mono"
              value={target}
              placeholder={TARGETS[kind].placeholder}
              onInput={(e) => setTarget(e.currentTarget.value)}
              spellcheck={false}
            />
          </div>
          {kind === 'bucket' && (
            <div>
              <label class="field-label" for={ids.prefix}>
                Key prefix
              </label>
              <input
                id={ids.prefix}
                class="input mono input-narrow"
                value={keyPrefix}
                placeholder="convoy/"
                onInput={(e) => setKeyPrefix(e.currentTarget.value)}
              />
            </div>
          )}
        </div>
        <label class="checkbox">
          <input type="checkbox" checked={roleOnly} onChange={(e) => setRoleOnly(e.currentTarget.checked)} />
          Only assume the role (writes and sends nothing; not limited to once a minute)
        </label>
        <div class="form-actions">
          <button
            type="submit"
            class="button button-primary"
            disabled={busy || waiting || target.trim() === ''}
            aria-describedby={ids.reason}
          >
            {busy ? 'Checking…' : 'Run check'}
          </button>
          <span id={ids.reason} class="field-hint" aria-live="polite">
            {waiting && nextCheckAt
              ? `The next check that writes or sends may run at ${utc(nextCheckAt, { seconds: true })} (${relative(nextCheckAt, now)}).`
              : nextCheckAt === null || roleOnly
                ? 'A check may run now.'
                : `A check may run now (allowed since ${utc(nextCheckAt)}).`}
          </span>
        </div>
        {error && <ErrorNotice error={error} title="The check did not run." />}
        {report && (
          <div class="check-report" aria-live="polite">
            <div class={`notice ${report.ok ? 'notice-success' : 'notice-danger'}`} role="status">
              <strong>{report.ok ? 'Every capability works.' : 'A capability failed.'}</strong> Target{' '}
              <span class="mono">{report.target}</span>
              {report.object_key && (
                <>
                  ; wrote <span class="mono">{report.object_key}</span>
                </>
              )}
              .
            </div>
            <ol class="capabilities">
              {report.capabilities.map((capability) => (
                <li key={capability.capability} class={`capability capability-${capability.status}`}>
                  <Badge tone={STATUS_TONES[capability.status]}>{capability.status.replace('_', ' ')}</Badge>
                  <div>
                    <strong>{CAPABILITY_NAMES[capability.capability] ?? capability.capability}</strong>
                    <p class="muted">{capability.detail}</p>
                  </div>
                </li>
              ))}
            </ol>
          </div>
        )}
      </form>
    </Card>
  );
}
