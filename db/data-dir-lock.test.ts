import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { procStat, processState } from "../test/proc";
import { acquireDataDirLock, DataDirInUseError, releaseDataDirLock } from "./data-dir-lock";

// Real processes stand in for the lock's owner: a live one, a zombie, one that exits during the wait.
const children: ChildProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) {
    releaseDataDirLock(dir);
    rmSync(dir, { recursive: true, force: true });
  }
});

function dataDir() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "gcs-lock-"));
  dirs.push(dir);
  return dir;
}
const lockPath = (dir: string) => path.join(dir, "pglite.lock");
const lockOwner = (dir: string) => JSON.parse(readFileSync(lockPath(dir), "utf8")) as { pid: number };
const bootId = existsSync("/proc/sys/kernel/random/boot_id") ? readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() : "";

/** What the lock file of a running owner holds: its pid, its start time and this boot. */
function identity(pid: number) {
  const stat = procStat(pid);
  if (stat === "gone") throw new Error(`pid ${pid} is gone`);
  return { pid, startTime: stat.startTime, bootId };
}

function started(command: string, args: string[]) {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "ignore"] });
  children.push(child);
  return child;
}

/** A zombie: sh starts a short sleep, then becomes a long sleep, which never reaps it. */
async function zombie(): Promise<number> {
  const parent = started("sh", ["-c", "sleep 0.05 & echo $!; exec sleep 60"]);
  const pid = Number(await new Promise<string>((resolve) => parent.stdout!.once("data", (d: Buffer) => resolve(d.toString()))));
  const deadline = Date.now() + 5000;
  while (processState(pid) !== "Z") {
    if (Date.now() > deadline) throw new Error(`pid ${pid} did not become a zombie (${processState(pid)})`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return pid;
}

async function timed(promise: Promise<unknown>) {
  const t0 = Date.now();
  await promise;
  return Date.now() - t0;
}

describe.runIf(existsSync("/proc/self/stat"))("the PGlite data-dir lock", () => {
  it("takes over at once from a zombie: a killed owner its parent has not reaped yet", async () => {
    const pid = await zombie();
    // As every version wrote it (a bare pid), and as it is written now.
    for (const content of [String(pid), JSON.stringify({ pid, startTime: (procStat(pid) as { startTime: number }).startTime, bootId })]) {
      const dir = dataDir();
      writeFileSync(lockPath(dir), content);
      expect(await timed(acquireDataDirLock(dir, { waitMs: 5000 }))).toBeLessThan(2000);
      expect(lockOwner(dir).pid).toBe(process.pid);
    }
    expect(processState(pid)).toBe("Z");
  });

  it("takes over from a pid now used by another process (other start time, other boot), and refuses the one that wrote it", async () => {
    const live = started("sleep", ["60"]);
    const owner = identity(live.pid!);
    for (const recycled of [
      { ...owner, startTime: owner.startTime - 1 },
      { ...owner, bootId: "00000000-0000-0000-0000-000000000000" },
      { ...identity(process.pid), startTime: identity(process.pid).startTime - 1 }, // this pid's earlier life
    ]) {
      const dir = dataDir();
      writeFileSync(lockPath(dir), JSON.stringify(recycled));
      expect(await timed(acquireDataDirLock(dir, { waitMs: 5000 }))).toBeLessThan(2000);
      expect(lockOwner(dir)).toEqual(identity(process.pid));
    }
    const dir = dataDir();
    writeFileSync(lockPath(dir), JSON.stringify(owner));
    await expect(acquireDataDirLock(dir, { waitMs: 300 })).rejects.toThrow(DataDirInUseError);
  });

  it("waits for an owner that is going away, then takes over", async () => {
    const dying = started("sleep", ["1"]);
    const dir = dataDir();
    writeFileSync(lockPath(dir), JSON.stringify(identity(dying.pid!)));
    const waited = await timed(acquireDataDirLock(dir, { waitMs: 8000 }));
    expect(["Z", "gone"]).toContain(processState(dying.pid!)); // exited (Node may not have reaped it yet)
    expect(waited).toBeGreaterThan(500);
    expect(waited).toBeLessThan(6000);
    expect(lockOwner(dir).pid).toBe(process.pid);
  });

  it("refuses a live owner once the wait is over, naming its pid, and leaves its lock alone", async () => {
    const live = started("sleep", ["60"]);
    for (const content of [JSON.stringify(identity(live.pid!)), String(live.pid)]) {
      const dir = dataDir();
      writeFileSync(lockPath(dir), content);
      const t0 = Date.now();
      const err = await acquireDataDirLock(dir, { waitMs: 1500 }).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1500);
      expect(err).toBeInstanceOf(DataDirInUseError);
      expect(err!.message).toContain(`The data directory ${dir} is in use by another process (pid ${live.pid})`);
      expect(err!.message).toContain("still running after 1.5 s");
      expect(readFileSync(lockPath(dir), "utf8")).toBe(content);
    }
  });
});
