/**
 * Sets where a project's incident mail goes (a delivery connection marked failed), or with null
 * clears it: no incident mail is sent then.
 */
import { isEmailAddress } from '../domain/connections.js';
import { type OperationDeps, type OperationError, type Result, refusals, refuse, succeed } from './operation.js';
import { applyProjectSettings } from './project-settings.js';

export async function setNotificationEmail(
  deps: OperationDeps,
  input: { slug: string; email: string | null },
): Promise<Result<{ slug: string; notificationEmail: string | null }>> {
  const refused = emailRefusal(input.email);
  if (refused) return refuse(refused);
  const set = await applyProjectSettings(deps, input.slug, { notificationEmail: input.email });
  return set.ok ? succeed({ slug: input.slug, notificationEmail: input.email }) : set;
}

/** Why an address is refused, or null when it is fine (null clears it). */
export function emailRefusal(email: string | null): OperationError | null {
  return email === null || isEmailAddress(email) ? null : refusals.invalidEmail(email);
}
