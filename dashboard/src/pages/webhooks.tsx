/**
 * Webhook settings: how deliveries are signed, rotating the signing secret (the new one shown once;
 * the previous one signs beside it for 24 hours), and where incident mail goes.
 */
import { useId, useState } from 'preact/hooks';
import { api, projectPath } from '../api.js';
import { ConfirmDialog, SecretDialog } from '../components/dialog.js';
import { InactiveNotice } from '../components/project-notice.js';
import { Card, ErrorNotice, Loading, PageHeader } from '../components/ui.js';
import { relative, utc } from '../format.js';
import { useAction, useResource } from '../hooks.js';
import type { Project, RotatedSecret } from '../types.js';

export function WebhooksPage(props: { slug: string }) {
  const { slug } = props;
  const project = useResource(() => api<Project>('GET', projectPath(slug)), [slug]);
  const [confirming, setConfirming] = useState(false);
  const [rotated, setRotated] = useState<RotatedSecret | null>(null);
  const [showSecret, setShowSecret] = useState(false);
  return (
    <>
      <PageHeader
        title="Webhooks"
        description={
          <>
            How <strong>{slug}</strong>'s webhook deliveries are signed, and who hears of delivery incidents.
          </>
        }
      />
      <InactiveNotice slug={slug} />
      <div class="stack">
        <Card title="Signing secret">
          <div class="card-body stack">
            <p>
              Every webhook carries a <a href="https://www.standardwebhooks.com/">Standard Webhooks</a> signature (
              <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature: v1,…</code>) made with
              the project's secret; receivers check it with theirs (<code>verifyWebhook</code> of{' '}
              <code>barge/client</code>, or any Standard Webhooks library).
            </p>
            <p>
              Rotating makes a new secret, shown once. The previous one keeps signing beside it for{' '}
              <strong>24 hours</strong> (each delivery then carries two <code>v1</code> signatures), so receivers can
              switch over without rejecting a delivery.
            </p>
            {rotated && (
              <div class="notice notice-info" role="status">
                <strong>Dual signing until {utc(rotated.previous_secret_valid_until)}</strong> (
                {relative(rotated.previous_secret_valid_until)}): deliveries carry a signature with the new secret and
                one with the previous one. Update every receiver before then.
              </div>
            )}
            <div class="form-actions">
              <button type="button" class="button button-primary" onClick={() => setConfirming(true)}>
                Rotate signing secret
              </button>
            </div>
          </div>
        </Card>
        {project.state === 'failed' && (
          <ErrorNotice error={project.error} retry={project.reload} title="The project could not be loaded." />
        )}
        {project.state === 'loading' && !project.data && <Loading what="settings" />}
        {project.data && <IncidentEmail project={project.data} onSaved={project.reload} />}
      </div>
      {confirming && (
        <ConfirmDialog
          title="Rotate the signing secret?"
          confirmLabel="Rotate secret"
          onConfirm={async () => {
            setRotated(await api<RotatedSecret>('POST', `${projectPath(slug)}/webhook-secret/rotate`));
            setShowSecret(true);
          }}
          onClose={() => setConfirming(false)}
        >
          <p>
            A new secret signs every webhook from now on. The current one also signs for 24 hours, then stops: receivers
            still checking with it start rejecting deliveries after that.
          </p>
        </ConfirmDialog>
      )}
      {rotated && showSecret && (
        <SecretDialog
          title="New signing secret"
          label="Webhook signing secret"
          secret={rotated.webhook_secret}
          onDone={() => setShowSecret(false)}
        >
          <p class="field-hint">
            The previous secret keeps signing until {utc(rotated.previous_secret_valid_until)}: give this one to every
            receiver before then.
          </p>
        </SecretDialog>
      )}
    </>
  );
}

function IncidentEmail(props: { project: Project; onSaved: () => void }) {
  const [email, setEmail] = useState(props.project.notification_email ?? '');
  const { busy, error, run } = useAction();
  const [saved, setSaved] = useState(false);
  const id = useId();
  const hint = useId();
  const save = (event: Event) => {
    event.preventDefault();
    setSaved(false);
    void run(async () => {
      await api<Project>('PATCH', projectPath(props.project.slug), {
        notification_email: email.trim() === '' ? null : email.trim(),
      });
      setSaved(true);
      props.onSaved();
    });
  };
  return (
    <Card title="Incident e-mail">
      <form class="card-body stack" onSubmit={save} noValidate>
        <div>
          <label class="field-label" for={id}>
            Send incident mail to
          </label>
          <input
            id={id}
            class="input input-medium"
            type="email"
            value={email}
            placeholder="ops@example.com"
            onInput={(e) => {
              setEmail(e.currentTarget.value);
              setSaved(false);
            }}
            aria-describedby={hint}
          />
          <p id={hint} class="field-hint">
            barge mails here when a delivery connection is denied access (an incident begins). Leave it empty to send
            none.
          </p>
        </div>
        {error && <ErrorNotice error={error} title="Not saved." />}
        <div class="form-actions">
          <button type="submit" class="button button-secondary" disabled={busy}>
            {busy ? 'Saving…' : 'Save'}
          </button>
          <span class="field-hint" role="status">
            {saved ? 'Saved.' : ''}
          </span>
        </div>
      </form>
    </Card>
  );
}
