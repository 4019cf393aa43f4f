/**
 * A project's API keys: the list (prefix, standing, expiry, last use; never a key), a new key shown
 * once in a dialog with a copy button and a curl example that must be confirmed before it closes,
 * expiry presets in UTC, and deactivation after a confirmation.
 */
import { useId, useState } from 'preact/hooks';
import { api, projectPath } from '../api.js';
import { CopyButton } from '../components/copy-button.js';
import { ConfirmDialog, FormDialog, SecretDialog } from '../components/dialog.js';
import { InactiveNotice } from '../components/project-notice.js';
import { Badge, EmptyState, ErrorNotice, Loading, PageHeader, TableCard, Time } from '../components/ui.js';
import { DAY_MS, utc, utcDay } from '../format.js';
import { useResource } from '../hooks.js';
import type { ApiKey, CreatedApiKey } from '../types.js';

function keyStanding(key: ApiKey): { label: string; tone: 'success' | 'neutral' | 'warning' } {
  if (!key.is_active) return { label: 'deactivated', tone: 'neutral' };
  if (key.expires_at !== null && Date.parse(key.expires_at) <= Date.now()) return { label: 'expired', tone: 'warning' };
  return { label: 'active', tone: 'success' };
}

export function KeysPage(props: { slug: string }) {
  const { slug } = props;
  const keys = useResource(
    () => api<{ data: ApiKey[] }>('GET', `${projectPath(slug)}/keys`).then((r) => r.data),
    [slug],
  );
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const [deactivating, setDeactivating] = useState<ApiKey | null>(null);
  const newButton = (
    <button type="button" class="button button-primary" onClick={() => setCreating(true)}>
      New API key
    </button>
  );
  // Newest first: the key just made is at the top.
  const listed = keys.data ? [...keys.data].reverse() : undefined;
  return (
    <>
      <PageHeader
        title="API keys"
        description={
          <>
            Applications of <strong>{slug}</strong> send cargo with one of these, in the <code>X-API-Key</code> header.
            barge keeps only a hash: a key is shown once, when it is made.
          </>
        }
        actions={newButton}
      />
      <InactiveNotice slug={slug} />
      {keys.state === 'failed' && (
        <ErrorNotice error={keys.error} retry={keys.reload} title="The keys could not be loaded." />
      )}
      {keys.state === 'loading' && !keys.data && <Loading what="API keys" />}
      {listed && listed.length === 0 && (
        <EmptyState title="No API keys yet" action={newButton}>
          Make a key, then send your first cargo with it: the dialog shows a curl command ready to paste.
        </EmptyState>
      )}
      {listed && listed.length > 0 && (
        <TableCard
          caption={`API keys of ${slug}, newest first`}
          columns={[
            'Name',
            'Key',
            'Status',
            'Expires (UTC)',
            'Last used (UTC)',
            'Created (UTC)',
            { label: 'Actions', hidden: true },
          ]}
        >
          {listed.map((key) => {
            const standing = keyStanding(key);
            return (
              <tr key={key.id}>
                <th scope="row">{key.name}</th>
                <td>
                  <code class="mono">{key.key_prefix}…</code>
                </td>
                <td>
                  <Badge tone={standing.tone}>{standing.label}</Badge>
                </td>
                <td>
                  <Time iso={key.expires_at} never="never" />
                </td>
                <td>
                  <Time iso={key.last_used_at} never="not yet" />
                </td>
                <td>
                  <Time iso={key.created_at} />
                </td>
                <td class="row-actions">
                  {key.is_active && (
                    <button
                      type="button"
                      class="button button-secondary button-small"
                      aria-label={`Deactivate the key ${key.name} (${key.key_prefix}…)`}
                      onClick={() => setDeactivating(key)}
                    >
                      Deactivate
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </TableCard>
      )}
      {creating && (
        <NewKeyDialog
          slug={slug}
          onClose={() => setCreating(false)}
          onCreated={(key) => {
            setCreating(false);
            setCreated(key);
            keys.reload();
          }}
        />
      )}
      {created && (
        <SecretDialog
          title={`API key ${created.name} created`}
          label="API key"
          secret={created.key}
          onDone={() => setCreated(null)}
        >
          <CurlExample apiKey={created.key} />
        </SecretDialog>
      )}
      {deactivating && (
        <ConfirmDialog
          title={`Deactivate the key ${deactivating.name}?`}
          confirmLabel="Deactivate key"
          danger
          onConfirm={async () => {
            await api('POST', `${projectPath(slug)}/keys/${encodeURIComponent(deactivating.id)}/deactivate`);
            keys.reload();
          }}
          onClose={() => setDeactivating(null)}
        >
          <p>
            Requests with <code class="mono">{deactivating.key_prefix}…</code> are refused (401) from the next one on,
            in every barge process. This cannot be undone: make a new key if it is needed again.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}

function CurlExample(props: { apiKey: string }) {
  const command = [
    `curl -X POST ${location.origin}/cargo/load \\`,
    `  -H "X-API-Key: ${props.apiKey}" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -d '{"params": {"model": "svc-mock", "max_tokens": 64, "messages": [{"role": "user", "content": "Hello"}]}}'`,
  ].join('\n');
  return (
    <div class="example">
      <div class="example-header">
        <span class="field-label">Try it: load a cargo for the free svc-mock model</span>
        <CopyButton text={command} label="Copy command" />
      </div>
      <pre class="code-block">{command}</pre>
    </div>
  );
}

/** Expiry presets: the UTC midnight after so many days, so a key ends at a round time everyone reads alike. */
const PRESETS: [string, number | null][] = [
  ['Never', null],
  ['7 days', 7],
  ['30 days', 30],
  ['90 days', 90],
  ['1 year', 365],
];

const midnightAfter = (days: number) => Math.ceil((Date.now() + days * DAY_MS) / DAY_MS) * DAY_MS;

function NewKeyDialog(props: { slug: string; onClose: () => void; onCreated: (key: CreatedApiKey) => void }) {
  const [name, setName] = useState('');
  const [preset, setPreset] = useState<string>('Never');
  const [date, setDate] = useState(utcDay(Date.now() + 30 * DAY_MS));
  const nameId = useId();
  const dateId = useId();
  const expiryId = useId();
  const presetDays = PRESETS.find(([label]) => label === preset)?.[1];
  const expiresAt =
    preset === 'date'
      ? date
        ? `${date}T00:00:00.000Z`
        : null
      : presetDays == null
        ? null
        : new Date(midnightAfter(presetDays)).toISOString();
  const submit = async () => {
    const body = expiresAt === null ? { name: name.trim() } : { name: name.trim(), expires_at: expiresAt };
    props.onCreated(await api<CreatedApiKey>('POST', `${projectPath(props.slug)}/keys`, body));
  };
  return (
    <FormDialog
      title="New API key"
      submitLabel="Create key"
      busyLabel="Creating…"
      canSubmit={name.trim() !== ''}
      onSubmit={submit}
      onClose={props.onClose}
    >
      <label class="field-label" for={nameId}>
        Name
      </label>
      <input
        id={nameId}
        class="input"
        value={name}
        onInput={(event) => setName(event.currentTarget.value)}
        placeholder="ingest-service"
        autoComplete="off"
        required
        autofocus
      />
      <p class="field-hint">What uses it, so you know which key to deactivate later.</p>
      <fieldset class="fieldset" aria-describedby={expiryId}>
        <legend class="field-label">Expires</legend>
        <div class="segmented">
          {PRESETS.map(([label]) => (
            <label key={label} class={`segment ${preset === label ? 'selected' : ''}`}>
              <input
                type="radio"
                name="expiry"
                value={label}
                checked={preset === label}
                onChange={() => setPreset(label)}
              />
              {label}
            </label>
          ))}
          <label class={`segment ${preset === 'date' ? 'selected' : ''}`}>
            <input
              type="radio"
              name="expiry"
              value="date"
              checked={preset === 'date'}
              onChange={() => setPreset('date')}
            />
            On a date
          </label>
        </div>
        {preset === 'date' && (
          <div class="inline-field">
            <label for={dateId}>Day (the key stops at 00:00 UTC that day)</label>
            <input
              id={dateId}
              class="input"
              type="date"
              value={date}
              min={utcDay(Date.now() + DAY_MS)}
              onInput={(event) => setDate(event.currentTarget.value)}
            />
          </div>
        )}
        <p id={expiryId} class="field-hint" aria-live="polite">
          {expiresAt === null
            ? 'The key works until it is deactivated.'
            : `The key stops working at ${utc(expiresAt)}.`}
        </p>
      </fieldset>
    </FormDialog>
  );
}
