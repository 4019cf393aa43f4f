/**
 * A chart of values per UTC day (uPlot, on a canvas): bars stacked series over series, or a
 * series drawn as a line over the bars. Days are UTC (uPlot would otherwise label them in the
 * browser's zone) and every day of the range has a point (zero-filled by the caller). A chart is
 * an image to a screen reader: its label sums it up, and each chart has a table beside it.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { DAY_MS } from '../format.js';

export interface DaySeries {
  label: string;
  values: number[];
  color: string;
  /** `bars` (stacked with the other bars) or `line` (drawn over them, not stacked). */
  kind: 'bars' | 'line';
  dashed?: boolean;
}

const dayLabel = (seconds: number) =>
  new Date(seconds * 1000).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });

/** Ticks of the day axis: whole days only (a week would otherwise get a tick every 12 hours). */
const DAY_STEPS = [1, 2, 3, 7, 14, 28, 56].map((days) => (days * DAY_MS) / 1000);

/** Ticks of a count axis: whole numbers only (no "1.5 requests"). */
const WHOLE_STEPS = Array.from({ length: 13 }, (_, i) => [1, 2, 5].map((m) => m * 10 ** i)).flat();

export function DayChart(props: {
  days: string[];
  series: DaySeries[];
  format: (n: number) => string;
  label: string;
  /** The values are counts: whole-number ticks. */
  whole?: boolean;
}) {
  const container = useRef<HTMLDivElement>(null);
  const readout = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const xs = props.days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000);
    const bars = props.series.filter((s) => s.kind === 'bars');
    const lines = props.series.filter((s) => s.kind === 'line');
    // Stacked bars: each bar series is drawn at the running sum of itself and those before it,
    // the tallest first, so each shorter one covers the lower part of the one before.
    const sums: number[][] = [];
    bars.forEach((s, i) => {
      sums.push(s.values.map((v, day) => v + (i === 0 ? 0 : (sums[i - 1]?.[day] ?? 0))));
    });
    const drawn = [
      ...bars.map((s, i) => ({ s, data: sums[i] as number[] })).reverse(),
      ...lines.map((s) => ({ s, data: s.values })),
    ];
    const barPaths = uPlot.paths.bars?.({ size: [0.72, 56], gap: 1, radius: 0 });
    const styles = getComputedStyle(element);
    const muted = styles.getPropertyValue('--muted').trim() || '#5d6877';
    const grid = styles.getPropertyValue('--border').trim() || '#e3e6eb';
    const font = `12px ${styles.fontFamily}`;
    const plot = new uPlot(
      {
        width: Math.max(element.clientWidth, 280),
        height: 240,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        // Room on the right for the last day's label.
        padding: [12, 28, 0, 0],
        scales: {
          x: { time: true, range: (_u, min, max) => [min - DAY_MS / 2000, max + DAY_MS / 2000] },
          y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.08 : 1] },
        },
        axes: [
          {
            stroke: muted,
            font,
            grid: { show: false },
            ticks: { stroke: grid },
            incrs: DAY_STEPS,
            values: (_u, splits) => splits.map(dayLabel),
          },
          {
            stroke: muted,
            font,
            size: 64,
            ...(props.whole ? { incrs: WHOLE_STEPS } : {}),
            grid: { stroke: grid, width: 1 },
            ticks: { show: false },
            values: (_u, splits) => splits.map((v) => props.format(v)),
          },
        ],
        series: [
          {},
          ...drawn.map(({ s }) => ({
            label: s.label,
            stroke: s.color,
            fill: s.kind === 'bars' ? s.color : undefined,
            width: s.kind === 'line' ? 2 : 0,
            dash: s.dashed ? [6, 4] : undefined,
            paths: s.kind === 'bars' ? barPaths : undefined,
            points: { show: s.kind === 'line', size: 5, fill: s.color },
          })),
        ],
        cursor: { drag: { x: false, y: false }, points: { show: false } },
        // The legend and the values under the pointer are drawn by this component (uPlot's own
        // legend is a clickable table inside what screen readers see as one image).
        legend: { show: false },
        hooks: {
          setCursor: [
            (u) => {
              const index = u.cursor.idx;
              if (!readout.current) return;
              readout.current.textContent =
                index == null
                  ? 'Point at a day to see its values.'
                  : `${props.days[index]} (UTC): ${props.series.map((s) => `${s.label} ${props.format(s.values[index] ?? 0)}`).join(' · ')}`;
            },
          ],
        },
      },
      [xs, ...drawn.map(({ data }) => data)],
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(element.clientWidth, 280), height: 240 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [props.days, props.series, props.format, props.whole]);
  return (
    <figure class="chart-figure">
      <ul class="chart-legend" aria-hidden="true">
        {props.series.map((s) => (
          <li key={s.label}>
            <span
              class={`swatch ${s.kind === 'line' ? 'swatch-line' : ''} ${s.dashed ? 'swatch-dashed' : ''}`}
              style={{ '--swatch': s.color }}
            />
            {s.label}
          </li>
        ))}
      </ul>
      <div class="chart" ref={container} role="img" aria-label={props.label} />
      <p class="chart-readout muted" ref={readout} aria-hidden="true">
        Point at a day to see its values.
      </p>
    </figure>
  );
}
