import { readFileSync } from "node:fs";

/**
 * A process as this machine knows it. The kernel hands a pid out again once its process is gone, so a pid
 * alone may name a stranger: the start time (clock ticks after boot, /proc/<pid>/stat) and the boot tell
 * the process that wrote a lock file from a later one that got its pid. Both are absent without /proc.
 */
export interface ProcessIdentity {
  pid: number;
  startTime?: number;
  bootId?: string;
}

/** The state letter and the start time of /proc/<pid>/stat; undefined without /proc, or when the process is hidden or gone. */
function procStat(pid: number): { state: string; startTime: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may hold spaces: count fields after its ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0], startTime: Number(fields[19]) };
  } catch {
    return undefined;
  }
}

let cachedBootId: string | null | undefined;
/** This boot of the machine (Linux); a process of an earlier boot is gone whatever its pid. */
function bootId(): string | undefined {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
    } catch {
      cachedBootId = null;
    }
  }
  return cachedBootId ?? undefined;
}

/** The identity of process `pid` now (this process by default). */
export function processIdentity(pid = process.pid): ProcessIdentity {
  return { pid, startTime: procStat(pid)?.startTime, bootId: bootId() };
}

/** Whether a process with this id exists: signal 0 checks without sending anything; EPERM means another user's. */
function exists(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false; // 0 and negatives would address process groups
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether the process `owner` names still runs. Not a zombie (Z) or a dead entry (X): a killed process
 * stays in the table until its parent reaps it (seconds, when the parent is busy or died with it and
 * PID 1 reaps late), and signal 0 still reaches it then. Not a later process that got the pid: the start
 * time or the boot differs. Without /proc (macOS) or with /proc hiding other users' processes, signal 0
 * is all there is to go by. The PGlite data-dir lock, the build lock, `npm start`'s launcher watch and
 * the test databases' clean-up use it to tell a live owner from one that died.
 */
export function isRunning(owner: ProcessIdentity): boolean {
  const boot = bootId();
  if (owner.bootId && boot && owner.bootId !== boot) return false;
  if (!exists(owner.pid)) return false;
  const stat = procStat(owner.pid);
  if (!stat) return true;
  if (stat.state === "Z" || stat.state === "X") return false;
  return owner.startTime === undefined || stat.startTime === owner.startTime;
}

/** `isRunning` for a bare pid (no start time recorded). */
export const isAlive = (pid: number) => isRunning({ pid });
