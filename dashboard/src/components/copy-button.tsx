/** Copies a text to the clipboard and says so (to screen readers too); where the clipboard is refused, says how to copy by hand. */
import { useState } from 'preact/hooks';

export function CopyButton(props: { text: string; label?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text);
      setState('copied');
    } catch {
      setState('failed');
    }
    setTimeout(() => setState('idle'), 2500);
  };
  return (
    <span class="copy">
      <button type="button" class="button button-secondary button-small" onClick={copy}>
        {state === 'copied' ? 'Copied' : (props.label ?? 'Copy')}
      </button>
      <span class="copy-status" role="status" aria-live="polite">
        {state === 'copied'
          ? 'Copied to the clipboard.'
          : state === 'failed'
            ? 'The browser refused the clipboard: select the text and press Ctrl+C (⌘C).'
            : ''}
      </span>
    </span>
  );
}
