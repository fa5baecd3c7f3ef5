/**
 * Whether a process with this id exists: signal 0 checks without sending anything. EPERM means it
 * exists but belongs to another user. The PGlite data-dir lock, the build lock and the test databases'
 * clean-up use it to tell a live owner from one that died.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
