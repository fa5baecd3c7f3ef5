/**
 * What /proc/<pid>/stat says of a process, read by the tests themselves (not through db/process-alive.ts,
 * the code they check): its state letter (R, S, Z…) and start time, or "gone".
 */
import { readFileSync } from "node:fs";

export function procStat(pid: number): { state: string; startTime: number } | "gone" {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0], startTime: Number(fields[19]) };
  } catch {
    return "gone";
  }
}

export function processState(pid: number): string {
  const stat = procStat(pid);
  return stat === "gone" ? stat : stat.state;
}
