/** A JSON document to hand over (an IAM policy): shown indented, with a copy button. */
import { CopyButton } from './copy-button.js';

export function JsonBlock(props: { title: string; value: unknown; description?: string }) {
  const text = JSON.stringify(props.value, null, 2);
  return (
    <div class="example">
      <div class="example-header">
        <span class="field-label">{props.title}</span>
        <CopyButton text={text} label={`Copy ${props.title.toLowerCase()}`} />
      </div>
      {props.description && <p class="field-hint">{props.description}</p>}
      <pre class="code-block">{text}</pre>
    </div>
  );
}
