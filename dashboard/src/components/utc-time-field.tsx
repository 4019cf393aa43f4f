/**
 * A time picked in UTC: a `datetime-local` field (which has no zone of its own) whose value is read
 * and written as UTC, and whose label says so. Its value outside is an ISO time (`…Z`), or ''.
 */
import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';

const toField = (iso: string) => (iso ? iso.replace(/(:\d{2}(\.\d+)?)?Z$/, '').slice(0, 16) : '');
const fromField = (value: string) => (value ? `${value}:00Z` : '');

export function UtcTimeField(props: {
  label: string;
  value: string;
  onChange: (iso: string) => void;
  required?: boolean;
  /** Said after the label, e.g. "optional: now". */
  note?: ComponentChildren;
}) {
  const id = useId();
  return (
    <div>
      <label class="field-label" for={id}>
        {props.label} (UTC) {props.note && <span class="optional">{props.note}</span>}
      </label>
      <input
        id={id}
        class="input"
        type="datetime-local"
        value={toField(props.value)}
        required={props.required}
        onInput={(event) => props.onChange(fromField(event.currentTarget.value))}
      />
    </div>
  );
}
