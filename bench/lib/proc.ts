/**
 * What Linux /proc says about a process or the whole machine: CPU ticks, CPU seconds, memory and
 * bytes written. Other jobs on the machine stretch wall time; these show what the work itself cost.
 */
import { existsSync, readFileSync } from 'node:fs';

/** Clock ticks a second in /proc (USER_HZ). */
export const TICKS_PER_SECOND = 100;

/** From the first line of /proc/stat: `cpu  user nice system idle iowait irq softirq steal ...`. */
export function machineTicks(): { processes: number; irq: number; steal: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return { processes: user + nice + system, irq: irq + softirq, steal };
}

/** utime + stime of a process or thread: fields 14 and 15, counted after the `(command)` field. */
export function processTicks(statPath: string): number {
  const stat = readFileSync(statPath, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU seconds (user + system, all threads) a process has used; NaN once it is gone. */
export function cpuSecondsOf(pid: number | undefined): number {
  const path = `/proc/${pid}/stat`;
  if (pid === undefined || !existsSync(path)) return Number.NaN;
  return processTicks(path) / TICKS_PER_SECOND;
}

/** Current and peak resident set size of a process, in MiB. */
export function memoryOf(pid: number | undefined): { rssMb: number; hwmMb: number } | null {
  const path = `/proc/${pid}/status`;
  if (pid === undefined || !existsSync(path)) return null;
  const status = readFileSync(path, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
}

/** Bytes a process has handed to write(2) so far (WAL, checkpoints, database file). */
export function bytesWrittenBy(pid: number | undefined): number {
  const path = `/proc/${pid}/io`;
  if (pid === undefined || !existsSync(path)) return Number.NaN;
  return Number(/^wchar: (\d+)$/m.exec(readFileSync(path, 'utf8'))?.[1] ?? Number.NaN);
}
