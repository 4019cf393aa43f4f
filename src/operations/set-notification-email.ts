/**
 * Sets where a project's incident mail goes (a delivery connection marked failed), or with null
 * clears it: no incident mail is sent then.
 */
import { isEmailAddress } from '../domain/connections.js';
import { setNotificationEmail as updateNotificationEmail } from '../store/admin/projects.js';
import { type OperationDeps, type Result, refusals, refuse, succeed } from './operation.js';

export async function setNotificationEmail(
  deps: OperationDeps,
  input: { slug: string; email: string | null },
): Promise<Result<{ slug: string; notificationEmail: string | null }>> {
  if (input.email !== null && !isEmailAddress(input.email)) return refuse(refusals.invalidEmail(input.email));
  if (!(await updateNotificationEmail(deps.database, input.slug, input.email, deps.clock.now()))) {
    return refuse(refusals.projectNotFound(input.slug));
  }
  return succeed({ slug: input.slug, notificationEmail: input.email });
}
