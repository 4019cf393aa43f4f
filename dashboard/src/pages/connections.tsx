/** A project's delivery connections: the list, and making one (then its page shows the policies to hand over). */
import { useId, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, projectPath } from '../api.js';
import { FormDialog } from '../components/dialog.js';
import { InactiveNotice } from '../components/project-notice.js';
import { Badge, EmptyState, ErrorNotice, Loading, PageHeader, TableCard, Time } from '../components/ui.js';
import { projectHref } from '../context.js';
import { useResource } from '../hooks.js';
import type { Connection, ConnectionDetail } from '../types.js';

export const connectionKind = (c: Connection) => (c.kind === 'assume_role' ? 'AWS role' : 'Static credentials');

export function ConnectionsPage(props: { slug: string }) {
  const { slug } = props;
  const { route } = useLocation();
  const connections = useResource(
    () => api<{ data: Connection[] }>('GET', `${projectPath(slug)}/connections`).then((r) => r.data),
    [slug],
  );
  const [creating, setCreating] = useState(false);
  const newButton = (
    <button type="button" class="button button-primary" onClick={() => setCreating(true)}>
      New connection
    </button>
  );
  return (
    <>
      <PageHeader
        title="Connections"
        description={
          <>
            How barge reaches a customer's AWS account (or an S3-compatible store) to deliver results into their bucket,
            queue, topic or event bus. A cargo names one in its <code>callback</code>.
          </>
        }
        actions={newButton}
      />
      <InactiveNotice slug={slug} />
      {connections.state === 'failed' && (
        <ErrorNotice
          error={connections.error}
          retry={connections.reload}
          title="The connections could not be loaded."
        />
      )}
      {connections.state === 'loading' && !connections.data && <Loading what="connections" />}
      {connections.data && connections.data.length === 0 && (
        <EmptyState title="No connections yet" action={newButton}>
          Make one with the customer's role ARN: barge then gives you the trust and permission policies to hand them,
          and a check that proves each capability works.
        </EmptyState>
      )}
      {connections.data && connections.data.length > 0 && (
        <TableCard
          caption={`Delivery connections of ${slug}`}
          columns={['Connection', 'Kind', 'Role or endpoint', 'Targets allowed', 'Status', 'Last check (UTC)']}
        >
          {connections.data.map((c) => (
            <tr key={c.id}>
              <th scope="row">
                <a class="mono strong-link" href={projectHref(slug, `/connections/${c.id}`)}>
                  {c.id}
                </a>
              </th>
              <td>{connectionKind(c)}</td>
              <td class="mono wrap">{c.role_arn ?? c.endpoint_url ?? 'AWS'}</td>
              <td class="wrap">
                {c.allowed_targets === null ? <span class="muted">any</span> : c.allowed_targets.join(', ')}
              </td>
              <td>
                <Badge tone={c.status === 'active' ? 'success' : 'danger'}>{c.status}</Badge>
              </td>
              <td>
                <Time iso={c.last_check_at} never="never" />
              </td>
            </tr>
          ))}
        </TableCard>
      )}
      {creating && (
        <NewConnectionDialog
          slug={slug}
          onClose={() => setCreating(false)}
          onCreated={(c) => route(projectHref(slug, `/connections/${c.id}`))}
        />
      )}
    </>
  );
}

function NewConnectionDialog(props: { slug: string; onClose: () => void; onCreated: (c: ConnectionDetail) => void }) {
  const [kind, setKind] = useState<'role' | 'static'>('role');
  const [roleArn, setRoleArn] = useState('');
  const [accessKeyId, setAccessKeyId] = useState('');
  const [secretAccessKey, setSecretAccessKey] = useState('');
  const [endpoint, setEndpoint] = useState('');
  const [region, setRegion] = useState('');
  const [allow, setAllow] = useState('');
  const ids = { role: useId(), key: useId(), secret: useId(), endpoint: useId(), region: useId(), allow: useId() };
  const submit = async () => {
    const targets = allow
      .split(/[\s,]+/)
      .map((t) => t.trim())
      .filter(Boolean);
    const body = {
      ...(kind === 'role'
        ? { role_arn: roleArn.trim() }
        : {
            access_key_id: accessKeyId.trim(),
            secret_access_key: secretAccessKey,
            ...(endpoint.trim() ? { endpoint: endpoint.trim() } : {}),
          }),
      ...(region.trim() ? { region: region.trim() } : {}),
      ...(targets.length > 0 ? { allow: targets } : {}),
    };
    props.onCreated(await api<ConnectionDetail>('POST', `${projectPath(props.slug)}/connections`, body));
  };
  return (
    <FormDialog
      title="New connection"
      submitLabel="Create connection"
      busyLabel="Creating…"
      canSubmit={kind === 'role' ? roleArn.trim() !== '' : accessKeyId.trim() !== '' && secretAccessKey !== ''}
      onSubmit={submit}
      onClose={props.onClose}
      wide
    >
      <fieldset class="fieldset">
        <legend class="field-label">How barge gets in</legend>
        <div class="segmented">
          <label class={`segment ${kind === 'role' ? 'selected' : ''}`}>
            <input type="radio" name="kind" checked={kind === 'role'} onChange={() => setKind('role')} />
            Assume the customer's AWS role
          </label>
          <label class={`segment ${kind === 'static' ? 'selected' : ''}`}>
            <input type="radio" name="kind" checked={kind === 'static'} onChange={() => setKind('static')} />
            Static credentials (S3-compatible store)
          </label>
        </div>
      </fieldset>
      {kind === 'role' ? (
        <>
          <label class="field-label" for={ids.role}>
            Role ARN
          </label>
          <input
            id={ids.role}
            class="input mono"
            value={roleArn}
            onInput={(e) => setRoleArn(e.currentTarget.value)}
            placeholder="arn:aws:iam::444455556666:role/barge-delivery"
            spellcheck={false}
            autofocus
          />
          <p class="field-hint">
            barge assumes it with an external id it makes for this connection; the trust policy requires it.
          </p>
        </>
      ) : (
        <>
          <label class="field-label" for={ids.key}>
            Access key id
          </label>
          <input
            id={ids.key}
            class="input mono"
            value={accessKeyId}
            onInput={(e) => setAccessKeyId(e.currentTarget.value)}
            spellcheck={false}
            autofocus
          />
          <label class="field-label" for={ids.secret}>
            Secret access key
          </label>
          <input
            id={ids.secret}
            class="input mono"
            type="password"
            autoComplete="off"
            value={secretAccessKey}
            onInput={(e) => setSecretAccessKey(e.currentTarget.value)}
          />
          <p class="field-hint">Stored sealed with the service's BARGE_SECRET_KEY and never shown again.</p>
          <label class="field-label" for={ids.endpoint}>
            Endpoint <span class="optional">optional</span>
          </label>
          <input
            id={ids.endpoint}
            class="input mono"
            value={endpoint}
            onInput={(e) => setEndpoint(e.currentTarget.value)}
            placeholder="https://minio.example.com"
            spellcheck={false}
          />
        </>
      )}
      <label class="field-label" for={ids.region}>
        Region <span class="optional">optional</span>
      </label>
      <input
        id={ids.region}
        class="input mono"
        value={region}
        onInput={(e) => setRegion(e.currentTarget.value)}
        placeholder="eu-west-1"
        spellcheck={false}
      />
      <label class="field-label" for={ids.allow}>
        Targets allowed <span class="optional">optional, one ARN a line</span>
      </label>
      <textarea
        id={ids.allow}
        class="input mono"
        rows={3}
        value={allow}
        onInput={(e) => setAllow(e.currentTarget.value)}
        placeholder="arn:aws:s3:::customer-results"
        spellcheck={false}
      />
      <p class="field-hint">
        Buckets, queues, topics or event buses cargo may name; none listed: any. The permission policy grants these
        only.
      </p>
    </FormDialog>
  );
}
