/**
 * Native <dialog> windows: modal (focus kept inside, Escape closes, the page behind inert), with a
 * title that names them for screen readers. A dialog that must not be dismissed yet (a secret not
 * confirmed as stored) refuses Escape until it may close.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { useAction } from '../hooks.js';
import { CopyButton } from './copy-button.js';
import { ErrorNotice } from './ui.js';

export function Dialog(props: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  /** False: Escape does nothing (the dialog closes through its own buttons only). */
  dismissible?: boolean;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      class={`dialog ${props.wide ? 'dialog-wide' : ''}`}
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        if (props.dismissible !== false) props.onClose();
      }}
    >
      <h2 id={titleId} class="dialog-title">
        {props.title}
      </h2>
      {props.children}
    </dialog>
  );
}

/**
 * A form in a dialog (a new project, key or connection): its fields, the service's refusal in words
 * under them (the dialog stays open to fix it), Cancel and the submit button.
 */
export function FormDialog(props: {
  title: string;
  submitLabel: string;
  busyLabel: string;
  canSubmit: boolean;
  onSubmit: () => Promise<void>;
  onClose: () => void;
  wide?: boolean;
  children: ComponentChildren;
}) {
  const action = useAction();
  return (
    <Dialog title={props.title} onClose={props.onClose} wide={props.wide}>
      <form
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void action.run(props.onSubmit);
        }}
      >
        <div class="dialog-body">
          {props.children}
          {action.error && (
            <p class="field-error" role="alert">
              {action.error.message}
            </p>
          )}
        </div>
        <div class="dialog-actions">
          <button type="button" class="button button-secondary" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class="button button-primary" disabled={action.busy || !props.canSubmit}>
            {action.busy ? props.busyLabel : props.submitLabel}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** Asks before an action; shows the action's error, if any, without closing. */
export function ConfirmDialog(props: {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const { busy, error, run } = useAction();
  const confirm = () =>
    run(async () => {
      await props.onConfirm();
      props.onClose();
    });
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <div class="dialog-body">{props.children}</div>
      {error && <ErrorNotice error={error} title="It did not work." />}
      <div class="dialog-actions">
        <button type="button" class="button button-secondary" onClick={props.onClose} disabled={busy}>
          Cancel
        </button>
        <button
          type="button"
          class={`button ${props.danger ? 'button-danger' : 'button-primary'}`}
          onClick={confirm}
          disabled={busy}
          autofocus
        >
          {busy ? 'Working…' : props.confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}

/**
 * A secret shown once (an API key, a webhook signing secret): it says so, offers a copy button, and
 * closes only once the reader confirms they stored it (Escape included).
 */
export function SecretDialog(props: {
  title: string;
  label: string;
  secret: string;
  children?: ComponentChildren;
  onDone: () => void;
}) {
  const [stored, setStored] = useState(false);
  const inputId = useId();
  return (
    <Dialog title={props.title} onClose={props.onDone} dismissible={stored} wide>
      <div class="dialog-body">
        <div class="notice notice-warning">
          <strong>Shown only this once.</strong> barge keeps only a hash: copy it now and store it somewhere safe (a
          secrets manager). If it is lost, make a new one.
        </div>
        <label for={inputId} class="field-label">
          {props.label}
        </label>
        <div class="secret-row">
          <input
            id={inputId}
            class="input mono secret"
            readOnly
            value={props.secret}
            onFocus={(event) => (event.currentTarget as HTMLInputElement).select()}
          />
          <CopyButton text={props.secret} />
        </div>
        {props.children}
        <label class="checkbox">
          <input type="checkbox" checked={stored} onChange={(event) => setStored(event.currentTarget.checked)} />I have
          copied it and stored it somewhere safe.
        </label>
      </div>
      <div class="dialog-actions">
        <button type="button" class="button button-primary" disabled={!stored} onClick={props.onDone}>
          Done
        </button>
      </div>
    </Dialog>
  );
}
