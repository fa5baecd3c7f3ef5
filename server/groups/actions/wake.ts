import { processWide } from "../../process-state";

/**
 * The group-action engine registers here to hear that an action may have work now (created, canceled). It also polls,
 * so a missed call costs latency only.
 */
type Listener = (actionId: string) => void;
const listeners = processWide("groupActionWakers", () => new Set<Listener>());

export function onGroupActionWake(listener: Listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function wakeGroupAction(actionId: string) {
  for (const l of listeners) l(actionId);
}
