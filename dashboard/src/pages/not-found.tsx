/** An address the dashboard has no page for. */

import { EmptyState } from '../components/ui.js';
import { BASE } from '../context.js';

export function NotFound() {
  return (
    <EmptyState
      title="No such page"
      action={
        <a class="button button-primary" href={BASE}>
          Go to the dashboard
        </a>
      }
    >
      This address names no page of the dashboard. It may have been mistyped, or the link is from an older version.
    </EmptyState>
  );
}
