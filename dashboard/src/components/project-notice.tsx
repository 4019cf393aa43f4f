/** A project page's reminder that the project is inactive (its keys are refused), with the way back. */
import { projectHref, useProjects } from '../context.js';

export function InactiveNotice(props: { slug: string }) {
  const { projects } = useProjects();
  const project = projects?.find((p) => p.slug === props.slug);
  if (!project || project.status === 'active') return null;
  return (
    <div class="notice notice-warning" role="status">
      <strong>{props.slug} is inactive.</strong> Its API keys are refused (403) until it is activated again on the{' '}
      <a href={projectHref(props.slug)}>project's overview</a>.
    </div>
  );
}
