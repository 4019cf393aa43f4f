/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core) against `barge
 * serve` as a child process, as a newcomer uses it: sign in with an admin token, create a project
 * and a key and use the key against POST /cargo/load, deactivate it and see the API refuse it,
 * create a connection and run its check against the test S3 and STS servers, find a cargo and see
 * its attempts, recover its failed delivery, see the usage chart, rotate the webhook secret, sign
 * out. On every page: no request to another host, no console error (a CSP refusal is one), and no
 * accessibility violation axe finds. One browser for the whole file; screenshots in
 * .tmp/screenshots/.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { systemClock } from '../../src/domain/clock.js';
import { createAdminToken } from '../../src/operations/create-admin-token.js';
import { mockBody } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { type BrowserRig, openBrowser } from '../helpers/browser.js';
import { serveHarness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { type S3Server, SERVICE_CREDENTIALS, startS3Server } from '../helpers/s3-server.js';
import { type StsEndpoint, startStsEndpoint } from '../helpers/sts-endpoint.js';
import { waitFor } from '../helpers/wait.js';

const SLUG = 'acme-ui';
const ROLE_ARN = 'arn:aws:iam::444455556666:role/barge-delivery-ui';

const [backend] = await backends({ childProcesses: true });

describe('the dashboard in a browser', { concurrency: false }, () => {
  const h = serveHarness(backend as NonNullable<typeof backend>);
  let url: string;
  let rig: BrowserRig;
  let page: Page;
  let s3: S3Server;
  let sts: StsEndpoint;
  let bucket: string;
  /** The webhook receiver fails until the recovery step. */
  let receiverUp = false;
  const receiver = startReceiver((_request, _index, res) => {
    res
      .writeHead(receiverUp ? 200 : 503, { 'content-type': 'text/plain' })
      .end(receiverUp ? 'ok' : 'down for maintenance');
  });
  let apiKey = '';
  let failedCargoId = '';
  let polledCargoId = '';

  before(async () => {
    s3 = await startS3Server();
    sts = await startStsEndpoint();
    bucket = `ui-${process.pid}`;
    await s3.createBucket(bucket);
    ({ url } = await h.serveAll({
      BARGE_AWS_S3_ENDPOINT: s3.url,
      BARGE_AWS_STS_ENDPOINT: sts.url,
      BARGE_AWS_S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: SERVICE_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: SERVICE_CREDENTIALS.secretAccessKey,
      BARGE_WEBHOOK_RETRY_DELAYS_MS: '100,100',
    }));
    rig = await openBrowser(url);
    page = rig.page;
  });
  after(async () => {
    await rig?.close();
    await (await receiver).close();
    await sts?.close();
    await s3?.close();
  });

  /** The page has loaded what it shows: no "Loading…" left (polled from here: the page's CSP forbids evaluated text). */
  const settled = () =>
    waitFor(
      'the page to load',
      () => page.locator('.loading, .boot').count(),
      (n) => n === 0,
      { timeoutMs: 10_000 },
    );

  /** What every page must hold to: nothing fetched elsewhere, no error, nothing axe objects to. */
  async function pageIsClean(name: string, options: { fullPage?: boolean; axe?: boolean } = {}) {
    await settled();
    await rig.screenshot(name, options);
    // Axe takes about half a second a page: skipped where the same page was just checked.
    if (options.axe !== false) assert.deepEqual(await rig.accessibilityViolations(), [], `accessibility of ${name}`);
    assert.deepEqual(rig.foreignRequests, [], `requests to other hosts by ${name}`);
    assert.deepEqual(rig.errors, [], `console errors on ${name}`);
  }

  const adminApi = (path: string) => `${url}/admin/v1${path}`;

  test('sign in with an admin token', async () => {
    const made = await createAdminToken({ database: h.db.database, clock: systemClock }, { name: 'ops laptop' });
    assert.ok(made.ok);
    await page.goto(`${url}/dashboard`);
    await page.getByRole('heading', { name: 'Sign in to the dashboard' }).waitFor();
    await pageIsClean('01-sign-in');
    await page.getByLabel('Admin token').fill('barge_at_short');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('That is not an admin token').waitFor();
    await page.getByLabel('Admin token').fill(`barge_at_${'x'.repeat(32)}`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('Invalid admin token.').waitFor();
    await page.getByLabel('Admin token').fill(made.value.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Projects', level: 1 }).waitFor();
    await page.getByText('ops laptop').waitFor();
    // The cookie a script cannot read, on the admin API's path only.
    const [cookie] = await rig.context.cookies(`${url}/admin/v1/`);
    assert.equal(cookie?.name, 'barge_session');
    assert.equal(cookie?.httpOnly, true);
    assert.equal(cookie?.sameSite, 'Strict');
    assert.equal(cookie?.path, '/admin/v1');
    assert.equal(await page.evaluate('document.cookie'), '');
    // The wrong token's 401 is an expected answer the page showed in words, not a page error.
    rig.errors.splice(0);
    await pageIsClean('02-projects');
  });

  test('create a project: its signing secret shown once, in a dialog that needs a confirmation to close', async () => {
    await page.getByRole('button', { name: 'New project' }).first().click();
    const form = page.getByRole('dialog', { name: 'New project' });
    await form.getByLabel('Slug').fill(SLUG);
    await form.getByRole('button', { name: 'Create project' }).click();
    const shown = page.getByRole('dialog', { name: `Project ${SLUG} created` });
    await shown.waitFor();
    const secret = await shown.getByLabel('Webhook signing secret').inputValue();
    assert.match(secret, /^whsec_/);
    await pageIsClean('03-project-created');
    // Neither Escape nor Done closes it before the confirmation.
    await page.keyboard.press('Escape');
    assert.ok(await shown.isVisible());
    assert.ok(await shown.getByRole('button', { name: 'Done' }).isDisabled());
    await shown.getByLabel('I have copied it and stored it somewhere safe.').check();
    await shown.getByRole('button', { name: 'Done' }).click();
    await shown.waitFor({ state: 'detached' });
    await page.getByRole('link', { name: SLUG, exact: true }).waitFor();
    // The secret is never shown again.
    assert.ok(!(await page.content()).includes(secret));
  });

  test('make an API key (shown once, with a copy button and a curl example), use it, deactivate it, see it refused', async () => {
    await page.getByRole('link', { name: SLUG, exact: true }).click();
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'No API keys yet' }).waitFor();
    await pageIsClean('04-keys-empty');
    await page.getByRole('button', { name: 'New API key' }).first().click();
    const form = page.getByRole('dialog', { name: 'New API key' });
    await form.getByLabel('Name').fill('ingest');
    await form.getByText('30 days').click();
    // Presets end at a UTC midnight, and say when.
    await form.getByText(/The key stops working at \d{4}-\d{2}-\d{2} 00:00 UTC\./).waitFor();
    await pageIsClean('05-key-new');
    await form.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('dialog', { name: 'API key ingest created' });
    await shown.waitFor();
    apiKey = await shown.getByLabel('API key').inputValue();
    assert.match(apiKey, /^barge_sk_[A-Za-z0-9]{32}$/);
    await shown.getByRole('button', { name: 'Copy', exact: true }).click();
    await shown.getByText('Copied to the clipboard.').waitFor();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), apiKey);
    const curl = await shown.locator('pre').textContent();
    assert.ok(curl?.includes(`curl -X POST ${url}/cargo/load`), curl ?? '');
    assert.ok(curl?.includes(`X-API-Key: ${apiKey}`));
    await pageIsClean('06-key-created');
    await page.keyboard.press('Escape');
    assert.ok(await shown.isVisible(), 'Escape does not dismiss an unconfirmed secret');
    await shown.getByLabel('I have copied it and stored it somewhere safe.').check();
    await shown.getByRole('button', { name: 'Done' }).click();
    await shown.waitFor({ state: 'detached' });

    // The key works: one cargo that will fail its delivery (the receiver is down), and a plain one.
    const load = (body: unknown) =>
      fetch(`${url}/cargo/load`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const failing = await load(mockBody('Please deliver me', { callback_url: `${(await receiver).url}/hook` }));
    assert.equal(failing.status, 200, await failing.clone().text());
    failedCargoId = ((await failing.json()) as { cargo_id: string }).cargo_id;
    const polled = await load(mockBody('Just poll me'));
    assert.equal(polled.status, 200);
    polledCargoId = ((await polled.json()) as { cargo_id: string }).cargo_id;

    const row = page.getByRole('row', { name: /ingest/ });
    await row.getByRole('button', { name: /Deactivate the key ingest/ }).click();
    const confirm = page.getByRole('dialog', { name: 'Deactivate the key ingest?' });
    await pageIsClean('07-key-deactivate');
    await confirm.getByRole('button', { name: 'Deactivate key' }).click();
    await confirm.waitFor({ state: 'detached' });
    await row.getByText('deactivated').waitFor();
    const refused = await load(mockBody('Refused'));
    assert.equal(refused.status, 401);
    assert.deepEqual(await refused.json(), { detail: 'Invalid API key.' });
    await pageIsClean('08-keys');
  });

  test('create a connection, hand over its policies, run its check against S3 and STS', async () => {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Connections' }).click();
    await page.getByRole('heading', { name: 'No connections yet' }).waitFor();
    await page.getByRole('button', { name: 'New connection' }).first().click();
    const form = page.getByRole('dialog', { name: 'New connection' });
    await form.getByLabel('Role ARN').fill(ROLE_ARN);
    await form.getByLabel(/Targets allowed/).fill(`arn:aws:s3:::${bucket}`);
    await pageIsClean('09-connection-new');
    await form.getByRole('button', { name: 'Create connection' }).click();
    await page.getByRole('heading', { name: 'Connection', level: 1 }).waitFor();
    await settled();
    const trust = await page
      .getByRole('region', { name: 'Policies to hand the customer' })
      .locator('pre')
      .first()
      .textContent();
    const externalId = /"sts:ExternalId": "([^"]+)"/.exec(trust ?? '')?.[1];
    assert.ok(externalId, trust ?? '');
    // The customer puts the trust policy on their role.
    sts.addRole(ROLE_ARN, externalId);
    const check = page.getByRole('region', { name: 'Capability check' });
    await check.getByLabel('S3 bucket ARN').fill(`arn:aws:s3:::${bucket}`);
    await check.getByRole('button', { name: 'Run check' }).click();
    await check.getByText('Every capability works.').waitFor();
    for (const name of ['Assume the role', 'Write an object']) {
      await check.getByRole('listitem').filter({ hasText: name }).getByText('ok', { exact: true }).waitFor();
    }
    // The next check that writes waits a minute, and the page says until when (UTC).
    assert.ok(await check.getByRole('button', { name: 'Run check' }).isDisabled());
    await check
      .getByText(/The next check that writes or sends may run at \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/)
      .waitFor();
    assert.ok((await s3.keys(bucket)).some((key) => key.endsWith('svc-verify.json')));
    await pageIsClean('10-connection-checked', { fullPage: true });
  });

  test('find the cargo whose delivery failed, with the URL keeping the filters, and see every attempt', async () => {
    await waitFor(
      'the delivery to fail for good',
      async () =>
        (await (
          await fetch(adminApi(`/projects/${SLUG}/cargo/${failedCargoId}`), {
            headers: { cookie: await cookieHeader() },
          })
        ).json()) as {
          status: string;
        },
      (c) => c.status === 'callback_failed',
      { timeoutMs: 15_000, intervalMs: 200 },
    );
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Cargo' }).click();
    await page.getByRole('heading', { name: 'Cargo', level: 1 }).waitFor();
    await settled();
    await page.getByLabel('Status').selectOption('callback_failed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/\?status=callback_failed$/);
    await settled();
    const rows = page.getByRole('table').getByRole('row');
    assert.equal(await rows.count(), 2, 'the header and the one failed cargo');
    await pageIsClean('11-cargo-filtered');
    // The filters survive a reload: they are in the address.
    await page.reload();
    await settled();
    assert.equal(await page.getByLabel('Status').inputValue(), 'callback_failed');
    await page.getByRole('link', { name: failedCargoId }).click();
    await page.getByText(failedCargoId).first().waitFor();
    await settled();
    const history = page.getByRole('region', { name: 'History' });
    for (const attempt of [1, 2, 3]) {
      await history.getByText(new RegExp(`webhook attempt ${attempt}:`)).waitFor();
    }
    await history.getByText('down for maintenance').first().waitFor();
    await pageIsClean('12-cargo-detail', { fullPage: true });
    await history.getByRole('button', { name: 'Table' }).click();
    await history
      .getByRole('table')
      .getByRole('row', { name: /webhook attempt 3/ })
      .waitFor();
    await pageIsClean('13-cargo-detail-table', { fullPage: true });

    // A cargo that asked for no delivery cannot be redelivered: the button is off and says why.
    await page.goto(`${url}/dashboard/projects/${SLUG}/cargo/${polledCargoId}`);
    await settled();
    const redeliver = page.getByRole('button', { name: 'Redeliver' });
    assert.ok(await redeliver.isDisabled());
    const reasonId = await redeliver.getAttribute('aria-describedby');
    assert.ok(reasonId);
    assert.match((await page.locator(`#${reasonId}`).textContent()) ?? '', /asked for no delivery/);
    await pageIsClean('14-cargo-no-redelivery', { axe: false });
  });

  test('recover the failed deliveries: a dry-run count, then the whole set on the server, with its progress', async () => {
    receiverUp = true;
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Recovery' }).click();
    await page.getByRole('heading', { name: 'Recover failed deliveries' }).waitFor();
    await settled();
    assert.ok(await page.getByRole('button', { name: 'Redeliver' }).isDisabled(), 'count first');
    await page.getByRole('button', { name: 'Count them (dry run)' }).click();
    await page.getByText('1 cargo', { exact: true }).waitFor();
    await pageIsClean('15-recovery-counted');
    await page.getByRole('button', { name: 'Redeliver 1 cargo' }).click();
    const recoveries = page.getByRole('region', { name: 'Recoveries' });
    await recoveries.getByText('completed').waitFor({ timeout: 15_000 });
    await recoveries.getByText('1 of 1 handled (100%) · 1 redelivered').waitFor();
    await pageIsClean('16-recovery-done');
    await waitFor(
      'the redelivery to reach the receiver',
      async () => (await receiver).received.filter((r) => r.url === '/hook').length,
      (n) => n === 4,
      { timeoutMs: 15_000 },
    );
    await page.goto(`${url}/dashboard/projects/${SLUG}/cargo/${failedCargoId}`);
    await settled();
    await page
      .getByRole('region', { name: 'History' })
      .getByText(/webhook attempt 1 \(recovery\):/)
      .waitFor({ timeout: 15_000 });
    await pageIsClean('17-cargo-recovered', { fullPage: true, axe: false });
  });

  test('see the usage chart and its table', async () => {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    await settled();
    const requests = page.getByRole('region', { name: 'Requests per day' });
    await requests
      .getByRole('img', { name: /Requests per UTC day by model/ })
      .locator('canvas')
      .first()
      .waitFor();
    await pageIsClean('18-usage', { fullPage: true });
    await requests.getByRole('button', { name: 'Table' }).click();
    const today = new Date().toISOString().slice(0, 10);
    const row = requests.getByRole('row', { name: new RegExp(today) });
    assert.deepEqual(await row.getByRole('cell').allTextContents(), ['2']);
    // Every day of the range has a row, zero when nothing ran.
    assert.equal(await requests.getByRole('row').count(), 31);
    await pageIsClean('19-usage-table');
  });

  test('rotate the webhook secret: the new one shown once, the previous one signing 24 hours more', async () => {
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('button', { name: 'Rotate signing secret' }).click();
    await page
      .getByRole('dialog', { name: 'Rotate the signing secret?' })
      .getByRole('button', { name: 'Rotate secret' })
      .click();
    const shown = page.getByRole('dialog', { name: 'New signing secret' });
    assert.match(await shown.getByLabel('Webhook signing secret').inputValue(), /^whsec_/);
    await shown.getByLabel('I have copied it and stored it somewhere safe.').check();
    await shown.getByRole('button', { name: 'Done' }).click();
    await page.getByText(/Dual signing until \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/).waitFor();
    await pageIsClean('20-webhooks');
  });

  test('the page fits a laptop, a wide screen and a narrow window', async () => {
    for (const [name, viewport] of [
      ['21-laptop', { width: 1280, height: 800 }],
      ['22-wide', { width: 1920, height: 1080 }],
      ['23-narrow', { width: 760, height: 1000 }],
    ] as const) {
      await page.setViewportSize(viewport);
      await page.goto(`${url}/dashboard/projects/${SLUG}/cargo/${failedCargoId}`);
      await settled();
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      assert.ok(overflow <= 0, `${name}: the page is ${overflow} px wider than the window`);
      // The narrow window lays the navigation out anew; the others are the page checked above.
      await pageIsClean(name, { axe: name === '23-narrow' });
    }
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  test('sign out: the session ends, and its cookie opens nothing', async () => {
    const cookie = await cookieHeader();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to the dashboard' }).waitFor();
    await page.getByText('You are signed out.').waitFor();
    assert.deepEqual(await rig.context.cookies(`${url}/admin/v1/`), []);
    const res = await fetch(adminApi('/session'), { headers: { cookie } });
    assert.equal(res.status, 401);
    // A reload stays signed out, without asking the service.
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to the dashboard' }).waitFor();
    await pageIsClean('24-signed-out');
  });

  /** The browser's session cookie, for checks made from the test itself. */
  async function cookieHeader(): Promise<string> {
    const cookies = await rig.context.cookies(`${url}/admin/v1/`);
    return cookies.map((c) => `${c.name}=${c.value}`).join('; ');
  }
});
