import { processWide } from "../../process-state";

/**
 * Group creation and adoption for one launch run one at a time in this process: the next position
 * (the template's `{n}`) is read before the slow provider call and written after it. Another process
 * racing on the same launch loses on the (launch, position) key and appends instead (add-groups.ts).
 */
const chains = processWide("launchLocks", () => new Map<string, Promise<unknown>>());

export function withLaunchLock<T>(launchId: string, work: () => Promise<T>): Promise<T> {
  const previous = chains.get(launchId) ?? Promise.resolve();
  const run = previous.then(work, work);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  chains.set(launchId, tail);
  void tail.then(() => {
    if (chains.get(launchId) === tail) chains.delete(launchId);
  });
  return run;
}
