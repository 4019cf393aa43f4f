/** The project operations on every backend: create, list, activate, rotate the secret, set budgets and mail address. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PREVIOUS_SECRET_GRACE_MS } from '../../src/domain/webhook-secret.js';
import { createProject } from '../../src/operations/create-project.js';
import { listProjects } from '../../src/operations/list-projects.js';
import { rotateWebhookSecret } from '../../src/operations/rotate-webhook-secret.js';
import { setNotificationEmail } from '../../src/operations/set-notification-email.js';
import { setProjectActive } from '../../src/operations/set-project-active.js';
import { setStorageBudget } from '../../src/operations/set-storage-budget.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { depsOf, newProject, refused, uniqueSlug, value } from './support.js';

for (const backend of await backends()) {
  describe(`project operations on ${backend.name}`, () => {
    let db: TestDatabase;
    let deps: ReturnType<typeof depsOf>;
    before(async () => {
      db = await backend.create();
      deps = depsOf(db.database);
    });
    after(() => db.drop());

    const projectRow = (slug: string) =>
      db.database.read.selectFrom('projects').selectAll().where('slug', '=', slug).executeTakeFirst();

    test('createProject makes an active project with its webhook secret, stamped by the clock', async () => {
      const slug = uniqueSlug('acme');
      const created = value(await createProject(deps, { slug }));
      assert.match(created.id, /^prj_[0-9a-z]{26}$/);
      assert.equal(created.slug, slug);
      assert.equal(created.isActive, true);
      assert.equal(created.createdAt, deps.clock.now());
      assert.match(created.webhookSecret, /^whsec_/);
      assert.equal((await projectRow(slug))?.webhook_secret, created.webhookSecret);
      // The longest valid slug is accepted.
      value(await createProject(deps, { slug: `${'a'.repeat(50)}-${process.pid}`.slice(0, 63) }));
    });

    test('createProject refuses a bad slug and a taken one, and writes nothing', async () => {
      for (const slug of ['Upper_Case', '-leading', 'trailing-', 'double--hyphen', '', 'x'.repeat(64)]) {
        const error = refused(await createProject(deps, { slug }), 'invalid_slug', /^invalid slug '/);
        assert.deepEqual(error.input, {
          name: 'slug',
          value: slug,
          problem: 'use lowercase letters, digits and single hyphens (at most 63 characters)',
        });
        assert.equal(await projectRow(slug), undefined);
      }
      const taken = await newProject(deps);
      refused(
        await createProject(deps, { slug: taken.slug }),
        'slug_taken',
        new RegExp(`project '${taken.slug}' already exists`),
      );
      assert.equal((await projectRow(taken.slug))?.id, taken.id);
    });

    test('listProjects lists every project by slug', async () => {
      const [b, a] = [await newProject(deps, 'list-b'), await newProject(deps, 'list-a')];
      const listed = value(await listProjects(deps));
      const slugs = listed.map((p) => p.slug);
      assert.deepEqual(slugs, [...slugs].sort());
      assert.ok(slugs.includes(a.slug) && slugs.includes(b.slug));
      assert.ok(!('webhookSecret' in (listed[0] as object)), 'no secret in a listing');
    });

    test('setProjectActive deactivates and reactivates; an unknown project is refused', async () => {
      const project = await newProject(deps);
      deps.clock.advance(1000);
      const off = value(await setProjectActive(deps, { slug: project.slug, active: false }));
      assert.equal(off.isActive, false);
      assert.equal(off.updatedAt, deps.clock.now());
      assert.equal((await projectRow(project.slug))?.is_active, 0);
      assert.equal(value(await setProjectActive(deps, { slug: project.slug, active: true })).isActive, true);
      refused(
        await setProjectActive(deps, { slug: 'no-such-project', active: false }),
        'project_not_found',
        /^no project 'no-such-project'$/,
      );
    });

    test('rotateWebhookSecret replaces the secret; the previous one signs for the grace period', async () => {
      const project = await newProject(deps);
      deps.clock.advance(5000);
      const rotated = value(await rotateWebhookSecret(deps, { slug: project.slug }));
      assert.notEqual(rotated.webhookSecret, project.webhookSecret);
      assert.equal(rotated.project.id, project.id);
      assert.equal(rotated.previousSecretValidUntil, deps.clock.now() + PREVIOUS_SECRET_GRACE_MS);
      const row = await projectRow(project.slug);
      assert.equal(row?.webhook_secret, rotated.webhookSecret);
      assert.equal(row?.previous_webhook_secret, project.webhookSecret);
      assert.equal(row?.previous_webhook_secret_until, rotated.previousSecretValidUntil);
      refused(await rotateWebhookSecret(deps, { slug: 'no-such-project' }), 'project_not_found');
    });

    test('setStorageBudget sets either budget, null returns it to the default; bad values are refused', async () => {
      const project = await newProject(deps);
      assert.equal(project.dailyByteBudget, null);
      const set = value(await setStorageBudget(deps, { slug: project.slug, dailyBytes: 1000, heldBytes: 5000 }));
      assert.deepEqual([set.dailyByteBudget, set.heldByteBudget], [1000, 5000]);
      const reset = value(await setStorageBudget(deps, { slug: project.slug, heldBytes: null }));
      assert.deepEqual([reset.dailyByteBudget, reset.heldByteBudget], [1000, null]);
      const row = await projectRow(project.slug);
      assert.deepEqual([Number(row?.daily_byte_budget), row?.held_byte_budget], [1000, null]);
      for (const bad of [-1, 1.5, Number.NaN, 2 ** 60]) {
        const error = refused(
          await setStorageBudget(deps, { slug: project.slug, dailyBytes: bad }),
          'invalid_byte_budget',
          /^invalid daily_bytes '/,
        );
        assert.equal(error.input?.name, 'dailyBytes');
      }
      refused(await setStorageBudget(deps, { slug: 'no-such-project', dailyBytes: 1 }), 'project_not_found');
    });

    test('setNotificationEmail sets and clears the address; a bad address or unknown project is refused', async () => {
      const project = await newProject(deps);
      assert.deepEqual(value(await setNotificationEmail(deps, { slug: project.slug, email: 'ops@customer.test' })), {
        slug: project.slug,
        notificationEmail: 'ops@customer.test',
      });
      assert.equal((await projectRow(project.slug))?.notification_email, 'ops@customer.test');
      for (const email of ['not-an-address', 'Ops <ops@customer.test>', 'a@b']) {
        const error = refused(
          await setNotificationEmail(deps, { slug: project.slug, email }),
          'invalid_email',
          /^invalid e-mail address '/,
        );
        assert.equal(error.input?.name, 'email');
      }
      assert.equal((await projectRow(project.slug))?.notification_email, 'ops@customer.test');
      assert.deepEqual(value(await setNotificationEmail(deps, { slug: project.slug, email: null })), {
        slug: project.slug,
        notificationEmail: null,
      });
      assert.equal((await projectRow(project.slug))?.notification_email, null);
      refused(await setNotificationEmail(deps, { slug: 'nobody-here', email: 'a@b.test' }), 'project_not_found');
    });
  });
}
