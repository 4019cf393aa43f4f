/**
 * A project's usage: requests, tokens and cost per UTC day and model (every day of the range, zero
 * when nothing ran), what batching cost against real-time prices and what it saved, and the spend
 * budgets. Each chart has a table of the same figures beside it.
 */
import type { ComponentChildren } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, projectPath, query } from '../api.js';
import { DayChart, type DaySeries } from '../components/day-chart.js';
import { Card, ErrorNotice, Loading, PageHeader, TableScroll, Toggle } from '../components/ui.js';
import { projectHref } from '../context.js';
import { count, DAY_MS, daysBetween, usd, utc, utcDay } from '../format.js';
import { useResource } from '../hooks.js';
import type { Usage, UsageRow } from '../types.js';

const RANGES = [7, 30, 90];
const PALETTE = ['#2c5be0', '#0f9d8a', '#d9822b', '#c2417a', '#7a55d6', '#3a8fc7', '#8c9aab'];

type Metric = 'requests' | 'tokens' | 'cost';

const tokensOf = (row: UsageRow) =>
  row.input_tokens + row.output_tokens + row.cache_creation_input_tokens + row.cache_read_input_tokens;

const compact = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
const compactCount = (n: number) => compact.format(n);
const axisUsd = (n: number) =>
  n === 0 ? '$0' : n < 0.01 ? `$${n.toFixed(4)}` : n < 10 ? `$${n.toFixed(2)}` : `$${compact.format(n)}`;

export function UsagePage(props: { slug: string }) {
  const { slug } = props;
  const location = useLocation();
  const days = RANGES.includes(Number(location.query.days)) ? Number(location.query.days) : 30;
  const to = utcDay(Date.now());
  const from = utcDay(Date.now() - (days - 1) * DAY_MS);
  const usage = useResource(
    () => api<Usage>('GET', `${projectPath(slug)}/usage${query({ from, to })}`),
    [slug, from, to],
  );
  const u = usage.data;
  return (
    <>
      <PageHeader
        title="Usage"
        description={
          <>
            Requests, tokens and cost of <strong>{slug}</strong> by UTC day (the day each result was produced) and
            model.
          </>
        }
        actions={
          <nav class="segmented" aria-label="Range">
            {RANGES.map((n) => (
              <a
                key={n}
                class={`segment ${n === days ? 'selected' : ''}`}
                href={projectHref(slug, `/usage?days=${n}`)}
                aria-current={n === days ? 'true' : undefined}
              >
                {n} days
              </a>
            ))}
          </nav>
        }
      />
      {usage.state === 'failed' && (
        <ErrorNotice error={usage.error} retry={usage.reload} title="The usage could not be loaded." />
      )}
      {usage.state === 'loading' && !u && <Loading what="usage" />}
      {u && <UsageReport usage={u} slug={slug} />}
    </>
  );
}

function UsageReport(props: { usage: Usage; slug: string }) {
  const { usage } = props;
  const days = useMemo(() => daysBetween(usage.from, usage.to), [usage.from, usage.to]);
  const models = useMemo(() => [...new Set(usage.data.map((r) => r.model))].sort(), [usage.data]);
  /** One value per day for each model (zero on days without results). */
  const perModel = useMemo(() => {
    const at = new Map(days.map((d, i) => [d, i]));
    const table = new Map<string, UsageRow[]>();
    for (const row of usage.data) {
      const list = table.get(row.model) ?? [];
      list.push(row);
      table.set(row.model, list);
    }
    return (pick: (row: UsageRow) => number) =>
      models.map((model, i) => {
        const values = days.map(() => 0);
        for (const row of table.get(model) ?? []) {
          const day = at.get(row.date);
          if (day !== undefined) values[day] = (values[day] ?? 0) + pick(row);
        }
        return { label: model, values, color: PALETTE[i % PALETTE.length] as string, kind: 'bars' as const };
      });
  }, [usage.data, days, models]);
  const requestSeries = useMemo(() => perModel((r) => r.requests), [perModel]);
  const tokenSeries = useMemo(() => perModel(tokensOf), [perModel]);
  // Batch cost by model (what was paid), and what the same tokens cost at real-time prices, all models.
  const costSeries = useMemo<DaySeries[]>(() => {
    const realtime = days.map((day) =>
      usage.data.filter((r) => r.date === day).reduce((t, r) => t + (r.standard_cost_usd ?? 0), 0),
    );
    return [
      ...perModel((r) => r.cost_usd ?? 0).map((s) => ({ ...s, label: `${s.label} (batch)` })),
      { label: 'At real-time prices', values: realtime, color: '#6b7684', kind: 'line', dashed: true },
    ];
  }, [usage.data, days, perModel]);
  const t = usage.totals;
  const savedNote =
    t.cargo === 0
      ? 'no results in this range'
      : t.standard_cost_usd === null || t.savings_usd === null
        ? 'some results have no known price'
        : t.standard_cost_usd === 0
          ? 'nothing was charged'
          : `${Math.round((t.savings_usd / t.standard_cost_usd) * 100)}% less than real-time`;
  const range = `${usage.from} to ${usage.to} (UTC)`;
  const empty = usage.data.length === 0;

  return (
    <div class="stack">
      <ul class="summary">
        <Summary label="Requests" value={count(t.requests)} note={`${count(t.cargo)} cargo`} />
        <Summary
          label="Tokens"
          value={compactCount(
            t.input_tokens + t.output_tokens + t.cache_creation_input_tokens + t.cache_read_input_tokens,
          )}
          note={`${compactCount(t.input_tokens)} in · ${compactCount(t.output_tokens)} out`}
        />
        <Summary label="Batch cost" value={usd(t.cost_usd)} note={`${usd(t.standard_cost_usd)} at real-time prices`} />
        <Summary label="Saved by batching" value={usd(t.savings_usd)} note={savedNote} tone="success" />
      </ul>
      {empty && (
        <div class="notice notice-info" role="status">
          No results were produced from {range}. The charts fill in as cargo finish; send one with an{' '}
          <a href={projectHref(props.slug, '/keys')}>API key</a>.
        </div>
      )}
      {usage.budgets.length > 0 && <Budgets budgets={usage.budgets} />}
      <ChartCard
        metric="requests"
        title="Requests per day"
        chart={
          <DayChart
            whole
            days={days}
            series={requestSeries}
            format={compactCount}
            label={`Requests per UTC day by model, ${range}: ${count(t.requests)} in all.`}
          />
        }
        table={<DayTable days={days} series={requestSeries} format={count} />}
      />
      <ChartCard
        metric="tokens"
        title="Tokens per day"
        chart={
          <DayChart
            whole
            days={days}
            series={tokenSeries}
            format={compactCount}
            label={`Tokens per UTC day by model, ${range}.`}
          />
        }
        table={<DayTable days={days} series={tokenSeries} format={count} />}
      />
      <ChartCard
        metric="cost"
        title="Cost per day: batch against real-time"
        chart={
          <DayChart
            days={days}
            series={costSeries}
            format={axisUsd}
            label={`Cost per UTC day by model, ${range}: ${usd(t.cost_usd)} paid at batch prices against ${usd(t.standard_cost_usd)} at real-time prices.`}
          />
        }
        table={<DayTable days={days} series={costSeries} format={usd} savings />}
      />
    </div>
  );
}

function Summary(props: { label: string; value: string; note: string; tone?: 'success' }) {
  return (
    <li class={`summary-item ${props.tone ? `summary-${props.tone}` : ''}`}>
      <span class="summary-label">{props.label}</span>
      <span class="summary-value">{props.value}</span>
      <span class="summary-note">{props.note}</span>
    </li>
  );
}

function ChartCard(props: { metric: Metric; title: string; chart: ComponentChildren; table: ComponentChildren }) {
  const [view, setView] = useState<'chart' | 'table'>('chart');
  return (
    <Card
      title={props.title}
      actions={
        <Toggle
          label={`Show ${props.title.toLowerCase()} as`}
          options={[
            ['chart', 'Chart'],
            ['table', 'Table'],
          ]}
          value={view}
          onChange={setView}
        />
      }
    >
      <div class="card-body" data-metric={props.metric}>
        {view === 'chart' ? props.chart : props.table}
      </div>
    </Card>
  );
}

function DayTable(props: { days: string[]; series: DaySeries[]; format: (n: number) => string; savings?: boolean }) {
  const paid = props.series.filter((s) => s.kind === 'bars');
  const realtime = props.series.find((s) => s.kind === 'line');
  /** What batching saved on day `i`: the real-time cost less what every model's batches cost. */
  const saved = (i: number) => (realtime?.values[i] ?? 0) - paid.reduce((t, s) => t + (s.values[i] ?? 0), 0);
  return (
    <TableScroll label="Figures per UTC day">
      <table class="table table-compact">
        <thead>
          <tr>
            <th scope="col">UTC day</th>
            {props.series.map((s) => (
              <th scope="col" class="numeric" key={s.label}>
                {s.label}
              </th>
            ))}
            {props.savings && (
              <th scope="col" class="numeric">
                Saved
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {props.days.map((day, i) => (
            <tr key={day}>
              <th scope="row" class="mono">
                {day}
              </th>
              {props.series.map((s) => (
                <td class="numeric" key={s.label}>
                  {props.format(s.values[i] ?? 0)}
                </td>
              ))}
              {props.savings && <td class="numeric">{props.format(saved(i))}</td>}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

function Budgets(props: { budgets: Usage['budgets'] }) {
  return (
    <Card title="Spend budgets">
      <ul class="budgets card-body">
        {props.budgets.map((b) => {
          const used = b.spent_usd + b.reserved_usd;
          const share = b.budget_usd > 0 ? Math.min(100, Math.round((used / b.budget_usd) * 100)) : 100;
          return (
            <li key={b.period}>
              <div class="budget-head">
                <strong>{b.period === 'month' ? 'This UTC month' : 'Today (UTC)'}</strong>
                <span>
                  {usd(b.spent_usd)} spent + {usd(b.reserved_usd)} reserved of {usd(b.budget_usd)} ({share}%)
                </span>
              </div>
              <progress class="progress" max={100} value={share} aria-label={`${b.period} budget used`} />
              <p class="muted">Since {utc(b.starts)}.</p>
            </li>
          );
        })}
      </ul>
    </Card>
  );
}
